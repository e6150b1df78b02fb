"""Checking what extraction found: against the context, against lookups, by format.

Pure functions: they turn :class:`~citeverify_core.engine.extract.Found` items, the context
documents and the
lookup records into :class:`~citeverify_core.Citation` results with a status and a reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from citeverify_core.engine.context import ContextSearch
from citeverify_core.engine.extract import Found, NumberIndex
from citeverify_core.engine.results import Citation, assemble
from citeverify_core.lookups.outcome import Target
from citeverify_core.text import match_normalize, words

if TYPE_CHECKING:
    from citeverify_core.lookups.record import LookupRecord
    from citeverify_core.policy.settings import PolicySettings

__all__ = ["check_found", "lookup_target", "title_mismatch"]

#: A DOI's real title must share at least this share of its content words with the claim that
#: cites it, or one author surname must appear there; otherwise the DOI is flagged ``mismatch``.
MISMATCH_MIN_TITLE_OVERLAP = 0.2
#: ... but only when both sides have this many content words (a bare "see doi:..." is not judged).
MISMATCH_MIN_WORDS = 3

_STOPWORDS = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in", "is",
        "it", "its", "of", "on", "or", "that", "the", "their", "this", "to", "was", "were",
        "which", "with", "we", "our", "study", "paper", "article", "using", "use", "based", "new",
        "between", "into", "about",
    }
)  # fmt: skip

_SERVICE = {"doi": "crossref", "pmid": "pubmed", "url": "url"}


def lookup_target(found: Found, policy: PolicySettings) -> Target | None:
    """The lookup that would check ``found``, or None when it is not looked up."""
    settings = policy.extensions.lookups
    if not settings.enabled:
        return None
    if found.kind in _SERVICE:
        service = _SERVICE[found.kind]
        return Target(service, found.normalized)  # type: ignore[arg-type]
    if found.kind == "case" and found.format_ok and settings.case_law_resolver:
        return Target("courtlistener", found.normalized)
    return None


def content_words(text: str) -> set[str]:
    """Words that carry meaning: no stopwords, no one-letter words, no pure numbers."""
    return {w for w in words(text) if len(w) > 1 and w not in _STOPWORDS and not w.isdigit()}


def title_mismatch(record: LookupRecord, claim_text: str, citation_text: str) -> str | None:
    """Why the work behind a DOI is not the one the claim describes, or None.

    Only judged when the claim says enough about the work (see the thresholds above).
    """
    title = record.metadata.get("title")
    if not isinstance(title, str):
        return None
    title_words = content_words(title)
    claim_words = content_words(claim_text) - content_words(citation_text)
    if len(title_words) < MISMATCH_MIN_WORDS or len(claim_words) < MISMATCH_MIN_WORDS:
        return None
    overlap = len(title_words & claim_words) / len(title_words)
    surnames = {
        w for a in record.metadata.get("authors") or [] if isinstance(a, str) for w in words(a)[-1:]
    }
    if overlap >= MISMATCH_MIN_TITLE_OVERLAP or surnames & claim_words:
        return None
    return (
        f"the DOI resolves to {title!r}, which the surrounding claim does not describe "
        f"({overlap:.0%} of its title words)"
    )


def check_found(
    found: Found,
    *,
    claim_text: str,
    search: ContextSearch,
    context_numbers: NumberIndex | None,
    record: LookupRecord | None,
    policy: PolicySettings,
) -> Citation:
    """Decide ``verified``, ``status`` and ``reason`` for one found citation."""
    verified: bool | None = None
    status, reason = "unchecked", "not checked"
    if found.type == "statistic":
        if context_numbers is None:
            reason = "not checked: no context documents"
        elif _supported(found, context_numbers):
            verified, status, reason = True, "supported", "the same number appears in the context"
        else:
            verified, status = False, "unsupported"
            reason = f"{found.normalized} does not appear in the context"
    elif record is not None:
        verified, status, reason = _from_record(found, record, claim_text)
    elif found.type in {"case_law", "regulatory"}:
        verified, status, reason = _by_format_and_context(found, search)
    elif found.type == "academic" and found.kind in {"pmcid", "arxiv"}:
        reason = f"not checked: no lookup service for {found.kind} identifiers"
    elif found.kind in _SERVICE:
        if not policy.extensions.lookups.enabled:
            reason = "not checked: lookups are disabled (extensions.lookups.enabled)"
        else:
            reason = "not checked: over the lookup limit (extensions.lookups.max_lookups)"
    return assemble(
        Citation,
        {
            "type": found.type,
            "text": found.text,
            "span": (found.start, found.end),
            "kind": found.kind,
            "normalized": found.normalized,
            "verified": verified,
            "status": status,
            "reason": reason,
        },
    )


def _supported(found: Found, numbers: NumberIndex) -> bool:
    if found.kind == "ratio":
        return all(numbers.contains(v) for v in found.values)
    percent = found.kind == "percent"
    return any(numbers.contains(v, percent=percent) for v in found.values)


def _from_record(found: Found, record: LookupRecord, claim_text: str) -> tuple[bool, str, str]:
    where = {
        "crossref": "Crossref",
        "pubmed": "PubMed",
        "url": "the web",
        "courtlistener": "CourtListener",
    }
    service = where.get(record.service, record.service)
    if record.ok:
        mismatch = title_mismatch(record, claim_text, found.text) if found.kind == "doi" else None
        if mismatch:
            return False, "mismatch", mismatch
        title = record.metadata.get("title") or record.metadata.get("case_name")
        suffix = f": {title}" if title else ""
        return True, "verified", f"found at {service}{suffix}"
    error = record.error or "lookup failed"
    if error.startswith("blocked"):
        return False, "blocked", error
    if record.status_code in {404, 410} or "not found" in error:
        return False, "not_found", error
    return False, "lookup_failed", f"{service} lookup failed: {error}"


def _by_format_and_context(found: Found, search: ContextSearch) -> tuple[bool | None, str, str]:
    if found.format_ok is False:
        return False, "format_invalid", f"format check failed: {found.note}"
    searched, i = search.first(
        match_normalize(found.text).strip(), match_normalize(found.normalized).strip()
    )
    if i is not None:
        return True, "in_context", f"also cited in context document {i + 1}"  # from 1
    if found.type == "case_law" and found.format_ok is None:  # found without eyecite
        return None, "unchecked", f"not checked: {found.note}"
    note = f" ({found.note})" if found.note else ""
    unsearched = "" if searched else "; not searched in the context (too many citations)"
    return None, "format_valid", f"format valid{note}; not looked up{unsearched}"
