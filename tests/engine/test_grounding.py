"""Groundedness and per-claim scores (design: "Grounding semantics")."""

import pytest

from citeverify_core import CitationVerifier, ContextCache

LOOSE = {"require_sources": False}


def verify(answer, docs, **policy):
    return CitationVerifier({**LOOSE, **policy}).verify(answer, docs)


def test_groundedness_is_share_of_unique_answer_words():
    # unique answer words: the, cat, sat, on, mat (5); "mat" is missing -> 4/5
    r = verify("The cat sat on the mat. The cat sat.", ["the cat sat on a sofa"])
    assert r.details.groundedness == pytest.approx(4 / 5)


def test_order_and_repetition_do_not_matter():
    r = verify("sat sat sat cat the", ["The cat sat."])
    assert r.details.groundedness == 1.0


def test_union_of_documents_counts():
    r = verify("alpha beta gamma", ["alpha", "beta", "gamma"])
    assert r.details.groundedness == 1.0


@pytest.mark.parametrize(
    ("answer", "context"),
    [
        pytest.param("STRASSE", "straße", id="casefold-sharp-s"),
        pytest.param("ﬁnance", "finance", id="nfkc-ligature"),
        pytest.param("Ｆｕｌｌｗｉｄｔｈ", "fullwidth", id="nfkc-fullwidth"),
        pytest.param("café", "cafe\u0301", id="nfkc-composed"),
        pytest.param("ΣΊΣΥΦΟΣ", "σίσυφος", id="greek-final-sigma"),
        pytest.param("snake_case", "snake case", id="underscore-splits-words"),
    ],
)
def test_unicode_words_compare_after_nfkc_and_casefold(answer, context):
    assert verify(answer, [context]).details.groundedness == 1.0


def test_claim_scores_missing_words_and_best_document():
    docs = ["The bridge opened in 1932.", "The bridge is painted red and spans the river."]
    r = verify("The bridge is painted red. The bridge collapsed yesterday.", docs)
    first, second = r.details.claims
    assert first.groundedness == 1.0
    assert first.verified is True
    assert first.best_document == 1
    assert first.best_document_groundedness == 1.0
    assert second.verified is False
    assert second.missing_words == ["collapsed", "yesterday"]
    assert second.groundedness == pytest.approx(2 / 4)
    assert second.best_document == 0  # ties go to the first document


def test_claim_with_no_shared_word_has_no_best_document():
    r = verify("Zebras gallop.", ["The bridge opened."])
    (claim,) = r.details.claims
    assert claim.best_document is None
    assert claim.best_document_groundedness is None
    assert claim.groundedness == 0.0


def test_claim_spans_index_the_original_answer():
    answer = "Ｔｈｅ bridge opened.\n  It is red!"
    r = verify(answer, ["the bridge opened; it is red"])
    for claim in r.details.claims:
        assert answer[claim.span[0] : claim.span[1]] == claim.text


def test_claim_passes_at_min_groundedness_exactly():
    # 4 of 5 words = 0.8, the default min_groundedness
    r = verify("one two three four five", ["one two three four"])
    assert r.details.claims[0].groundedness == 0.8
    assert r.details.claims[0].verified is True


def test_claim_confidence_is_share_of_passing_claims():
    r = verify("alpha beta. gamma delta. epsilon zeta.", ["alpha beta gamma delta"])
    assert r.details.claim_confidence == pytest.approx(2 / 3)


def test_context_cache_tokenizes_a_repeated_document_once():
    cache = ContextCache()
    verifier = CitationVerifier(LOOSE, context_cache=cache)
    doc = "The museum opens at nine."
    verifier.verify("The museum opens.", [doc])
    verifier.verify("It opens at nine.", [doc])
    assert (cache.misses, cache.hits) == (1, 1)


def test_context_cache_is_bounded():
    cache = ContextCache(max_documents=2)
    verifier = CitationVerifier(LOOSE, context_cache=cache)
    for doc in ["a b", "c d", "e f"]:
        verifier.verify("a", [doc])
    assert len(cache) == 2


def test_results_are_the_same_with_and_without_cache():
    docs = ["The museum opens at nine.", "Tickets cost five euros."]
    answer = 'The museum opens at nine. "Tickets cost five euros." Parking is free.'
    a = CitationVerifier(LOOSE, context_cache=False).verify(answer, docs)
    b = CitationVerifier(LOOSE, context_cache=True).verify(answer, docs)
    assert a == b
