"""Where candidates come from: the local index (the embedded default) and the public APIs.

Every source answers ``candidates(ref)`` with records; remote failures (timeouts, HTTP errors,
malformed JSON) become an empty answer plus a note in ``failures``, never an exception, so one
source failing never fails a reference.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Protocol
from urllib.parse import quote

import httpx

from citeverify._lookup import Lookups, _failure_reason
from citeverify._policy import LookupSettings
from citeverify.references._index import LocalIndex, record_from_esummary, record_from_work
from citeverify.references._model import Author, ParsedReference, Record

__all__ = ["SOURCE_NAMES", "Source", "make_sources"]

SOURCE_NAMES = ("local", "openalex", "crossref", "pubmed", "semanticscholar")


class Source(Protocol):
    """A bibliographic source."""

    name: str  # the seed's sourcesQueried value

    async def candidates(self, ref: ParsedReference, limit: int) -> list[Record]:
        """Records that may be the referenced work."""
        ...


class LocalSource:
    """The SQLite FTS5 index."""

    name = "LOCAL"

    def __init__(self, index: LocalIndex) -> None:
        self.index = index

    async def candidates(self, ref: ParsedReference, limit: int) -> list[Record]:
        found = []
        if ref.doi and (record := self.index.by_doi(ref.doi)) is not None:
            found.append(record)
        if ref.title:
            found.extend(self.index.search(ref.title, limit=limit))
        return found


class _Remote:
    name = "REMOTE"

    def __init__(self, lookups: Lookups) -> None:
        self.lookups = lookups
        self.settings: LookupSettings = lookups.settings
        self.failures: list[str] = []

    async def candidates(self, ref: ParsedReference, limit: int) -> list[Record]:
        try:
            async with asyncio.timeout(self.settings.timeout):
                return await self._candidates(ref, limit)
        except (httpx.HTTPError, TimeoutError, ValueError) as exc:
            # The one place where a source's failure becomes a note. Unexpected JSON shapes do
            # not get here: _at() and _list_at() read the untrusted payloads defensively.
            self.failures.append(f"{self.name}: {_failure_reason(exc, self.settings.timeout)}")
            return []

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
            data = await self._json(f"{base}/works/doi:{quote(ref.doi, safe='/')}", mail)
            if isinstance(data, dict) and (r := record_from_work(data)):
                found.append(r)
        if ref.title:
            data = await self._json(
                f"{base}/works", {"search": ref.title, "per-page": str(limit), **mail}
            )
            for work in _list_at(data, "results"):
                if r := record_from_work(work):
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
            data = await self._json(f"{base}/works/{quote(ref.doi, safe='/:;()')}", mail or None)
            if isinstance(data, dict) and (r := record_from_work(data)):
                found.append(r)
        query = ref.raw if len(ref.raw) < 1000 else (ref.title or "")
        data = await self._json(
            f"{base}/works", {"query.bibliographic": query, "rows": str(limit), **mail}
        )
        for item in _list_at(data, "message", "items"):
            if r := record_from_work(item):
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
        ids = [i for i in _list_at(search, "esearchresult", "idlist") if isinstance(i, str)]
        if not ids:
            return []
        summary = await self._json(f"{base}/esummary.fcgi", {**common, "id": ",".join(ids)})
        records = []
        for uid in ids:
            entry = _at(summary, "result", uid)
            if isinstance(entry, dict) and "error" not in entry:
                records.append(record_from_esummary(entry))
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
        records = []
        for paper in _list_at(data, "data"):
            if not isinstance(paper, dict):
                continue
            authors = []
            for a in paper.get("authors") or []:
                parts = str(a.get("name") or "").split()
                if parts:
                    authors.append(Author(parts[-1], " ".join(parts[:-1])))
            doi = (paper.get("externalIds") or {}).get("DOI")
            venue = paper.get("venue") or (paper.get("journal") or {}).get("name")
            records.append(
                Record(
                    source="SEMANTIC_SCHOLAR",
                    title=paper.get("title"),
                    authors=tuple(authors),
                    year=paper.get("year"),
                    venue=venue or None,
                    doi=doi.lower() if isinstance(doi, str) else None,
                )
            )
        return records


def make_sources(names: Sequence[str], *, index: LocalIndex | None, lookups: Lookups) -> list[Any]:
    """The sources named: ``local``, ``openalex``, ``crossref``, ``pubmed``, ``semanticscholar``."""
    out: list[Any] = []
    for name in names:
        if name == "local":
            if index is None:
                msg = "the local source needs an index (ReferenceVerifier(index=...))"
                raise ValueError(msg)
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
            raise ValueError(msg)
    return out
