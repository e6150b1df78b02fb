"""The one outbound HTTP core: every call to an outside service goes through it.

What it holds, each once:

- :class:`Outbound`, the client the service clients share: retries on 429/503 within the call's
  deadline by one Retry-After rule (:func:`retry_after`), per-host rate limits
  (:func:`host_limiter`), bounded and decompressed reads, the JSON guard, the cache of answers;
  with an :class:`~citeverify_core.lookups.guard.AddressGuard` (a per-client option) it connects
  only to public addresses, checked after DNS resolution and pinned.
- Bodies are streamed and decompressed here (:class:`Inflater`), never past a byte limit, so a
  huge body or a compression bomb costs that limit and no more; JSON is decoded with bounded
  nesting and finite numbers only (:func:`decode_json`); every identifier put into a URL path is
  encoded so that it stays inside its segment (:func:`quote_path`).
- Failures: what a call may raise is :data:`LOOKUP_ERRORS`, and :func:`failure_reason` is the one
  place that turns one into a reason for people. Nothing here raises into the verifier.

The gateway's upstream (aiohttp) and the client of our own service read bodies with the same
:class:`Inflater` and :data:`ACCEPT_ENCODING`; the client takes a 429's wait from
:func:`retry_after`.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import json
import math
import os
import re
import threading
import time
import zlib
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from itertools import accumulate
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from urllib.parse import quote

from citeverify_core.lookups.failures import LookupFailure, clean_text, text_or_none
from citeverify_core.sync import on_background_loop

__all__ = [
    "ACCEPT_ENCODING",
    "DEFAULT_HOST_RATES",
    "LOOKUP_ERRORS",
    "BoundedBody",
    "Inflater",
    "LookupFailure",
    "Outbound",
    "RateLimiter",
    "clean_text",
    "decode_json",
    "failure_reason",
    "host_limiter",
    "http_error",
    "json_depth",
    "parse_payload",
    "quote_path",
    "read_body",
    "retry_after",
    "text_or_none",
    "url_host",
]

if TYPE_CHECKING:
    import asyncio

    import httpx

    from citeverify_core.lookups.cache import LookupCache
    from citeverify_core.lookups.guard import AddressGuard
    from citeverify_core.policy.settings import LookupSettings

    LOOKUP_ERRORS: tuple[type[BaseException], ...]
else:

    class _LazyModule:
        """A module imported on its first use, then put in this module's globals in its place.

        httpx costs about 280 ms at import (it loads its optional command line: click, rich,
        pygments), asyncio tens of milliseconds: a verify() with nothing to look up, and
        ``import citeverify_core``, need neither (tests/cli/test_startup.py).
        """

        def __init__(self, name: str) -> None:
            self._name = name

        def __getattr__(self, attr: str) -> Any:
            module = importlib.import_module(self._name)
            globals()[self._name] = module
            return getattr(module, attr)

    asyncio = _LazyModule("asyncio")
    httpx = _LazyModule("httpx")

T = TypeVar("T")
_RETRY_STATUSES = {429, 503}
#: Only what :class:`Inflater` can decompress within a limit: httpx would also offer zstd (and br
#: when installed), and decode a whole chunk at once, so a bomb could expand past any limit.
ACCEPT_ENCODING = "gzip, deflate"
_MAX_JSON_DEPTH = 64  # real answers nest under 10 levels; json.loads recurses (RecursionError)
#: Requests per second to a host, whoever sends them (a URL in an answer included), unless the
#: caller names its own rate: NCBI blocks a client past 3 requests/s without an API key.
DEFAULT_HOST_RATES: Mapping[str, float] = {"eutils.ncbi.nlm.nih.gov": 3.0}


@functools.cache
def _lookup_errors() -> tuple[type[BaseException], ...]:
    """Everything a lookup or a source may raise (``LOOKUP_ERRORS``, built on first use).

    Each is turned into a reason by :func:`failure_reason`, the one mapping. ``httpx.InvalidURL``
    is not an ``httpx.HTTPError``; h11's protocol errors arrive as
    ``httpx.RemoteProtocolError``/``LocalProtocolError``; IDNA and UTF-8 errors are
    ``ValueError``s; ``zlib.error`` comes from a corrupt compressed body.
    """
    errors = (httpx.HTTPError, httpx.InvalidURL, OSError, TimeoutError, ValueError, zlib.error)
    return (*errors, LookupFailure)


def __getattr__(name: str) -> Any:
    # LOOKUP_ERRORS names httpx's exceptions: built when first asked for, so that importing this
    # module does not import httpx.
    if name == "LOOKUP_ERRORS":
        return _lookup_errors()
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


#: What a parser of an untrusted payload raises when the payload's shape surprises it: an
#: ``AttributeError`` from ``"x".get`` is a bad answer, not a crash (see :func:`parse_payload`).
_PAYLOAD_ERRORS = (AttributeError, TypeError, KeyError, IndexError, OverflowError, ValueError)


def parse_payload(parser: Callable[[Any], T], payload: Any, what: str) -> T:
    """``parser(payload)``; a payload of a shape the parser does not expect is a failed lookup.

    The one place where a parser's exception on an untrusted answer is caught; the reason keeps
    the exception's type, so a parser bug stays visible in ``external_lookup``.

    Raises:
        LookupFailure: the parser raised one of the errors of a surprising shape.
    """
    try:
        return parser(payload)
    except _PAYLOAD_ERRORS as exc:
        msg = f"unexpected {what} response ({type(exc).__name__}: {exc})"
        raise LookupFailure(msg) from exc


def failure_reason(exc: BaseException, timeout: float) -> str:
    """The one place where a call's exception (one of :data:`LOOKUP_ERRORS`) becomes a reason."""
    if isinstance(exc, TimeoutError | httpx.TimeoutException):
        return f"timed out after {timeout:g}s"
    if isinstance(exc, LookupFailure):
        return str(exc)
    if isinstance(exc, httpx.InvalidURL):
        return f"invalid URL: {exc}"
    if isinstance(exc, httpx.ConnectError):
        return f"connection failed: {exc}"
    if isinstance(exc, httpx.RemoteProtocolError):
        return f"the server broke HTTP: {exc}"
    if isinstance(exc, httpx.LocalProtocolError):
        # h11 quotes the offending header, which may be a token: never echo it into a result.
        return (
            "cannot send the request: an illegal header value (a line break in user_agent, "
            "mailto or an API token?)"
        )
    if isinstance(exc, httpx.HTTPError):
        return f"{type(exc).__name__}: {exc}"
    if isinstance(exc, zlib.error):
        return f"malformed compressed response ({exc})"
    if isinstance(exc, json.JSONDecodeError):
        return f"malformed JSON in the response ({exc.msg})"
    if isinstance(exc, UnicodeDecodeError):
        return f"malformed response: not UTF-8 at byte {exc.start}"
    if isinstance(exc, UnicodeEncodeError):
        return f"cannot encode the request ({exc.reason} at {exc.start})"
    if isinstance(exc, UnicodeError):  # IDNA
        return f"invalid host name: {exc}"
    if isinstance(exc, ValueError):
        return f"malformed response: {exc}"
    return f"{type(exc).__name__}: {exc}"


def http_error(response: httpx.Response) -> str:
    """``HTTP 503 Service Unavailable``: a status as a reason."""
    return f"HTTP {response.status_code} {response.reason_phrase}".strip()


# --- Retry-After ------------------------------------------------------------------------------


def retry_after(value: str | None) -> float | None:
    """Seconds to wait by a ``Retry-After`` header, or None when it is absent or unreadable.

    The one rule for every caller (lookups, reference sources, the client of our service):
    RFC 9110's two forms, ASCII digits (delay-seconds) or an HTTP date (its distance from now,
    0 when past). ``"²"`` and ``"٣"`` are not digits although ``str.isdigit`` says so; a
    5,000-digit value is ``inf``, beyond any deadline; ``"-5"``, ``"1.5"`` and ``"nan"`` are
    unreadable. What to do without a value (back off, assume a minute) is the caller's choice.
    """
    value = (value or "").strip()
    if not value:
        return None
    if value.isascii() and value.isdigit():
        return float(value)
    from email.utils import parsedate_to_datetime  # noqa: PLC0415 - only for a dated header

    try:
        when = parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError, IndexError):
        return None


# --- per-host rate limits ---------------------------------------------------------------------


class RateLimiter:
    """Spaces calls at least ``1 / per_second`` seconds apart, across threads and event loops.

    One limiter serves every verifier of the process (the sync API's background loop and the
    caller's own loops alike), so the slot is taken under a thread lock and slept outside it.
    """

    def __init__(self, per_second: float) -> None:
        self.per_second = per_second
        self.interval = 1.0 / per_second
        self._next = 0.0
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[Any, ...]:
        # A pickled limiter is a new one at the same rate: its slots are this process's.
        return RateLimiter, (self.per_second,)

    async def wait(self) -> None:
        """Wait for the next free slot."""
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next)
            self._next = slot + self.interval
        if slot > now:
            await asyncio.sleep(slot - now)


_LIMITERS: dict[tuple[str, float], RateLimiter] = {}
_LIMITERS_LOCK = threading.Lock()


def host_limiter(host: str, per_second: float) -> RateLimiter:
    """The process's limiter for ``host`` (``name`` or ``name:port``) at ``per_second``.

    Every call to that host at that rate waits on the same limiter, whichever client sends it:
    NCBI counts requests per machine without an API key, per key with one (10/s).
    """
    key = (host.lower(), per_second)
    with _LIMITERS_LOCK:
        limiter = _LIMITERS.get(key)
        if limiter is None:
            limiter = _LIMITERS[key] = RateLimiter(per_second)
    return limiter


# --- the client -------------------------------------------------------------------------------


_CLIENT: contextvars.ContextVar[httpx.AsyncClient] = contextvars.ContextVar("citeverify_client")
_shared: httpx.AsyncClient | None = None


def _forget_shared_client() -> None:
    # In a forked child the shared client belongs to the parent's loop, which did not come along.
    global _shared  # noqa: PLW0603
    _shared = None


os.register_at_fork(after_in_child=_forget_shared_client)


#: A credential in a URL's query (NCBI takes its API key only there): what httpx's INFO log line
#: "HTTP Request: GET <url>" would print in clear.
_URL_CREDENTIAL = re.compile(r"((?:api_key|token|apikey)=)[^&\s\"']+", re.IGNORECASE)


class _RedactCredentials:
    """A ``logging`` filter: the value of a credential in a logged URL becomes ``***``."""

    def filter(self, record: Any) -> bool:
        args = record.args
        if isinstance(args, tuple) and any(_URL_CREDENTIAL.search(str(a)) for a in args):
            record.args = tuple(
                _URL_CREDENTIAL.sub(r"\1***", str(a)) if _URL_CREDENTIAL.search(str(a)) else a
                for a in args
            )
        elif isinstance(record.msg, str) and _URL_CREDENTIAL.search(record.msg):
            record.msg = _URL_CREDENTIAL.sub(r"\1***", record.msg)
        return True


@functools.cache
def _credentials_kept_out_of_logs() -> None:
    """Put :class:`_RedactCredentials` on httpx's loggers, once, before the first lookup.

    httpx logs every request's URL at INFO ("HTTP Request: GET ...&api_key=..."), on the
    loggers ``httpx`` and ``httpcore``; an application that logs at INFO would write NCBI's key
    to its logs.
    """
    import logging  # noqa: PLC0415 - start-up time: only once lookups run

    for name in ("httpx", "httpcore"):
        logging.getLogger(name).addFilter(_RedactCredentials())


def _new_client() -> httpx.AsyncClient:
    # Timeouts and the User-Agent are set per request, from each verifier's settings. No cookie
    # is kept: every page an answer links to could add some to the shared client, for as long
    # as the process lives, and no lookup needs one.
    from http.cookiejar import CookieJar, DefaultCookiePolicy  # noqa: PLC0415 - 10-60 ms

    return httpx.AsyncClient(
        follow_redirects=False,
        limits=httpx.Limits(max_connections=50, max_keepalive_connections=20),
        cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
    )


def _shared_client() -> httpx.AsyncClient:
    """The client of citeverify's background loop, shared by every verifier's sync calls."""
    global _shared  # noqa: PLW0603 - created on the background loop, lives as long as it
    if _shared is None or _shared.is_closed:
        _shared = _new_client()
    return _shared


Read = Literal["ok", "any", "none"]


class Outbound:
    """Calls to outside services with the settings of one verifier: the clients' one core.

    Args:
        settings: ``extensions.lookups`` of the policy (timeouts, retries, byte limits).
        client: An ``httpx.AsyncClient`` to use (yours: proxies, limits, transports; you close
            it). When None, inside :meth:`session` on citeverify's background loop one client
            is shared by every verifier, so connections stay alive across answers; elsewhere
            :meth:`session` opens one and closes it.
        cache: Where answers are kept (:meth:`get_cached_json`); None keeps nothing.
        guard: Connect only to the addresses it allows, pinned after the check (URLs taken from
            an answer). None for the services' configured base URLs, which may be a mirror on
            the local network.

    Pickled, it travels as its settings, cache and guard, and the copy uses citeverify's own
    client where it lands. With a ``client`` of yours it cannot be pickled (a ``TypeError``
    saying so): the client's connections belong to this process and its event loop, and a copy
    quietly without it would lose its proxies and transports. ``copy.deepcopy`` shares your
    client (it stays yours to close).
    """

    def __init__(
        self,
        settings: LookupSettings,
        *,
        client: httpx.AsyncClient | None = None,
        cache: LookupCache | None = None,
        guard: AddressGuard | None = None,
    ) -> None:
        self.settings = settings
        self.cache = cache
        self.guard = guard
        self._client = client
        self.calls = 0  # HTTP requests sent (for tests and benchmarks)

    @property
    def client(self) -> httpx.AsyncClient | None:
        """The ``httpx.AsyncClient`` given at construction, or None (citeverify's own)."""
        return self._client

    def __getstate__(self) -> dict[str, Any]:
        if self._client is not None:
            msg = (
                "cannot pickle a citeverify verifier made with client=: an httpx.AsyncClient "
                "holds connections of this process and its event loop. Make the verifier where "
                "it runs (in the worker), or leave client unset so that each process uses "
                "citeverify's own client (copy.deepcopy shares the client)"
            )
            raise TypeError(msg)
        return {"settings": self.settings, "cache": self.cache, "guard": self.guard}

    def __setstate__(self, state: dict[str, Any]) -> None:
        Outbound.__init__(self, **state)

    def __deepcopy__(self, memo: dict[int, Any]) -> Outbound:
        # Same process: your client is shared, not copied (a copy would hold its connections).
        import copy  # noqa: PLC0415 - only for deepcopy

        twin = Outbound(
            copy.deepcopy(self.settings, memo),
            client=self._client,
            cache=copy.deepcopy(self.cache, memo),
            guard=copy.deepcopy(self.guard, memo),
        )
        memo[id(self)] = twin
        return twin

    def with_guard(self, guard: AddressGuard) -> Outbound:
        """The same client, settings and cache, connecting only where ``guard`` allows."""
        return Outbound(self.settings, client=self._client, cache=self.cache, guard=guard)

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[httpx.AsyncClient]:
        """The HTTP client for the calls made inside (see the class docstring for which one)."""
        _credentials_kept_out_of_logs()
        async with contextlib.AsyncExitStack() as stack:
            if self._client is not None:
                client = self._client
            elif on_background_loop():
                client = _shared_client()
            else:
                client = await stack.enter_async_context(_new_client())
            token = _CLIENT.set(client)
            try:
                yield client
            finally:
                _CLIENT.reset(token)

    async def request(
        self,
        method: str,
        url: str | httpx.URL,
        *,
        params: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        data: dict[str, str] | None = None,
        retry: bool = True,
        rate: float | None = None,
        read: Read = "ok",
        limit: int | None = None,
    ) -> tuple[httpx.Response, bytes]:
        """One call inside :meth:`session`: rate-limited, retried, its body read within bounds.

        Retries on 429/503 wait by :func:`retry_after` (else 0.25 s, doubling) while the
        call's deadline (``settings.timeout``) allows. Each attempt waits on the host's limiter:
        ``rate`` requests/s, or the host's :data:`DEFAULT_HOST_RATES` entry.

        Args:
            method: The HTTP method.
            url: The URL; with a guard, only an http(s) URL of an allowed address.
            params: Query parameters.
            headers: Request headers (``Accept-Encoding`` is :data:`ACCEPT_ENCODING`).
            data: A form body.
            retry: Whether 429/503 are retried.
            rate: Requests per second to this URL's host, whoever calls it.
            read: Whose bodies are read: ``"ok"`` (200 only), ``"any"``, ``"none"``. With
                ``"any"``, a body is cut at the limit instead of failing, and one that cannot be
                decoded is empty (a page read for its title).
            limit: Bytes read at most (default ``settings.max_response_bytes``).

        Returns:
            The (closed) response and the body read.

        Raises:
            One of :data:`LOOKUP_ERRORS`, for the caller's single failure mapping.
        """
        deadline = time.monotonic() + self.settings.timeout
        limit = self.settings.max_response_bytes if limit is None else limit
        headers = {"Accept-Encoding": ACCEPT_ENCODING, **(headers or {})}
        client = _CLIENT.get()
        if self.guard is None:
            target = httpx.URL(url)
        else:
            target = url if isinstance(url, httpx.URL) else self.guard.parse(url)
        host = url_host(target)
        per_second = rate if rate is not None else DEFAULT_HOST_RATES.get(target.host)
        extensions: dict[str, Any] = {}
        send: dict[str, Any] = {}
        if self.guard is not None:
            # Connect to the address that was checked, so a second DNS answer cannot swap it;
            # the name goes in Host and SNI. Redirects are the caller's, each one checked again.
            address = await self.guard.vet(target)
            headers["Host"] = target.netloc.decode("ascii")  # IDNA, IPv6 in brackets, no userinfo
            if target.scheme == "https":
                extensions["sni_hostname"] = target.raw_host.decode("ascii")
            target = target.copy_with(host=address, username=None, password=None)
            send = {"follow_redirects": False, "auth": None}
        attempt = 0
        while True:
            if per_second is not None:
                await host_limiter(host, per_second).wait()
            self.calls += 1
            request = client.build_request(
                method,
                target,
                params=params,
                headers=headers,
                data=data,
                timeout=httpx.Timeout(self.settings.timeout),
                extensions=extensions,
            )
            response = await client.send(request, stream=True, **send)
            try:
                body = b""
                if read == "any":
                    # The status answers the call; a body we cannot decode just has none.
                    with contextlib.suppress(zlib.error, LookupFailure):
                        body = await read_body(response, limit, truncate=True)
                elif read == "ok" and response.status_code == 200:
                    body = await read_body(response, limit)
            finally:
                await response.aclose()
            if not retry or response.status_code not in _RETRY_STATUSES:
                return response, body
            if attempt >= self.settings.retries:
                return response, body
            delay = retry_after(response.headers.get("retry-after"))
            delay = 0.25 * 2**attempt if delay is None else delay
            if time.monotonic() + delay >= deadline:
                return response, body  # waiting longer would break the call's deadline
            await asyncio.sleep(delay)
            attempt += 1

    async def get_json(
        self,
        url: str,
        *,
        params: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        rate: float | None = None,
    ) -> tuple[int, Any]:
        """GET with the retries; returns ``(status, parsed JSON or None)``.

        The body is read up to ``max_response_bytes`` and decoded by :func:`decode_json`.

        Raises:
            One of :data:`LOOKUP_ERRORS` (transport failures, a body too large, malformed JSON),
                for the caller's single failure mapping.
        """
        response, body = await self.request(
            "GET",
            url,
            params=params,
            headers={"User-Agent": self.settings.user_agent, **(headers or {})},
            rate=rate,
        )
        if response.status_code != 200:
            return response.status_code, None
        return 200, decode_json(body)

    async def get_cached_json(
        self,
        namespace: str,
        url: str,
        params: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        *,
        rate: float | None = None,
    ) -> Any:
        """The JSON answer of a GET (None for a 404), from the cache when it holds it.

        Found answers are kept ``cache_ttl`` seconds, not found ones ``negative_cache_ttl``, so
        asking again (re-checking a bibliography) makes no new call.

        Raises:
            LookupFailure: any other status (429 after the retries, 5xx).
            One of :data:`LOOKUP_ERRORS` from the call.
        """
        key = url + "?" + "&".join(f"{k}={v}" for k, v in sorted((params or {}).items()))
        cached = self.cache.get(namespace, key) if self.cache is not None else None
        if cached is not None:
            return cached.get("data")
        status, data = await self.get_json(url, params=params, headers=headers, rate=rate)
        if status in {200, 404}:
            data = data if status == 200 else None
            if self.cache is not None:
                ttl = self.settings.cache_ttl if status == 200 else self.settings.negative_cache_ttl
                self.cache.put(namespace, key, {"data": data}, ttl)
            return data
        msg = f"answered HTTP {status}"
        raise LookupFailure(msg)


def url_host(url: httpx.URL) -> str:
    """``host`` or ``host:port`` (when not the scheme's default): what a rate limit is kept by."""
    host = url.host
    return f"{host}:{url.port}" if url.port is not None else host


# --- URLs -------------------------------------------------------------------------------------


def quote_path(value: str, *, safe: str = "/") -> str:
    """``value`` percent-encoded for a URL path, its ``.`` and ``..`` segments included.

    httpx, like every RFC 3986 client, removes dot segments before sending, so
    ``/works/10.1234/../../admin`` would request ``/admin``; ``%2E%2E`` is not a dot segment.
    Slashes stay when ``safe`` keeps them (a DOI's suffix may contain them, and the services
    expect them as they are).
    """
    quoted = quote(value, safe=safe)
    return "/".join(
        part.replace(".", "%2E") if part in {".", ".."} else part for part in quoted.split("/")
    )


# --- bodies -----------------------------------------------------------------------------------


_WBITS: dict[str, int | None] = {
    "": None,
    "identity": None,
    "gzip": zlib.MAX_WBITS | 16,
    "x-gzip": zlib.MAX_WBITS | 16,
    "deflate": zlib.MAX_WBITS | 32,  # zlib-wrapped or gzip; raw deflate: see Inflater.feed
}


class Inflater:
    """A ``Content-Encoding`` undone in steps of at most ``step`` bytes: a bomb never inflates.

    httpx's and aiohttp's own decoders inflate a whole network chunk at once (~1000x for
    deflate); here each call to zlib is given a ``max_length``, and the caller stops feeding
    once it has read its limit.

    Args:
        encoding: The response's ``Content-Encoding`` (identity, gzip or deflate).
        step: Decompressed bytes produced at a time.

    Raises:
        LookupFailure: an encoding we did not ask for (see :data:`ACCEPT_ENCODING`).
    """

    def __init__(self, encoding: str, *, step: int = 64 * 1024) -> None:
        self.encoding = encoding.strip().lower()
        if self.encoding not in _WBITS:
            msg = f"unsupported content encoding {clean_text(repr(self.encoding), 60)}"
            raise LookupFailure(msg + " in the response")
        wbits = _WBITS[self.encoding]
        self._zlib = None if wbits is None else zlib.decompressobj(wbits)
        self._started = False
        self.step = step

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decompressed bytes of ``data``, in pieces of at most ``step``.

        Raw deflate (no zlib header, sent by some servers as "deflate") is tried as such when
        the first bytes fail, as httpx does.

        Raises:
            zlib.error: the compressed data is corrupt.
        """
        if self._zlib is None:
            if data:
                yield data
            return
        while not self._zlib.eof:
            try:
                out = self._zlib.decompress(data, self.step)
            except zlib.error:
                if self._started:
                    raise
                self._started = True
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                continue
            self._started = True
            data = self._zlib.unconsumed_tail
            if out:
                yield out
            if not data and len(out) < self.step:  # all consumed, nothing held back
                return


class BoundedBody:
    """Raw chunks in, the decompressed body out, never more than ``limit`` bytes of it.

    Reading stops at the first byte past the limit (:attr:`over`), and closing the response
    then drops the connection: a 1 GiB body costs the limit's transfer, not the gigabyte.
    """

    def __init__(self, encoding: str, limit: int) -> None:
        self.limit = limit
        self._inflater = Inflater(encoding, step=min(limit + 1, 64 * 1024))
        self._body = bytearray()
        self.over = False

    def feed(self, chunk: bytes) -> bool:
        """Add a raw chunk; True once the body is over the limit (feed no more)."""
        for piece in self._inflater.feed(chunk):
            self._body += piece[: self.limit + 1 - len(self._body)]
            if len(self._body) > self.limit:
                self.over = True
                return True
        return False

    def body(self) -> bytes:
        """The body read, cut at the limit."""
        return bytes(self._body[: self.limit])


async def read_body(response: httpx.Response, limit: int, *, truncate: bool = False) -> bytes:
    """The decompressed body of a streamed httpx response, never more than ``limit`` bytes.

    Raises:
        LookupFailure: the body is over ``limit`` (unless ``truncate``), or compressed in a way
            we did not ask for.
        zlib.error: the compressed body is corrupt.
    """
    reader = BoundedBody(str(response.headers.get("content-encoding", "")), limit)
    async for chunk in response.aiter_raw():
        if reader.feed(chunk):
            if truncate:
                break
            msg = f"response larger than {limit} bytes"
            raise LookupFailure(msg)
    return reader.body()


# --- JSON -------------------------------------------------------------------------------------

# A JSON string, or an unterminated one up to the end: never fails once it starts, so removing
# strings is one linear pass (an alternative that can fail rescans from every quote).
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\[\s\S]?[^"\\]*)*(?:"|\Z)')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = [1 if b in b"[{" else -1 if b in b"]}" else 0 for b in range(256)]
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def json_depth(body: bytes) -> int:
    """How deep ``json.loads`` would nest in ``body``: found without recursion (see below)."""
    brackets = _JSON_STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets))) if brackets else 0


def decode_json(body: bytes) -> Any:
    r"""An untrusted JSON answer, decoded within bounds.

    - Nesting deeper than 64 levels is refused before parsing: ``json.loads`` recurses, and
      200,000 ``[`` raise ``RecursionError``. The check drops strings, keeps the brackets, and
      takes the highest running count of opened minus closed ones: the depth ``json.loads``
      reaches wherever the text is still valid JSON (a ``[}`` or a stray ``]`` it refuses
      itself). One C-level pass, 0.3 s for 8 MB of nothing but brackets; removing innermost
      pairs once per level took 1.4 s, a regex per level 6 s.
    - UTF-8 only (RFC 8259, section 8.1).
    - Numbers must be finite and integers within 64 bits: ``1e400`` would be ``inf`` and
      ``int(inf)`` raises downstream; ``NaN``/``Infinity`` are not JSON.
    - Escaped lone surrogates (``"\ud800"``) become U+FFFD: they cannot be encoded as UTF-8,
      so the result could not be serialized.

    Raises:
        LookupFailure: too deep, a number out of range, a constant that is not JSON.
        ValueError: not UTF-8 or not JSON.
    """
    if json_depth(body) > _MAX_JSON_DEPTH:
        msg = f"malformed JSON in the response (nested deeper than {_MAX_JSON_DEPTH} levels)"
        raise LookupFailure(msg)
    text = body.decode("utf-8-sig")  # UnicodeDecodeError: mapped by failure_reason
    data = json.loads(
        text, parse_float=_finite_float, parse_int=_int64, parse_constant=_no_constant
    )
    if _SURROGATE_ESCAPE.search(body):
        data = _scrub(data)
    return data


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        msg = f"malformed JSON in the response (number out of range: {text[:40]})"
        raise LookupFailure(msg)
    return value


def _int64(text: str) -> int:
    # Length first: int() of over 4,300 digits raises ValueError with a message about sys.
    value = int(text) if len(text) <= 20 else 1 << 64
    if not -(1 << 63) <= value < 1 << 63:
        msg = f"malformed JSON in the response (integer out of range: {text[:40]})"
        raise LookupFailure(msg)
    return value


def _no_constant(text: str) -> Any:
    msg = f"malformed JSON in the response ({text} is not a JSON number)"
    raise LookupFailure(msg)


def _scrub(value: Any) -> Any:
    """``value`` with lone surrogates in its strings replaced (depth is bounded by now)."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    return value
