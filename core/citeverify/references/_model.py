"""Value objects of the reference verifier: parsed references, records, field labels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["FIELDS", "Author", "FieldLabel", "ParsedReference", "Record", "Status"]

FieldLabel = Literal[
    "MATCH", "MATCH_WITH_TYPO", "CONTAINS", "ABSENT", "UNCONFIRMED", "CONTRADICTION"
]
Status = Literal["verified", "verified-with-error", "needs-human", "unverified"]
SourceType = Literal["OPENALEX", "CROSSREF", "PUBMED", "SEMANTIC_SCHOLAR", "LOCAL"]

#: The five compared fields, in the seed's order (seed 004: "Field Results").
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
    """What a reference string says. ``unsure`` names the fields the parser guessed at."""

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

    def fields(self) -> dict[str, object]:
        """The seed's ``parsedFields``."""
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

    def fields(self) -> dict[str, object]:
        """The seed's ``candidateFields``."""
        return {
            "title": self.title,
            "authors": [str(a) for a in self.authors],
            "year": self.year,
            "venue": self.venue,
            "doi": self.doi,
        }
