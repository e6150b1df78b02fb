"""Verify reference strings: parse -> search sources -> compare fields -> decide -> report."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from citeverify._errors import InputError
from citeverify.references._compare import CANDIDATE_MIN_TITLE, compare, decide, norm
from citeverify.references._index import LocalIndex
from citeverify.references._model import ParsedReference, Record
from citeverify.references._parse import parse_reference
from citeverify.references._result import ReferenceResult, build_result

__all__ = ["ReferenceVerifier"]


class ReferenceVerifier:
    """Checks reference strings against bibliographic records.

    Args:
        index: The local index (a :class:`LocalIndex` or the path of its SQLite file), the
            embedded default source.
        candidates: Candidates taken from each source per reference.
        max_concurrency: References verified at once by :meth:`averify_many` (seed: 15).

    Remote sources (OpenAlex, Crossref, PubMed, Semantic Scholar) are not wired in yet: the
    local index is the only source today.
    """

    def __init__(
        self, index: LocalIndex | str | Path, *, candidates: int = 5, max_concurrency: int = 15
    ) -> None:
        self.index = index if isinstance(index, LocalIndex) else LocalIndex(index)
        self.candidates = candidates
        self.max_concurrency = max_concurrency

    def verify(self, reference: str) -> ReferenceResult:
        """Verify one reference string.

        Raises:
            InputError: the reference is empty, not a string, or over 1,200 characters.
        """
        start = time.perf_counter()
        ref = parse_reference(reference)
        records = self._candidates(ref)
        comparisons = [compare(ref, r) for r in records]
        status, best, reasoning = decide(ref, comparisons)
        elapsed = (time.perf_counter() - start) * 1000
        return build_result(
            ref, comparisons, status, best, reasoning, sources=["LOCAL"], elapsed_ms=elapsed
        )

    async def averify(self, reference: str) -> ReferenceResult:
        """Async :meth:`verify` (the SQLite queries take milliseconds: they run inline)."""
        return self.verify(reference)

    def verify_many(
        self, references: Sequence[str], *, progress: Callable[[int, int], None] | None = None
    ) -> list[ReferenceResult]:
        """Verify several references; one that cannot be checked never fails the others."""
        results = []
        for i, reference in enumerate(references, 1):
            results.append(self._isolated(reference))
            if progress is not None:
                progress(i, len(references))
        return results

    async def averify_many(
        self, references: Sequence[str], *, progress: Callable[[int, int], None] | None = None
    ) -> list[ReferenceResult]:
        """Async :meth:`verify_many`, ``max_concurrency`` references at a time."""
        semaphore = asyncio.Semaphore(self.max_concurrency)
        done = 0

        async def one(reference: str) -> ReferenceResult:
            nonlocal done
            async with semaphore:
                result = self._isolated(reference)
                await asyncio.sleep(0)
            done += 1
            if progress is not None:
                progress(done, len(references))
            return result

        return list(await asyncio.gather(*(one(r) for r in references)))

    def _isolated(self, reference: str) -> ReferenceResult:
        try:
            return self.verify(reference)
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

    def _candidates(self, ref: ParsedReference) -> list[Record]:
        found: dict[str, Record] = {}
        if ref.doi:
            record = self.index.by_doi(ref.doi)
            if record is not None:
                found[record.doi or record.title or ""] = record
        if ref.title:
            from rapidfuzz import fuzz  # noqa: PLC0415

            title = norm(ref.title)
            for record in self.index.search(ref.title, limit=self.candidates):
                if (
                    record.title
                    and fuzz.token_set_ratio(title, norm(record.title)) >= CANDIDATE_MIN_TITLE
                ):
                    found.setdefault(record.doi or record.title, record)  # merged by DOI
        return list(found.values())
