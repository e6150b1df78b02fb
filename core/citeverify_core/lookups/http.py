"""External lookups (seed 000, step 5): Crossref, NCBI E-utilities, URLs, and CourtListener.

Every lookup becomes a :class:`~citeverify_core.LookupRecord`; nothing here raises into the
verifier.
The single place that turns exceptions into outcomes is :func:`_failure_reason`.

URL checks treat the answer as hostile: only http(s), never loopback, private, link-local,
multicast or reserved addresses (checked after DNS resolution and again after every redirect, and
the connection is pinned to the address that was checked, so a second DNS answer cannot swap it),
no cookies or credentials, a bounded number of bytes read.

Services are untrusted too (issue 9): bodies are streamed and decompressed here, never past a
byte limit (``max_response_bytes``, ``url_max_bytes``), so a huge body or a compression bomb costs
that limit and no more; JSON is decoded with bounded nesting and finite numbers only; every
identifier put into a URL path is encoded so that it stays inside its segment.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import ipaddress
import json
import logging
import math
import os
import re
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from urllib.parse import quote

from citeverify_core.errors import InputError
from citeverify_core.lookups.record import LookupRecord
from citeverify_core.sync import on_background_loop

__all__ = [
    "LOOKUP_ERRORS",
    "LookupCache",
    "Lookups",
    "Target",
    "decode_json",
    "json_depth",
    "parse_payload",
    "quote_path",
]

if TYPE_CHECKING:
    import asyncio
    import socket
    import sqlite3

    import httpx

    from citeverify_core.policy.settings import LookupSettings

    LOOKUP_ERRORS: tuple[type[BaseException], ...]
else:

    class _LazyModule:
        """A module imported on its first use, then put in this module's globals in its place.

        httpx costs about 280 ms at import (it loads its optional command line: click, rich,
        pygments), asyncio and sqlite3 tens of milliseconds: a verify() with nothing to look up,
        and ``import citeverify_core``, need none of them (issue 14, tests/cli/test_startup.py).
        """

        def __init__(self, name: str) -> None:
            self._name = name

        def __getattr__(self, attr: str) -> Any:
            module = importlib.import_module(self._name)
            globals()[self._name] = module
            return getattr(module, attr)

    asyncio = _LazyModule("asyncio")
    httpx = _LazyModule("httpx")
    socket = _LazyModule("socket")
    sqlite3 = _LazyModule("sqlite3")

T = TypeVar("T")
Service = Literal["crossref", "pubmed", "url", "courtlistener"]
_REDIRECTS = {301, 302, 303, 307, 308}
_RETRY_STATUSES = {429, 503}
# Only what _read_body can decompress within its limit: httpx would also offer zstd (and br when
# installed), and decode a whole chunk at once, so a bomb could expand past any limit.
_ACCEPT_ENCODING = "gzip, deflate"
_MAX_JSON_DEPTH = 64  # real answers nest under 10 levels; json.loads recurses (RecursionError)
_MAX_REASON = 500  # characters of a failure reason (it may quote what a service said)
_log = logging.getLogger("citeverify_core.lookups")


@dataclass(frozen=True, slots=True)
class Target:
    """Something to look up: a DOI at Crossref, a PMID at PubMed, a URL, a case citation."""

    service: Service
    key: str


class _Failure(Exception):
    """A lookup that failed for a reason we can state (blocked address, bad shape, ...)."""


@functools.cache
def _lookup_errors() -> tuple[type[BaseException], ...]:
    """Everything a lookup or a source may raise (``LOOKUP_ERRORS``, built on first use).

    Each is turned into a reason by :func:`_failure_reason`, the one mapping. ``httpx.InvalidURL``
    is not an ``httpx.HTTPError``; h11's protocol errors arrive as
    ``httpx.RemoteProtocolError``/``LocalProtocolError``; IDNA and UTF-8 errors are
    ``ValueError``s; ``zlib.error`` comes from a corrupt compressed body.
    """
    errors = (httpx.HTTPError, httpx.InvalidURL, OSError, TimeoutError, ValueError, zlib.error)
    return (*errors, _Failure)


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
    """
    try:
        return parser(payload)
    except _PAYLOAD_ERRORS as exc:
        msg = f"unexpected {what} response ({type(exc).__name__}: {exc})"
        raise _Failure(msg) from exc


class LookupCache:
    """Results of lookups, in memory with a TTL, and optionally in a SQLite file.

    Only definitive outcomes are stored: found (``ttl``) and not found (``negative_ttl``, shorter).
    Timeouts and server errors are not cached: the next call tries again.

    The file is a cache, not a record: a row that cannot be read (a corrupted payload, a value of
    the wrong type) is a miss, and a write or read that SQLite refuses later (disk full, a locked
    or damaged file) is logged and skipped, never raised into a verification.

    Memory is bounded by entries and by bytes (issue 9): the reference sources keep whole API
    answers, up to ``max_response_bytes`` each. Sizes are those of the payloads as JSON; a payload
    over 1/32 of ``max_bytes`` is kept only in the file.

    Args:
        path: The SQLite file, or None for memory only.
        max_entries: Payloads kept in memory at most (least recently used go first).
        max_bytes: Bytes of payloads (as JSON) kept in memory at most.

    Raises:
        InputError: ``path`` cannot be opened as a lookup cache (not a SQLite database, a
            directory, a database whose ``lookups`` table has other columns).
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        max_entries: int = 10_000,
        max_bytes: int = 32_000_000,
    ) -> None:
        self._memory: OrderedDict[tuple[str, str], tuple[float, dict[str, Any], int]] = (
            OrderedDict()
        )
        self._max = max_entries
        self._max_bytes = max_bytes
        self._bytes = 0
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if path is not None:
            self._db = _open_cache(path)

    def get(self, service: str, key: str) -> dict[str, Any] | None:
        """The stored payload, or None when absent, expired or unreadable."""
        now = time.time()
        with self._lock:
            item = self._memory.get((service, key))
            if item is not None:
                if item[0] > now:
                    self._memory.move_to_end((service, key))
                    return item[1]
                self._forget((service, key))
            if self._db is None:
                return None
            try:
                row = self._db.execute(
                    "SELECT expires, payload FROM lookups WHERE service = ? AND key = ?",
                    (service, key),
                ).fetchone()
            except (sqlite3.Error, UnicodeEncodeError) as exc:  # a key with a lone surrogate
                _log.warning("lookup cache: read skipped (%s)", exc)
                return None
        if row is None:
            return None
        expires, text = row
        if not isinstance(expires, int | float) or expires <= now or not isinstance(text, str):
            return None
        try:
            payload = json.loads(text)
        except (ValueError, RecursionError):  # a corrupted row is a miss (issue 9)
            return None
        if not isinstance(payload, dict):
            return None
        self._remember(service, key, float(expires), payload, len(text))
        return payload

    def put(self, service: str, key: str, payload: dict[str, Any], ttl: float) -> None:
        """Store a payload for ``ttl`` seconds (nothing is stored when ``ttl`` is 0)."""
        if ttl <= 0:
            return
        expires = time.time() + ttl
        text = json.dumps(payload)
        self._remember(service, key, expires, payload, len(text))
        if self._db is not None:
            with self._lock:
                try:
                    self._db.execute(
                        "INSERT OR REPLACE INTO lookups VALUES (?, ?, ?, ?)",
                        (service, key, expires, text),
                    )
                except (sqlite3.Error, UnicodeEncodeError) as exc:
                    _log.warning("lookup cache: write skipped (%s)", exc)

    def _remember(
        self, service: str, key: str, expires: float, payload: dict[str, Any], size: int
    ) -> None:
        with self._lock:
            self._forget((service, key))
            if size > self._max_bytes // 32:
                return
            self._memory[(service, key)] = (expires, payload, size)
            self._bytes += size
            while len(self._memory) > self._max or self._bytes > self._max_bytes:
                self._forget(next(iter(self._memory)))

    def _forget(self, key: tuple[str, str]) -> None:
        item = self._memory.pop(key, None)
        if item is not None:
            self._bytes -= item[2]

    def close(self) -> None:
        """Close the SQLite file, if any."""
        if self._db is not None:
            self._db.close()
            self._db = None


def _open_cache(path: str | Path) -> sqlite3.Connection:
    # Several processes opening one new cache at once (citeverify batch's workers) race to switch
    # it to WAL; SQLite answers "database is locked" at once for that, without its busy handler.
    # The loser waits and tries again.
    import time  # noqa: PLC0415 - only opening a cache needs it

    for attempt in range(50):
        try:
            return _open_cache_once(path)
        except _CacheLocked:
            time.sleep(0.05 * (1 + attempt % 4))
    return _open_cache_once(path, last=True)


class _CacheLocked(Exception):
    """Another process holds the new cache's lock while it sets it up."""


def _open_cache_once(path: str | Path, *, last: bool = False) -> sqlite3.Connection:
    db: sqlite3.Connection | None = None
    try:
        db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")  # the first read: "file is not a database" here
        db.execute(
            "CREATE TABLE IF NOT EXISTS lookups (service TEXT NOT NULL, key TEXT NOT NULL, "
            "expires REAL NOT NULL, payload TEXT NOT NULL, PRIMARY KEY (service, key))"
        )
        db.execute("SELECT service, key, expires, payload FROM lookups LIMIT 0")
    except (sqlite3.Error, ValueError) as exc:  # ValueError: a NUL byte or lone surrogate
        if db is not None:
            db.close()
        if not last and "locked" in str(exc):
            raise _CacheLocked from None
        msg = (
            f"cannot use {str(path)!r} as the lookup cache ({exc}): give cache_path a new file "
            "or one that citeverify created"
        )
        raise InputError(msg, path="extensions.lookups.cache_path") from None
    return db


class _RateLimiter:
    """Spaces calls at least ``interval`` seconds apart (NCBI: 3/s without a key, 10/s with)."""

    def __init__(self, per_second: float) -> None:
        self.interval = 1.0 / per_second
        self._next = 0.0
        self._lock = threading.Lock()

    async def wait(self) -> None:
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next)
            self._next = slot + self.interval
        if slot > now:
            await asyncio.sleep(slot - now)


_NCBI_WITHOUT_KEY = _RateLimiter(3)
_NCBI_WITH_KEY = _RateLimiter(10)


class Lookups:
    """Runs the lookups of one answer concurrently within the call and answer deadlines.

    Args:
        settings: ``extensions.lookups`` of the policy.
        client: An ``httpx.AsyncClient`` to use (yours: proxies, limits, transports; you close
            it). When None, the sync API shares one client on citeverify's background loop, so
            connections stay alive across answers, and the async API opens one client per answer
            and closes it (inject a client to keep connections alive there too).
        cache: Where results are kept; by default an in-memory cache (plus the SQLite file named
            by ``settings.cache_path``).
    """

    def __init__(
        self,
        settings: LookupSettings,
        *,
        client: httpx.AsyncClient | None = None,
        cache: LookupCache | None = None,
    ) -> None:
        self.settings = settings
        self._client = client
        self.cache = cache if cache is not None else LookupCache(settings.cache_path)
        # NCBI counts requests per client machine, so the limiter is shared by every verifier.
        self._ncbi_limit = _NCBI_WITH_KEY if settings.ncbi_api_key else _NCBI_WITHOUT_KEY
        self._allow_names, self._allow_nets = _parse_allow_list(settings.url_allow_hosts)
        self.calls = 0  # HTTP requests sent (for tests and benchmarks)

    # --- clients ------------------------------------------------------------------------------

    def _http(self) -> httpx.AsyncClient:
        return _CLIENT.get()

    def _timeout(self) -> httpx.Timeout:
        return httpx.Timeout(self.settings.timeout)

    # --- running ------------------------------------------------------------------------------

    async def run(self, targets: Iterable[Target]) -> list[LookupRecord]:
        """Look every target up; one record per target, in order."""
        async with self.session():
            return await self._run(list(targets))

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[httpx.AsyncClient]:
        """The HTTP client for the calls made inside (see the class docstring for which one)."""
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

    async def get_json(
        self,
        url: str,
        *,
        params: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        """GET inside :meth:`session`, with the retries; returns ``(status, parsed JSON or None)``.

        The body is read up to ``max_response_bytes`` and decoded by :func:`decode_json`.

        Raises:
            One of :data:`LOOKUP_ERRORS` (transport failures, a body too large, malformed JSON),
                for the caller's single failure mapping.
        """
        response, body = await self._call(
            "GET",
            url,
            params=params,
            headers={"User-Agent": self.settings.user_agent, **(headers or {})},
        )
        if response.status_code != 200:
            return response.status_code, None
        return 200, decode_json(body)

    async def _run(self, targets: list[Target]) -> list[LookupRecord]:
        targets = list(dict.fromkeys(targets))[: self.settings.max_lookups]
        records: dict[Target, LookupRecord] = {}
        todo: list[Target] = []
        for t in targets:
            record = _cached_record(self.cache.get(t.service, t.key))
            if record is not None:
                records[t] = record
            else:
                todo.append(t)
        jobs: list[tuple[list[Target], Callable[[], Awaitable[list[_Outcome]]]]] = []
        pmids = [t for t in todo if t.service == "pubmed"]
        cases = [t for t in todo if t.service == "courtlistener"]
        if pmids:  # one esummary call for all of them (NCBI's rate limit is per request)
            jobs.append((pmids, lambda: self._pubmed([t.key for t in pmids])))
        if cases:
            jobs.append((cases, lambda: self._courtlistener([t.key for t in cases])))
        for t in todo:
            if t.service == "crossref":
                jobs.append(([t], lambda t=t: self._single(self._crossref(t.key))))  # type: ignore[misc]
            elif t.service == "url":
                jobs.append(([t], lambda t=t: self._single(self._url(t.key))))  # type: ignore[misc]
        tasks = [asyncio.ensure_future(self._guarded(group, job)) for group, job in jobs]
        if tasks:
            done, pending = await asyncio.wait(tasks, timeout=self.settings.deadline)
            for task in pending:
                task.cancel()
            for (group, _), task in zip(jobs, tasks, strict=True):
                if task in done:
                    outcomes = task.result()
                else:
                    reason = f"answer deadline of {self.settings.deadline:g}s reached"
                    outcomes = [_Outcome.failed(t, reason, 0.0) for t in group]
                for t, outcome in zip(group, outcomes, strict=True):
                    records[t] = outcome.record
                    self._store(outcome)
        return [records[t] for t in targets]

    async def _single(self, coro: Awaitable[_Outcome]) -> list[_Outcome]:
        return [await coro]

    async def _guarded(
        self, group: list[Target], job: Callable[[], Awaitable[list[_Outcome]]]
    ) -> list[_Outcome]:
        start = time.perf_counter()
        try:
            async with asyncio.timeout(self.settings.timeout):
                return await job()
        except _lookup_errors() as exc:
            elapsed = (time.perf_counter() - start) * 1000
            reason = _failure_reason(exc, self.settings.timeout)
            return [_Outcome.failed(t, reason, elapsed) for t in group]

    def _store(self, outcome: _Outcome) -> None:
        if outcome.definitive and not outcome.record.cached:
            r = outcome.record
            ttl = self.settings.cache_ttl if r.ok else self.settings.negative_cache_ttl
            payload = r.to_dict()
            del payload["cached"], payload["elapsed_ms"]
            self.cache.put(r.service, r.target, payload, ttl)

    async def _call(
        self,
        method: str,
        url: str,
        *,
        params: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        data: dict[str, str] | None = None,
        retry: bool = True,
    ) -> tuple[httpx.Response, bytes]:
        """One API call: retries on 429/503 honouring Retry-After within the call's deadline.

        Returns the (closed) response and, for a 200, its body read up to
        ``max_response_bytes``; other statuses are not read.
        """
        deadline = time.monotonic() + self.settings.timeout
        headers = {"Accept-Encoding": _ACCEPT_ENCODING, **(headers or {})}
        client = self._http()
        attempt = 0
        while True:
            self.calls += 1
            request = client.build_request(
                method, url, params=params, headers=headers, data=data, timeout=self._timeout()
            )
            response = await client.send(request, stream=True)
            try:
                body = b""
                if response.status_code == 200:
                    body = await _read_body(response, self.settings.max_response_bytes)
            finally:
                await response.aclose()
            if (
                not retry
                or response.status_code not in _RETRY_STATUSES
                or attempt >= self.settings.retries
            ):
                return response, body
            delay = _retry_after(response) or 0.25 * 2**attempt
            if time.monotonic() + delay >= deadline:
                return response, body  # waiting longer would break the call's deadline
            await asyncio.sleep(delay)
            attempt += 1

    # --- Crossref -----------------------------------------------------------------------------

    async def _crossref(self, doi: str) -> _Outcome:
        s = self.settings
        start = time.perf_counter()
        url = f"{s.crossref_base_url.rstrip('/')}/works/{quote_path(doi, safe='/:;()<>[]')}"
        params = {"mailto": s.mailto} if s.mailto else None
        agent = f"{s.user_agent} (mailto:{s.mailto})" if s.mailto else s.user_agent
        response, body = await self._call("GET", url, params=params, headers={"User-Agent": agent})
        elapsed = (time.perf_counter() - start) * 1000
        target = Target("crossref", doi)
        if response.status_code == 404:
            return _Outcome.of(
                target, False, 404, elapsed, "DOI not found at Crossref", definitive=True
            )
        if response.status_code != 200:
            return _Outcome.of(target, False, response.status_code, elapsed, _http_error(response))
        data = decode_json(body)
        message = data.get("message") if isinstance(data, dict) else None
        if not isinstance(message, dict):
            msg = "unexpected Crossref response (no message object)"
            raise _Failure(msg)
        metadata = parse_payload(_crossref_metadata, message, "Crossref")
        return _Outcome.of(target, True, 200, elapsed, None, metadata, True)

    # --- PubMed -------------------------------------------------------------------------------

    async def _pubmed(self, pmids: list[str]) -> list[_Outcome]:
        s = self.settings
        await self._ncbi_limit.wait()
        start = time.perf_counter()
        params = {"db": "pubmed", "id": ",".join(pmids), "retmode": "json", "tool": s.ncbi_tool}
        if s.mailto:
            params["email"] = s.mailto
        if s.ncbi_api_key:
            params["api_key"] = s.ncbi_api_key
        response, body = await self._call(
            "GET",
            f"{s.ncbi_base_url.rstrip('/')}/esummary.fcgi",
            params=params,
            headers={"User-Agent": s.user_agent},
        )
        elapsed = (time.perf_counter() - start) * 1000
        targets = [Target("pubmed", p) for p in pmids]
        if response.status_code != 200:
            err = _http_error(response)
            return [_Outcome.of(t, False, response.status_code, elapsed, err) for t in targets]
        data = decode_json(body)
        if not isinstance(data, dict):
            msg = "unexpected E-utilities response (not an object)"
            raise _Failure(msg)
        result = data.get("result")
        outcomes = []
        for t in targets:
            entry = result.get(t.key) if isinstance(result, dict) else None
            if isinstance(entry, dict) and "error" not in entry and entry.get("uid") == t.key:
                meta = parse_payload(_pubmed_metadata, entry, "E-utilities")
                outcomes.append(_Outcome.of(t, True, 200, elapsed, None, meta, True))
            else:
                why = _text(entry.get("error") if isinstance(entry, dict) else data.get("error"))
                error = f"PMID not found at PubMed ({why})" if why else "PMID not found at PubMed"
                outcomes.append(_Outcome.of(t, False, 200, elapsed, error, definitive=True))
        return outcomes

    # --- URLs ---------------------------------------------------------------------------------

    async def _url(self, url: str) -> _Outcome:
        start = time.perf_counter()
        current = _parse_url(url)
        metadata: dict[str, Any] = {}
        for _hop in range(self.settings.url_max_redirects + 1):
            response, metadata = await self._fetch(current)
            location = response.headers.get("location")
            if response.status_code in _REDIRECTS and location:
                current = _parse_url(location, base=current, what="redirect to")
                continue
            elapsed = (time.perf_counter() - start) * 1000
            metadata["final_url"] = str(current.copy_with(username=None, password=None))
            status = response.status_code
            ok = status < 400
            error = None if ok else _http_error(response)
            definitive = ok or status in {404, 410}
            return _Outcome.of(Target("url", url), ok, status, elapsed, error, metadata, definitive)
        msg = f"more than {self.settings.url_max_redirects} redirects"
        raise _Failure(msg)

    async def _fetch(self, target: httpx.URL) -> tuple[httpx.Response, dict[str, Any]]:
        """HEAD, then a bounded GET when HEAD is refused; the address is vetted and pinned.

        ``target`` comes from :func:`_parse_url`, which has checked its scheme, host and port.
        """
        address = await self._vet(target)
        pinned = target.copy_with(host=address, username=None, password=None)
        headers = {
            "Host": target.netloc.decode("ascii"),  # IDNA-encoded, IPv6 in brackets, no userinfo
            "User-Agent": self.settings.user_agent,
            "Accept": "*/*",
            "Accept-Encoding": _ACCEPT_ENCODING,
        }
        extensions: dict[str, Any] = (
            {"sni_hostname": target.raw_host.decode("ascii")} if target.scheme == "https" else {}
        )
        client = self._http()
        metadata: dict[str, Any] = {}
        self.calls += 1
        request = httpx.Request("HEAD", pinned, headers=headers, extensions=extensions)
        response = await client.send(request, stream=True, follow_redirects=False, auth=None)
        await response.aclose()
        if response.status_code in {403, 405, 501}:
            self.calls += 1
            request = httpx.Request("GET", pinned, headers=headers, extensions=extensions)
            response = await client.send(request, stream=True, follow_redirects=False, auth=None)
            # The status answers the check; the body is only for a title, so a body we cannot
            # decode (an encoding we did not ask for, corrupt gzip) just has none. Truncated, the
            # read raises _Failure only for the encoding.
            body = b""
            try:
                with contextlib.suppress(zlib.error, _Failure):
                    body = await _read_body(response, self.settings.url_max_bytes, truncate=True)
            finally:
                await response.aclose()
            title = re.search(rb"<title[^>]*>([^<]{1,300})", body, re.IGNORECASE)
            if title:
                metadata["title"] = title.group(1).decode("utf-8", "replace").strip()
        if "content-type" in response.headers:
            metadata["content_type"] = response.headers["content-type"][:200]
        return response, metadata

    async def _vet(self, url: httpx.URL) -> str:
        """Resolve the host and return an address that URL checks may connect to."""
        host = url.raw_host.decode("ascii")  # IDNA-encoded: what DNS sees
        port = url.port or (443 if url.scheme == "https" else 80)
        if host.lower() in self._allow_names:
            return host
        if _legacy_ipv4(host):
            # 0177.0.0.1, 0x7f.1, 127.1, 2130706433: inet_aton reads them as 127.0.0.1, browsers
            # too, but proxies and libraries differ; no reference cites a page that way.
            msg = f"blocked: {host} is an IPv4 address in a non-standard form"
            raise _Failure(msg)
        try:
            addresses = [ipaddress.ip_address(host)]
        except ValueError:
            loop = asyncio.get_running_loop()
            try:
                infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except (socket.gaierror, UnicodeError) as exc:  # UnicodeError: a label over 63
                msg = f"cannot resolve host {host!r} ({getattr(exc, 'strerror', None) or exc})"
                raise _Failure(msg) from None
            addresses = [ipaddress.ip_address(info[4][0]) for info in infos]
        if not addresses:
            msg = f"cannot resolve host {host!r} (no address)"
            raise _Failure(msg)
        for address in addresses:
            if any(address in net for net in self._allow_nets):
                continue
            problem = _forbidden(address)
            if problem:
                msg = f"blocked: {host} resolves to {address}, {problem}"
                raise _Failure(msg)
        return str(addresses[0])

    # --- CourtListener ------------------------------------------------------------------------

    async def _courtlistener(self, citations: list[str]) -> list[_Outcome]:
        s = self.settings
        token = s.courtlistener_token or os.environ.get("COURTLISTENER_TOKEN")
        targets = [Target("courtlistener", c) for c in citations]
        if not token:
            why = (
                "no CourtListener token "
                "(extensions.lookups.courtlistener_token or COURTLISTENER_TOKEN)"
            )
            return [_Outcome.failed(t, why, 0.0) for t in targets]
        start = time.perf_counter()
        response, body = await self._call(
            "POST",
            f"{s.courtlistener_base_url.rstrip('/')}/api/rest/v4/citation-lookup/",
            data={"text": "; ".join(citations)},
            headers={"Authorization": f"Token {token}", "User-Agent": s.user_agent},
            retry=False,
        )
        elapsed = (time.perf_counter() - start) * 1000
        if response.status_code != 200:
            err = _http_error(response)
            return [_Outcome.of(t, False, response.status_code, elapsed, err) for t in targets]
        data = decode_json(body)
        if not isinstance(data, list):
            msg = "unexpected CourtListener response (not a list)"
            raise _Failure(msg)
        by_citation: dict[str, dict[str, Any]] = {}
        for item in data:
            if not isinstance(item, dict):
                continue
            names = item.get("normalized_citations")
            for name in [item.get("citation"), *(names if isinstance(names, list) else [])]:
                if isinstance(name, str):
                    by_citation.setdefault(name, item)
        outcomes = []
        for t in targets:
            item = by_citation.get(t.key)
            if item is None:
                outcomes.append(
                    _Outcome.of(t, False, 200, elapsed, "not in CourtListener's answer")
                )
                continue
            # Every field is the service's word: a status of another type is no status.
            status = item.get("status")
            status = status if type(status) is int else None
            clusters = item.get("clusters")
            first = clusters[0] if isinstance(clusters, list) and clusters else None
            name = _text(first.get("case_name")) if isinstance(first, dict) else None
            meta = {"case_name": name} if name else {}
            if status == 200:
                outcomes.append(_Outcome.of(t, True, 200, elapsed, None, meta, True))
            else:
                known = {300: "ambiguous", 404: "not found"}
                err = (
                    _text(item.get("error_message"))
                    or known.get(status or 0)
                    or (f"status {status}" if status is not None else "no status in the answer")
                )
                outcomes.append(_Outcome.of(t, False, status, elapsed, err, meta, status == 404))
        return outcomes


_CLIENT: contextvars.ContextVar[httpx.AsyncClient] = contextvars.ContextVar("citeverify_client")
_shared: httpx.AsyncClient | None = None


def _forget_shared_client() -> None:
    # In a forked child the shared client belongs to the parent's loop, which did not come along.
    global _shared  # noqa: PLW0603
    _shared = None


os.register_at_fork(after_in_child=_forget_shared_client)


def _new_client() -> httpx.AsyncClient:
    # Timeouts and the User-Agent are set per request, from each verifier's settings. No cookie
    # is kept: every page an answer links to could add some to the shared client, for as long
    # as the process lives (issue 9), and no lookup needs one.
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


@dataclass(frozen=True, slots=True)
class _Outcome:
    record: LookupRecord
    definitive: bool

    @classmethod
    def of(
        cls,
        target: Target,
        ok: bool,
        status: int | None,
        elapsed: float,
        error: str | None,
        metadata: dict[str, Any] | None = None,
        definitive: bool = False,
    ) -> _Outcome:
        record = LookupRecord(
            service=target.service,
            target=target.key,
            ok=ok,
            status_code=status,
            elapsed_ms=round(elapsed, 1),
            cached=False,
            error=None if error is None else _clean(error, _MAX_REASON),
            metadata=metadata or {},
        )
        return cls(record, definitive)

    @classmethod
    def failed(cls, target: Target, reason: str, elapsed: float) -> _Outcome:
        return cls.of(target, False, None, elapsed, reason)


def _cached_record(payload: dict[str, Any] | None) -> LookupRecord | None:
    """A record from the cache, or None (a miss) when the payload is not one (a damaged file)."""
    if payload is None:
        return None
    try:
        return LookupRecord.from_dict({**payload, "cached": True, "elapsed_ms": 0.0})
    except ValueError:
        return None


def _failure_reason(exc: BaseException, timeout: float) -> str:
    """The one place where a lookup's exception becomes a reason for people."""
    if isinstance(exc, TimeoutError | httpx.TimeoutException):
        return f"timed out after {timeout:g}s"
    if isinstance(exc, _Failure):
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


def _clean(text: str, limit: int) -> str:
    """Text from a service made safe to serialize: lone surrogates replaced, length capped."""
    text = text[: limit + 1].encode("utf-8", "replace").decode("utf-8")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _text(value: Any, limit: int = 1000) -> str | None:
    """A non-empty string field of an untrusted payload, cleaned; anything else is None."""
    return _clean(value, limit) if isinstance(value, str) and value.strip() else None


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    if value.isascii() and value.isdigit():  # not "²" or "٣": str.isdigit says yes to those
        return float(value)  # a 5,000-digit value is inf: beyond any deadline
    from email.utils import parsedate_to_datetime  # noqa: PLC0415

    try:
        when = parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError, IndexError):
        return None


def _http_error(response: httpx.Response) -> str:
    return f"HTTP {response.status_code} {response.reason_phrase}".strip()


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


def _parse_url(text: str, *, base: httpx.URL | None = None, what: str = "URL") -> httpx.URL:
    """``text`` (resolved against ``base``) as a URL we can fetch, else a failure that says why.

    httpx raises ``InvalidURL`` (a bad port, ``[::1``, ``0177.0.0.1``) and ``UnicodeError`` (a
    host that fails IDNA); urllib-style joining raises ``ValueError``. Parsing is where an answer
    or a ``Location`` header first touches the network code, so the reason names the URL.
    """
    shown = _clean(repr(text), 200)
    try:
        url = httpx.URL(text) if base is None else base.join(text)
        port = url.port
        raw_host = url.raw_host
    except (httpx.InvalidURL, ValueError) as exc:
        msg = f"invalid {what} {shown}: {exc}"
        raise _Failure(msg) from None
    if url.scheme not in {"http", "https"}:
        msg = f"blocked: scheme {url.scheme!r} is not http(s)"
        raise _Failure(msg)
    if not raw_host:
        msg = f"invalid {what} {shown}: no host"
        raise _Failure(msg)
    if port is not None and not 0 < port < 65536:
        msg = f"invalid {what} {shown}: port {port} out of range"
        raise _Failure(msg)
    return url


_IPV4_PART = re.compile(r"0[xX][0-9a-fA-F]*|[0-9]+")


def _legacy_ipv4(host: str) -> bool:
    """Whether a host is an IPv4 address written other than as four decimal numbers.

    The WHATWG URL standard reads a host whose last label is a number as IPv4 (octal ``0177``,
    hex ``0x7f``, fewer than four parts, one 32-bit number, a trailing dot); ``inet_aton`` does
    too. Only the dotted-quad form is judged by address; the others are refused outright.
    """
    if ":" in host:  # IPv6, even with a dotted tail (::ffff:1.2.3.4)
        return False
    labels = host.split(".")
    if labels and labels[-1] == "":
        labels.pop()  # "127.0.0.1." resolves like "127.0.0.1"
    if not labels or not _IPV4_PART.fullmatch(labels[-1]):
        return False
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        return True
    return False


# Prefixes whose IPv6 addresses carry an IPv4 address a gateway may forward to (issue 9):
# 6to4 (2002::/16, RFC 3056), Teredo (2001::/32, RFC 4380; the client is XOR-obfuscated),
# NAT64 (64:ff9b::/96, RFC 6052; 64:ff9b:1::/48 is local use), IPv4-compatible (::/96) and
# IPv4-translated (::ffff:0:0/96, RFC 2765).
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_COMPATIBLE = ipaddress.IPv6Network("::/96")
_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    embedded: list[ipaddress.IPv4Address] = []
    if address.sixtofour is not None:
        embedded.append(address.sixtofour)
    if address.teredo is not None:
        embedded.extend(address.teredo)
    compatible = address in _COMPATIBLE and int(address) > 1  # :: and ::1 are judged as such
    if compatible or address in _NAT64 or address in _TRANSLATED:
        embedded.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return embedded


def _forbidden(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why a URL check may not connect to ``address``, or None when it may."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:  # the connection goes to the IPv4 address
            return _forbidden(address.ipv4_mapped)
        for inner in _embedded_ipv4(address):
            problem = _forbidden(inner)
            if problem:
                return f"which embeds {inner}, {problem}"
    for flag in ("loopback", "private", "link_local", "multicast", "reserved", "unspecified"):
        if getattr(address, f"is_{flag}"):
            return f"a {flag.replace('_', '-')} address"
    if not address.is_global:
        return "not a public address"
    return None


def _parse_allow_list(
    entries: Iterable[str],
) -> tuple[set[str], list[ipaddress.IPv4Network | ipaddress.IPv6Network]]:
    names: set[str] = set()
    nets: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for entry in entries:
        try:
            nets.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            names.add(entry.lower())
    return names, nets


# --- bodies -----------------------------------------------------------------------------------


_WBITS = {
    "": None,
    "identity": None,
    "gzip": zlib.MAX_WBITS | 16,
    "x-gzip": zlib.MAX_WBITS | 16,
    "deflate": zlib.MAX_WBITS | 32,  # zlib-wrapped or gzip; raw deflate: see _inflate
}


async def _read_body(response: httpx.Response, limit: int, *, truncate: bool = False) -> bytes:
    """The decompressed body, never more than ``limit`` bytes of it.

    Raw bytes are read and decompressed here with ``max_length``, so a compression bomb stops at
    the limit (httpx's own decoders inflate a whole network chunk at once, ~1000x for deflate).
    Reading stops at the first byte past the limit, and closing the response drops the
    connection: a 1 GiB body costs the limit's transfer, not the gigabyte.

    Raises:
        _Failure: the body is over ``limit`` (unless ``truncate``), or compressed in a way we did
            not ask for.
    """
    encoding = str(response.headers.get("content-encoding", "")).strip().lower()
    if encoding not in _WBITS:
        msg = f"unsupported content encoding {_clean(repr(encoding), 60)} in the response"
        raise _Failure(msg)
    wbits = _WBITS[encoding]
    decoder = None if wbits is None else zlib.decompressobj(wbits)
    body = bytearray()
    async for chunk in response.aiter_raw():
        room = limit + 1 - len(body)  # >= 1: zlib reads max_length=0 as "no limit"
        if decoder is None:
            body += chunk[:room]
        else:
            decoder = _inflate(decoder, chunk, room, body)
        if len(body) > limit:
            if truncate:
                return bytes(body[:limit])
            msg = f"response larger than {limit} bytes"
            raise _Failure(msg)
    return bytes(body)


def _inflate(
    decoder: zlib._Decompress, chunk: bytes, room: int, body: bytearray
) -> zlib._Decompress:
    """Append at most ``room`` decompressed bytes of ``chunk`` to ``body``; the decoder to go on.

    When fewer than ``room`` bytes come out, zlib has consumed all of ``chunk``, so nothing is
    left behind. Raw deflate (no zlib header, sent by some servers as "deflate") is retried as
    such on the first chunk, as httpx does.
    """
    try:
        body += decoder.decompress(chunk, room)
    except zlib.error:
        if body or decoder.eof:
            raise
        decoder = zlib.decompressobj(-zlib.MAX_WBITS)
        body += decoder.decompress(chunk, room)
    return decoder


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
    """An untrusted JSON answer, decoded within bounds, or a ``ValueError``/``_Failure``.

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
    """
    if json_depth(body) > _MAX_JSON_DEPTH:
        msg = f"malformed JSON in the response (nested deeper than {_MAX_JSON_DEPTH} levels)"
        raise _Failure(msg)
    text = body.decode("utf-8-sig")  # UnicodeDecodeError: mapped by _failure_reason
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
        raise _Failure(msg)
    return value


def _int64(text: str) -> int:
    # Length first: int() of over 4,300 digits raises ValueError with a message about sys.
    value = int(text) if len(text) <= 20 else 1 << 64
    if not -(1 << 63) <= value < 1 << 63:
        msg = f"malformed JSON in the response (integer out of range: {text[:40]})"
        raise _Failure(msg)
    return value


def _no_constant(text: str) -> Any:
    msg = f"malformed JSON in the response ({text} is not a JSON number)"
    raise _Failure(msg)


def _scrub(value: Any) -> Any:
    """``value`` with lone surrogates in its strings replaced (depth is bounded by now)."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    return value


# --- metadata ---------------------------------------------------------------------------------


def _crossref_metadata(message: dict[str, Any]) -> dict[str, Any]:
    # One parser for bibliographic payloads, shared with the reference verifier. Imported here:
    # citeverify_core.references imports this module.
    from citeverify_core.references.index import record_from_work  # noqa: PLC0415

    record = record_from_work(message)
    if record is None:
        msg = "unexpected Crossref response (not a work)"
        raise _Failure(msg)
    return _metadata(record)


def _pubmed_metadata(entry: dict[str, Any]) -> dict[str, Any]:
    from citeverify_core.references.index import record_from_esummary  # noqa: PLC0415

    return _metadata(record_from_esummary(entry))


def _metadata(record: Any) -> dict[str, Any]:
    """What a UI shows about the work a DOI or PMID really is (every field type-checked)."""
    authors = []
    for a in record.authors:
        name = " ".join(p for p in (a.given, a.family) if isinstance(p, str) and p)
        if name:
            authors.append(_clean(name, 300))
    year = record.year
    return {
        "title": _text(record.title),
        "authors": authors,
        "year": year if type(year) is int else None,
        "container": _text(record.venue),
        "type": _text(record.kind, 100),
        "doi": _text(record.doi, 300),
    }
