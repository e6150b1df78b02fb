"""The answer verifier's lookups: each citation's target looked up at its service, concurrently.

:class:`Lookups` is the facade the verifiers hold: one core client (:class:`Outbound`), the
cache, and the clients of Crossref, PubMed, CourtListener and URLs (the reference sources use
OpenAlex, Crossref, PubMed and Semantic Scholar through :attr:`Lookups.works`). Every lookup
becomes a :class:`~citeverify_core.LookupRecord`; nothing here raises into the verifier.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from citeverify_core.lookups import http as core
from citeverify_core.lookups.cache import LookupCache
from citeverify_core.lookups.courtlistener import CourtListener
from citeverify_core.lookups.crossref import Crossref
from citeverify_core.lookups.http import Outbound, failure_reason
from citeverify_core.lookups.openalex import OpenAlex
from citeverify_core.lookups.outcome import Outcome, Target, cached_record
from citeverify_core.lookups.pubmed import PubMed
from citeverify_core.lookups.semanticscholar import SemanticScholar
from citeverify_core.lookups.urls import Urls

if TYPE_CHECKING:
    import httpx

    from citeverify_core.lookups.record import LookupRecord
    from citeverify_core.policy.settings import LookupSettings

__all__ = ["LookupCache", "Lookups", "Services", "Target"]


@dataclass(frozen=True, slots=True)
class Services:
    """The clients of the bibliographic services, on one core client."""

    openalex: OpenAlex
    crossref: Crossref
    pubmed: PubMed
    semanticscholar: SemanticScholar


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

    Pickled, the lookups travel as their settings and cache (:class:`LookupCache`: its file, not
    its memory) and are rebuilt on the other side; see :class:`Outbound` for a ``client``.
    """

    def __init__(
        self,
        settings: LookupSettings,
        *,
        client: httpx.AsyncClient | None = None,
        cache: LookupCache | None = None,
    ) -> None:
        self.settings = settings
        self.cache = cache if cache is not None else LookupCache(settings.cache_path)
        self.http = Outbound(settings, client=client, cache=self.cache)
        self.works = Services(
            OpenAlex(self.http), Crossref(self.http), PubMed(self.http), SemanticScholar(self.http)
        )
        self.courtlistener = CourtListener(self.http)
        self.urls = Urls(self.http)

    def __getstate__(self) -> dict[str, Any]:
        # The Outbound carries the client check (pickled: an error; deep-copied: shared).
        return {"settings": self.settings, "cache": self.cache, "http": self.http}

    def __setstate__(self, state: dict[str, Any]) -> None:
        Lookups.__init__(self, state["settings"], client=state["http"].client, cache=state["cache"])

    @property
    def calls(self) -> int:
        """HTTP requests sent (for tests and benchmarks)."""
        return self.http.calls + self.urls.http.calls

    @asynccontextmanager
    async def session(self) -> AsyncIterator[httpx.AsyncClient]:
        """The HTTP client for the calls made inside (see the class docstring for which one)."""
        async with self.http.session() as client:
            yield client

    async def run(self, targets: Iterable[Target]) -> list[LookupRecord]:
        """Look every target up; one record per target, in order."""
        async with self.session():
            return await self._run(list(targets))

    async def _run(self, targets: list[Target]) -> list[LookupRecord]:
        import asyncio  # noqa: PLC0415 - start-up time: an answer with nothing to look up needs none

        targets = list(dict.fromkeys(targets))[: self.settings.max_lookups]
        records: dict[Target, LookupRecord] = {}
        todo: list[Target] = []
        for t in targets:
            record = cached_record(self.cache.get(t.service, t.key))
            if record is not None:
                records[t] = record
            else:
                todo.append(t)
        jobs: list[tuple[list[Target], Callable[[], Awaitable[list[Outcome]]]]] = []
        pmids = [t for t in todo if t.service == "pubmed"]
        cases = [t for t in todo if t.service == "courtlistener"]
        if pmids:  # one esummary call for all of them (NCBI's rate limit is per request)
            jobs.append((pmids, lambda: self.works.pubmed.lookup([t.key for t in pmids])))
        if cases:
            jobs.append((cases, lambda: self.courtlistener.lookup([t.key for t in cases])))
        for t in todo:
            if t.service == "crossref":
                jobs.append(([t], lambda t=t: _single(self.works.crossref.lookup(t.key))))  # type: ignore[misc]
            elif t.service == "url":
                jobs.append(([t], lambda t=t: _single(self.urls.lookup(t.key))))  # type: ignore[misc]
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
                    outcomes = [Outcome.failed(t, reason, 0.0) for t in group]
                for t, outcome in zip(group, outcomes, strict=True):
                    records[t] = outcome.record
                    self._store(outcome)
        return [records[t] for t in targets]

    async def _guarded(
        self, group: list[Target], job: Callable[[], Awaitable[list[Outcome]]]
    ) -> list[Outcome]:
        import asyncio  # noqa: PLC0415 - start-up time (see _run)

        start = time.perf_counter()
        try:
            async with asyncio.timeout(self.settings.timeout):
                return await job()
        except core.LOOKUP_ERRORS as exc:  # built on first use: it names httpx's errors
            elapsed = (time.perf_counter() - start) * 1000
            reason = failure_reason(exc, self.settings.timeout)
            return [Outcome.failed(t, reason, elapsed) for t in group]

    def _store(self, outcome: Outcome) -> None:
        if outcome.definitive and not outcome.record.cached:
            r = outcome.record
            ttl = self.settings.cache_ttl if r.ok else self.settings.negative_cache_ttl
            payload = r.to_dict()
            del payload["cached"], payload["elapsed_ms"]
            self.cache.put(r.service, r.target, payload, ttl)


async def _single(coro: Awaitable[Outcome]) -> list[Outcome]:
    return [await coro]
