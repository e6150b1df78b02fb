"""The semantic tier (issue 16): a second score for claims that fail on words, off by default.

Scorers here are real code, no model: a plain function, LangChain's DeterministicFakeEmbedding,
LlamaIndex's MockEmbedding, and a tiny bag-of-concepts embedding implemented on both frameworks'
base classes (so that a paraphrase is similar and an invention is not).
"""

import asyncio
import hashlib
import inspect
import json
import math
import re
import threading
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeverify_core import CitationVerifier, InputError, PolicyConfig, PolicyError
from citeverify_core.engine.semantic import WindowCache, _Windows, select_passages
from citeverify_core.text import WordMatcher

OFFLINE = {"extensions": {"lookups": {"enabled": False}}}
BLOCK = {"output_action": {"unverified_action": "block"}, **OFFLINE}
DOCS = ["The museum opens at nine in the morning. Entry costs nothing on Sundays."]
PARAPHRASE = "The museum opens at nine. On Sundays admission is free."  # 2nd claim fails on words
INVENTED = "The museum opens at nine. Dragons guard the gate at night."
SUNDAYS = "Entry costs nothing on Sundays."
MORNING = "The museum opens at nine in the morning."


def policy(**semantic):
    return {**BLOCK, "extensions": {**OFFLINE["extensions"], "semantic": semantic}}


class Recorder:
    """A scorer that answers a fixed score and records what it was given."""

    def __init__(self, score):
        self.score = score
        self.calls = []

    def __call__(self, claim, passages):
        self.calls.append((claim, list(passages)))
        return self.score


# --- the tier decides failing claims ------------------------------------------------------------


def test_off_by_default_and_the_wire_format_is_unchanged():
    result = CitationVerifier(BLOCK).verify(PARAPHRASE, DOCS)
    assert result.verdict == "block"
    claims = result.to_dict()["details"]["unverified_claims"]
    assert all("tier" not in c and "semantic_score" not in c for c in claims)
    assert [c.tier for c in result.details.unverified_claims] == ["words"]


@pytest.mark.parametrize(
    ("score", "verdict", "verified"),
    [(0.95, "allow", True), (0.8, "allow", True), (0.79, "block", False), (0.0, "block", False)],
    ids=["above", "at-threshold", "below", "zero"],
)
def test_the_score_decides_a_claim_that_failed_on_words(score, verdict, verified):
    scorer = Recorder(score)
    result = CitationVerifier(policy(), semantic=scorer).verify(PARAPHRASE, DOCS)
    assert result.verdict == verdict
    first, second = result.details.claims
    assert (first.tier, first.semantic_score, first.verified) == ("words", None, True)
    assert (second.tier, second.semantic_score, second.verified) == ("semantic", score, verified)
    assert second.groundedness == 0.4  # the word score stays what it was
    # Only the failing claim is sent, once, with the document and its sentences, the ones
    # sharing most of its words first (max_passages: 3).
    assert scorer.calls == [("On Sundays admission is free.", [*DOCS, SUNDAYS, MORNING])]
    dumped = result.to_dict()["details"]["claims"]
    assert [c["tier"] for c in dumped] == ["words", "semantic"]
    json.dumps(result.to_dict())


def test_a_passing_answer_never_calls_the_scorer():
    scorer = Recorder(1.0)
    result = CitationVerifier(policy(), semantic=scorer).verify("The museum opens at nine.", DOCS)
    assert result.verdict == "allow"
    assert scorer.calls == []
    assert result.to_dict()["details"]["claims"][0]["tier"] == "words"  # shown when configured


def test_the_threshold_comes_from_the_policy():
    v = CitationVerifier(policy(min_score=0.5), semantic=Recorder(0.6))
    assert v.verify(PARAPHRASE, DOCS).verdict == "allow"
    report = v.verify(PARAPHRASE, DOCS).details.verification_report
    assert report is not None
    assert report.thresholds["semantic_min_score"] == 0.5


def test_the_overlap_rule_counts_the_words_of_claims_supported_by_meaning():
    # One claim, 40% of its words in the context: the answer overlap (0.4) fails too, unless the
    # claim's words count once the tier supports it.
    result = CitationVerifier(policy(), semantic=Recorder(0.9)).verify(
        "On Sundays admission is free.", DOCS
    )
    assert result.verdict == "allow"
    assert result.details.groundedness == 0.4  # the seed's word measure, unchanged
    report = result.details.verification_report
    assert report is not None
    assert "1.00 with the claims the semantic tier supports" in report.source_evidence[0]


def test_a_changed_number_still_fails_under_strict_statistics():
    ext = {**OFFLINE["extensions"], "strict_statistics": True, "numbers": "value"}
    v = CitationVerifier({**BLOCK, "extensions": ext}, semantic=Recorder(1.0))
    result = v.verify("Growth was about 4.5% last year.", ["Growth was 4% last year."])
    assert result.verdict == "block"
    (claim,) = result.details.claims
    assert claim.tier == "semantic" and claim.verified is False and claim.problems


NEGATED = "Lying down helps to keep stomach acids down."
SOURCE = ["Lying down does not help to keep stomach acids down; sitting up does."]


def contradiction_aware(claim, passages):
    """A stand-in for an NLI model: a claim without the passage's negation is not entailed."""
    negated = any(" not " in f" {p} " for p in passages) and " not " not in f" {claim} "
    return 0.05 if negated else 0.95


def test_scope_all_lets_an_nli_scorer_fail_a_negation_flip_that_passes_on_words():
    assert CitationVerifier(BLOCK).verify(NEGATED, SOURCE).verdict == "allow"  # 6 of 7 words
    failing_only = CitationVerifier(policy(), semantic=contradiction_aware)
    assert failing_only.verify(NEGATED, SOURCE).verdict == "allow"  # never asked: it passed
    every_claim = CitationVerifier(policy(scope="all"), semantic=contradiction_aware)
    result = every_claim.verify(NEGATED, SOURCE)
    assert result.verdict == "block"
    (claim,) = result.details.claims
    assert (claim.groundedness, claim.tier, claim.semantic_score) == (6 / 7, "semantic", 0.05)
    assert every_claim.verify("Sitting up helps.", SOURCE).verdict == "block"
    assert every_claim.verify("Lying down does not help.", SOURCE).verdict == "allow"


def test_without_context_the_tier_does_nothing():
    scorer = Recorder(1.0)
    v = CitationVerifier({**BLOCK, "require_sources": False}, semantic=scorer)
    assert v.verify(INVENTED, []).verdict == "allow"
    assert scorer.calls == []


def test_async_scorer_and_averify():
    seen = []

    async def scorer(claim, passages):
        await asyncio.sleep(0)
        seen.append(claim)
        return 0.9

    v = CitationVerifier(policy(), semantic=scorer)
    assert asyncio.run(v.averify(PARAPHRASE, DOCS)).verdict == "allow"
    assert v.verify(PARAPHRASE, DOCS).verdict == "allow"  # the sync API awaits it too
    assert seen == ["On Sundays admission is free."] * 2


def test_redact_keeps_claims_supported_by_meaning():
    p = {**policy(), "output_action": {"unverified_action": "redact"}}
    v = CitationVerifier(p, semantic=lambda claim, passages: 0.9 if "Sundays" in claim else 0.1)
    result = v.verify("On Sundays admission is free. Dragons guard the gate.", DOCS)
    assert result.answer == "On Sundays admission is free. [unverified claim removed]"


# --- bounds --------------------------------------------------------------------------------------


def test_passages_of_a_long_document_are_its_best_sentences_within_bounds():
    filler = " ".join(f"Unrelated sentence number {i} about trains." for i in range(3000))
    doc = filler + " Entry costs nothing on Sundays. " + filler
    scorer = Recorder(0.1)
    v = CitationVerifier(policy(max_passages=2, max_passage_chars=200), semantic=scorer)
    v.verify("On Sundays admission is free.", [doc, "Trains run hourly."])
    ((_claim, passages),) = scorer.calls
    assert len(passages) == 2
    assert passages[0] == "Entry costs nothing on Sundays."  # the sentence sharing most words
    assert all(len(p) <= 200 for p in passages)


def test_at_most_max_claims_are_sent_and_the_rest_keep_their_word_verdict():
    answer = " ".join(f"Zebra number {i} dances." for i in range(10))
    scorer = Recorder(1.0)
    result = CitationVerifier(policy(max_claims=3), semantic=scorer).verify(answer, DOCS)
    assert len(scorer.calls) == 3
    assert [c.tier for c in result.details.claims].count("semantic") == 3
    assert result.verdict == "block"  # 3 of 10 claims pass
    assert any("only the first 3 claims were scored" in n for n in result.notes)


def test_a_claim_longer_than_a_passage_is_not_judged_on_a_part_of_it():
    long_claim = "Admission is free " + "and wonderful " * 200 + "on Sundays."
    scorer = Recorder(1.0)
    result = CitationVerifier(policy(max_passage_chars=500), semantic=scorer).verify(
        long_claim, DOCS
    )
    assert scorer.calls == []
    assert result.verdict == "block"
    assert any("longer than max_passage_chars" in n for n in result.notes)


def test_many_documents_and_a_long_answer_stay_fast():
    docs = [f"Document {i} talks about item {i} and nothing else. " * 50 for i in range(2000)]
    answer = " ".join(f"Claim {i} mentions gadget {i} twice." for i in range(200))
    scorer = Recorder(0.1)
    start = time.perf_counter()
    CitationVerifier(policy(), semantic=scorer).verify(answer, docs)
    assert time.perf_counter() - start < 10  # seconds, on a loaded 2-core machine
    assert len(scorer.calls) == 32  # the default max_claims
    assert all(len(p) <= 3 and all(len(x) <= 2000 for x in p) for _, p in scorer.calls)
    # Past 256 documents the candidates are the claim's best document (sharing its number).
    for claim, passages in scorer.calls:
        number = claim.split()[1]
        assert passages[0] == f"Document {number} talks about item {number} and nothing else."


# --- scorer failures: never a crash, never a pass ------------------------------------------------


def _raise(claim, passages):
    raise RuntimeError("model server down")


@pytest.mark.parametrize(
    ("scorer", "note"),
    [
        (_raise, "RuntimeError: model server down"),
        (lambda c, p: math.nan, "unusable score nan"),
        (lambda c, p: 1.5, "unusable score 1.5"),
        (lambda c, p: -0.1, "unusable score -0.1"),
        (lambda c, p: "0.9", "unusable score '0.9'"),
        (lambda c, p: True, "unusable score True"),
        (lambda c, p: None, "unusable score None"),
        (lambda c, p: [0.9], "unusable score [0.9]"),
        (lambda c, p: 10**400, "unusable score 1000"),
        (lambda c: 0.9, "TypeError"),  # the wrong signature
    ],
    ids=[
        "raises",
        "nan",
        "above-1",
        "negative",
        "string",
        "bool",
        "none",
        "list",
        "huge-int",
        "signature",
    ],
)
def test_a_failing_scorer_keeps_the_word_verdict_and_says_why(scorer, note):
    result = CitationVerifier(policy(), semantic=scorer).verify(PARAPHRASE, DOCS)
    assert result.verdict == "block"
    claim = result.details.claims[1]
    assert (claim.tier, claim.semantic_score, claim.verified) == ("words", None, False)
    (message,) = [n for n in result.notes if n.startswith("semantic tier")]
    assert note in message and "kept their word verdict" in message


def test_a_broken_scorer_is_asked_once_not_for_every_claim():
    calls = []

    def scorer(claim, passages):
        calls.append(claim)
        raise ValueError("bad input")

    answer = "Zebras dance. Lions sing. Otters juggle."
    result = CitationVerifier(policy(), semantic=scorer).verify(answer, DOCS)
    assert len(calls) == 1
    assert any("3 claim(s) kept their word verdict" in n for n in result.notes)


def test_a_hanging_scorer_times_out():
    release = threading.Event()

    def scorer(claim, passages):
        release.wait(10)
        return 1.0

    v = CitationVerifier(policy(timeout=0.3), semantic=scorer)
    start = time.perf_counter()
    try:
        result = v.verify(PARAPHRASE, DOCS)
    finally:
        release.set()
    assert time.perf_counter() - start < 5
    assert result.verdict == "block"
    assert any("no answer within 0.3 s" in n for n in result.notes)


def test_an_async_scorer_that_hangs_times_out_in_averify():
    async def scorer(claim, passages):
        await asyncio.sleep(10)
        return 1.0

    v = CitationVerifier(policy(timeout=0.2), semantic=scorer)
    result = asyncio.run(v.averify(PARAPHRASE, DOCS))
    assert result.verdict == "block"
    assert any("no answer within 0.2 s" in n for n in result.notes)


@pytest.mark.parametrize("scorer", [42, "model", object()], ids=["int", "str", "object"])
def test_something_that_is_no_scorer_is_an_input_error(scorer):
    with pytest.raises(InputError, match="semantic must be a callable"):
        CitationVerifier(policy(), semantic=scorer)


@pytest.mark.parametrize(
    ("semantic", "path"),
    [
        ({"min_score": 1.5}, "extensions.semantic.min_score"),
        ({"max_claims": 0}, "extensions.semantic.max_claims"),
        ({"max_passage_chars": 10**9}, "extensions.semantic.max_passage_chars"),
        ({"timeout": 0}, "extensions.semantic.timeout"),
        ({"model": "x"}, "extensions.semantic.model"),
    ],
    ids=["min-score", "max-claims", "passage-chars", "timeout", "unknown-key"],
)
def test_semantic_options_are_validated(semantic, path):
    with pytest.raises(PolicyError) as info:
        PolicyConfig.model_validate({"extensions": {"semantic": semantic}})
    assert info.value.path == path


# --- embedding models ----------------------------------------------------------------------------

CONCEPTS = {"admission": "entry", "entrance": "entry", "nothing": "free", "costs": "price"}


def concept_vector(text, size=64):
    """A bag of concepts, hashed into ``size`` dimensions: paraphrases share concepts."""
    vector = [0.0] * size
    for word in re.findall(r"\w+", text.lower()):
        concept = CONCEPTS.get(word, word)
        vector[int(hashlib.sha256(concept.encode()).hexdigest(), 16) % size] += 1.0
    return vector


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def test_langchain_fake_embeddings_give_the_cosine_of_the_best_passage():
    from langchain_core.embeddings import DeterministicFakeEmbedding

    emb = DeterministicFakeEmbedding(size=32)
    claim = "On Sundays admission is free."
    passages = [DOCS[0], SUNDAYS, MORNING]
    expected = max(0.0, *(cosine(emb.embed_query(claim), emb.embed_query(p)) for p in passages))
    for min_score, verdict in [(0.0, "allow"), (0.99, "block")]:
        result = CitationVerifier(policy(min_score=min_score), semantic=emb).verify(
            PARAPHRASE, DOCS
        )
        assert result.verdict == verdict
        assert result.details.claims[1].semantic_score == pytest.approx(expected)


def test_embeddings_are_asked_once_per_answer_in_one_batch():
    from langchain_core.embeddings import Embeddings

    class ConceptEmbeddings(Embeddings):
        def __init__(self):
            self.batches = []

        def embed_documents(self, texts):
            self.batches.append(list(texts))
            return [concept_vector(t) for t in texts]

        def embed_query(self, text):
            return concept_vector(text)

    emb = ConceptEmbeddings()
    v = CitationVerifier(policy(min_score=0.7), semantic=emb)
    result = v.verify("On Sundays admission is free. Dragons guard the gate at night.", DOCS)
    assert len(emb.batches) == 1  # two failing claims, one call (the async one runs it here)
    claims = [c.text for c in result.details.claims]
    assert sorted(emb.batches[0]) == sorted([*DOCS, MORNING, SUNDAYS, *claims])
    paraphrase, invention = result.details.claims
    assert paraphrase.verified and paraphrase.tier == "semantic"
    assert paraphrase.semantic_score == pytest.approx(
        cosine(concept_vector(paraphrase.text), concept_vector(SUNDAYS))  # the best passage
    )
    assert not invention.verified and invention.semantic_score < 0.7
    assert result.verdict == "block"  # one of two claims: 50% < min_confidence


@pytest.mark.parametrize(
    ("vectors", "note"),
    [
        (lambda texts: [[1.0, 0.0]], "vectors were asked for, got 1"),
        (lambda texts: "nope", "got str"),
        (lambda texts: [[1.0, 0.0]] * (len(texts) - 1) + [[1.0]], "vectors of different sizes"),
        (lambda texts: [["a", "b"]] * len(texts), "other than numbers"),
        (lambda texts: [[0.0, 0.0]] + [[1.0, 0.0]] * (len(texts) - 1), "a zero or non-finite"),
        (lambda texts: [[math.nan, 1.0]] + [[1.0, 0.0]] * (len(texts) - 1), "a zero or non-fin"),
    ],
    ids=["count", "type", "sizes", "strings", "zero", "nan"],
)
def test_garbage_embeddings_keep_the_word_verdict(vectors, note):
    class Garbage:
        def embed_documents(self, texts):
            return vectors(texts)

    result = CitationVerifier(policy(min_score=0.0), semantic=Garbage()).verify(
        "On Sundays admission is free.", DOCS
    )
    assert result.verdict == "block"
    assert result.details.claims[0].semantic_score is None
    assert any(note in n for n in result.notes), result.notes


def test_a_sentence_transformers_shaped_encoder():
    class Encoder:  # SentenceTransformer.encode(list) -> array
        def encode(self, texts):
            return [concept_vector(t) for t in texts]

    result = CitationVerifier(policy(min_score=0.7), semantic=Encoder()).verify(PARAPHRASE, DOCS)
    assert result.verdict == "allow"


# --- the adapters pass the framework's embedding model through ----------------------------------


def test_langchain_guard_with_embeddings():
    from langchain_core.embeddings import Embeddings

    from langchain_citeverify import CiteVerifyGuard, CiteVerifyOutputParser
    from langchain_citeverify._common import CitationBlockedError

    class ConceptEmbeddings(Embeddings):
        def embed_documents(self, texts):
            return [concept_vector(t) for t in texts]

        def embed_query(self, text):
            return concept_vector(text)

    guard = CiteVerifyGuard(
        policy=OFFLINE,
        unverified_action="block",
        embeddings=ConceptEmbeddings(),
        semantic={"min_score": 0.7},
    )
    out = guard.invoke({"answer": PARAPHRASE, "context": DOCS})
    assert [c.tier for c in out["verification"].details.claims] == ["words", "semantic"]
    with pytest.raises(CitationBlockedError):
        guard.invoke({"answer": INVENTED, "context": DOCS})
    out = asyncio.run(guard.ainvoke({"answer": PARAPHRASE, "context": DOCS}))
    assert out["verification"].verdict == "allow"
    # Without the tier the same guard blocks the paraphrase.
    with pytest.raises(CitationBlockedError):
        CiteVerifyGuard(policy=OFFLINE, unverified_action="block").invoke(
            {"answer": PARAPHRASE, "context": DOCS}
        )
    parser = CiteVerifyOutputParser(
        policy=OFFLINE,
        documents=DOCS,
        unverified_action="block",
        semantic_scorer=lambda claim, passages: 0.9,
    )
    assert parser.parse(PARAPHRASE).verdict == "allow"


def test_langchain_guard_refuses_two_scorers_or_a_wrong_embeddings():
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from langchain_citeverify import CiteVerifyGuard

    # pydantic reports the InputError of the constructor as a ValidationError (a ValueError).
    with pytest.raises(ValueError, match="not both"):
        CiteVerifyGuard(embeddings=DeterministicFakeEmbedding(size=8), semantic_scorer=len)
    with pytest.raises(ValueError, match="LangChain Embeddings"):
        CiteVerifyGuard(embeddings=lambda c, p: 1.0)


@pytest.mark.filterwarnings("ignore::langchain_core._api.LangChainBetaWarning")  # loads is beta
def test_a_guard_with_a_model_never_loads_back_without_it():
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.load import dumpd, dumps, loads

    from langchain_citeverify import CiteVerifyGuard

    guard = CiteVerifyGuard(embeddings=DeterministicFakeEmbedding(size=8))
    assert dumpd(guard)["kwargs"]["embeddings"]["type"] == "not_implemented"
    kwargs: dict[str, Any] = {"valid_namespaces": ["langchain_citeverify"]}
    if "allowed_objects" in inspect.signature(loads).parameters:  # langchain-core >= 1.x
        kwargs["allowed_objects"] = [CiteVerifyGuard]
    with pytest.raises(NotImplementedError):
        loads(dumps(guard), **kwargs)
    assert "embeddings" not in dumpd(CiteVerifyGuard())["kwargs"]  # unchanged without a model


def test_llamaindex_query_engine_with_embed_model():
    from llama_index.core import Document, MockEmbedding, VectorStoreIndex
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.base.llms.types import CompletionResponse, LLMMetadata
    from llama_index.core.llms import CustomLLM
    from llama_index.core.llms.callbacks import llm_completion_callback

    from citeverify_core import CitationUnverifiedError
    from llama_index.evaluation.citeverify import CiteVerifyEvaluator
    from llama_index.postprocessor.citeverify import CiteVerifyQueryEngine

    class ConceptEmbedding(BaseEmbedding):
        def _get_query_embedding(self, query):
            return concept_vector(query)

        def _get_text_embedding(self, text):
            return concept_vector(text)

        async def _aget_query_embedding(self, query):
            return concept_vector(query)

    class FixedLLM(CustomLLM):
        answer: str = ""

        @property
        def metadata(self):
            return LLMMetadata(model_name="fixed")

        @llm_completion_callback()
        def complete(self, prompt, formatted=False, **kwargs):
            return CompletionResponse(text=self.answer)

        @llm_completion_callback()
        def stream_complete(self, prompt, formatted=False, **kwargs):
            yield CompletionResponse(text=self.answer, delta=self.answer)

    index = VectorStoreIndex.from_documents(
        [Document(text=DOCS[0])], embed_model=MockEmbedding(embed_dim=8)
    )

    def engine(answer, **options):
        inner = index.as_query_engine(llm=FixedLLM(answer=answer))
        return CiteVerifyQueryEngine(inner, policy=OFFLINE, unverified_action="block", **options)

    semantic = {"embed_model": ConceptEmbedding(), "semantic": {"min_score": 0.7}}
    checked = engine(PARAPHRASE, **semantic).query("When is entry free?")
    claims = checked.metadata["citeverify"].details.claims
    assert [c.tier for c in claims] == ["words", "semantic"]
    with pytest.raises(CitationUnverifiedError):
        engine(PARAPHRASE).query("When is entry free?")  # without the tier
    with pytest.raises(CitationUnverifiedError):
        engine(INVENTED, **semantic).query("What guards it?")
    result = asyncio.run(engine(PARAPHRASE, **semantic).aquery("When is entry free?"))
    assert result.metadata["citeverify"].verdict == "allow"

    # MockEmbedding gives every text the same vector: everything is similar to everything.
    mock = engine(INVENTED, embed_model=MockEmbedding(embed_dim=8)).query("What guards it?")
    assert mock.metadata["citeverify"].details.claims[1].semantic_score == pytest.approx(1.0)

    claim = "On Sundays admission is free."
    lowered = CiteVerifyEvaluator(policy=OFFLINE, **semantic)
    strict = CiteVerifyEvaluator(
        policy=OFFLINE, embed_model=ConceptEmbedding(), semantic={"min_score": 0.9}
    )
    assert lowered.evaluate(response=claim, contexts=DOCS).passing
    assert not strict.evaluate(response=claim, contexts=DOCS).passing


# --- passages: the postings give what comparing every window would ------------------------------

VOCABULARY = ["river", "town", "north", "bridge", "mill", "old", "the", "is", "a", "flows"]
sentence = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=6).map(
    lambda ws: " ".join(ws).capitalize() + "."
)
document = st.lists(sentence, min_size=1, max_size=12).map(" ".join)


def reference_passages(claim_words, texts, max_passages, max_chars):
    """Every window of every candidate document compared with the claim (few documents)."""
    matcher = WordMatcher()
    wanted = set(claim_words)
    hits = [set(matcher.token_set(t)) & wanted for t in texts]
    ranked_docs = sorted(range(len(texts)), key=lambda i: (-len(hits[i]), i))[:3]
    split = _Windows(texts, matcher, max_chars, None)
    ranked = [
        (-len(wanted & set(matcher.token_set(window))), rank, pos, window)
        for rank, doc in enumerate(ranked_docs)
        for pos, window in enumerate(split.of(doc).texts)
    ]
    return [w for *_, w in sorted(ranked)[:max_passages]]


@settings(max_examples=150, deadline=None)
@given(
    docs=st.lists(document, min_size=1, max_size=5),
    claim=st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=5),
    max_passages=st.integers(1, 5),
    max_chars=st.sampled_from([100, 150, 400]),
    cached=st.booleans(),
)
def test_passages_equal_comparing_every_window(docs, claim, max_passages, max_chars, cached):
    words = list(dict.fromkeys(claim))
    hits = [set(WordMatcher().token_set(d)) & set(words) for d in docs]
    cache = WindowCache() if cached else None
    for _ in range(2 if cached else 1):  # the second pass reads the cache
        (got,) = select_passages(
            [(0, " ".join(words), words, None, [])],
            docs,
            hits,
            WordMatcher(),
            max_passages=max_passages,
            max_chars=max_chars,
            cache=cache,
        )
        assert got.passages == reference_passages(words, docs, max_passages, max_chars)


def test_the_window_cache_is_bounded():
    cache = WindowCache(max_chars=1000, max_documents=3)
    texts = [f"Document {i} is about the river. " * 5 for i in range(6)]
    select_passages(
        [(0, "river", ["river"], None, [])],
        texts,
        [{"river"}] * 6,
        WordMatcher(),
        max_passages=2,
        max_chars=100,
        cache=cache,
    )
    assert len(cache._items) <= 3
    assert cache._chars <= 1000


# --- properties: what the tier may and may not change --------------------------------------------

answer_text = st.lists(sentence, min_size=1, max_size=6).map(" ".join)


def _raises(claim, passages):
    raise ValueError("broken")


@settings(max_examples=60, deadline=None)
@given(
    answer=answer_text,
    docs=st.lists(document, min_size=1, max_size=3),
    scorer=st.sampled_from(
        [_raises, lambda c, p: math.nan, lambda c, p: 2.0, lambda c, p: "1", lambda c, p: None]
    ),
    scope=st.sampled_from(["failing", "all"]),
)
def test_a_failing_scorer_changes_no_verdict(answer, docs, scorer, scope):
    base = CitationVerifier(BLOCK).verify(answer, docs)
    got = CitationVerifier(policy(scope=scope), semantic=scorer).verify(answer, docs)
    assert got.verdict == base.verdict
    assert [c.verified for c in got.details.claims] == [c.verified for c in base.details.claims]
    assert all(c.tier == "words" and c.semantic_score is None for c in got.details.claims)


@settings(max_examples=60, deadline=None)
@given(
    answer=answer_text,
    docs=st.lists(document, min_size=1, max_size=3),
    score=st.floats(0.0, 1.0),
)
def test_scope_failing_only_ever_passes_more(answer, docs, score):
    base = CitationVerifier(BLOCK).verify(answer, docs)
    got = CitationVerifier(policy(), semantic=lambda c, p: score).verify(answer, docs)
    assert got.verified >= base.verified
    for before, after in zip(base.details.claims, got.details.claims, strict=True):
        assert after.verified >= before.verified
        assert after.verified == (before.verified or score >= 0.8)


def test_the_public_scorer_protocol_types_a_plain_function():
    from citeverify_core import SemanticScorer

    def paraphrase(claim: str, passages: list[str]) -> float:
        return 0.9 if "admission is free" in claim else 0.0

    scorer: SemanticScorer = paraphrase  # what a user's type checker sees
    assert isinstance(scorer, SemanticScorer)
    result = CitationVerifier(OFFLINE, semantic=scorer).verify(PARAPHRASE, DOCS)
    assert [c.tier for c in result.details.claims] == ["words", "semantic"]
    assert result.verified
