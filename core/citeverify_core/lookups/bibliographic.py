"""Bibliographic records as the services describe works, and the readers of their fields.

A :class:`Record` is what OpenAlex, Crossref, PubMed, Semantic Scholar or a local index says a
work is; the reference verifier compares references with records. Records are built from
untrusted payloads, so every field goes through :func:`text_field` / :func:`year_field` once,
when the record is made; the readers below take the shape an API documents, or an empty value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "LONE_SURROGATE",
    "MAX_AUTHORS",
    "MAX_FIELD_CHARS",
    "MAX_YEAR",
    "MIN_YEAR",
    "NOTICE_KINDS",
    "Author",
    "Notice",
    "Record",
    "SourceType",
    "as_dict",
    "as_list",
    "clean_doi",
    "first_str",
    "objects",
    "split_name",
    "text_field",
    "year_field",
]

SourceType = Literal["OPENALEX", "CROSSREF", "PUBMED", "SEMANTIC_SCHOLAR", "LOCAL"]

#: A lone surrogate: valid in a Python string (and a JSON escape), not in UTF-8, so not in
#: SQLite or a request. Searched for, never encoded: a search copies nothing.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
#: Years a record may carry; anything else in a payload (0, 1e400, 99999) is dropped.
MIN_YEAR, MAX_YEAR = 1, 9999
#: A record's text fields are cut to this many characters, and its author list to this many
#: names (real titles stay under 1,000 characters; the longest author lists, of particle
#: physics, run to a few thousand names, and a reference cites the first few). Unbounded, one
#: hostile record with a 2-million-character title cost seconds per comparison.
MAX_FIELD_CHARS = 2_000
MAX_AUTHORS = 1_000


@dataclass(frozen=True, slots=True)
class Author:
    """One author: the family name, and given names or initials when the reference has them."""

    family: str
    given: str = ""

    def __str__(self) -> str:
        return f"{self.family}, {self.given}" if self.given else self.family


#: What a notice says of the work it is attached to, most serious first.
NOTICE_KINDS = ("retraction", "expression-of-concern", "correction")


@dataclass(frozen=True, slots=True)
class Notice:
    """A retraction, expression of concern or correction attached to a work.

    Attributes:
        kind: One of :data:`NOTICE_KINDS`.
        date: When it was issued (``YYYY-MM-DD``, or ``YYYY-MM``/``YYYY``), when known.
        doi: The notice's own DOI, when it has one.
        source: Who says so: ``openalex`` (``is_retracted``), ``crossref`` (``update-to`` /
            ``updated-by``), ``retraction-watch``.
    """

    kind: str
    date: str | None = None
    doi: str | None = None
    source: str = ""

    def to_dict(self) -> dict[str, str | None]:
        """The notice as JSON: ``kind``, ``date``, ``doi``, ``source``."""
        return {"kind": self.kind, "date": self.date, "doi": self.doi, "source": self.source}

    def __str__(self) -> str:
        label = self.kind.replace("-", " ")
        parts = [label + (f" ({self.date})" if self.date else "")]
        if self.doi:
            parts.append(f"notice https://doi.org/{self.doi}")
        if self.source:
            parts.append(f"source: {self.source}")
        return "; ".join(parts)


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
    #: Retraction, expression-of-concern and correction notices of the work, most serious
    #: first (from the local index, or the source's own fields).
    notices: tuple[Notice, ...] = ()

    def __post_init__(self) -> None:
        # Records are built from untrusted payloads (API answers, dumps): a field of the wrong
        # type is dropped here, once, so nothing downstream (comparing, APA 7, SQLite, JSON)
        # meets a dict where it expects a string, or a lone surrogate that cannot be encoded.
        for name in ("title", "venue", "doi", "url", "kind", "volume", "issue", "pages"):
            value = getattr(self, name)
            if value is None or (type(value) is str and _plain(value)):
                continue  # what text_field keeps as it is (most fields: decided without it)
            clean = text_field(value, numbers=name in _NUMBER_FIELDS)
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
        """The reference-verification API's ``candidateFields``."""
        return {
            "title": self.title,
            "authors": [str(a) for a in self.authors],
            "year": self.year,
            "venue": self.venue,
            "doi": self.doi,
        }


_NUMBER_FIELDS = frozenset({"volume", "issue", "pages"})


def _plain(text: str) -> bool:
    """A string :func:`text_field` keeps unchanged, decided cheaply: short ASCII, not blank."""
    return text.isascii() and 0 < len(text) <= MAX_FIELD_CHARS and not text.isspace()


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
    # Records are built by the million (an index build): the common case, two short ASCII
    # strings that text_field would keep as they are, is decided without calling it.
    if (
        type(value) is Author
        and type(value.family) is str
        and type(value.given) is str
        and _plain(value.family)
        and (not value.given or _plain(value.given))
    ):
        return value
    if not isinstance(value, Author) or (family := text_field(value.family)) is None:
        return None
    given = text_field(value.given) or ""
    return value if (family, given) == (value.family, value.given) else Author(family, given)


# Readers of untrusted payloads: each returns the shape the API documents, or an empty value.


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is an object, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def objects(value: Any) -> list[dict[str, Any]] | None:
    """A list of objects (None or absent: empty), or None when it is something else."""
    if value is None:
        return []
    if isinstance(value, list) and all(isinstance(v, dict) for v in value):
        return value
    return None


def first_str(value: Any) -> str | None:
    """A string, or the first item of a list of strings (Crossref's ``title: ["..."]``)."""
    if isinstance(value, list):
        value = value[0] if value else None
    return text_field(value)


_DOI_URL = re.compile(r"^https?://(?:dx\.)?doi\.org/")


def clean_doi(value: Any) -> str | None:
    """A DOI without its ``https://doi.org/`` prefix, lower-cased; None when not text."""
    text = text_field(value)
    if text is None:
        return None
    text = text.strip()
    if text[:4].lower() == "http":
        text = _DOI_URL.sub("", text)
    return text.lower() or None


def split_name(name: str) -> Author | None:
    """An author from a display name: "Thomas S. Kuhn" -> ``Author("Kuhn", "Thomas S.")``."""
    parts = name.split()
    return Author(parts[-1], " ".join(parts[:-1])) if parts else None
