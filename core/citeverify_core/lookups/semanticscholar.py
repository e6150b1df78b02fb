"""Semantic Scholar: the title match (``/graph/v1/paper/search/match``, optional API key)."""

from __future__ import annotations

from typing import Any

from citeverify_core.lookups.bibliographic import Author, Record, as_dict, as_list
from citeverify_core.lookups.http import Outbound, parse_payload

__all__ = ["SEMANTIC_SCHOLAR", "SemanticScholar", "record_from_paper"]

#: The cache's namespace for Semantic Scholar answers.
SEMANTIC_SCHOLAR = "SEMANTIC_SCHOLAR"
_FIELDS = "title,authors,year,venue,externalIds,journal"


def record_from_paper(paper: Any) -> Record:
    """A Record from one Semantic Scholar paper, every field type-checked (untrusted answer)."""
    paper = as_dict(paper)
    authors = []
    for a in as_list(paper.get("authors")):
        name = as_dict(a).get("name")
        parts = name.split() if isinstance(name, str) else []
        if parts:
            authors.append(Author(parts[-1], " ".join(parts[:-1])))
    doi = as_dict(paper.get("externalIds")).get("DOI")
    venue = paper.get("venue")
    if not isinstance(venue, str) or not venue:
        venue = as_dict(paper.get("journal")).get("name")
    year = paper.get("year")
    title = paper.get("title")
    return Record(
        source="SEMANTIC_SCHOLAR",
        title=title if isinstance(title, str) else None,
        authors=tuple(authors),
        year=year if type(year) is int else None,
        venue=venue if isinstance(venue, str) and venue else None,
        doi=doi.lower() if isinstance(doi, str) else None,
    )


class SemanticScholar:
    """The Semantic Scholar Graph API, through the core's :class:`Outbound`."""

    def __init__(self, http: Outbound) -> None:
        self.http = http

    async def match(self, title: str, limit: int) -> list[Record]:
        """Papers that match ``title``, best first (answers cached).

        Raises:
            One of :data:`~citeverify_core.lookups.http.LOOKUP_ERRORS`.
        """
        s = self.http.settings
        key = s.semanticscholar_api_key
        data = await self.http.get_cached_json(
            SEMANTIC_SCHOLAR,
            f"{s.semanticscholar_base_url.rstrip('/')}/graph/v1/paper/search/match",
            {"query": title, "fields": _FIELDS},
            {"x-api-key": key} if key else None,
        )
        papers = as_dict(data).get("data")
        return [
            parse_payload(record_from_paper, paper, "Semantic Scholar")
            for paper in (papers[:limit] if isinstance(papers, list) else [])
            if isinstance(paper, dict)
        ]
