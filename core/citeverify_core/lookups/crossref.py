"""Crossref: a DOI's work (``/works/{doi}``) and the bibliographic search (``/works?query``).

The answer verifier asks what a DOI is (:meth:`Crossref.lookup`); the reference verifier asks
for candidates (:meth:`Crossref.by_doi`, :meth:`Crossref.search`). Both read answers with
:func:`record_from_crossref`, which also reads the works of Crossref's public data files.
With ``mailto`` set, calls go to Crossref's polite pool.
"""

from __future__ import annotations

import time
from typing import Any

from citeverify_core.lookups.bibliographic import (
    Author,
    Record,
    as_dict,
    clean_doi,
    first_str,
    objects,
    text_field,
    year_field,
)
from citeverify_core.lookups.http import (
    LookupFailure,
    Outbound,
    decode_json,
    http_error,
    parse_payload,
    quote_path,
)
from citeverify_core.lookups.notices import own_notices
from citeverify_core.lookups.outcome import Outcome, Target, work_metadata

__all__ = ["CROSSREF", "Crossref", "is_crossref_work", "record_from_crossref"]

#: The cache's namespace for Crossref answers of the reference sources.
CROSSREF = "CROSSREF"


def is_crossref_work(work: dict[str, Any]) -> bool:
    """Whether an object has the fields that only a Crossref work has."""
    return "DOI" in work or "container-title" in work


def record_from_crossref(work: Any) -> Record | None:
    """A Record from a Crossref work (``message`` or bare), else None.

    Never raises: answers and dumps are untrusted. A value of the wrong type where the format
    has text or a number is dropped and the other fields kept; a structure that is not the
    format's (authors that are not a list of objects, ``date-parts`` that are not a list of
    lists), or an object that is not a Crossref work, gives None: a record with half its authors
    would be compared as if it were whole.
    """
    if not isinstance(work, dict):
        return None
    if isinstance(work.get("message"), dict):
        work = work["message"]
    if not is_crossref_work(work):
        return None
    listed = objects(work.get("author"))
    if listed is None:
        return None
    authors = tuple(
        Author(family, text_field(a.get("given")) or "")
        for a in listed
        if (family := text_field(a.get("family")) or text_field(a.get("name")))
    )
    year = None
    for key in ("issued", "published", "published-print", "published-online"):
        parts = as_dict(work.get(key)).get("date-parts")
        if parts is None:
            continue
        if not isinstance(parts, list) or not all(isinstance(p, list) for p in parts):
            return None  # "date-parts": "soon" is not Crossref's format
        if parts and parts[0] and (year := year_field(parts[0][0])) is not None:
            break
    return Record(
        source="CROSSREF",
        title=first_str(work.get("title")),
        authors=authors,
        year=year,
        venue=first_str(work.get("container-title")) or text_field(work.get("publisher")),
        doi=clean_doi(work.get("DOI")),
        volume=work.get("volume"),
        issue=work.get("issue"),
        pages=work.get("page"),
        kind=work.get("type"),
        notices=own_notices(work),
    )


def _work(payload: Any) -> Record | None:
    return parse_payload(record_from_crossref, payload, "Crossref")


def _metadata(message: dict[str, Any]) -> dict[str, Any]:
    record = record_from_crossref(message)
    if record is None:
        msg = "unexpected Crossref response (not a work)"
        raise LookupFailure(msg)
    return work_metadata(record)


class Crossref:
    """The Crossref REST API, through the core's :class:`Outbound`."""

    def __init__(self, http: Outbound) -> None:
        self.http = http

    @property
    def _base(self) -> str:
        return self.http.settings.crossref_base_url.rstrip("/")

    def _mail(self) -> dict[str, str]:
        mailto = self.http.settings.mailto
        return {"mailto": mailto} if mailto else {}

    async def lookup(self, doi: str) -> Outcome:
        """What ``doi`` is: found (with what a UI shows about it), not found, or an error.

        Raises:
            One of :data:`~citeverify_core.lookups.http.LOOKUP_ERRORS`.
        """
        s = self.http.settings
        start = time.perf_counter()
        url = f"{self._base}/works/{quote_path(doi, safe='/:;()<>[]')}"
        agent = f"{s.user_agent} (mailto:{s.mailto})" if s.mailto else s.user_agent
        response, body = await self.http.request(
            "GET", url, params=self._mail() or None, headers={"User-Agent": agent}
        )
        elapsed = (time.perf_counter() - start) * 1000
        target = Target("crossref", doi)
        if response.status_code == 404:
            return Outcome.of(
                target, False, 404, elapsed, "DOI not found at Crossref", definitive=True
            )
        if response.status_code != 200:
            return Outcome.of(target, False, response.status_code, elapsed, http_error(response))
        data = decode_json(body)
        message = data.get("message") if isinstance(data, dict) else None
        if not isinstance(message, dict):
            msg = "unexpected Crossref response (no message object)"
            raise LookupFailure(msg)
        metadata = parse_payload(_metadata, message, "Crossref")
        return Outcome.of(target, True, 200, elapsed, None, metadata, True)

    async def by_doi(self, doi: str) -> Record | None:
        """The work with this DOI, or None (answers cached).

        Raises:
            One of :data:`~citeverify_core.lookups.http.LOOKUP_ERRORS`.
        """
        url = f"{self._base}/works/{quote_path(doi, safe='/:;()')}"
        data = await self.http.get_cached_json(CROSSREF, url, self._mail() or None)
        return _work(data) if isinstance(data, dict) else None

    async def search(self, query: str, rows: int) -> list[Record]:
        """Works that ``query.bibliographic`` finds for a reference string, best first.

        Raises:
            One of :data:`~citeverify_core.lookups.http.LOOKUP_ERRORS`.
        """
        params = {"query.bibliographic": query, "rows": str(rows), **self._mail()}
        data = await self.http.get_cached_json(CROSSREF, f"{self._base}/works", params)
        items = as_dict(as_dict(data).get("message")).get("items")
        found = []
        for item in items[:rows] if isinstance(items, list) else []:
            if r := _work(item):
                found.append(r)
        return found
