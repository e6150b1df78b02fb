"""The citation verifier: grounding, claims, quotes, and the verdict (seed 000, steps 2-9).

Pipeline: coerce inputs -> tokenize context once -> split and score claims -> match quotes ->
decide (step 7) -> act (steps 8-9). The steps are pure functions of strings; I/O (lookups) will
sit between matching and deciding, injected.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citeverify._context import ContextCache, ContextDocument, coerce_documents, tokenize_documents
from citeverify._errors import InputError, PolicyError
from citeverify._policy import PolicyConfig
from citeverify._result import (
    Citation,
    ClaimResult,
    LookupRecord,
    QuoteResult,
    VerificationDetails,
    VerificationReport,
    VerificationResult,
)
from citeverify._text import (
    QuoteSpan,
    find_quotes,
    match_normalize,
    split_claims,
    trim_outer_punctuation,
    words,
)

__all__ = ["MAX_ANSWER_CHARS", "CitationVerifier", "resolve_policy"]

#: Longest answer accepted, in characters. Far above any model's output; it stops a caller from
#: passing a whole corpus as the answer by mistake.
MAX_ANSWER_CHARS = 2_000_000

PolicyLike = PolicyConfig | Mapping[str, Any] | str | Path | None


def resolve_policy(policy: PolicyLike) -> PolicyConfig:
    """Accept a PolicyConfig, the inner mapping, or the path of a policy pack."""
    if policy is None:
        return PolicyConfig()
    if isinstance(policy, PolicyConfig):
        return policy
    if isinstance(policy, str | Path):
        return PolicyConfig.from_yaml(policy)
    if isinstance(policy, Mapping):
        return PolicyConfig.model_validate(dict(policy))
    msg = (
        "policy must be a PolicyConfig, a mapping of citation-verifier options, or the path of "
        f"a policy pack; got {type(policy).__name__}"
    )
    raise PolicyError(msg)


@dataclass(frozen=True, slots=True)
class _Analysis:
    answer: str
    empty: bool
    context_checked: bool
    document_count: int
    groundedness: float | None
    claims: list[ClaimResult]
    quotes: list[QuoteResult]
    citations: list[Citation]


class CitationVerifier:
    """Checks an answer against its context documents and decides allow or block.

    Args:
        policy: A :class:`PolicyConfig`, the inner ``policy.citation-verifier`` mapping, or the
            path of a policy pack. Defaults to the seed's defaults.
        context_cache: Reuse the tokenization of context documents seen before: ``True`` for a
            private bounded cache, a :class:`ContextCache` to share one. Off by default: one
            uncached pass is already cheap (about one ``re.findall`` over the context), and the
            cache pays off when many answers are checked against the same documents.

    Example:
        >>> v = CitationVerifier({"output_action": {"unverified_action": "block"}})
        >>> v.verify("The museum opens at nine.", ["The museum opens at nine."]).verdict
        'allow'
    """

    def __init__(
        self, policy: PolicyLike = None, *, context_cache: ContextCache | bool = False
    ) -> None:
        self.policy = resolve_policy(policy)
        if context_cache is True:
            self.context_cache: ContextCache | None = ContextCache()
        elif context_cache is False or context_cache is None:
            self.context_cache = None
        elif isinstance(context_cache, ContextCache):
            self.context_cache = context_cache
        else:
            got = type(context_cache).__name__
            msg = f"context_cache must be a bool or a ContextCache, got {got}"
            raise TypeError(msg)

    def verify(
        self, answer: str, context_documents: Iterable[str | Mapping[str, Any]] | None = None
    ) -> VerificationResult:
        """Verify ``answer`` against ``context_documents`` (strings or ``{"content": ...}``).

        Raises:
            InputError: the answer is not a string, is too long, or a document has no text.
        """
        return self._decide(self._analyze(answer, context_documents), [])

    async def averify(
        self, answer: str, context_documents: Iterable[str | Mapping[str, Any]] | None = None
    ) -> VerificationResult:
        """Async form of :meth:`verify`, for use inside an event loop."""
        return self._decide(self._analyze(answer, context_documents), [])

    # --- steps 2-4: pure analysis ---------------------------------------------------------------

    def _analyze(self, answer: Any, context_documents: Iterable[Any] | None) -> _Analysis:
        answer = _check_answer(answer)
        texts = coerce_documents(context_documents)
        policy = self.policy
        context_checked = policy.rag_context.verify_against_context and bool(texts)

        pieces = split_claims(answer)
        claim_words = [list(dict.fromkeys(words(p.text))) for p in pieces]
        # The answer's words are the union of its claims' words: claims are cut only at
        # terminators and line breaks, which are neither words nor changed by NFKC, and pieces
        # without words hold none. Saves a second tokenization of the answer.
        answer_words: set[str] = set().union(*claim_words)
        empty = not answer_words

        docs: list[ContextDocument] = []
        groundedness: float | None = None
        claims: list[ClaimResult]
        if context_checked and not empty:
            docs = tokenize_documents(texts, self.context_cache)
            # Only the answer's words matter: intersect once per document, then every claim is
            # scored against these small sets, never against the context again.
            hits = [d.hits(answer_words) for d in docs]
            supported: set[str] = set().union(*hits)
            groundedness = len(supported) / len(answer_words)
            active = [(i, h) for i, h in enumerate(hits) if h]  # documents sharing a word
            threshold = policy.min_groundedness
            claims = [
                _score_claim(p.text, (p.start, p.end), cw, supported, active, threshold)
                for p, cw in zip(pieces, claim_words, strict=True)
            ]
        else:
            claims = [
                ClaimResult(
                    text=p.text,
                    span=(p.start, p.end),
                    groundedness=None,
                    verified=None,
                    word_count=len(cw),
                    missing_words=[],
                    best_document=None,
                    best_document_groundedness=None,
                )
                for p, cw in zip(pieces, claim_words, strict=True)
            ]

        quotes: list[QuoteResult] = []
        citations: list[Citation] = []
        if "quote" in policy.extract_patterns:
            # Step 4 is separate from step 2: quotes are matched whenever documents are given,
            # also with verify_against_context false, where a matching quote is the source
            # evidence that step 7 asks for.
            if texts and not docs:
                docs = tokenize_documents(texts, self.context_cache)
            quotes = [_match_quote(q, docs if texts else None) for q in find_quotes(answer)]
            citations.extend(_quote_citation(q) for q in quotes)
        citations.sort(key=lambda c: c.span)
        return _Analysis(
            answer=answer,
            empty=empty,
            context_checked=context_checked,
            document_count=len(texts),
            groundedness=groundedness,
            claims=claims,
            quotes=quotes,
            citations=citations,
        )

    # --- steps 7-9: decide and act ----------------------------------------------------------------

    def _decide(self, a: _Analysis, lookups: list[LookupRecord]) -> VerificationResult:
        policy = self.policy
        min_overlap = policy.effective_min_context_overlap
        scored = [c for c in a.claims if c.verified is not None]
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
        if a.groundedness is not None and a.groundedness >= min_overlap:
            evidence.append(f"answer overlap {a.groundedness:.2f} >= {min_overlap:.2f}")
        ok_lookups = sum(1 for r in lookups if r.ok)
        if ok_lookups:
            evidence.append(f"{ok_lookups} successful external lookup(s)")
        if not policy.require_source_match and a.citations:
            evidence.append(f"{len(a.citations)} citation(s) (require_source_match is false)")

        reasons: list[str] = []
        if a.empty:
            verified = True  # seed step 7: an empty answer passes
        elif not a.context_checked:
            verified = (
                (not policy.require_sources) or bool(evidence) or not policy.require_source_match
            )
            if not verified:
                why = (
                    "context checks are off (verify_against_context: false)"
                    if a.document_count
                    else "no context documents were given"
                )
                reasons.append(f"{why} and the answer has no source evidence (require_sources)")
        else:
            assert a.groundedness is not None
            assert claim_confidence is not None
            if a.groundedness < min_overlap:
                reasons.append(
                    f"answer overlap {a.groundedness:.2f} is below min_context_overlap "
                    f"{min_overlap:.2f}"
                )
            if claim_confidence < policy.min_confidence:
                reasons.append(
                    f"claim confidence {claim_confidence:.2f} is below min_confidence "
                    f"{policy.min_confidence:.2f} ({len(passing)} of {len(scored)} claims pass "
                    f"min_groundedness {policy.min_groundedness:.2f})"
                )
            if policy.require_sources and not evidence:
                reasons.append("the answer has no source evidence (require_sources)")
            verified = not reasons

        unverified = [c for c in a.claims if c.verified is False]
        answer = a.answer
        if verified:
            action = "allow"
        else:
            action = policy.output_action.unverified_action
            if action == "redact":
                answer = _redact(a.answer, unverified, policy.extensions.redaction_marker)

        details = self._details(
            a, verified, claim_confidence, lookups, unverified, evidence, passing
        )
        return VerificationResult(
            verdict="block" if action == "block" else "allow",
            reason_code="citation.verified" if verified else "citation.unverified",
            action=action,
            answer=answer,
            details=details,
            reasons=reasons,
            notes=policy.notes(),
        )

    def _details(
        self,
        a: _Analysis,
        verified: bool,
        claim_confidence: float | None,
        lookups: list[LookupRecord],
        unverified: list[ClaimResult],
        evidence: list[str],
        passing: list[ClaimResult],
    ) -> VerificationDetails:
        policy = self.policy
        if not policy.response.include_verification_report:
            return VerificationDetails(verified=verified, groundedness=a.groundedness)
        extra: dict[str, Any]
        if verified:
            matched = sum(1 for q in a.quotes if q.matched)
            summary = (
                "empty answer: nothing to verify"
                if a.empty
                else f"verified: {len(passing)} of {len(a.claims)} claims supported"
                + (f", overlap {a.groundedness:.2f}" if a.groundedness is not None else "")
            )
            extra = {
                "verification_report": VerificationReport(
                    summary=summary,
                    claim_count=len(a.claims),
                    passing_claim_count=len(passing),
                    quote_count=len(a.quotes),
                    matched_quote_count=matched,
                    citation_count=len(a.citations),
                    context_document_count=a.document_count,
                    source_evidence=evidence,
                    thresholds={
                        "min_confidence": policy.min_confidence,
                        "min_groundedness": policy.min_groundedness,
                        "min_context_overlap": policy.effective_min_context_overlap,
                    },
                )
            }
        else:
            extra = {"unverified_claims": unverified, "unverified_claim_count": len(unverified)}
        return VerificationDetails(
            verified=verified,
            groundedness=a.groundedness,
            claim_confidence=claim_confidence,
            claims=a.claims,
            quotes=a.quotes,
            citations=a.citations,
            external_lookup=lookups,
            **extra,
        )


def _check_answer(answer: Any) -> str:
    if not isinstance(answer, str):
        hint = " (decode it first)" if isinstance(answer, bytes) else ""
        msg = f"answer must be a string, got {type(answer).__name__}{hint}"
        raise InputError(msg, path="answer")
    if len(answer) > MAX_ANSWER_CHARS:
        msg = f"answer is {len(answer):,} characters; the limit is {MAX_ANSWER_CHARS:,}"
        raise InputError(msg, path="answer")
    return answer


def _score_claim(
    text: str,
    span: tuple[int, int],
    claim_words: list[str],
    supported: set[str],
    active: list[tuple[int, set[str]]],
    min_groundedness: float,
) -> ClaimResult:
    # Hot path (benchmark if changing): set operations only, no rescans of the context.
    n = len(claim_words)
    missing = [w for w in claim_words if w not in supported]
    best, best_count = None, 0
    if len(missing) < n:
        claim_set = set(claim_words)
        for i, h in active:
            count = len(claim_set & h)
            if count > best_count:  # strict: ties go to the first document
                best, best_count = i, count
    score = (n - len(missing)) / n
    # Plain construction: pydantic-core validation is faster than model_construct here.
    return ClaimResult(
        text=text,
        span=span,
        groundedness=score,
        verified=score >= min_groundedness,
        word_count=n,
        missing_words=missing,
        best_document=best,
        best_document_groundedness=best_count / n if best is not None else None,
    )


def _match_quote(q: QuoteSpan, docs: list[ContextDocument] | None) -> QuoteResult:
    needle = trim_outer_punctuation(match_normalize(q.text))
    matched: bool | None = None
    document = None
    document_span = None
    if docs is not None:
        matched = False
        for i, d in enumerate(docs):
            if needle and needle in d.match_text:
                matched, document, document_span = True, i, d.find(needle)
                break
    return QuoteResult(
        text=q.text,
        span=(q.start, q.end),
        normalized=needle,
        matched=matched,
        document=document,
        document_span=document_span,
    )


def _quote_citation(q: QuoteResult) -> Citation:
    if q.matched is None:
        reason = "not checked: no context documents to compare with"
    elif q.matched:
        reason = f"found in context document {q.document}"
    else:
        reason = "not found in any context document"
    return Citation(
        type="quote",
        text=q.text,
        span=q.span,
        normalized=q.normalized,
        verified=q.matched,
        reason=reason,
    )


def _redact(answer: str, unverified: list[ClaimResult], marker: str) -> str:
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
