"""Verify reference strings: parse -> search sources -> compare fields -> decide -> report."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeGuard

import httpx
from rapidfuzz import fuzz

from citeverify_core.errors import InputError
from citeverify_core.lookups.resolve import Lookups
from citeverify_core.policy.settings import LookupSettings
from citeverify_core.references.compare import CANDIDATE_MIN_TITLE, compare, decide
from citeverify_core.references.folding import fold
from citeverify_core.references.index import LocalIndex
from citeverify_core.references.model import LONE_SURROGATE, ParsedReference, Record
from citeverify_core.references.parse import (
    MAX_REFERENCE_CHARS,
    alternative_reading,
    parse_reference,
)
from citeverify_core.references.result import ReferenceResult, build_result
from citeverify_core.references.sources import make_sources
from citeverify_core.sync import run_sync

__all__ = ["ReferenceVerifier", "check_reference"]

_log = logging.getLogger(__name__)
#: How much of an unexpected exception's message a result keeps.
_MAX_ERROR_CHARS = 300
#: No reference, not even a BibTeX entry with an abstract, is longer than this.
_CEILING = 100 * MAX_REFERENCE_CHARS

Progress = Callable[[int, int], None]
#: ``step(name, message)``: one reference's work moved on (searching, comparing).
Step = Callable[[str, str], None]


class ReferenceVerifier:
    """Checks reference strings against bibliographic records.

    Args:
        index: The local index (a :class:`LocalIndex` or the path of its SQLite file).
        sources: Which sources to ask, in order of preference: ``local``, ``openalex``,
            ``crossref``, ``pubmed``, ``semanticscholar``. Default: ``["local"]`` with an index
            (offline), else ``["openalex", "crossref"]``.
        settings: Base URLs, timeouts, retries, ``mailto`` and API keys
            (:class:`citeverify_core.PolicyConfig` ``extensions.lookups`` has the same fields).
        client: An ``httpx.AsyncClient`` for the remote sources.
        candidates: Candidates taken from each source per reference.
        max_concurrency: References verified at once (15 by default, as the
            reference-verification API documents).
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
            InputError: the reference is empty, not a string, over 1,200 characters (a BibTeX
                entry: its bibliographic fields), or not valid Unicode (a lone surrogate).
        """
        return run_sync(self.averify(reference))

    async def averify(self, reference: str) -> ReferenceResult:
        """Async :meth:`verify`: the sources are asked concurrently."""
        async with self.lookups.session():
            result, error = await self._checked(reference)
        if error is not None:
            raise error
        return result

    async def _verify(self, reference: str, step: Step | None = None) -> ReferenceResult:
        start = time.perf_counter()
        ref = parse_reference(check_reference(reference))
        if step is not None:
            step("searching", f"asking {len(self.sources)} source(s) for candidate records")
        answers = await asyncio.gather(*(_ask(s, ref, self.candidates) for s in self.sources))
        records = _merge(ref, [r for found, _ in answers for r in found])
        if step is not None:
            step("comparing", f"comparing the reference with {len(records)} candidate(s)")
        failures = [failure for _, failure in answers if failure]
        comparisons = [compare(ref, r) for r in records]
        status, best, reasoning = decide(ref, comparisons)
        if status == "unverified" and (other := alternative_reading(ref)) is not None:
            # APA without authors puts the title first ("Title. (2017). Venue."): the first
            # reading took it for the authors. Tried only when that reading finds nothing, and
            # kept only when it is verified.
            again = await asyncio.gather(*(_ask(s, other, self.candidates) for s in self.sources))
            other_records = _merge(other, [r for found, _ in again for r in found])
            other_comparisons = [compare(other, r) for r in other_records]
            found = decide(other, other_comparisons)
            if found[0] == "verified":
                # Only when every field agrees: a guessed reading that half fits (the title
                # of another work, its venue contradicted) is no evidence of the work.
                ref, records, comparisons = other, other_records, other_comparisons
                status, best, reasoning = found
                failures = [failure for _, failure in again if failure]
        if failures and status == "unverified":
            # "Not found" is only said on the word of sources that answered.
            status = "needs-human"
            reasoning = f"could not check: {'; '.join(failures)} ({reasoning} among the answers)"
        elapsed = (time.perf_counter() - start) * 1000
        names = [s.name for s in self.sources]
        return build_result(
            ref,
            comparisons,
            status,
            best,
            reasoning,
            sources=names,
            elapsed_ms=elapsed,
            failures=failures,
        )

    async def _checked(
        self, reference: str, step: Step | None = None
    ) -> tuple[ReferenceResult, InputError | None]:
        """The one per-reference boundary: a result, and the InputError if it was unreadable."""
        try:
            return await self._verify(reference, step), None
        except InputError as exc:
            return _unreadable(str(exc)), exc
        except Exception as exc:
            # Whatever one reference meets (a parser bug, an answer from a source that
            # nothing foresaw) fails that reference alone, never the batch or the job store's
            # worker. Not hidden: the result names the exception, and the log has the traceback.
            # CancelledError and KeyboardInterrupt are not Exceptions and still stop the work.
            _log.exception("a reference could not be checked: %.100r", reference)
            return _failed(exc), None

    # --- batches --------------------------------------------------------------------------------

    def verify_references(
        self, references: Sequence[str], *, progress: Progress | None = None
    ) -> list[ReferenceResult]:
        """Verify several references; one that cannot be checked never fails the others.

        A reference that cannot be read (empty, too long, not text) gets an ``unverified``
        result with ``error``; one whose check fails unexpectedly gets a ``needs-human`` result
        with ``error`` naming the exception.

        Raises:
            InputError: ``references`` is not a list of references.
        """
        return run_sync(self.averify_references(references, progress=progress))

    async def averify_references(
        self, references: Sequence[str], *, progress: Progress | None = None
    ) -> list[ReferenceResult]:
        """Async :meth:`verify_references`: ``max_concurrency`` references at a time."""
        if not _is_list(references):
            msg = f"references must be a list of strings, got {type(references).__name__}"
            raise InputError(msg, path="references")
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

    async def averify_or_error(
        self, reference: str, *, progress: Step | None = None
    ) -> ReferenceResult:
        """:meth:`averify`, but never raises: a failure is a result with ``error``.

        ``unverified`` when the reference cannot be read, ``needs-human`` when its check failed.
        ``progress(step, message)`` is told when the work moves on (``searching``,
        ``comparing``): the job store shows it as the job's live progress.
        """
        result, _ = await self._checked(reference, progress)
        return result


def check_reference(reference: object, *, path: str = "reference") -> str:
    """``reference`` if it is text that SQLite and HTTP can carry, checked before any work.

    Lone surrogates are valid in a Python string but not in UTF-8: they would fail later, in
    SQLite or in a request. They are searched for, not encoded, so a long string costs no copy.
    The exact length limit is :func:`parse_reference`'s (1,200 characters; a BibTeX entry counts
    its bibliographic fields); a string far beyond any limit is refused here already, whatever
    the parser does first (a 50 MB string once cost 1.4 GB before it was refused).

    Raises:
        InputError: not a string, far too long, or with a lone surrogate.
    """
    if not isinstance(reference, str):
        msg = f"a reference must be a string, got {type(reference).__name__}"
        raise InputError(msg, path=path)
    if len(reference) > _CEILING:
        msg = f"a reference is at most {MAX_REFERENCE_CHARS:,} characters, got {len(reference):,}"
        raise InputError(msg, path=path)
    if (bad := LONE_SURROGATE.search(reference)) is not None:
        msg = (
            f"a reference must be valid Unicode text: character {bad.start() + 1:,} is a lone "
            f"surrogate ({bad.group()!a})"
        )
        raise InputError(msg, path=path)
    return reference


def _is_list(value: object) -> TypeGuard[Sequence[Any]]:
    """A list or tuple of items (a string or bytes is a sequence of characters, not a list)."""
    return isinstance(value, Sequence) and not isinstance(value, str | bytes | bytearray)


def _unreadable(error: str) -> ReferenceResult:
    return ReferenceResult(
        status="unverified",
        message=f"**Reference Match:** Unverified\n\n### Summary\n\n{error}.",
        reference="The reference could not be read.",
        field_results={},
        match_set_size=0,
        contained_set_size=0,
        verificationGraph=None,
        error=error,
    )


def _failed(exc: Exception) -> ReferenceResult:
    error = f"{type(exc).__name__}: {exc}"
    if len(error) > _MAX_ERROR_CHARS:
        error = error[: _MAX_ERROR_CHARS - 1] + "…"
    return ReferenceResult(
        status="needs-human",
        message=(
            "**Reference Match:** Needs human review\n\n### Summary\n\n"
            f"The reference could not be checked ({error}); check it by hand."
        ),
        reference="The reference could not be checked.",
        field_results={},
        match_set_size=0,
        contained_set_size=0,
        verificationGraph=None,
        error=error,
    )


async def _ask(source: Any, ref: ParsedReference, limit: int) -> tuple[list[Record], str | None]:
    """A source's records, and why it could not answer (None when it did).

    A source with ``candidates`` only (one of a caller's own) answers or raises.
    """
    answer = getattr(source, "answer", None)
    if answer is not None:
        found: tuple[list[Record], str | None] = await answer(ref, limit)
        return found
    return await source.candidates(ref, limit), None


def _merge(ref: ParsedReference, records: list[Record]) -> list[Record]:
    """Candidates merged by DOI (the first source to find a work keeps it), close titles only.

    A reference without a title (ACS, AIP, Elsevier) keeps the records of its year: they were
    found by year, volume and first page, and ``decide`` checks the rest.
    """
    title = fold(ref.title) if ref.title else ""
    merged: dict[str, Record] = {}
    for record in records:
        key = record.doi or fold(record.title or "")
        if not key or key in merged:
            continue
        same_doi = bool(ref.doi and record.doi and ref.doi == record.doi)
        close = bool(
            title
            and record.title
            and fuzz.token_set_ratio(title, fold(record.title)) >= CANDIDATE_MIN_TITLE
        )
        titleless = (
            not title
            and ref.style == "titleless"
            and ref.year is not None
            and record.year == ref.year
        )
        if same_doi or close or titleless:
            merged[key] = record
    return list(merged.values())
