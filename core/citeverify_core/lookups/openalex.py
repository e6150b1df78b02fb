"""OpenAlex: a DOI's work (``/works/doi:...``) and the title search (``/works?search=``).

:func:`record_from_openalex` reads the API's works and those of OpenAlex's public snapshot.
"""

from __future__ import annotations

from typing import Any

from citeverify_core.lookups.bibliographic import (
    Record,
    as_dict,
    clean_doi,
    objects,
    split_name,
    text_field,
    year_field,
)
from citeverify_core.lookups.http import Outbound, parse_payload, quote_path
from citeverify_core.lookups.notices import own_notices

__all__ = ["OPENALEX", "OpenAlex", "is_openalex_work", "record_from_openalex"]

#: The cache's namespace for OpenAlex answers.
OPENALEX = "OPENALEX"


def is_openalex_work(work: dict[str, Any]) -> bool:
    """Whether an object has the fields that only an OpenAlex work has."""
    return "authorships" in work or "display_name" in work or "publication_year" in work


def record_from_openalex(work: Any) -> Record | None:
    """A Record from an OpenAlex work, else None.

    Never raises: a value of the wrong type is dropped and the other fields kept; authorships
    that are not a list of objects, or an object that is not an OpenAlex work, give None.
    """
    if not isinstance(work, dict) or not is_openalex_work(work):
        return None
    authorships = objects(work.get("authorships"))
    if authorships is None:
        return None
    authors = []
    for a in authorships:
        name = text_field(as_dict(a.get("author")).get("display_name")) or text_field(
            a.get("raw_author_name")
        )
        if name and (author := split_name(name)):
            authors.append(author)
    source = as_dict(as_dict(work.get("primary_location")).get("source"))
    biblio = as_dict(work.get("biblio"))
    pages = "-".join(
        p
        for p in (
            text_field(biblio.get("first_page"), numbers=True),
            text_field(biblio.get("last_page"), numbers=True),
        )
        if p
    )
    return Record(
        source="OPENALEX",
        title=text_field(work.get("title")) or text_field(work.get("display_name")),
        authors=tuple(authors),
        year=year_field(work.get("publication_year")),
        venue=text_field(source.get("display_name"))
        or text_field(source.get("host_organization_name")),
        doi=clean_doi(work.get("doi")),
        volume=biblio.get("volume"),
        issue=biblio.get("issue"),
        pages=pages or None,
        kind=work.get("type"),
        notices=own_notices(work),
    )


def _work(payload: Any) -> Record | None:
    return parse_payload(record_from_openalex, payload, "OpenAlex")


class OpenAlex:
    """The OpenAlex API, through the core's :class:`Outbound`."""

    def __init__(self, http: Outbound) -> None:
        self.http = http

    def _start(self) -> tuple[str, dict[str, str]]:
        s = self.http.settings
        return s.openalex_base_url.rstrip("/"), {"mailto": s.mailto} if s.mailto else {}

    async def by_doi(self, doi: str) -> Record | None:
        """The work with this DOI, or None (answers cached).

        Raises:
            One of :data:`~citeverify_core.lookups.http.LOOKUP_ERRORS`.
        """
        base, mail = self._start()
        data = await self.http.get_cached_json(
            OPENALEX, f"{base}/works/doi:{quote_path(doi)}", mail
        )
        return _work(data) if isinstance(data, dict) else None

    async def search(self, title: str, limit: int) -> list[Record]:
        """Works whose title matches, best first.

        Raises:
            One of :data:`~citeverify_core.lookups.http.LOOKUP_ERRORS`.
        """
        base, mail = self._start()
        params = {"search": title, "per-page": str(limit), **mail}
        data = await self.http.get_cached_json(OPENALEX, f"{base}/works", params)
        results = as_dict(data).get("results")
        found = []
        for work in results[:limit] if isinstance(results, list) else []:
            if r := _work(work):
                found.append(r)
        return found
