"""The decision: citations checked, thresholds applied, reasons given, and the action taken.

:func:`decide` turns an :class:`Analysis` (the pure steps: claims, quotes, citations found) and
the lookup records into a :class:`~citeverify_core.VerificationResult`: allow, flag, redact or
block, with the reasons and the details in the policy-pack format's shape.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from citeverify_core.engine.citations import check_found
from citeverify_core.engine.claims import claim_at
from citeverify_core.engine.context import ContextDocument, ContextSearch
from citeverify_core.engine.extract import MAX_CITATIONS, MAX_MATCHES, Found, NumberIndex
from citeverify_core.engine.extract.legal import case_law_notes
from citeverify_core.engine.quotes import MAX_QUOTES, quote_citation
from citeverify_core.engine.results import (
    Citation,
    ClaimResult,
    QuoteResult,
    VerificationDetails,
    VerificationReport,
    VerificationResult,
    updated,
)
from citeverify_core.lookups.outcome import Target
from citeverify_core.text import Piece

if TYPE_CHECKING:
    from citeverify_core.lookups.record import LookupRecord
    from citeverify_core.policy.settings import PolicySettings

__all__ = ["TRUNCATED", "Analysis", "apply_strict", "decide", "redact", "withhold"]


@dataclass(slots=True)  # not frozen: made once per answer, a frozen one costs more
class Analysis:
    """What the pure steps found in an answer: its claims, quotes and citations, and the context."""

    answer: str
    empty: bool
    context_checked: bool
    document_count: int
    groundedness: float | None
    pieces: list[Piece]
    claims: list[ClaimResult]
    quotes: list[QuoteResult]
    found: list[Found]
    truncated: set[str]
    docs: list[ContextDocument]
    context_numbers: NumberIndex | None
    targets: list[Target | None]
    #: (claim start, number) for each number of a claim that no document holds (numbers: value).
    missing_numbers: list[tuple[int, str]] = dataclasses.field(default_factory=list)
    #: Each claim's compared words, the documents' hits and their union (the semantic tier's
    #: passages and overlap).
    claim_words: list[list[str]] = dataclasses.field(default_factory=list)
    hits: list[set[str]] = dataclasses.field(default_factory=list)
    supported: set[str] = dataclasses.field(default_factory=set)
    #: The answer overlap the verdict uses when the semantic tier ran: the words of the claims it
    #: supports count as supported (None: the word groundedness).
    overlap: float | None = None
    #: Whether the semantic tier ran, and what it had to say (result.notes).
    semantic: bool = False
    semantic_notes: tuple[str, ...] = ()


def decide(
    a: Analysis, lookups: list[LookupRecord], policy: PolicySettings, *, include_original: bool
) -> VerificationResult:
    """Steps 5-9: check the citations, decide, and act (flag, redact or block)."""
    by_target = {(r.service, r.target): r for r in lookups}
    citations = [quote_citation(q) for q in a.quotes]
    search = ContextSearch(a.docs)
    for f, target in zip(a.found, a.targets, strict=True):
        record = by_target.get((target.service, target.key)) if target else None
        claim = claim_at(a.claims, f.start)
        citations.append(
            check_found(
                f,
                claim_text=claim.text if claim else a.answer,
                search=search,
                context_numbers=a.context_numbers,
                record=record,
                policy=policy,
            )
        )
    citations.sort(key=lambda c: c.span)
    claims = apply_strict(
        a.claims, a.quotes, citations, policy, a.missing_numbers, document_count=a.document_count
    )

    min_overlap = policy.effective_min_context_overlap
    overlap = a.overlap if a.overlap is not None else a.groundedness
    with_meaning = (
        f" ({overlap:.2f} with the claims the semantic tier supports)"
        if overlap is not None and overlap != a.groundedness
        else ""
    )
    scored = [c for c in claims if c.verified is not None]
    passing = [c for c in scored if c.verified]
    claim_confidence: float | None
    if a.context_checked or a.empty:
        claim_confidence = len(passing) / len(scored) if scored else 1.0
    else:
        claim_confidence = None

    evidence: list[str] = []
    matched_quotes = sum(1 for q in a.quotes if q.matched)
    if matched_quotes:
        evidence.append(f"{matched_quotes} quote(s) found in the context")
    if a.groundedness is not None and overlap is not None and overlap >= min_overlap:
        evidence.append(f"answer overlap {a.groundedness:.2f}{with_meaning} >= {min_overlap:.2f}")
    looked_up = sum(1 for c in citations if c.status == "verified")
    if looked_up:
        evidence.append(f"{looked_up} citation(s) confirmed by an external lookup")
    if not policy.require_source_match and citations:
        evidence.append(f"{len(citations)} citation(s) (require_source_match is false)")

    reasons: list[str] = []
    if a.empty:
        verified = True  # step 7: an empty answer passes
    elif not a.context_checked:
        verified = (not policy.require_sources) or bool(evidence) or not policy.require_source_match
        if not verified:
            why = (
                "context checks are off (verify_against_context: false)"
                if a.document_count
                else "no context documents were given"
            )
            reasons.append(f"{why} and the answer has no source evidence (require_sources)")
    else:
        assert a.groundedness is not None
        assert overlap is not None
        assert claim_confidence is not None
        if overlap < min_overlap:
            reasons.append(
                f"answer overlap {a.groundedness:.2f}{with_meaning} is below "
                f"min_context_overlap {min_overlap:.2f}"
            )
        if claim_confidence < policy.min_confidence:
            reasons.append(
                f"claim confidence {claim_confidence:.2f} is below min_confidence "
                f"{policy.min_confidence:.2f} ({len(passing)} of {len(scored)} claims pass)"
            )
        if policy.require_sources and not evidence:
            reasons.append("the answer has no source evidence (require_sources)")
        verified = not reasons
    retracted = retracted_citations(by_target, a)
    if policy.extensions.strict_retractions:
        reasons.extend(
            f"strict_retractions: the citation at {start}-{end} is of a retracted work"
            + (f" (retracted {date})" if date else "")
            for start, end, date in retracted
        )
        verified = verified and not retracted
    strict = [p for c in claims for p in c.problems] + strict_truncated(a.truncated, policy)
    if strict and not a.empty:
        reasons.extend(strict)
        verified = False

    unverified = [c for c in claims if c.verified is False]
    answer, original = a.answer, a.answer
    action: Literal["allow", "flag", "redact", "block"] = "allow"
    if not verified:
        action = policy.output_action.unverified_action
        if action == "redact":
            marker = policy.extensions.redaction_marker
            answer = redact(a.answer, unverified, marker)
            if not include_original:
                # What redact removed is not handed back: spans and scores stay, texts go.
                original = ""
                claims, unverified, quotes, citations, lookups = withhold(
                    len(a.answer), marker, claims, unverified, a.quotes, citations, lookups
                )
                a = dataclasses.replace(a, quotes=quotes)

    report = _Report(a, claims, citations, passing, evidence)
    details = _details(policy, report, verified, claim_confidence, lookups, unverified)
    return VerificationResult(
        verdict="block" if action == "block" else "allow",
        reason_code="citation.verified" if verified else "citation.unverified",
        action=action,
        answer=answer,
        original_answer=original,
        details=details,
        reasons=reasons,
        notes=[
            *policy.notes(),
            *(TRUNCATED[t] for t in sorted(a.truncated)),
            *case_law_notes((c.type, c.status) for c in citations),
            *(
                f"the citation at {start}-{end} is of a retracted work"
                + (f" (retracted {date})" if date else "")
                + ("" if policy.extensions.strict_retractions else "; strict_retractions is off")
                for start, end, date in retracted
            ),
            *a.semantic_notes,
        ],
    )


def _details(
    policy: PolicySettings,
    r: _Report,
    verified: bool,
    claim_confidence: float | None,
    lookups: list[LookupRecord],
    unverified: list[ClaimResult],
) -> VerificationDetails:
    a = r.analysis
    if not policy.response.include_verification_report:
        return VerificationDetails(verified=verified, groundedness=a.groundedness)
    extra: dict[str, Any]
    if verified:
        summary = (
            "empty answer: nothing to verify"
            if a.empty
            else f"verified: {len(r.passing)} of {len(r.claims)} claims supported"
            + (f", overlap {a.groundedness:.2f}" if a.groundedness is not None else "")
        )
        extra = {
            "verification_report": VerificationReport(
                summary=summary,
                claim_count=len(r.claims),
                passing_claim_count=len(r.passing),
                quote_count=len(a.quotes),
                matched_quote_count=sum(1 for q in a.quotes if q.matched),
                citation_count=len(r.citations),
                context_document_count=a.document_count,
                source_evidence=list(r.evidence),
                thresholds={
                    "min_confidence": float(policy.min_confidence),
                    "min_groundedness": float(policy.min_groundedness),
                    "min_context_overlap": float(policy.effective_min_context_overlap),
                }
                | (
                    {"semantic_min_score": float(policy.extensions.semantic.min_score)}
                    if a.semantic
                    else {}
                ),
            )
        }
    else:
        extra = {"unverified_claims": unverified, "unverified_claim_count": len(unverified)}
    return VerificationDetails(
        verified=verified,
        groundedness=a.groundedness,
        claim_confidence=claim_confidence,
        claims=list(r.claims),
        quotes=list(a.quotes),
        citations=list(r.citations),
        external_lookup=list(lookups),
        **extra,
    )


@dataclass(frozen=True, slots=True)
class _Report:
    analysis: Analysis
    claims: list[ClaimResult]
    citations: list[Citation]
    passing: list[ClaimResult]
    evidence: list[str]


TRUNCATED = {
    t: f"only the first {MAX_CITATIONS:,} citations (and {MAX_MATCHES:,} candidates per pattern) "
    f"were checked: {t} citations past them were not"
    for t in ("academic", "url", "case_law", "regulatory", "statistic")
}
TRUNCATED["quote"] = f"only the first {MAX_QUOTES:,} quotes were checked"
TRUNCATED["marker"] = f"only the first {MAX_MATCHES:,} inline source markers were read"


def retracted_citations(
    by_target: dict[tuple[str, str], LookupRecord], a: Analysis
) -> list[tuple[int, int, str | None]]:
    """The spans of looked-up citations whose work has a retraction notice, with its date.

    The lookup's ``metadata.notices`` (Crossref's ``updated-by``, or the local index's notices)
    say so; a citation is named by its span, never its text (a block hands back no text).
    """
    found: list[tuple[int, int, str | None]] = []
    for f, target in zip(a.found, a.targets, strict=True):
        record = by_target.get((target.service, target.key)) if target else None
        if record is None or not record.ok:
            continue
        notices = record.metadata.get("notices")
        if not isinstance(notices, list):
            continue
        for notice in notices:
            if isinstance(notice, dict) and notice.get("kind") == "retraction":
                date = notice.get("date")
                dated = isinstance(date, str) and re.fullmatch(r"[0-9-]{4,10}", date)
                found.append((f.start, f.end, date if dated else None))
                break
    return found


def strict_truncated(truncated: set[str], policy: PolicySettings) -> list[str]:
    """Strict options fail closed when a limit left some quotes or statistics unchecked."""
    out = []
    if policy.extensions.strict_quotes and "quote" in truncated:
        out.append(f"strict_quotes: more than {MAX_QUOTES:,} quotes; the rest were not checked")
    if policy.extensions.strict_statistics and "statistic" in truncated:
        out.append("strict_statistics: too many statistics; the rest were not checked")
    return out


def _inside(span: tuple[int, int], removed: list[tuple[int, int]]) -> bool:
    """Whether ``span`` overlaps removed text (``removed`` is sorted and disjoint)."""
    i = bisect.bisect_left(removed, span[1], key=lambda r: r[0]) - 1  # last start before the end
    return i >= 0 and removed[i][1] > span[0]


def withhold(
    answer_length: int,
    marker: str,
    claims: list[ClaimResult],
    unverified: list[ClaimResult],
    quotes: list[QuoteResult],
    citations: list[Citation],
    lookups: list[LookupRecord],
    *,
    whole: bool = False,
) -> tuple[
    list[ClaimResult], list[ClaimResult], list[QuoteResult], list[Citation], list[LookupRecord]
]:
    """The details without the text of what redact removed (no leak through details).

    Redact removes the unverified claims, or the whole answer when none is at fault (or when
    ``whole`` is set: a blocked answer is removed whole). Removed claims keep their span and
    scores; their text becomes the marker and their missing words are dropped. Quotes and
    citations that overlap them lose their text, and lookups made only for such citations are
    dropped (their target is the removed text).
    """
    whole = whole or not unverified
    removed = [(0, answer_length)] if whole else sorted(c.span for c in unverified)
    gone: dict[str, Any] = {"text": marker, "missing_words": [], "problems": []}
    withheld = {  # one copy per claim, shared by both lists
        c.span: updated(c, **gone) for c in (claims if whole else unverified)
    }
    claims = [withheld.get(c.span, c) for c in claims]
    unverified = [withheld.get(c.span) or updated(c, **gone) for c in unverified]
    quotes = [
        updated(q, **{"text": marker, "normalized": marker}) if _inside(q.span, removed) else q
        for q in quotes
    ]
    inside = [_inside(c.span, removed) for c in citations]
    kept = {c.normalized for c, h in zip(citations, inside, strict=True) if not h}
    hidden = {c.normalized for c, h in zip(citations, inside, strict=True) if h} - kept
    citations = [
        updated(c, **{"text": marker, "normalized": marker, "reason": c.status}) if h else c
        for c, h in zip(citations, inside, strict=True)
    ]
    lookups = [r for r in lookups if r.target not in hidden]
    return claims, unverified, quotes, citations, lookups


def apply_strict(
    claims: list[ClaimResult],
    quotes: list[QuoteResult],
    citations: list[Citation],
    policy: PolicySettings,
    missing_numbers: list[tuple[int, str]] | None = None,
    *,
    document_count: int,
) -> list[ClaimResult]:
    """Attach the strict_quotes / strict_statistics / strict_attribution failures to the claims.

    With ``numbers: value``, strict_statistics also fails a claim for a number that no document
    holds (``missing_numbers``), unless a statistic of that claim failed already.
    strict_attribution fails a claim that passes on the context but is ``misattributed``: its
    markers cite documents that do not support it, or documents that were not given
    (:func:`misattribution`; ``document_count``: the context documents given).
    """
    ext = policy.extensions
    failing: list[tuple[int, str]] = []
    if ext.strict_attribution:
        failing += [
            (c.span[0], why)
            for c in claims
            if (why := misattribution(c, document_count)) is not None
        ]
    if ext.strict_quotes:
        failing += [
            (
                q.span[0],
                f"strict_quotes: the quote at {q.span[0]}-{q.span[1]} is not in the context",
            )
            for q in quotes
            if q.matched is False
        ]
    if ext.strict_statistics:
        statistics = [
            (
                c.span[0],
                f"strict_statistics: the {c.kind.replace('_', ' ')} at {c.span[0]}-{c.span[1]} "
                "is not in the context",
            )
            for c in citations
            if c.type == "statistic" and c.verified is False
        ]
        failing += statistics
        if missing_numbers:  # claim starts: a claim with a failed statistic says it once
            failed = {claim.span[0] for pos, _ in statistics if (claim := claim_at(claims, pos))}
            failing += [
                (
                    pos,
                    f"strict_statistics: the number {number} in the claim at "
                    f"{claim.span[0]}-{claim.span[1]} is not in the context",
                )
                for pos, number in missing_numbers
                if pos not in failed and (claim := claim_at(claims, pos)) is not None
            ]
    if not failing:
        return claims
    problems: dict[int, list[str]] = {}
    for pos, why in failing:
        if (claim := claim_at(claims, pos)) is not None:
            problems.setdefault(claim.span[0], []).append(why)
    return [
        updated(c, **{"problems": problems[c.span[0]], "verified": False})
        if c.span[0] in problems
        else c
        for c in claims
    ]


def misattribution(claim: ClaimResult, document_count: int) -> str | None:
    """strict_attribution's reason for ``claim``, or None when it does not fail the claim.

    A claim fails when the context supports it (``verified``) while its inline markers do not
    (``misattributed``): they cite documents beyond those given, or documents that together
    hold less than ``min_groundedness`` of its words, and another document is the one that
    supports it best. The reason is made of the rule, the claim's span and document numbers
    counted from 1 as the markers count them: "strict_attribution: the claim at 10-45 cites
    document 16; document 15 supports it" (beyond the documents given, only those are named).
    """
    if not (claim.misattributed and claim.verified and claim.best_document is not None):
        return None
    cited = claim.cited_documents
    beyond = [i for i in cited if not 0 <= i < document_count]
    named = beyond or cited
    if not beyond and claim.best_document in cited:
        # The document that supports it best is one it cites: no other document supports it
        # (its words are spread over several, or the semantic tier passed it).
        return None
    numbers = ", ".join(str(i + 1) for i in named)
    what = f"document {numbers}" if len(named) == 1 else f"documents {numbers}"
    start, end = claim.span
    return (
        f"strict_attribution: the claim at {start}-{end} cites {what}; "
        f"document {claim.best_document + 1} supports it"
    )


def redact(answer: str, unverified: list[ClaimResult], marker: str) -> str:
    """``answer`` with each unverified claim replaced by ``marker`` (all of it without one)."""
    # With no failing claim to point at (no context, or only the overall overlap failed), nothing
    # in the answer is known to be supported: the whole answer is replaced.
    if not unverified:
        return marker
    out = []
    last = 0
    for claim in sorted(unverified, key=lambda c: c.span):
        start, end = claim.span
        out.append(answer[last:start])
        out.append(marker)
        last = end
    out.append(answer[last:])
    return "".join(out)
