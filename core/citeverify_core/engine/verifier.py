"""The citation verifier (seed 000, steps 1-9).

Pipeline: coerce inputs -> tokenize the context once -> split and score claims -> find quotes and
citations (pure, ``_analyze``) -> look citations up (I/O, ``Lookups.run``) -> check and decide
(pure, ``_decide``). ``verify`` and ``averify`` share every step; only the lookup is awaited.
"""

from __future__ import annotations

import bisect
import collections
import dataclasses
import datetime
import itertools
import operator
from collections import Counter
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, Union

from citeverify_core.engine.citations import check_found, lookup_target
from citeverify_core.engine.context import (
    ContextCache,
    ContextDocument,
    ContextSearch,
    coerce_documents,
    document_hits,
    tokenize_documents,
)
from citeverify_core.engine.extract import (
    MAX_CITATIONS,
    MAX_MATCHES,
    Found,
    NumberIndex,
    extract,
    find_markers,
)
from citeverify_core.engine.results import (
    Citation,
    ClaimResult,
    QuoteResult,
    VerificationDetails,
    VerificationReport,
    VerificationResult,
    updated,
)
from citeverify_core.errors import InputError
from citeverify_core.lookups.http import LookupCache, Lookups, Target
from citeverify_core.policy.settings import PolicySettings
from citeverify_core.sync import run_sync
from citeverify_core.text import (
    ASCII_NON_WORD,
    Piece,
    QuoteSpan,
    find_quotes,
    is_number_key,
    match_normalize,
    split_claims,
    trim_outer_punctuation,
    words,
)

if TYPE_CHECKING:
    import httpx

    from citeverify_core.engine.semantic import Passages, SemanticTier
    from citeverify_core.lookups.record import LookupRecord
    from citeverify_core.policy.loading import PolicyConfig

__all__ = ["MAX_ANSWER_CHARS", "MAX_CLAIMS", "MAX_QUOTES", "CitationVerifier", "resolve_policy"]

#: Longest answer accepted, in characters. Far above any model's output; it stops a caller from
#: passing a whole corpus as the answer by mistake.
MAX_ANSWER_CHARS = 2_000_000
#: At most this many quotes of one answer are listed and searched in the context; the result's
#: notes say when there were more, and ``strict_quotes`` then fails the answer. Each quote costs a
#: search of every document: unbounded, 100,000 short quotes against 1 MB took minutes (issue 9).
MAX_QUOTES = 500
#: Most claims (sentences) an answer may have. Each claim costs a result object (about 3 KB and
#: 30 microseconds), so without a bound a 2 MB answer of one-word lines cost 3 GB (issue 9); at
#: this limit an answer stays under the 1 s target with its citations checked. 10,000 sentences
#: is about 700,000 characters of ordinary prose; an answer with more is refused with an
#: InputError before any claim is scored.
MAX_CLAIMS = 10_000

# A string for PolicyConfig: pydantic is imported when a policy needs validating.
PolicyLike = Union["PolicyConfig", PolicySettings, Mapping[str, Any], str, Path, None]
_T = TypeVar("_T")


def resolve_policy(policy: PolicyLike) -> PolicySettings:
    """The settings of any form a policy is given in (:func:`citeverify_core.policy.load_policy`).

    Settings and None (the defaults) need no validation, and so no pydantic.

    Raises:
        PolicyError: the policy is invalid or of another type.
    """
    if isinstance(policy, PolicySettings):
        return policy
    if policy is None:
        return PolicySettings()
    from citeverify_core.policy.loading import load_policy  # noqa: PLC0415 - pydantic: only to validate

    return load_policy(policy).to_settings()


@dataclass(slots=True)  # not frozen: made once per answer, a frozen one costs more
class _Analysis:
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


class CitationVerifier:
    """Checks an answer against its context documents and decides allow or block.

    Args:
        policy: A :class:`PolicyConfig`, the inner ``policy.citation-verifier`` mapping, or the
            path of a policy pack. Defaults to the seed's defaults.
        context_cache: Reuse the tokenization of context documents seen before: ``True`` for a
            private bounded cache, a :class:`ContextCache` to share one. Off by default: one
            uncached pass is already cheap (about one ``re.findall`` over the context), and the
            cache pays off when many answers are checked against the same documents.
        client: An ``httpx.AsyncClient`` for the lookups (proxies, transports, limits). By default
            citeverify keeps one client per event loop.
        lookup_cache: Where lookup results are kept (in memory by default; give a
            ``LookupCache(path)`` or set ``extensions.lookups.cache_path`` for SQLite on disk).
        include_original: Under ``redact``, keep what was removed in the result
            (``original_answer``, the removed claims' texts and missing words, the citations
            inside them). Off by default: a redacted result carries only the spans and scores of
            what it removed, so that passing it on does not hand back the removed text.
        semantic: The semantic tier (issue 16; off when None): a claim that fails on words gets
            a second score from this scorer and passes at ``extensions.semantic.min_score``. A
            callable ``(claim, passages) -> score in [0, 1]`` (sync or async; an NLI
            cross-encoder fits), a LangChain ``Embeddings``, a LlamaIndex embedding model, or a
            sentence-transformers model (cosine similarity to the best passage). Each claim's
            ``tier`` says which tier decided it; scorer failures never pass a claim
            (docs/semantics.md).

    Example:
        >>> v = CitationVerifier({"output_action": {"unverified_action": "block"}})
        >>> v.verify("The museum opens at nine.", ["The museum opens at nine."]).verdict
        'allow'
    """

    def __init__(
        self,
        policy: PolicyLike = None,
        *,
        context_cache: ContextCache | bool = False,
        client: httpx.AsyncClient | None = None,
        lookup_cache: LookupCache | None = None,
        include_original: bool = False,
        semantic: Any = None,
    ) -> None:
        self.policy = resolve_policy(policy)
        self.include_original = include_original
        self._semantic: SemanticTier | None = None
        if semantic is not None:
            from citeverify_core.engine.semantic import SemanticTier  # noqa: PLC0415 - asyncio, only here

            self._semantic = SemanticTier(semantic)
        if context_cache is True:
            self.context_cache: ContextCache | None = ContextCache()
        elif context_cache is False or context_cache is None:
            self.context_cache = None
        elif isinstance(context_cache, ContextCache):
            self.context_cache = context_cache
        else:
            got = type(context_cache).__name__
            msg = f"context_cache must be a bool or a ContextCache, got {got}"
            raise InputError(msg, path="context_cache")
        self.lookups = Lookups(self.policy.extensions.lookups, client=client, cache=lookup_cache)
        self._matcher = (self.policy, self.policy.extensions.matcher())
        self._matcher[1].prepare()

    def verify(
        self, answer: str, context_documents: Iterable[str | Mapping[str, Any]] | None = None
    ) -> VerificationResult:
        """Verify ``answer`` against ``context_documents`` (strings or ``{"content": ...}``).

        Works inside a running event loop too (Jupyter): lookups then run on citeverify's own
        background loop.

        Raises:
            InputError: the answer is not a string, is too long, or a document has no text.
        """
        analysis = self._analyze(answer, context_documents)
        targets = [t for t in analysis.targets if t is not None]
        if self._semantic is None:  # the default: nothing more than the seed's steps
            records = run_sync(self.lookups.run(targets)) if targets else []
            return self._decide(analysis, records)
        records, analysis = run_sync(self._with_tier(analysis, targets))
        return self._decide(analysis, records)

    async def averify(
        self, answer: str, context_documents: Iterable[str | Mapping[str, Any]] | None = None
    ) -> VerificationResult:
        """Async form of :meth:`verify`: the lookups of the answer run concurrently."""
        analysis = self._analyze(answer, context_documents)
        targets = [t for t in analysis.targets if t is not None]
        if self._semantic is None:
            records = await self.lookups.run(targets) if targets else []
            return self._decide(analysis, records)
        records, analysis = await self._with_tier(analysis, targets)
        return self._decide(analysis, records)

    # --- the semantic tier (issue 16) -----------------------------------------------------------

    async def _with_tier(
        self, analysis: _Analysis, targets: list[Target]
    ) -> tuple[list[LookupRecord], _Analysis]:
        """The lookups and the semantic tier's scores (concurrently), applied to ``analysis``."""
        requests, notes = self._semantic_requests(analysis)
        if requests:
            records, analysis = await self._io(analysis, targets, requests, notes)
        else:
            records = await self.lookups.run(targets) if targets else []
            analysis = _apply_semantic(analysis, {}, 1.0)
        return records, dataclasses.replace(analysis, semantic_notes=tuple(notes))

    def _semantic_requests(self, a: _Analysis) -> tuple[list[Passages], list[str]]:
        """The claims that failed on words, with their passages; notes on the ones left out."""
        assert self._semantic is not None
        if not a.context_checked or a.empty:
            return [], []
        from citeverify_core.engine.semantic import select_passages  # noqa: PLC0415

        settings = self.policy.extensions.semantic
        if settings.scope == "all":
            failing = [i for i, c in enumerate(a.claims) if c.verified is not None]
        else:
            failing = [i for i, c in enumerate(a.claims) if c.verified is False]
        if not failing:
            return [], []
        notes = []
        too_long = [i for i in failing if len(a.claims[i].text) > settings.max_passage_chars]
        if too_long:
            notes.append(
                f"semantic tier: {len(too_long)} claim(s) longer than max_passage_chars "
                f"({settings.max_passage_chars:,}) kept their word verdict"
            )
            failing = [i for i in failing if i not in set(too_long)]
        if len(failing) > settings.max_claims:
            notes.append(
                f"semantic tier: only the first {settings.max_claims} claims were scored "
                f"(max_claims); {len(failing) - settings.max_claims} kept their word verdict"
            )
            del failing[settings.max_claims :]
        requests = select_passages(
            [
                (
                    i,
                    a.claims[i].text,
                    a.claim_words[i],
                    a.claims[i].best_document,
                    a.claims[i].cited_documents,
                )
                for i in failing
            ],
            [d.text for d in a.docs],
            a.hits,
            self._matcher[1],
            max_passages=settings.max_passages,
            max_chars=settings.max_passage_chars,
            cache=self._semantic.windows,
        )
        return requests, notes

    async def _io(
        self, a: _Analysis, targets: list[Target], requests: list[Passages], notes: list[str]
    ) -> tuple[list[LookupRecord], _Analysis]:
        """The lookups and the semantic scorer, concurrently; the scores applied to the claims."""
        import asyncio  # noqa: PLC0415

        assert self._semantic is not None
        settings = self.policy.extensions.semantic
        scoring = self._semantic.score(requests, timeout=settings.timeout)
        if targets:
            records, outcome = await asyncio.gather(self.lookups.run(targets), scoring)
        else:
            records, outcome = [], await scoring
        notes.extend(outcome.notes)
        return records, _apply_semantic(a, outcome.scores, settings.min_score)

    # --- steps 2-4: pure analysis ---------------------------------------------------------------

    def _analyze(self, answer: Any, context_documents: Iterable[Any] | None) -> _Analysis:
        answer = _check_answer(answer)
        texts = coerce_documents(context_documents)
        policy = self.policy
        context_checked = policy.rag_context.verify_against_context and bool(texts)

        pieces = split_claims(answer, limit=MAX_CLAIMS)
        if len(pieces) > MAX_CLAIMS:
            msg = (
                f"answer has more than {MAX_CLAIMS:,} claims (sentences or lines); that is the "
                "limit: verify it in parts"
            )
            raise InputError(msg, path="answer")
        truncated: set[str] = set()
        markers = _capped(
            find_markers(answer, limit=MAX_MATCHES + 1) if "[" in answer or "【" in answer else [],
            MAX_MATCHES,
            "marker",
            truncated,
        )
        claim_markers = _markers_by_claim(pieces, markers)
        # Inline source markers ([1], [Source 2]) are citations, not content: their words are not
        # counted (a deliberate difference from the seed, which has no markers; docs/semantics.md).
        if self._matcher[0] is not policy:  # the policy attribute was replaced
            self._matcher = (policy, policy.extensions.matcher())
        matcher = self._matcher[1]
        written: list[dict[str, str] | None] | None = None
        if matcher.exact:  # the seed's words
            claim_words = _claim_words(answer, pieces, claim_markers)
        else:  # compared words (stems, no stop words, numbers by value: issue 16)
            compared = [
                matcher.claim(_without_markers(p, m))
                for p, m in zip(pieces, claim_markers, strict=True)
            ]
            claim_words = [keys for keys, _ in compared]
            written = [w for keys, w in compared if keys]
        pieces, claim_markers, claim_words = _drop_marker_only(pieces, claim_markers, claim_words)
        if written is None:
            written = [None] * len(pieces)
        # The answer's words are the union of its claims' words: claims are cut only at
        # terminators and line breaks, which are neither words nor changed by NFKC, and pieces
        # without words hold none. Saves a second tokenization of the answer.
        answer_words: set[str] = set().union(*claim_words)
        empty = not answer_words
        docs = tokenize_documents(texts, self.context_cache) if texts else []

        groundedness: float | None = None
        hits: list[set[str]] = []
        supported: set[str] = set()
        if context_checked and not empty:
            # Only the answer's words matter: one pass per document, then every claim is scored
            # against these small sets, never against the context again.
            hits = document_hits(docs, answer_words, matcher)
            supported = set().union(*hits)
            groundedness = len(supported) / len(answer_words)
        best = _BestDocuments(hits)
        n, min_groundedness = len(texts), policy.min_groundedness
        claims = [
            _score_claim(p, cw, hits, supported, m, best, n, min_groundedness, w)
            for p, cw, m, w in zip(pieces, claim_words, claim_markers, written, strict=True)
        ]
        missing_numbers: list[tuple[int, str]] = []
        if matcher.numbers and hits:
            missing_numbers = [
                (c.span[0], k)
                for c, cw in zip(claims, claim_words, strict=True)
                for k in cw
                if k not in supported and is_number_key(k)
            ]

        quotes: list[QuoteResult] = []
        if "quote" in policy.extract_patterns:
            # Step 4 is separate from step 2: quotes are matched whenever documents are given,
            # also with verify_against_context false, where a matching quote is the source
            # evidence that step 7 asks for.
            spans = _capped(
                find_quotes(answer, limit=MAX_QUOTES + 1), MAX_QUOTES, "quote", truncated
            )
            quotes = _match_quotes(spans, docs if texts else None)
        found = extract(answer, policy.extract_patterns, current_year=datetime.date.today().year)
        truncated |= found.truncated
        context_numbers = NumberIndex(texts) if texts else None
        return _Analysis(
            answer=answer,
            empty=empty,
            context_checked=context_checked,
            document_count=len(texts),
            groundedness=groundedness,
            pieces=pieces,
            claims=claims,
            quotes=quotes,
            found=found,
            truncated=truncated,
            docs=docs,
            context_numbers=context_numbers,
            targets=[lookup_target(f, policy) for f in found],
            missing_numbers=missing_numbers,
            claim_words=claim_words,
            hits=hits,
            supported=supported,
        )

    # --- steps 5-9: check, decide and act ---------------------------------------------------------

    def _decide(self, a: _Analysis, lookups: list[LookupRecord]) -> VerificationResult:
        policy = self.policy
        by_target = {(r.service, r.target): r for r in lookups}
        citations = [_quote_citation(q) for q in a.quotes]
        search = ContextSearch(a.docs)
        for f, target in zip(a.found, a.targets, strict=True):
            record = by_target.get((target.service, target.key)) if target else None
            claim = _claim_at(a.claims, f.start)
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
        claims = _apply_strict(a.claims, a.quotes, citations, policy, a.missing_numbers)

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
            evidence.append(
                f"answer overlap {a.groundedness:.2f}{with_meaning} >= {min_overlap:.2f}"
            )
        looked_up = sum(1 for c in citations if c.status == "verified")
        if looked_up:
            evidence.append(f"{looked_up} citation(s) confirmed by an external lookup")
        if not policy.require_source_match and citations:
            evidence.append(f"{len(citations)} citation(s) (require_source_match is false)")

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
        strict = [p for c in claims for p in c.problems] + _strict_truncated(a.truncated, policy)
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
                answer = _redact(a.answer, unverified, marker)
                if not self.include_original:
                    # What redact removed is not handed back: spans and scores stay, texts go.
                    original = ""
                    claims, unverified, quotes, citations, lookups = _withhold(
                        len(a.answer), marker, claims, unverified, a.quotes, citations, lookups
                    )
                    a = dataclasses.replace(a, quotes=quotes)

        report = _Report(a, claims, citations, passing, evidence)
        details = self._details(report, verified, claim_confidence, lookups, unverified)
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
                *(_TRUNCATED[t] for t in sorted(a.truncated)),
                *a.semantic_notes,
            ],
        )

    def _details(
        self,
        r: _Report,
        verified: bool,
        claim_confidence: float | None,
        lookups: list[LookupRecord],
        unverified: list[ClaimResult],
    ) -> VerificationDetails:
        policy = self.policy
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
    analysis: _Analysis
    claims: list[ClaimResult]
    citations: list[Citation]
    passing: list[ClaimResult]
    evidence: list[str]


def _check_answer(answer: Any) -> str:
    if not isinstance(answer, str):
        hint = " (decode it first)" if isinstance(answer, bytes) else ""
        msg = f"answer must be a string, got {type(answer).__name__}{hint}"
        raise InputError(msg, path="answer")
    if len(answer) > MAX_ANSWER_CHARS:
        msg = f"answer is {len(answer):,} characters; the limit is {MAX_ANSWER_CHARS:,}"
        raise InputError(msg, path="answer")
    # A subclass of str becomes a str, as validating the result's fields made it (the results
    # are built without validation, from the answer and its slices).
    return answer if type(answer) is str else str.__str__(answer)


_Marker = tuple[int, int, list[int]]


def _markers_by_claim(pieces: list[Piece], markers: list[_Marker]) -> list[list[_Marker]]:
    """The markers that start inside each claim (both lists are in text order: one merge)."""
    out: list[list[_Marker]] = []
    i = 0
    for p in pieces:
        while i < len(markers) and markers[i][0] < p.start:
            i += 1
        j = i
        while j < len(markers) and markers[j][0] < p.end:
            j += 1
        out.append(markers[i:j])
        i = j
    return out


def _drop_marker_only(
    pieces: list[Piece], markers: list[list[_Marker]], claim_words: list[list[str]]
) -> tuple[list[Piece], list[list[_Marker]], list[list[str]]]:
    """Claims that are only inline markers ("[1]" alone on a line) are not claims.

    Their markers cite for the claim before them; with no claim before, they are dropped.
    """
    if all(claim_words):
        return pieces, markers, claim_words
    kept: tuple[list[Piece], list[list[_Marker]], list[list[str]]] = ([], [], [])
    for piece, marks, cw in zip(pieces, markers, claim_words, strict=True):
        if cw:
            kept[0].append(piece)
            kept[1].append(list(marks))
            kept[2].append(cw)
        elif kept[1]:
            kept[1][-1].extend(marks)
    return kept


#: Claims against at most this many documents are scored by comparing them with each document.
_SCAN_DOCUMENTS = 8
#: Memory for the per-word document lanes of :class:`_BestDocuments` (one byte per document and
#: supported word); past it, the postings path with its work budget is used.
_LANE_BYTES = 32 << 20


def _best_document_reference(
    claim_words: Iterable[str], hits: list[set[str]]
) -> tuple[int | None, int]:
    """The straightforward best document: most shared words, the first on ties.

    The reference for :class:`_BestDocuments` (tests/engine/test_speed_equivalence.py): every claim
    against every document.
    """
    claim = set(claim_words)
    best, best_count = None, 0
    for i, h in enumerate(hits):
        count = len(claim & h)
        if count > best_count:
            best, best_count = i, count
    return best, best_count


class _BestDocuments:
    """For a claim, the document sharing the most of its words (the first on ties).

    Three ways, the same answers as :func:`_best_document_reference`:

    - few documents: each claim is compared with each document (set intersections);
    - otherwise, an inverted index whose entries are *lanes*: for each supported word, an integer
      holding one byte per document (1 where the document has the word). A claim's lanes added
      together give, in one big-integer sum at C speed, every document's count of the claim's
      words; the best is the first byte holding the highest count (``bytes.find``). Building the
      lanes is one C-level pass over the per-document hits (issue 14: 200 claims against 10,000
      documents, no per-claim pass over the documents);
    - when the lanes would need more than ``lane_bytes``, postings lists (word -> documents)
      counted per claim, with the work bounded per answer by ``budget`` postings; past it, a
      claim's best document is the first one holding its rarest supported word
      (docs/semantics.md).

    Claims with the same supported words share one answer.
    """

    def __init__(
        self,
        hits: list[set[str]],
        budget: int = 1_000_000,
        *,
        lane_bytes: int = _LANE_BYTES,
        scan_documents: int = _SCAN_DOCUMENTS,
    ) -> None:
        self._hits = hits
        self._n = n = len(hits)
        self._memo: dict[frozenset[str], tuple[int | None, int]] = {}
        self._budget = budget
        self._lanes: dict[str, int] | None = None
        self._postings: dict[str, list[int]] = {}
        self._sets: dict[str, set[int]] = {}
        self._scan_documents = scan_documents
        #: The words some document holds (the postings' keys; only used past a few documents).
        self._words: Container[str] = self._postings
        if n <= scan_documents:
            return
        postings: collections.defaultdict[str, list[int]] = collections.defaultdict(list)
        for i, h in enumerate(hits):
            for w in h:
                postings[w].append(i)
        self._postings = self._words = postings
        if len(self._postings) * n <= lane_bytes:
            self._lanes = {w: _lane(docs, n) for w, docs in self._postings.items()}

    def __call__(self, claim_words: Iterable[str]) -> tuple[int | None, int]:
        if self._n <= self._scan_documents:  # a few set intersections at C speed
            claim = (
                claim_words if isinstance(claim_words, list | set | frozenset) else [*claim_words]
            )
            best, best_count = None, 0
            for i, h in enumerate(self._hits):
                count = len(h.intersection(claim))
                if count > best_count:
                    best, best_count = i, count
            return best, best_count
        return self._indexed(claim_words)

    def best(self, claim_words: list[str], most: int) -> tuple[int | None, int]:
        """``self(claim_words)``, knowing that ``most`` of the words are in some document.

        A scan of a few documents stops at the first one holding ``most`` words: no later one
        can hold more (the claim's words must be distinct).
        """
        if self._n > self._scan_documents:
            return self._indexed(claim_words)
        best, best_count = None, 0
        for i, h in enumerate(self._hits):
            count = len(h.intersection(claim_words))
            if count > best_count:
                best, best_count = i, count
                if count >= most:
                    break
        return best, best_count

    def _indexed(self, claim_words: Iterable[str]) -> tuple[int | None, int]:
        present = frozenset(w for w in claim_words if w in self._words)
        if not present:
            return None, 0
        if present not in self._memo:
            if self._lanes is not None:
                self._memo[present] = self._by_lanes(present, self._lanes)
            else:
                self._memo[present] = self._find(present)
        return self._memo[present]

    def _by_lanes(self, present: frozenset[str], lanes: dict[str, int]) -> tuple[int, int]:
        n = self._n
        words = list(present)
        if len(words) <= 255:  # a byte per document holds the count
            counts = sum(map(lanes.__getitem__, words)).to_bytes(n, "little")
            for c in range(len(words), 0, -1):
                i = counts.find(c)
                if i >= 0:
                    return i, c
            raise AssertionError("a present word is in some document")  # pragma: no cover
        total = [0] * n
        for k in range(0, len(words), 255):
            part = sum(map(lanes.__getitem__, words[k : k + 255])).to_bytes(n, "little")
            total = list(map(operator.add, total, part))
        top = max(total)
        return total.index(top), top

    def _find(self, present: frozenset[str]) -> tuple[int | None, int]:
        by_rarity = sorted(present, key=lambda w: len(self._postings[w]))
        rarest, others = self._postings[by_rarity[0]], by_rarity[1:]
        if not others:
            return rarest[0], 1
        # A document holding all the words is the best; the first such is usually found among
        # the first holders of the rarest word.
        sets = [self._set(w) for w in others]
        for doc in rarest[:64]:
            if all(doc in s for s in sets):
                return doc, len(present)
        cost = sum(len(self._postings[w]) for w in present)
        if cost > self._budget:
            return rarest[0], len(present & self._words_of(rarest[0], present))
        self._budget -= cost
        counts: Counter[int] = Counter()
        for w in present:
            counts.update(self._postings[w])
        top = max(counts.values())
        return min(doc for doc, c in counts.items() if c == top), top

    def _set(self, word: str) -> set[int]:
        if word not in self._sets:
            self._sets[word] = set(self._postings[word])
        return self._sets[word]

    def _words_of(self, doc: int, words: frozenset[str]) -> set[str]:
        return {w for w in words if doc in self._set(w)}


def _lane(documents: list[int], n: int) -> int:
    """An integer with one byte per document: 1 for ``documents``, 0 elsewhere."""
    lane = bytearray(n)
    collections.deque(map(lane.__setitem__, documents, itertools.repeat(1)), 0)  # C-level loop
    return int.from_bytes(lane, "little")


#: The fields a claim leaves out of its JSON: without the context, and with it.
_UNCHECKED_UNSET = frozenset(
    {"cited_groundedness", "misattributed", "problems", "tier", "semantic_score"}
)
_CHECKED_UNSET = frozenset({"problems", "tier", "semantic_score"})


def _score_claim(
    piece: Piece,
    claim_words: list[str],
    hits: list[set[str]],
    supported: set[str],
    markers: list[_Marker],
    best_documents: _BestDocuments,
    document_count: int,
    min_groundedness: float,
    written: dict[str, str] | None = None,
) -> ClaimResult:
    # Hot path (benchmark if changing): set operations only, no rescans of the context.
    n = len(claim_words)
    cited = sorted({num - 1 for _, _, nums in markers for num in nums}) if markers else []
    if not hits:  # context not checked
        return ClaimResult(
            text=piece.text,
            span=(piece.start, piece.end),
            groundedness=None,
            verified=None,
            word_count=n,
            missing_words=[],
            best_document=None,
            best_document_groundedness=None,
            cited_documents=cited,
            _unset=_UNCHECKED_UNSET,
        )
    missing = list(itertools.filterfalse(supported.__contains__, claim_words))
    shown = [written[w] for w in missing] if written is not None else missing  # stems: as written
    found = n - len(missing)
    best, best_count = best_documents.best(claim_words, found) if found else (None, 0)
    score = found / n
    cited_score: float | None = None
    misattributed: bool | None = None
    if cited:
        in_range = [i for i in cited if 0 <= i < document_count]
        cited_hits: set[str] = set().union(*(hits[i] for i in in_range))
        cited_score = sum(1 for w in claim_words if w in cited_hits) / n
        misattributed = len(in_range) < len(cited) or cited_score < min_groundedness
    return ClaimResult(
        text=piece.text,
        span=(piece.start, piece.end),
        groundedness=score,
        verified=score >= min_groundedness,
        word_count=n,
        missing_words=shown,
        best_document=best,
        best_document_groundedness=best_count / n if best is not None else None,
        cited_documents=cited,
        cited_groundedness=cited_score,
        misattributed=misattributed,
        _unset=_CHECKED_UNSET,
    )


def _apply_semantic(a: _Analysis, scores: dict[int, float], min_score: float) -> _Analysis:
    """The semantic scores applied: each scored claim passes at ``min_score``, ``tier`` is set.

    Claims without a valid score keep their word verdict (a scorer's failure passes nothing that
    failed on words). Under ``scope: all`` a claim that passed on words can fail here.
    The words of the claims that now pass count as supported in the answer overlap the verdict
    uses (``details.groundedness`` stays the word measure of the seed).
    """
    claims = []
    meant: set[str] = set()
    for i, c in enumerate(a.claims):
        if i in scores:
            passed = scores[i] >= min_score
            if passed:
                meant.update(a.claim_words[i])
            update: dict[str, Any] = {
                "tier": "semantic",
                "semantic_score": scores[i],
                "verified": passed,
            }
            claims.append(updated(c, **update))
        elif c.verified is not None:
            claims.append(updated(c, **{"tier": "words"}))  # set: shown in the JSON
        else:
            claims.append(c)
    overlap = a.groundedness
    if meant and overlap is not None:
        answer_words: set[str] = set().union(*a.claim_words)
        overlap = len(a.supported | meant) / len(answer_words)
    return dataclasses.replace(a, claims=claims, overlap=overlap, semantic=True)


def _without_markers(piece: Piece, markers: list[_Marker], source: str | None = None) -> str:
    """The claim's text without its inline markers (each replaced by a space).

    ``source``: a text of the answer's length and offsets to cut from instead of the answer.
    """
    text = piece.text if source is None else source[piece.start : piece.end]
    if not markers:
        return text
    parts, last = [], piece.start
    for s, e, _ in markers:
        if e <= piece.end:
            parts.append(text[last - piece.start : s - piece.start])
            last = e
    parts.append(text[last - piece.start :])
    return " ".join(parts)


def _claim_words_reference(
    pieces: list[Piece], claim_markers: list[list[_Marker]]
) -> list[list[str]]:
    """Each claim's unique words, the straightforward way: :func:`words` of each claim.

    The reference for :func:`_claim_words` (tests/engine/test_speed_equivalence.py).
    """
    return [
        list(dict.fromkeys(words(_without_markers(p, m))))
        for p, m in zip(pieces, claim_markers, strict=True)
    ]


def _claim_words(
    answer: str, pieces: list[Piece], claim_markers: list[list[_Marker]]
) -> list[list[str]]:
    """Each claim's unique words, in order: :func:`_claim_words_reference`, faster.

    An ASCII answer is lowered and its non-word characters blanked once, as :func:`words` does
    for each claim (both keep every offset); each claim's words are then a split of its slice
    (issue 14: per-claim calls were a fixed cost of small answers).
    """
    if not answer.isascii():
        return _claim_words_reference(pieces, claim_markers)
    folded = answer.lower().translate(ASCII_NON_WORD)
    return [
        list(dict.fromkeys((_without_markers(p, m, folded) if m else folded[p[0] : p[1]]).split()))
        for p, m in zip(pieces, claim_markers, strict=True)
    ]


def _claim_at(claims: list[ClaimResult], pos: int) -> ClaimResult | None:
    """The claim whose span holds ``pos`` (claims are disjoint and in order: a bisection)."""
    i = bisect.bisect_right(claims, pos, key=lambda c: c.span[0]) - 1
    if i >= 0 and claims[i].span[0] <= pos < claims[i].span[1]:
        return claims[i]
    return None


_TRUNCATED = {
    t: f"only the first {MAX_CITATIONS:,} citations (and {MAX_MATCHES:,} candidates per pattern) "
    f"were checked: {t} citations past them were not"
    for t in ("academic", "url", "case_law", "regulatory", "statistic")
}
_TRUNCATED["quote"] = f"only the first {MAX_QUOTES:,} quotes were checked"
_TRUNCATED["marker"] = f"only the first {MAX_MATCHES:,} inline source markers were read"


def _capped(items: list[_T], limit: int, kind: str, truncated: set[str]) -> list[_T]:
    """``items`` cut to ``limit``; ``kind`` is added to ``truncated`` when something was cut."""
    if len(items) > limit:
        truncated.add(kind)
        del items[limit:]
    return items


def _strict_truncated(truncated: set[str], policy: PolicySettings) -> list[str]:
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


def _withhold(
    answer_length: int,
    marker: str,
    claims: list[ClaimResult],
    unverified: list[ClaimResult],
    quotes: list[QuoteResult],
    citations: list[Citation],
    lookups: list[LookupRecord],
) -> tuple[
    list[ClaimResult], list[ClaimResult], list[QuoteResult], list[Citation], list[LookupRecord]
]:
    """The details without the text of what redact removed (issue 9: no leak through details).

    Redact removes the unverified claims, or the whole answer when none is at fault. Removed
    claims keep their span and scores; their text becomes the marker and their missing words
    are dropped. Quotes and citations that overlap them lose their text, and lookups made only
    for such citations are dropped (their target is the removed text).
    """
    whole = not unverified
    removed = [(0, answer_length)] if whole else sorted(c.span for c in unverified)
    gone: dict[str, Any] = {"text": marker, "missing_words": [], "problems": []}
    withheld = {  # one copy per claim, shared by both lists
        c.span: updated(c, **gone) for c in (claims if whole else unverified)
    }
    claims = [withheld.get(c.span, c) for c in claims]
    unverified = [withheld[c.span] for c in unverified]
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


def _apply_strict(
    claims: list[ClaimResult],
    quotes: list[QuoteResult],
    citations: list[Citation],
    policy: PolicySettings,
    missing_numbers: list[tuple[int, str]] | None = None,
) -> list[ClaimResult]:
    """Attach the strict_quotes / strict_statistics failures to the claims that carry them.

    With ``numbers: value``, strict_statistics also fails a claim for a number that no document
    holds (``missing_numbers``), unless a statistic of that claim failed already.
    """
    ext = policy.extensions
    failing: list[tuple[int, str]] = []
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
            failed = {claim.span[0] for pos, _ in statistics if (claim := _claim_at(claims, pos))}
            failing += [
                (
                    pos,
                    f"strict_statistics: the number {number} in the claim at "
                    f"{claim.span[0]}-{claim.span[1]} is not in the context",
                )
                for pos, number in missing_numbers
                if pos not in failed and (claim := _claim_at(claims, pos)) is not None
            ]
    if not failing:
        return claims
    problems: dict[int, list[str]] = {}
    for pos, why in failing:
        if (claim := _claim_at(claims, pos)) is not None:
            problems.setdefault(claim.span[0], []).append(why)
    return [
        updated(c, **{"problems": problems[c.span[0]], "verified": False})
        if c.span[0] in problems
        else c
        for c in claims
    ]


def _match_quotes(quotes: list[QuoteSpan], docs: list[ContextDocument] | None) -> list[QuoteResult]:
    """Each quote against the documents (``matched`` None: no documents to check against).

    Searched through the same :class:`ContextSearch` as case law and statutes; the same quote is
    located once.
    """
    search = ContextSearch(docs or [], limit=MAX_QUOTES)  # the quotes are capped already
    located: dict[str, tuple[int, tuple[int, int] | None] | None] = {}
    results = []
    for q in quotes:
        needle = trim_outer_punctuation(match_normalize(q.text))
        matched: bool | None = None
        document: int | None = None
        document_span: tuple[int, int] | None = None
        if docs is not None:
            if needle not in located:
                i = search.first(needle)[1] if needle else None
                located[needle] = None if i is None else (i, docs[i].find(needle))
            hit = located[needle]
            matched = hit is not None
            if hit is not None:
                document, document_span = hit
        results.append(
            QuoteResult(
                text=q.text,
                span=(q.start, q.end),
                normalized=needle,
                matched=matched,
                document=document,
                document_span=document_span,
            )
        )
    return results


def _quote_citation(q: QuoteResult) -> Citation:
    if q.matched is None:
        status, reason = "unchecked", "not checked: no context documents to compare with"
    elif q.matched:
        status, reason = "matched", f"found in context document {q.document}"
    else:
        status, reason = "not_found", "not found in any context document"
    return Citation(
        type="quote",
        kind="quote",
        text=q.text,
        span=q.span,
        normalized=q.normalized,
        verified=q.matched,
        status=status,
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
