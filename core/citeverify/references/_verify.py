"""Verify reference strings: parse -> search sources -> compare fields -> decide -> report."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx
from rapidfuzz import fuzz

from citeverify._errors import InputError
from citeverify._lookup import Lookups
from citeverify._policy import LookupSettings
from citeverify._runner import run_sync
from citeverify.references._compare import CANDIDATE_MIN_TITLE, compare, decide
from citeverify.references._index import LocalIndex
from citeverify.references._model import ParsedReference, Record
from citeverify.references._parse import parse_reference
from citeverify.references._result import ReferenceResult, build_result
from citeverify.references._sources import make_sources
from citeverify.references._text import norm

__all__ = ["ReferenceVerifier"]

Progress = Callable[[int, int], None]


class ReferenceVerifier:
    """Checks reference strings against bibliographic records.

    Args:
        index: The local index (a :class:`LocalIndex` or the path of its SQLite file).
        sources: Which sources to ask, in order of preference: ``local``, ``openalex``,
            ``crossref``, ``pubmed``, ``semanticscholar``. Default: ``["local"]`` with an index
            (offline), else ``["openalex", "crossref"]``.
        settings: Base URLs, timeouts, retries, ``mailto`` and API keys
            (:class:`citeverify.PolicyConfig` ``extensions.lookups`` has the same fields).
        client: An ``httpx.AsyncClient`` for the remote sources.
        candidates: Candidates taken from each source per reference.
        max_concurrency: References verified at once (seed: 15).
    """

    def __init__(
        self,
        index: LocalIndex | str | Path | None = None,
        *,
        sources: Sequence[str] | None = None,
        settings: LookupSettings | None = None,
        client: httpx.AsyncClient | None = None,
        candidates: int = 5,
        max_concurrency: int = 15,
    ) -> None:
        if index is not None and not isinstance(index, LocalIndex):
            index = LocalIndex(index)
        self.index = index
        names = (
            list(sources)
            if sources is not None
            else (["local"] if index else ["openalex", "crossref"])
        )
        self.lookups = Lookups(settings or LookupSettings(), client=client)
        self.sources = make_sources(names, index=index, lookups=self.lookups)
        self.candidates = candidates
        self.max_concurrency = max_concurrency

    # --- one reference --------------------------------------------------------------------------

    def verify(self, reference: str) -> ReferenceResult:
        """Verify one reference string (works inside a running event loop too).

        Raises:
            InputError: the reference is empty, not a string, or over 1,200 characters.
        """
        return run_sync(self.averify(reference))

    async def averify(self, reference: str) -> ReferenceResult:
        """Async :meth:`verify`: the sources are asked concurrently."""
        async with self.lookups.session():
            return await self._verify(reference)

    async def _verify(self, reference: str) -> ReferenceResult:
        start = time.perf_counter()
        ref = parse_reference(reference)
        answers = await asyncio.gather(*(s.candidates(ref, self.candidates) for s in self.sources))
        records = _merge(ref, [r for answer in answers for r in answer])
        comparisons = [compare(ref, r) for r in records]
        status, best, reasoning = decide(ref, comparisons)
        elapsed = (time.perf_counter() - start) * 1000
        names = [s.name for s in self.sources]
        return build_result(
            ref, comparisons, status, best, reasoning, sources=names, elapsed_ms=elapsed
        )

    # --- batches --------------------------------------------------------------------------------

    def verify_references(
        self, references: Sequence[str], *, progress: Progress | None = None
    ) -> list[ReferenceResult]:
        """Verify several references; one that cannot be checked never fails the others."""
        return run_sync(self.averify_references(references, progress=progress))

    async def averify_references(
        self, references: Sequence[str], *, progress: Progress | None = None
    ) -> list[ReferenceResult]:
        """Async :meth:`verify_references`: ``max_concurrency`` references at a time."""
        semaphore = asyncio.Semaphore(self.max_concurrency)
        done = 0

        async def one(reference: str) -> ReferenceResult:
            nonlocal done
            async with semaphore:
                result = await self.averify_or_error(reference)
            done += 1
            if progress is not None:
                progress(done, len(references))
            return result

        async with self.lookups.session():
            return list(await asyncio.gather(*(one(r) for r in references)))

    async def averify_or_error(self, reference: str) -> ReferenceResult:
        """:meth:`averify`, but a reference that cannot be read gives a result with ``error``."""
        try:
            return await self._verify(reference)
        except InputError as exc:
            return ReferenceResult(
                status="unverified",
                message=f"**Reference Match:** Unverified\n\n### Summary\n\n{exc}.",
                reference="The reference could not be read.",
                field_results={},
                match_set_size=0,
                contained_set_size=0,
                verificationGraph=None,
                error=str(exc),
            )


def _merge(ref: ParsedReference, records: list[Record]) -> list[Record]:
    """Candidates merged by DOI (the first source to find a work keeps it), close titles only."""
    title = norm(ref.title) if ref.title else ""
    merged: dict[str, Record] = {}
    for record in records:
        key = record.doi or norm(record.title or "")
        if not key or key in merged:
            continue
        same_doi = bool(ref.doi and record.doi and ref.doi == record.doi)
        close = bool(
            title
            and record.title
            and fuzz.token_set_ratio(title, norm(record.title)) >= CANDIDATE_MIN_TITLE
        )
        if same_doi or close:
            merged[key] = record
    return list(merged.values())
