"""Where candidates come from: the local index (the embedded default) and the public APIs.

Every source answers ``answer(ref)`` with records and, when it could not answer, why; remote
failures (timeouts, HTTP errors, malformed JSON, a body over ``max_response_bytes``, an answer of
an unexpected shape) become an empty answer plus that reason (also kept in ``failures``), never
an exception, so one source failing never fails a reference. The verifier reports the reason,
and a reference that nothing matched while a source failed is ``needs-human``, not
``unverified`` (issue 10). Payloads are untrusted (issue 9): read with :func:`_at` /
:func:`_list_at`, parsed through :func:`~citeverify_core.lookups.http.parse_payload`, and
identifiers in
URL paths are encoded with :func:`~citeverify_core.lookups.http.quote_path`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Protocol

from citeverify_core.errors import InputError
from citeverify_core.lookups.http import (
    LOOKUP_ERRORS,
    Lookups,
    _Failure,
    _failure_reason,
    parse_payload,
    quote_path,
)
from citeverify_core.policy.settings import LookupSettings
from citeverify_core.references.index import LocalIndex, record_from_esummary, record_from_work
from citeverify_core.references.model import Author, ParsedReference, Record

__all__ = ["SOURCE_NAMES", "Source", "make_sources"]

SOURCE_NAMES = ("local", "openalex", "crossref", "pubmed", "semanticscholar")


class Source(Protocol):
    """A bibliographic source."""

    name: str  # the seed's sourcesQueried value

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
            found.extend(self.index.search(ref.title, limit=limit, author=author))
        elif ref.style == "titleless" and ref.year is not None:
            # ACS, AIP, Elsevier: no title to search; the works of that year, volume and first
            # page are the candidates, and the comparison decides (issue 10).
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
        except LOOKUP_ERRORS as exc:
            # The one place where a source's failure becomes a note, by the lookups' mapping.
            failure = f"{self.name.lower()} {_failure_reason(exc, self.settings.timeout)}"
            self.failures.append(failure)
            return [], failure

    async def _candidates(self, ref: ParsedReference, limit: int) -> list[Record]:
        raise NotImplementedError

    async def _json(
        self, url: str, params: dict[str, str] | None = None, headers: dict[str, str] | None = None
    ) -> Any:
        # Answers are cached like lookups (found: cache_ttl, not found: negative_cache_ttl), so
        # re-checking a bibliography makes no new calls.
        key = url + "?" + "&".join(f"{k}={v}" for k, v in sorted((params or {}).items()))
        cached = self.lookups.cache.get(self.name, key)
        if cached is not None:
            return cached.get("data")
        status, data = await self.lookups.get_json(url, params=params, headers=headers)
        if status == 200:
            self.lookups.cache.put(self.name, key, {"data": data}, self.settings.cache_ttl)
            return data
        if status == 404:
            self.lookups.cache.put(self.name, key, {"data": None}, self.settings.negative_cache_ttl)
            return None
        # Any other status (429 after the retries, 5xx): the source could not answer.
        msg = f"answered HTTP {status}"
        raise _Failure(msg)


def _at(data: Any, *path: str) -> Any:
    """``data[path[0]][path[1]]...``, or None as soon as the shape is not what the API documents."""
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _list_at(data: Any, *path: str) -> list[Any]:
    value = _at(data, *path)
    return value if isinstance(value, list) else []


class OpenAlexSource(_Remote):
    """OpenAlex: ``/works/doi:...`` and ``/works?search=``."""

    name = "OPENALEX"

    async def _candidates(self, ref: ParsedReference, limit: int) -> list[Record]:
        base = self.settings.openalex_base_url.rstrip("/")
        mail = {"mailto": self.settings.mailto} if self.settings.mailto else {}
        found: list[Record] = []
        if ref.doi:
            data = await self._json(f"{base}/works/doi:{quote_path(ref.doi)}", mail)
            if isinstance(data, dict) and (r := _work(data, "OpenAlex")):
                found.append(r)
        if ref.title:
            data = await self._json(
                f"{base}/works", {"search": ref.title, "per-page": str(limit), **mail}
            )
            for work in _list_at(data, "results")[:limit]:
                if r := _work(work, "OpenAlex"):
                    found.append(r)
        return found


class CrossrefSource(_Remote):
    """Crossref: ``/works/{doi}`` and ``/works?query.bibliographic=`` (polite pool with mailto)."""

    name = "CROSSREF"

    async def _candidates(self, ref: ParsedReference, limit: int) -> list[Record]:
        base = self.settings.crossref_base_url.rstrip("/")
        mail = {"mailto": self.settings.mailto} if self.settings.mailto else {}
        found: list[Record] = []
        if ref.doi:
            data = await self._json(
                f"{base}/works/{quote_path(ref.doi, safe='/:;()')}", mail or None
            )
            if isinstance(data, dict) and (r := _work(data, "Crossref")):
                found.append(r)
        query = ref.raw if len(ref.raw) < 1000 else (ref.title or "")
        data = await self._json(
            f"{base}/works", {"query.bibliographic": query, "rows": str(limit), **mail}
        )
        for item in _list_at(data, "message", "items")[:limit]:
            if r := _work(item, "Crossref"):
                found.append(r)
        return found


class PubMedSource(_Remote):
    """PubMed: esearch on the title, then esummary (JSON)."""

    name = "PUBMED"

    async def _candidates(self, ref: ParsedReference, limit: int) -> list[Record]:
        if not ref.title:
            return []
        base = self.settings.ncbi_base_url.rstrip("/")
        common = {"db": "pubmed", "retmode": "json", "tool": self.settings.ncbi_tool}
        if self.settings.mailto:
            common["email"] = self.settings.mailto
        if self.settings.ncbi_api_key:
            common["api_key"] = self.settings.ncbi_api_key
        search = await self._json(
            f"{base}/esearch.fcgi", {**common, "term": f"{ref.title}[Title]", "retmax": str(limit)}
        )
        # A hostile esearch could list a million ids, or text, for the esummary query.
        ids = [i for i in _list_at(search, "esearchresult", "idlist") if _is_pmid(i)][:limit]
        if not ids:
            return []
        summary = await self._json(f"{base}/esummary.fcgi", {**common, "id": ",".join(ids)})
        records = []
        for uid in ids:
            entry = _at(summary, "result", uid)
            if isinstance(entry, dict) and "error" not in entry:
                records.append(parse_payload(record_from_esummary, entry, "E-utilities"))
        return records


class SemanticScholarSource(_Remote):
    """Semantic Scholar: ``/graph/v1/paper/search/match`` (optional API key)."""

    name = "SEMANTIC_SCHOLAR"

    async def _candidates(self, ref: ParsedReference, limit: int) -> list[Record]:
        if not ref.title:
            return []
        base = self.settings.semanticscholar_base_url.rstrip("/")
        headers = (
            {"x-api-key": self.settings.semanticscholar_api_key}
            if self.settings.semanticscholar_api_key
            else None
        )
        fields = "title,authors,year,venue,externalIds,journal"
        data = await self._json(
            f"{base}/graph/v1/paper/search/match", {"query": ref.title, "fields": fields}, headers
        )
        return [
            parse_payload(_s2_record, paper, "Semantic Scholar")
            for paper in _list_at(data, "data")[:limit]
            if isinstance(paper, dict)
        ]


def _s2_record(paper: dict[str, Any]) -> Record:
    """A Record from one Semantic Scholar paper, every field type-checked (untrusted answer)."""
    authors = []
    for a in _list_at(paper, "authors"):
        name = _at(a, "name")
        parts = name.split() if isinstance(name, str) else []
        if parts:
            authors.append(Author(parts[-1], " ".join(parts[:-1])))
    doi = _at(paper, "externalIds", "DOI")
    venue = _at(paper, "venue")
    if not isinstance(venue, str) or not venue:
        venue = _at(paper, "journal", "name")
    year = _at(paper, "year")
    title = _at(paper, "title")
    return Record(
        source="SEMANTIC_SCHOLAR",
        title=title if isinstance(title, str) else None,
        authors=tuple(authors),
        year=year if type(year) is int else None,
        venue=venue if isinstance(venue, str) and venue else None,
        doi=doi.lower() if isinstance(doi, str) else None,
    )


def _work(payload: Any, service: str) -> Record | None:
    return parse_payload(record_from_work, payload, service)


def _is_pmid(value: Any) -> bool:
    return isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 12


def make_sources(names: Sequence[str], *, index: LocalIndex | None, lookups: Lookups) -> list[Any]:
    """The sources named: ``local``, ``openalex``, ``crossref``, ``pubmed``, ``semanticscholar``."""
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
