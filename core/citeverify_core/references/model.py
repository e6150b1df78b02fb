"""Value objects of the reference verifier: parsed references, records, field labels."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

# Records are what the services answer: their model lives with the services' clients.
from citeverify_core.lookups.bibliographic import (
    LONE_SURROGATE,
    Author,
    Record,
    text_field,
    year_field,
)

__all__ = [
    "FIELDS",
    "LONE_SURROGATE",
    "Author",
    "FieldLabel",
    "ParsedReference",
    "Record",
    "Status",
    "text_field",
    "year_field",
]

FieldLabel = Literal[
    "MATCH", "MATCH_WITH_TYPO", "CONTAINS", "ABSENT", "UNCONFIRMED", "CONTRADICTION"
]
Status = Literal["verified", "verified-with-error", "needs-human", "unverified"]

#: The five compared fields, in the order of the API's field results.
FIELDS = ("title", "authors", "year", "venue", "identifier")


@dataclass(frozen=True, slots=True)
class ParsedReference:
    """What a reference string says. ``unsure`` names the fields the parser guessed at.

    ``volume``, ``issue`` and ``pages`` are what a titleless reference (ACS, AIP, Elsevier) is
    matched on; ``elided`` is APA 7's "A, B, ... Z" (the first 19 authors, an ellipsis, the
    last one).
    """

    raw: str
    title: str | None = None
    authors: tuple[Author, ...] = ()
    et_al: bool = False
    year: int | None = None
    venue: str | None = None
    doi: str | None = None
    url: str | None = None
    style: str = "unknown"
    unsure: frozenset[str] = frozenset()
    volume: str | None = None
    issue: str | None = None
    pages: str | None = None
    elided: bool = False

    @property
    def first_page(self) -> str | None:
        """The first page (or article number) of ``pages``."""
        if not self.pages:
            return None
        return _PAGE_DASH.split(self.pages, maxsplit=1)[0] or None

    def fields(self) -> dict[str, object]:
        """The API's ``parsedFields``."""
        return {
            "title": self.title,
            "authors": [a.family for a in self.authors],
            "year": self.year,
            "venue": self.venue,
            "doi": self.doi,
            "url": self.url,
        }


_PAGE_DASH = re.compile(r"\s*[-–—]\s*")
