"""Where candidates come from: the local index (the embedded default) and the public APIs.

Every source answers ``answer(ref)`` with records and, when it could not answer, why; remote
failures (timeouts, HTTP errors, malformed JSON, a body over ``max_response_bytes``, an answer of
an unexpected shape) become an empty answer plus that reason (also kept in ``failures``), never
an exception, so one source failing never fails a reference. The verifier reports the reason,
and a reference that nothing matched while a source failed is ``needs-human``, not
``unverified``. The remote sources are the services' clients in :mod:`citeverify_core.lookups`
(one HTTP core: its retries, rate limits, bounded reads, JSON guard and cache), which parse
the untrusted payloads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Protocol

from citeverify_core.errors import InputError
from citeverify_core.lookups import http as core
from citeverify_core.lookups.http import failure_reason
from citeverify_core.lookups.resolve import Lookups
from citeverify_core.policy.settings import LookupSettings
from citeverify_core.references.index import LocalIndex
from citeverify_core.references.model import ParsedReference, Record

__all__ = ["SOURCE_NAMES", "Source", "make_sources"]

SOURCE_NAMES = ("local", "openalex", "crossref", "pubmed", "semanticscholar")


class Source(Protocol):
    """A bibliographic source."""

    name: str  # the reference-verification API's sourcesQueried value

    async def candidates(self, ref: ParsedReference, limit: int) -> list[Record]:
        """Records that may be the referenced work."""
        ...

    async def answer(self, ref: ParsedReference, limit: int) -> tuple[list[Record], str | None]:
        """:meth:`candidates`, and why the source could not answer (None when it did)."""
        ...


#: Candidates of one year, volume and first page taken for a titleless reference.
_NUMBERS = 50


class LocalSource:
    """The SQLite FTS5 index."""

    name = "LOCAL"

    def __init__(self, index: LocalIndex) -> None:
        self.index = index

    async def candidates(self, ref: ParsedReference, limit: int) -> list[Record]:
        found = []
        if ref.doi and (record := self.index.by_doi(ref.doi)) is not None:
            found.append(record)
        author = ref.authors[0].family if ref.authors else None
        if ref.title:
            found.extend(self.index.search(ref.title, limit=limit, author=author, year=ref.year))
        elif ref.style == "titleless" and ref.year is not None:
            # ACS, AIP, Elsevier: no title to search; the works of that year, volume and first
            # page are the candidates, and the comparison decides.
            found.extend(
                self.index.by_numbers(
                    year=ref.year,
                    volume=ref.volume,
                    first_page=ref.first_page,
                    author=author,
                    limit=_NUMBERS,
                )
            )
        return found

    async def answer(self, ref: ParsedReference, limit: int) -> tuple[list[Record], str | None]:
        return await self.candidates(ref, limit), None


class _Remote:
    name = "REMOTE"

    def __init__(self, lookups: Lookups) -> None:
        self.lookups = lookups
        self.settings: LookupSettings = lookups.settings
        self.failures: list[str] = []

    async def candidates(self, ref: ParsedReference, limit: int) -> list[Record]:
        records, _ = await self.answer(ref, limit)
        return records

    async def answer(self, ref: ParsedReference, limit: int) -> tuple[list[Record], str | None]:
        try:
            async with asyncio.timeout(self.settings.timeout):
                return await self._candidates(ref, limit), None
        except core.LOOKUP_ERRORS as exc:
            # The one place where a source's failure becomes a note, by the core's mapping.
            failure = f"{self.name.lower()} {failure_reason(exc, self.settings.timeout)}"
            self.failures.append(failure)
            return [], failure

    async def _candidates(self, ref: ParsedReference, limit: int) -> list[Record]:
        raise NotImplementedError


class OpenAlexSource(_Remote):
    """OpenAlex: ``/works/doi:...`` and ``/works?search=``."""

    name = "OPENALEX"

    async def _candidates(self, ref: ParsedReference, limit: int) -> list[Record]:
        openalex = self.lookups.works.openalex
        found: list[Record] = []
        if ref.doi and (record := await openalex.by_doi(ref.doi)):
            found.append(record)
        if ref.title:
            found.extend(await openalex.search(ref.title, limit))
        return found


class CrossrefSource(_Remote):
    """Crossref: ``/works/{doi}`` and ``/works?query.bibliographic=`` (polite pool with mailto)."""

    name = "CROSSREF"

    async def _candidates(self, ref: ParsedReference, limit: int) -> list[Record]:
        crossref = self.lookups.works.crossref
        found: list[Record] = []
        if ref.doi and (record := await crossref.by_doi(ref.doi)):
            found.append(record)
        query = ref.raw if len(ref.raw) < 1000 else (ref.title or "")
        found.extend(await crossref.search(query, limit))
        return found


class PubMedSource(_Remote):
    """PubMed: esearch on the title, then esummary (JSON), at NCBI's rate."""

    name = "PUBMED"

    async def _candidates(self, ref: ParsedReference, limit: int) -> list[Record]:
        if not ref.title:
            return []
        return await self.lookups.works.pubmed.search(ref.title, limit)


class SemanticScholarSource(_Remote):
    """Semantic Scholar: ``/graph/v1/paper/search/match`` (optional API key)."""

    name = "SEMANTIC_SCHOLAR"

    async def _candidates(self, ref: ParsedReference, limit: int) -> list[Record]:
        if not ref.title:
            return []
        return await self.lookups.works.semanticscholar.match(ref.title, limit)


def make_sources(names: Sequence[str], *, index: LocalIndex | None, lookups: Lookups) -> list[Any]:
    """The sources named: ``local``, ``openalex``, ``crossref``, ``pubmed``, ``semanticscholar``.

    Raises:
        InputError: an unknown name, or ``local`` without an index.
    """
    out: list[Any] = []
    for name in names:
        if name == "local":
            if index is None:
                msg = "the local source needs an index (ReferenceVerifier(index=...))"
                raise InputError(msg, path="sources")
            out.append(LocalSource(index))
        elif name == "openalex":
            out.append(OpenAlexSource(lookups))
        elif name == "crossref":
            out.append(CrossrefSource(lookups))
        elif name == "pubmed":
            out.append(PubMedSource(lookups))
        elif name == "semanticscholar":
            out.append(SemanticScholarSource(lookups))
        else:
            msg = f"unknown source {name!r}; choose from {', '.join(SOURCE_NAMES)}"
            raise InputError(msg, path="sources")
    return out
