"""The citation verifier: the public class, and the steps of a verification in order.

Pipeline: coerce inputs -> tokenize the context once -> split and score claims -> find quotes and
citations (pure, ``_analyze``) -> look citations up (I/O, ``Lookups.run``) -> check and decide
(pure, ``_decide``). ``verify`` and ``averify`` share every step; only the lookup is awaited.
"""

from __future__ import annotations

import bisect
import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, Union

from citeverify_core.engine.citations import lookup_target
from citeverify_core.engine.claims import (
    BestDocuments,
    Marker,
    drop_marker_only,
    markers_by_claim,
    score_claim,
    with_spans,
    without_markers,
    words_of_claims,
)
from citeverify_core.engine.context import (
    ContextCache,
    coerce_documents,
    document_hits,
    tokenize_documents,
)
from citeverify_core.engine.decide import Analysis, decide
from citeverify_core.engine.extract import (
    MAX_MATCHES,
    Extracted,
    NumberIndex,
    citation_markers,
    extract,
    find_markers,
)
from citeverify_core.engine.quotes import MAX_QUOTES, match_quotes
from citeverify_core.engine.results import (
    QuoteResult,
    VerificationResult,
    updated,
)
from citeverify_core.errors import InputError
from citeverify_core.lookups.outcome import Target
from citeverify_core.policy.settings import PolicySettings
from citeverify_core.sync import run_sync
from citeverify_core.text import (
    Piece,
    WordMatcher,
    find_quotes,
    is_number_key,
    split_claims,
)

if TYPE_CHECKING:
    import httpx

    from citeverify_core.engine.semantic import Passages, SemanticTier
    from citeverify_core.lookups.cache import LookupCache
    from citeverify_core.lookups.record import LookupRecord
    from citeverify_core.lookups.resolve import Lookups
    from citeverify_core.policy.loading import PolicyConfig

__all__ = ["MAX_ANSWER_CHARS", "MAX_CLAIMS", "MAX_QUOTES", "CitationVerifier", "resolve_policy"]

#: Longest answer accepted, in characters. Far above any model's output; it stops a caller from
#: passing a whole corpus as the answer by mistake.
MAX_ANSWER_CHARS = 2_000_000
#: Most claims (sentences) an answer may have. Each claim costs a result object (about 3 KB and
#: 30 microseconds), so without a bound a 2 MB answer of one-word lines cost 3 GB; at
#: this limit an answer stays under the 1 s target with its citations checked. 10,000 sentences
#: is about 700,000 characters of ordinary prose; an answer with more is refused with an
#: InputError before any claim is scored.
MAX_CLAIMS = 10_000

# A string for PolicyConfig: pydantic is imported when a policy needs validating.
PolicyLike = Union["PolicyConfig", PolicySettings, Mapping[str, Any], str, Path, None]
_T = TypeVar("_T")


def resolve_policy(policy: PolicyLike, options: Mapping[str, Any] | None = None) -> PolicySettings:
    """The settings of any form a policy is given in (:func:`citeverify_core.policy.load_policy`).

    ``options`` are keyword options laid over it (:func:`citeverify_core.policy.merge_policy`).
    Settings and None (the defaults) without options need no validation, and so no pydantic.

    Raises:
        PolicyError: the policy or an option is invalid, or the policy is of another type.
    """
    if options:
        from citeverify_core.policy.merge import merge_policy  # noqa: PLC0415 - pydantic: only to validate

        return merge_policy(policy, options).to_settings()
    if isinstance(policy, PolicySettings):
        return policy
    if policy is None:
        return PolicySettings()
    from citeverify_core.policy.loading import load_policy  # noqa: PLC0415 - pydantic: only to validate

    return load_policy(policy).to_settings()


class CitationVerifier:
    """Checks an answer against its context documents and decides allow or block.

    Args:
        policy: A :class:`PolicyConfig`, the inner ``policy.citation-verifier`` mapping, or the
            path of a policy pack. Defaults to the default policy.
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
        semantic: The semantic tier (off when None): a claim that fails on words gets
            a second score from this scorer and passes at ``extensions.semantic.min_score``. A
            callable ``(claim, passages) -> score in [0, 1]`` (sync or async; an NLI
            cross-encoder fits), a LangChain ``Embeddings``, a LlamaIndex embedding model, or a
            sentence-transformers model (cosine similarity to the best passage). Each claim's
            ``tier`` says which tier decided it; scorer failures never pass a claim
            (docs/semantics.md).
        **options: Policy options laid over ``policy``, the keyword options the adapters take
            (:func:`citeverify_core.policy.merge_policy`): top-level fields
            (``min_groundedness=0.7``), ``unverified_action="block"``, extension options
            (``strict_quotes=True``, ``lookups={"enabled": False}``), or dotted paths
            (``**{"extensions.lookups.enabled": False}``).

    Raises:
        PolicyError: the policy or an option is invalid; an unknown key's message names the
            option it may be and how to pass it.
        InputError: ``context_cache`` is neither a bool nor a ContextCache.

    A verifier travels: ``pickle`` and ``copy.deepcopy`` (a process pool, joblib, Ray, Spark)
    carry its policy, ``include_original``, the semantic scorer (when it pickles itself) and
    the lookup cache's SQLite file; its locks, thread pools, stemmers, HTTP clients, rate
    limiters and in-memory caches (``context_cache``, the lookup cache's memory) are rebuilt
    empty where it lands, so a copy gives the same results as the original. A verifier made
    with ``client=`` cannot be pickled (a ``TypeError`` says so: the client's connections belong
    to this process); ``copy.deepcopy`` shares that client.

    Example:
        >>> v = CitationVerifier({"output_action": {"unverified_action": "block"}})
        >>> v.verify("The museum opens at nine.", ["The museum opens at nine."]).verdict
        'allow'
        >>> v = CitationVerifier(unverified_action="block", min_groundedness=0.7)
        >>> v.policy.output_action.unverified_action, v.policy.min_groundedness
        ('block', 0.7)
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
        **options: Any,
    ) -> None:
        self.policy = resolve_policy(policy, options)
        lookups = self.policy.extensions.lookups
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
        self._lookups: Lookups | None = None
        if client is not None or lookup_cache is not None or lookups.cache_path is not None:
            # Built now: a bad cache path is an error of the constructor, and pickling says
            # at once that a client cannot travel.
            from citeverify_core.lookups.resolve import Lookups  # noqa: PLC0415 - start-up time

            self._lookups = Lookups(lookups, client=client, cache=lookup_cache)
        self._matcher = (self.policy, self.policy.extensions.matcher())
        self._matcher[1].prepare()

    @property
    def lookups(self) -> Lookups:
        """The lookups of the answers' citations (``extensions.lookups``; cache, client).

        With the defaults (no client, no lookup cache, no ``cache_path``) they are built on first
        use: ``citeverify check`` of an answer without identifiers never imports the lookups'
        modules (their HTTP and cache code).
        """
        if self._lookups is None:
            from citeverify_core.lookups.resolve import Lookups  # noqa: PLC0415 - start-up time

            self._lookups = Lookups(self.policy.extensions.lookups)
        return self._lookups

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Each part rebuilt what it does not carry (their __setstate__); the stemmer is loaded
        # now, so a process without PyStemmer says so on arrival, as the constructor would.
        self.__dict__.update(state)
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
        if self._semantic is None:  # the default: nothing more than the word steps
            records = run_sync(self.lookups.run(targets)) if targets else []
            return decide(analysis, records, self.policy, include_original=self.include_original)
        records, analysis = run_sync(self._with_tier(analysis, targets))
        return decide(analysis, records, self.policy, include_original=self.include_original)

    async def averify(
        self, answer: str, context_documents: Iterable[str | Mapping[str, Any]] | None = None
    ) -> VerificationResult:
        """Async form of :meth:`verify`: the lookups of the answer run concurrently."""
        analysis = self._analyze(answer, context_documents)
        targets = [t for t in analysis.targets if t is not None]
        if self._semantic is None:
            records = await self.lookups.run(targets) if targets else []
            return decide(analysis, records, self.policy, include_original=self.include_original)
        records, analysis = await self._with_tier(analysis, targets)
        return decide(analysis, records, self.policy, include_original=self.include_original)

    # --- the semantic tier -----------------------------------------------------------------------

    async def _with_tier(
        self, analysis: Analysis, targets: list[Target]
    ) -> tuple[list[LookupRecord], Analysis]:
        """The lookups and the semantic tier's scores (concurrently), applied to ``analysis``."""
        requests, notes = self._semantic_requests(analysis)
        if requests:
            records, analysis = await self._io(analysis, targets, requests, notes)
        else:
            records = await self.lookups.run(targets) if targets else []
            analysis = _apply_semantic(analysis, {}, 1.0)
        return records, dataclasses.replace(analysis, semantic_notes=tuple(notes))

    def _semantic_requests(self, a: Analysis) -> tuple[list[Passages], list[str]]:
        """The claims that failed on words, with their passages; notes on the ones left out."""
        assert self._semantic is not None
        if not a.context_checked or a.empty:
            return [], []
        from citeverify_core.engine.semantic import select_passages  # noqa: PLC0415 - start-up time

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
        self, a: Analysis, targets: list[Target], requests: list[Passages], notes: list[str]
    ) -> tuple[list[LookupRecord], Analysis]:
        """The lookups and the semantic scorer, concurrently; the scores applied to the claims."""
        import asyncio  # noqa: PLC0415 - start-up time

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

    def _analyze(self, answer: Any, context_documents: Iterable[Any] | None) -> Analysis:
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
        # Extraction is pure and needed below: citation markers are found among its results.
        found = extract(answer, policy.extract_patterns, current_year=time.localtime().tm_year)
        truncated |= found.truncated
        # Inline source markers ([1], [Source 2]) are citations, not content: their words are not
        # counted (a deliberate difference from the reference verifier, which has no markers;
        # docs/semantics.md). Under citation_words: ignore, neither are the other citation
        # markers' (author-year references, source notes, DOIs and URLs found as citations).
        if self._matcher[0] is not policy:  # the policy attribute was replaced
            self._matcher = (policy, policy.extensions.matcher())
        matcher = self._matcher[1]
        cited_spans: list[tuple[int, int]] = []
        if policy.extensions.citation_words == "ignore":
            cited_spans = citation_markers(answer, found)
        claim_markers = markers_by_claim(
            pieces, with_spans(markers, cited_spans) if cited_spans else markers
        )
        claim_words, written = _words(matcher, answer, pieces, claim_markers)
        if cited_spans and not any(claim_words):
            # An answer made only of citation markers keeps their words (as a claim made only
            # of stop words keeps them): a lone reference is not an empty answer, which passes.
            cited_spans = []
            claim_markers = markers_by_claim(pieces, markers)
            claim_words, written = _words(matcher, answer, pieces, claim_markers)
        if cited_spans:
            found = _outside_markers(found, cited_spans)
        pieces, claim_markers, claim_words = drop_marker_only(
            pieces, claim_markers, claim_words, answer if cited_spans else None
        )
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
        best = BestDocuments(hits)
        n, min_groundedness = len(texts), policy.min_groundedness
        claims = [
            score_claim(p, cw, hits, supported, m, best, n, min_groundedness, w)
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
            if cited_spans:  # a quoted title in a reference is not a quotation of the answer
                inside = _within(cited_spans)
                spans = [q for q in spans if not inside(q.start, q.end)]
            quotes = match_quotes(spans, docs if texts else None)
        context_numbers = NumberIndex(texts) if texts else None
        return Analysis(
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


def _words(
    matcher: WordMatcher, answer: str, pieces: list[Piece], claim_markers: list[list[Marker]]
) -> tuple[list[list[str]], list[dict[str, str] | None] | None]:
    """Each claim's words without its markers, and how its compared words were written.

    The second list is None when words are compared as written; otherwise it holds one mapping
    per claim with words.
    """
    if matcher.exact:  # words as written
        return words_of_claims(answer, pieces, claim_markers), None
    # compared words (stems, no stop words, numbers by value)
    compared = [
        matcher.claim(without_markers(p, m)) for p, m in zip(pieces, claim_markers, strict=True)
    ]
    return [keys for keys, _ in compared], [w for keys, w in compared if keys]


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


def _apply_semantic(a: Analysis, scores: dict[int, float], min_score: float) -> Analysis:
    """The semantic scores applied: each scored claim passes at ``min_score``, ``tier`` is set.

    Claims without a valid score keep their word verdict (a scorer's failure passes nothing that
    failed on words). Under ``scope: all`` a claim that passed on words can fail here.
    The words of the claims that now pass count as supported in the answer overlap the verdict
    uses (``details.groundedness`` stays the word measure).
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


def _outside_markers(found: Extracted, spans: list[tuple[int, int]]) -> Extracted:
    """``found`` without the statistics inside citation markers.

    A number in "(Source: Visitors Up 12 Percent)" is part of a reference, not a figure of the
    answer: like the marker's words, it is not checked against the context.
    """
    if not any(f.type == "statistic" for f in found):
        return found
    inside = _within(spans)
    kept = [f for f in found if f.type != "statistic" or not inside(f.start, f.end)]
    return found if len(kept) == len(found) else Extracted(kept, found.truncated)


def _within(spans: list[tuple[int, int]]) -> Callable[[int, int], bool]:
    """Whether ``[start, end)`` lies inside one of ``spans`` (sorted, disjoint)."""
    starts = [s for s, _ in spans]

    def inside(start: int, end: int) -> bool:
        i = bisect.bisect_right(starts, start) - 1
        return i >= 0 and end <= spans[i][1]

    return inside


def _capped(items: list[_T], limit: int, kind: str, truncated: set[str]) -> list[_T]:
    """``items`` cut to ``limit``; ``kind`` is added to ``truncated`` when something was cut."""
    if len(items) > limit:
        truncated.add(kind)
        del items[limit:]
    return items
