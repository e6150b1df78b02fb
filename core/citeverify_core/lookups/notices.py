"""Retraction, expression-of-concern and correction notices, read from the formats that carry them.

Three sources say a work was retracted, corrected or is of concern (issue 35):

- **OpenAlex**: ``is_retracted: true`` on the work itself (no date, no notice DOI);
- **Crossref**: a notice is a work of its own whose ``update-to`` lists the works it updates
  (``{"DOI": ..., "type": "retraction", "updated": {"date-parts": [[2020, 5, 1]]}}``); the API
  and recent dumps also list them on the updated work, as ``updated-by``;
- **Retraction Watch** (distributed by Crossref as a CSV): one row per notice, with
  ``OriginalPaperDOI``, ``RetractionDOI``, ``RetractionDate`` and ``RetractionNature``.

Every reader here takes untrusted data and never raises: what is not in the documented shape
gives no notice. Crossref's update types are mapped to three kinds (:data:`NOTICE_KINDS`):
retraction (``retraction``, ``partial_retraction``, ``withdrawal``, ``removal``), expression of
concern, and correction (``correction``, ``erratum``, ``corrigendum``, ``clarification``,
``addendum``); other types (``new_version``) are not notices of a problem and are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from citeverify_core.lookups.bibliographic import (
    NOTICE_KINDS,
    Notice,
    as_dict,
    clean_doi,
    objects,
    text_field,
)

__all__ = [
    "notice_kind",
    "notices_of_work",
    "own_notices",
    "retraction_watch_notice",
    "sort_notices",
]

_KINDS = {
    "retraction": "retraction",
    "partial_retraction": "retraction",
    "withdrawal": "retraction",
    "removal": "retraction",
    "expression_of_concern": "expression-of-concern",
    "expression-of-concern": "expression-of-concern",
    "correction": "correction",
    "erratum": "correction",
    "corrigendum": "correction",
    "clarification": "correction",
    "addendum": "correction",
}


def notice_kind(value: Any) -> str | None:
    """One of :data:`NOTICE_KINDS` for a Crossref update type or a Retraction Watch nature."""
    text = text_field(value)
    if text is None:
        return None
    key = text.strip().casefold().replace(" ", "_")
    return _KINDS.get(key)


def _date(value: Any) -> str | None:
    """``YYYY-MM-DD`` (or shorter) from Crossref's ``{"date-parts": [[y, m, d]]}``."""
    parts = as_dict(value).get("date-parts")
    if not isinstance(parts, list) or not parts or not isinstance(parts[0], list):
        return None
    numbers = [p for p in parts[0][:3] if isinstance(p, int) and not isinstance(p, bool)]
    if not numbers or not 1 <= numbers[0] <= 9999:
        return None
    return "-".join([f"{numbers[0]:04d}", *(f"{n:02d}" for n in numbers[1:] if 1 <= n <= 31)])


def notices_of_work(work: Any) -> list[tuple[str, Notice]]:
    """Every notice a dump's work carries, with the DOI of the work each is about (lower case).

    An OpenAlex work with ``is_retracted``: a retraction of itself. A Crossref notice with
    ``update-to``: one notice per updated work, whose DOI is the notice's own. A Crossref work
    with ``updated-by``: the notices of itself.
    """
    if not isinstance(work, dict):
        return []
    if isinstance(work.get("message"), dict):
        work = work["message"]
    if not (work.get("is_retracted") is True or "update-to" in work or "updated-by" in work):
        return []  # most works (read by the million in a build)
    own = clean_doi(work.get("DOI")) or clean_doi(work.get("doi"))
    found: list[tuple[str, Notice]] = []
    if work.get("is_retracted") is True and own:
        found.append((own, Notice("retraction", source="openalex")))
    for update in objects(work.get("update-to")) or []:
        target = clean_doi(update.get("DOI"))
        kind = notice_kind(update.get("type"))
        if target and kind and target != own:
            found.append((target, Notice(kind, _date(update.get("updated")), own, "crossref")))
    if own:
        for update in objects(work.get("updated-by")) or []:
            kind = notice_kind(update.get("type"))
            if kind:
                notice_doi = clean_doi(update.get("DOI"))
                found.append(
                    (own, Notice(kind, _date(update.get("updated")), notice_doi, "crossref"))
                )
    return found


def own_notices(work: Any) -> tuple[Notice, ...]:
    """The notices a work carries about itself (an API answer: OpenAlex or Crossref), sorted."""
    if not isinstance(work, dict):
        return ()
    body = work["message"] if isinstance(work.get("message"), dict) else work
    if not (body.get("is_retracted") is True or "update-to" in body or "updated-by" in body):
        return ()  # most works (read by the million in a build): no notice, no DOI to clean
    own = clean_doi(body.get("DOI")) or clean_doi(body.get("doi"))
    return sort_notices(n for doi, n in notices_of_work(work) if doi == own)


def retraction_watch_notice(row: Mapping[str, Any]) -> tuple[str, Notice] | None:
    """The notice of one Retraction Watch CSV row, with the original paper's DOI, else None.

    Rows without an original DOI (many older notices) or of another nature ("Reinstatement")
    give none. The date is the row's ``RetractionDate`` (``M/D/YYYY [H:MM]`` or ISO).
    """
    target = clean_doi(row.get("OriginalPaperDOI"))
    kind = notice_kind(row.get("RetractionNature"))
    if not target or target in {"unavailable", "na", "n/a"} or kind is None:
        return None
    notice_doi = clean_doi(row.get("RetractionDOI"))
    if notice_doi in {"unavailable", "na", "n/a"}:
        notice_doi = None
    return target, Notice(kind, _rw_date(row.get("RetractionDate")), notice_doi, "retraction-watch")


def _rw_date(value: Any) -> str | None:
    text = (text_field(value) or "").split(" ")[0]
    if not text:
        return None
    if "/" in text:
        parts = text.split("/")
        if len(parts) == 3 and all(p.isdigit() for p in parts) and len(parts[2]) == 4:
            month, day, year = (int(p) for p in parts)
            if 1 <= month <= 12 and 1 <= day <= 31:
                return f"{year:04d}-{month:02d}-{day:02d}"
        return None
    head = text[:10]
    return head if len(head) >= 4 and head[:4].isdigit() else None


def sort_notices(notices: Iterable[Notice]) -> tuple[Notice, ...]:
    """Notices without repeats, most serious first, then by date."""
    unique = dict.fromkeys(n for n in notices if n.kind in NOTICE_KINDS)
    return tuple(sorted(unique, key=lambda n: (NOTICE_KINDS.index(n.kind), n.date or "", n.source)))
