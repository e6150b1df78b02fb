"""What the answer verifier looks up (:class:`Target`) and what a lookup gives (:class:`Outcome`).

Every lookup of an answer's citation becomes a :class:`~citeverify_core.LookupRecord`: found,
not found, or failed with a reason; nothing raises into the verifier.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from citeverify_core.lookups.failures import clean_text, text_or_none
from citeverify_core.lookups.record import LookupRecord

if TYPE_CHECKING:
    from citeverify_core.lookups.bibliographic import Record

__all__ = ["MAX_REASON", "Outcome", "Service", "Target", "cached_record", "work_metadata"]

Service = Literal["crossref", "pubmed", "url", "courtlistener"]
MAX_REASON = 500  # characters of a failure reason (it may quote what a service said)


@dataclass(frozen=True, slots=True)
class Target:
    """Something to look up: a DOI at Crossref, a PMID at PubMed, a URL, a case citation."""

    service: Service
    key: str


@dataclass(frozen=True, slots=True)
class Outcome:
    """A lookup's record, and whether it is definitive (found or not found: worth caching)."""

    record: LookupRecord
    definitive: bool

    @classmethod
    def of(
        cls,
        target: Target,
        ok: bool,
        status: int | None,
        elapsed: float,
        error: str | None,
        metadata: dict[str, Any] | None = None,
        definitive: bool = False,
    ) -> Outcome:
        """The outcome of looking ``target`` up (``elapsed`` in milliseconds)."""
        record = LookupRecord(
            service=target.service,
            target=target.key,
            ok=ok,
            status_code=status,
            elapsed_ms=round(elapsed, 1),
            cached=False,
            error=None if error is None else clean_text(error, MAX_REASON),
            metadata=metadata or {},
        )
        return cls(record, definitive)

    @classmethod
    def failed(cls, target: Target, reason: str, elapsed: float) -> Outcome:
        """A lookup that got no answer (not definitive: the next call tries again)."""
        return cls.of(target, False, None, elapsed, reason)


def cached_record(payload: dict[str, Any] | None) -> LookupRecord | None:
    """A record from the cache, or None (a miss) when the payload is not one (a damaged file)."""
    if payload is None:
        return None
    try:
        return LookupRecord.from_dict({**payload, "cached": True, "elapsed_ms": 0.0})
    except ValueError:
        return None


def work_metadata(record: Record) -> dict[str, Any]:
    """What a UI shows about the work a DOI or PMID really is (every field type-checked)."""
    authors = []
    for a in record.authors:
        name = " ".join(p for p in (a.given, a.family) if isinstance(p, str) and p)
        if name:
            authors.append(clean_text(name, 300))
    year = record.year
    return {
        "title": text_or_none(record.title),
        "authors": authors,
        "year": year if type(year) is int else None,
        "container": text_or_none(record.venue),
        "type": text_or_none(record.kind, 100),
        "doi": text_or_none(record.doi, 300),
        # Retraction, expression-of-concern and correction notices the source gives (Crossref's
        # updated-by), most serious first: the answer verifier reports a retracted work.
        "notices": [n.to_dict() for n in record.notices[:10]],
    }
