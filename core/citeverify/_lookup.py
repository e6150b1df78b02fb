"""External lookups (seed 000, step 5): Crossref, NCBI E-utilities, URLs, and CourtListener.

Every lookup becomes a :class:`~citeverify.LookupRecord`; nothing here raises into the verifier.
The single place that turns exceptions into outcomes is :func:`_failure_reason`.

URL checks treat the answer as hostile: only http(s), never loopback, private, link-local,
multicast or reserved addresses (checked after DNS resolution and again after every redirect, and
the connection is pinned to the address that was checked, so a second DNS answer cannot swap it),
no cookies or credentials, a bounded number of bytes read.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import ipaddress
import json
import os
import re
import socket
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote, urljoin

import httpx

from citeverify._policy import LookupSettings
from citeverify._result import LookupRecord
from citeverify._runner import on_background_loop

__all__ = ["LookupCache", "Lookups", "Target"]

Service = Literal["crossref", "pubmed", "url", "courtlistener"]
_REDIRECTS = {301, 302, 303, 307, 308}
_RETRY_STATUSES = {429, 503}


@dataclass(frozen=True, slots=True)
class Target:
    """Something to look up: a DOI at Crossref, a PMID at PubMed, a URL, a case citation."""

    service: Service
    key: str


class _Failure(Exception):
    """A lookup that failed for a reason we can state (blocked address, bad shape, ...)."""


class LookupCache:
    """Results of lookups, in memory with a TTL, and optionally in a SQLite file.

    Only definitive outcomes are stored: found (``ttl``) and not found (``negative_ttl``, shorter).
    Timeouts and server errors are not cached: the next call tries again.
    """

    def __init__(self, path: str | Path | None = None, *, max_entries: int = 10_000) -> None:
        self._memory: OrderedDict[tuple[str, str], tuple[float, dict[str, Any]]] = OrderedDict()
        self._max = max_entries
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if path is not None:
            self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS lookups (service TEXT NOT NULL, key TEXT NOT NULL, "
                "expires REAL NOT NULL, payload TEXT NOT NULL, PRIMARY KEY (service, key))"
            )

    def get(self, service: str, key: str) -> dict[str, Any] | None:
        """The stored payload, or None when absent or expired."""
        now = time.time()
        with self._lock:
            item = self._memory.get((service, key))
            if item is not None:
                if item[0] > now:
                    self._memory.move_to_end((service, key))
                    return item[1]
                del self._memory[(service, key)]
            if self._db is None:
                return None
            row = self._db.execute(
                "SELECT expires, payload FROM lookups WHERE service = ? AND key = ?", (service, key)
            ).fetchone()
        if row is None or row[0] <= now:
            return None
        payload: dict[str, Any] = json.loads(row[1])
        self._remember(service, key, row[0], payload)
        return payload

    def put(self, service: str, key: str, payload: dict[str, Any], ttl: float) -> None:
        """Store a payload for ``ttl`` seconds (nothing is stored when ``ttl`` is 0)."""
        if ttl <= 0:
            return
        expires = time.time() + ttl
        self._remember(service, key, expires, payload)
        if self._db is not None:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO lookups VALUES (?, ?, ?, ?)",
                    (service, key, expires, json.dumps(payload)),
                )

    def _remember(self, service: str, key: str, expires: float, payload: dict[str, Any]) -> None:
        with self._lock:
            self._memory[(service, key)] = (expires, payload)
            self._memory.move_to_end((service, key))
            while len(self._memory) > self._max:
                self._memory.popitem(last=False)

    def close(self) -> None:
        """Close the SQLite file, if any."""
        if self._db is not None:
            self._db.close()
            self._db = None


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

        Raises:
            httpx.HTTPError, ValueError: transport failures and malformed JSON, for the caller's
                single failure mapping.
        """
        response = await self._get(
            url, params=params, headers={"User-Agent": self.settings.user_agent, **(headers or {})}
        )
        if response.status_code != 200:
            return response.status_code, None
        return 200, response.json()

    async def _run(self, targets: list[Target]) -> list[LookupRecord]:
        targets = list(dict.fromkeys(targets))[: self.settings.max_lookups]
        records: dict[Target, LookupRecord] = {}
        todo: list[Target] = []
        for t in targets:
            payload = self.cache.get(t.service, t.key)
            if payload is not None:
                records[t] = LookupRecord(**payload, cached=True, elapsed_ms=0.0)
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
        except (httpx.HTTPError, OSError, TimeoutError, ValueError, _Failure) as exc:
            elapsed = (time.perf_counter() - start) * 1000
            reason = _failure_reason(exc, self.settings.timeout)
            return [_Outcome.failed(t, reason, elapsed) for t in group]

    def _store(self, outcome: _Outcome) -> None:
        if outcome.definitive and not outcome.record.cached:
            r = outcome.record
            ttl = self.settings.cache_ttl if r.ok else self.settings.negative_cache_ttl
            payload = r.model_dump(exclude={"cached", "elapsed_ms"})
            self.cache.put(r.service, r.target, payload, ttl)

    async def _get(
        self,
        url: str,
        *,
        params: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        """GET with retries on 429/503 honouring Retry-After, within the call's deadline."""
        deadline = time.monotonic() + self.settings.timeout
        attempt = 0
        while True:
            self.calls += 1
            response = await self._http().get(
                url, params=params, headers=headers, timeout=self._timeout()
            )
            if response.status_code not in _RETRY_STATUSES or attempt >= self.settings.retries:
                return response
            delay = _retry_after(response) or 0.25 * 2**attempt
            if time.monotonic() + delay >= deadline:
                return response  # waiting longer would break the call's deadline
            await asyncio.sleep(delay)
            attempt += 1

    # --- Crossref -----------------------------------------------------------------------------

    async def _crossref(self, doi: str) -> _Outcome:
        s = self.settings
        start = time.perf_counter()
        url = f"{s.crossref_base_url.rstrip('/')}/works/{quote(doi, safe='/:;()<>[]')}"
        params = {"mailto": s.mailto} if s.mailto else None
        agent = f"{s.user_agent} (mailto:{s.mailto})" if s.mailto else s.user_agent
        response = await self._get(url, params=params, headers={"User-Agent": agent})
        elapsed = (time.perf_counter() - start) * 1000
        target = Target("crossref", doi)
        if response.status_code == 404:
            return _Outcome.of(
                target, False, 404, elapsed, "DOI not found at Crossref", definitive=True
            )
        if response.status_code != 200:
            return _Outcome.of(target, False, response.status_code, elapsed, _http_error(response))
        data = response.json()
        message = data.get("message") if isinstance(data, dict) else None
        if not isinstance(message, dict):
            msg = "unexpected Crossref response (no message object)"
            raise _Failure(msg)
        return _Outcome.of(target, True, 200, elapsed, None, _crossref_metadata(message), True)

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
        response = await self._get(
            f"{s.ncbi_base_url.rstrip('/')}/esummary.fcgi",
            params=params,
            headers={"User-Agent": s.user_agent},
        )
        elapsed = (time.perf_counter() - start) * 1000
        targets = [Target("pubmed", p) for p in pmids]
        if response.status_code != 200:
            err = _http_error(response)
            return [_Outcome.of(t, False, response.status_code, elapsed, err) for t in targets]
        data = response.json()
        if not isinstance(data, dict):
            msg = "unexpected E-utilities response (not an object)"
            raise _Failure(msg)
        result = data.get("result")
        outcomes = []
        for t in targets:
            entry = result.get(t.key) if isinstance(result, dict) else None
            if isinstance(entry, dict) and "error" not in entry and entry.get("uid") == t.key:
                meta = _pubmed_metadata(entry)
                outcomes.append(_Outcome.of(t, True, 200, elapsed, None, meta, True))
            else:
                why = (entry or {}).get("error") if isinstance(entry, dict) else data.get("error")
                error = f"PMID not found at PubMed ({why})" if why else "PMID not found at PubMed"
                outcomes.append(_Outcome.of(t, False, 200, elapsed, error, definitive=True))
        return outcomes

    # --- URLs ---------------------------------------------------------------------------------

    async def _url(self, url: str) -> _Outcome:
        start = time.perf_counter()
        current = url
        metadata: dict[str, Any] = {}
        for _hop in range(self.settings.url_max_redirects + 1):
            response, metadata = await self._fetch(current)
            location = response.headers.get("location")
            if response.status_code in _REDIRECTS and location:
                current = urljoin(current, location)
                continue
            elapsed = (time.perf_counter() - start) * 1000
            metadata["final_url"] = current
            status = response.status_code
            ok = status < 400
            error = None if ok else _http_error(response)
            definitive = ok or status in {404, 410}
            return _Outcome.of(Target("url", url), ok, status, elapsed, error, metadata, definitive)
        msg = f"more than {self.settings.url_max_redirects} redirects"
        raise _Failure(msg)

    async def _fetch(self, url: str) -> tuple[httpx.Response, dict[str, Any]]:
        """HEAD, then a bounded GET when HEAD is refused; the address is vetted and pinned."""
        target = httpx.URL(url)
        if target.scheme not in {"http", "https"}:
            msg = f"blocked: scheme {target.scheme!r} is not http(s)"
            raise _Failure(msg)
        address = await self._vet(target)
        pinned = target.copy_with(host=address, username=None, password=None)
        host_header = target.host if target.port is None else f"{target.host}:{target.port}"
        headers = {"Host": host_header, "User-Agent": self.settings.user_agent, "Accept": "*/*"}
        extensions: dict[str, Any] = (
            {"sni_hostname": target.host} if target.scheme == "https" else {}
        )
        client = self._http()
        self.calls += 1
        request = httpx.Request("HEAD", pinned, headers=headers, extensions=extensions)
        response = await client.send(request, follow_redirects=False, auth=None)
        metadata: dict[str, Any] = {}
        if response.status_code in {403, 405, 501}:
            self.calls += 1
            request = httpx.Request("GET", pinned, headers=headers, extensions=extensions)
            response = await client.send(request, stream=True, follow_redirects=False, auth=None)
            try:
                body = await self._read_bounded(response)
            finally:
                await response.aclose()
            title = re.search(rb"<title[^>]*>([^<]{1,300})", body, re.IGNORECASE)
            if title:
                metadata["title"] = title.group(1).decode("utf-8", "replace").strip()
        if "content-type" in response.headers:
            metadata["content_type"] = response.headers["content-type"]
        return response, metadata

    async def _read_bounded(self, response: httpx.Response) -> bytes:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_raw():  # raw: a compressed body cannot expand here
            chunks.append(chunk)
            size += len(chunk)
            if size >= self.settings.url_max_bytes:
                break
        return b"".join(chunks)[: self.settings.url_max_bytes]

    async def _vet(self, url: httpx.URL) -> str:
        """Resolve the host and return an address that URL checks may connect to."""
        host = url.host
        port = url.port or (443 if url.scheme == "https" else 80)
        if host.lower() in self._allow_names:
            return host
        try:
            addresses = [ipaddress.ip_address(host)]
        except ValueError:
            loop = asyncio.get_running_loop()
            try:
                infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except socket.gaierror as exc:
                msg = f"cannot resolve host {host!r} ({exc.strerror})"
                raise _Failure(msg) from None
            addresses = [ipaddress.ip_address(info[4][0]) for info in infos]
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
        self.calls += 1
        response = await self._http().post(
            f"{s.courtlistener_base_url.rstrip('/')}/api/rest/v4/citation-lookup/",
            data={"text": "; ".join(citations)},
            headers={"Authorization": f"Token {token}", "User-Agent": s.user_agent},
            timeout=self._timeout(),
        )
        elapsed = (time.perf_counter() - start) * 1000
        if response.status_code != 200:
            err = _http_error(response)
            return [_Outcome.of(t, False, response.status_code, elapsed, err) for t in targets]
        data = response.json()
        if not isinstance(data, list):
            msg = "unexpected CourtListener response (not a list)"
            raise _Failure(msg)
        by_citation: dict[str, dict[str, Any]] = {}
        for item in data:
            if isinstance(item, dict):
                for name in [item.get("citation"), *(item.get("normalized_citations") or [])]:
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
            status = item.get("status")
            clusters = item.get("clusters") or []
            meta = {"case_name": clusters[0].get("case_name")} if clusters else {}
            if status == 200:
                outcomes.append(_Outcome.of(t, True, 200, elapsed, None, meta, True))
            else:
                known = {300: "ambiguous", 404: "not found"}
                err = item.get("error_message") or known.get(int(status or 0), f"status {status}")
                outcomes.append(_Outcome.of(t, False, status, elapsed, err, meta, status == 404))
        return outcomes


_CLIENT: contextvars.ContextVar[httpx.AsyncClient] = contextvars.ContextVar("citeverify_client")
_shared: httpx.AsyncClient | None = None


def _new_client() -> httpx.AsyncClient:
    # Timeouts and the User-Agent are set per request, from each verifier's settings.
    return httpx.AsyncClient(
        follow_redirects=False,
        limits=httpx.Limits(max_connections=50, max_keepalive_connections=20),
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
            error=error,
            metadata=metadata or {},
        )
        return cls(record, definitive)

    @classmethod
    def failed(cls, target: Target, reason: str, elapsed: float) -> _Outcome:
        return cls.of(target, False, None, elapsed, reason)


def _failure_reason(exc: BaseException, timeout: float) -> str:
    """The one place where a lookup's exception becomes a reason for people."""
    if isinstance(exc, TimeoutError | httpx.TimeoutException):
        return f"timed out after {timeout:g}s"
    if isinstance(exc, _Failure):
        return str(exc)
    if isinstance(exc, httpx.ConnectError):
        return f"connection failed: {exc}"
    if isinstance(exc, httpx.HTTPError):
        return f"{type(exc).__name__}: {exc}"
    if isinstance(exc, json.JSONDecodeError):
        return f"malformed JSON in the response ({exc.msg})"
    if isinstance(exc, ValueError):
        return f"malformed response: {exc}"
    return f"{type(exc).__name__}: {exc}"


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    if value.strip().isdigit():
        return float(value)
    from email.utils import parsedate_to_datetime  # noqa: PLC0415

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _http_error(response: httpx.Response) -> str:
    return f"HTTP {response.status_code} {response.reason_phrase}".strip()


def _forbidden(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
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


def _crossref_metadata(message: dict[str, Any]) -> dict[str, Any]:
    # One parser for bibliographic payloads, shared with the reference verifier. Imported here:
    # citeverify.references imports this module.
    from citeverify.references._index import record_from_work  # noqa: PLC0415

    record = record_from_work(message)
    if record is None:
        msg = "unexpected Crossref response (not a work)"
        raise _Failure(msg)
    return _metadata(record)


def _pubmed_metadata(entry: dict[str, Any]) -> dict[str, Any]:
    from citeverify.references._index import record_from_esummary  # noqa: PLC0415

    return _metadata(record_from_esummary(entry))


def _metadata(record: Any) -> dict[str, Any]:
    """What a UI shows about the work a DOI or PMID really is."""
    return {
        "title": record.title,
        "authors": [" ".join(p for p in (a.given, a.family) if p) for a in record.authors],
        "year": record.year,
        "container": record.venue,
        "type": record.kind,
        "doi": record.doi,
    }
