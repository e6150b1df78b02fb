"""Value objects of the reference verifier: parsed references, records, field labels."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "FIELDS",
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
SourceType = Literal["OPENALEX", "CROSSREF", "PUBMED", "SEMANTIC_SCHOLAR", "LOCAL"]

#: The five compared fields, in the order of the API's field results.
FIELDS = ("title", "authors", "year", "venue", "identifier")


@dataclass(frozen=True, slots=True)
class Author:
    """One author: the family name, and given names or initials when the reference has them."""

    family: str
    given: str = ""

    def __str__(self) -> str:
        return f"{self.family}, {self.given}" if self.given else self.family


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


@dataclass(frozen=True, slots=True)
class Record:
    """A bibliographic record from a source (a candidate for a reference)."""

    source: SourceType
    title: str | None
    authors: tuple[Author, ...] = ()
    year: int | None = None
    venue: str | None = None
    doi: str | None = None
    url: str | None = None
    volume: str | None = None
    issue: str | None = None
    pages: str | None = None
    kind: str | None = None

    def __post_init__(self) -> None:
        # Records are built from untrusted payloads (API answers, dumps): a field of the
        # wrong type is dropped here, once, so nothing downstream (comparing, APA 7, SQLite, JSON)
        # meets a dict where it expects a string, or a lone surrogate that cannot be encoded.
        for name in ("title", "venue", "doi", "url", "kind"):
            value = getattr(self, name)
            clean = text_field(value)
            if clean is not value:
                object.__setattr__(self, name, clean)
        for name in ("volume", "issue", "pages"):
            value = getattr(self, name)
            clean = text_field(value, numbers=True)
            if clean is not value:
                object.__setattr__(self, name, clean)
        year = year_field(self.year)
        if year is not self.year:
            object.__setattr__(self, "year", year)
        authors = self.authors[:MAX_AUTHORS] if isinstance(self.authors, tuple) else ()
        clean_authors = tuple(a for a in map(_author, authors) if a is not None)
        if clean_authors != self.authors:
            object.__setattr__(self, "authors", clean_authors)

    def fields(self) -> dict[str, object]:
        """The API's ``candidateFields``."""
        return {
            "title": self.title,
            "authors": [str(a) for a in self.authors],
            "year": self.year,
            "venue": self.venue,
            "doi": self.doi,
        }


#: A lone surrogate: valid in a Python string (and a JSON escape), not in UTF-8, so not in
#: SQLite or a request. Searched for, never encoded: a search copies nothing.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_PAGE_DASH = re.compile(r"\s*[-–—]\s*")

#: Years a record may carry; anything else in a payload (0, 1e400, 99999) is dropped.
MIN_YEAR, MAX_YEAR = 1, 9999
#: A record's text fields are cut to this many characters, and its author list to this many
#: names (real titles stay under 1,000 characters; the longest author lists, of particle
#: physics, run to a few thousand names, and a reference cites the first few). Unbounded, one
#: hostile record with a 2-million-character title cost seconds per comparison.
MAX_FIELD_CHARS = 2_000
MAX_AUTHORS = 1_000


def text_field(value: Any, *, numbers: bool = False) -> str | None:
    """``value`` as a non-empty string field, or None when a payload put something else there.

    A string keeps its text (at most ``MAX_FIELD_CHARS`` characters), with lone surrogates
    (valid in JSON escapes, not in UTF-8) replaced by U+FFFD. With ``numbers``, an integer
    becomes its digits (a volume given as ``12``).
    """
    if isinstance(value, str):
        if not value or value.isspace():
            return None
        text: str = value[:MAX_FIELD_CHARS]
        # Records are built by the million: an ASCII string (most are; ``isascii`` reads a flag,
        # not the text) has no surrogate, and a search, unlike an encode, copies nothing.
        if text.isascii() or not LONE_SURROGATE.search(text):
            return text
        return LONE_SURROGATE.sub("\ufffd", text)
    if numbers and isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**9:
        return str(value)
    return None


def year_field(value: Any) -> int | None:
    """A year from an untrusted payload: an int, an integral float or 4 ASCII digits, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        value = int(value) if value.is_integer() else None  # inf and nan are not integers
    elif isinstance(value, str):
        value = int(value) if value.isascii() and value.isdigit() and len(value) <= 4 else None
    if isinstance(value, int) and MIN_YEAR <= value <= MAX_YEAR:
        return value
    return None


def _author(value: Any) -> Author | None:
    """An author whose family name is text, or None."""
    if not isinstance(value, Author) or (family := text_field(value.family)) is None:
        return None
    given = text_field(value.given) or ""
    return value if (family, given) == (value.family, value.given) else Author(family, given)
