"""A work of either bibliographic format: OpenAlex or Crossref (API answers and their dumps)."""

from __future__ import annotations

from typing import Any

from citeverify_core.lookups.bibliographic import Record
from citeverify_core.lookups.crossref import is_crossref_work, record_from_crossref
from citeverify_core.lookups.openalex import is_openalex_work, record_from_openalex

__all__ = ["record_from_work"]


def record_from_work(work: Any) -> Record | None:
    """A Record from an OpenAlex work or a Crossref work (``message`` or bare), else None.

    Never raises: dumps and API answers are untrusted. A value of the wrong type where the
    format has text or a number (a dict ``volume``, ``date-parts: [[1e400]]``, a number for a
    title) is dropped and the other fields kept. A payload whose structure is not the format's
    (authors that are not a list of objects, ``date-parts`` that are not a list of lists), or a
    value that is not a work of either format, gives None: a record with half its authors would
    be compared as if it were whole.
    """
    if not isinstance(work, dict):
        return None
    if isinstance(work.get("message"), dict):
        work = work["message"]
    if is_openalex_work(work):
        return record_from_openalex(work)
    if is_crossref_work(work):
        return record_from_crossref(work)
    return None
