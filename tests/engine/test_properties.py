"""Properties of groundedness that hold for any text (hypothesis)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from citeverify_core import CitationVerifier
from citeverify_core.text import WORD_RE, normalize

VERIFIER = CitationVerifier({"require_sources": False}, context_cache=False)

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200)
WORDY = st.lists(
    st.text(st.characters(categories=("L", "Nd")), min_size=1, max_size=8), min_size=1, max_size=30
).map(" ".join)


def reference_groundedness(answer, docs):
    answer_words = set(WORD_RE.findall(normalize(answer)))
    if not answer_words:
        return None
    context_words = set().union(*(set(WORD_RE.findall(normalize(d))) for d in docs))
    return len(answer_words & context_words) / len(answer_words)


@settings(max_examples=300)
@given(answer=TEXT, docs=st.lists(TEXT, min_size=1, max_size=4))
def test_groundedness_in_unit_interval_and_matches_reference(answer, docs):
    g = VERIFIER.verify(answer, docs).details.groundedness
    expected = reference_groundedness(answer, docs)
    if expected is None:
        assert g is None  # empty answer: nothing measured
    else:
        assert 0.0 <= g <= 1.0
        assert g == expected


@settings(max_examples=200)
@given(context=WORDY, data=st.data())
def test_answer_made_of_context_words_scores_one(context, data):
    words = context.split()
    picked = data.draw(st.lists(st.sampled_from(words), min_size=1, max_size=20))
    answer = " ".join(picked) + "."
    result = VERIFIER.verify(answer, [context])
    assert result.details.groundedness == 1.0
    assert all(c.groundedness == 1.0 for c in result.details.claims)


@settings(max_examples=200)
@given(answer=WORDY, docs=st.lists(TEXT, min_size=1, max_size=3), extra=TEXT)
def test_adding_a_document_never_lowers_groundedness(answer, docs, extra):
    before = VERIFIER.verify(answer, docs).details
    after = VERIFIER.verify(answer, [*docs, extra]).details
    assert after.groundedness >= before.groundedness
    assert after.claim_confidence >= before.claim_confidence


@settings(max_examples=200)
@given(answer=TEXT, docs=st.lists(TEXT, max_size=3))
def test_spans_always_index_the_answer(answer, docs):
    d = VERIFIER.verify(answer, docs).details
    for item in [*d.claims, *d.citations]:
        start, end = item.span
        assert 0 <= start < end <= len(answer)
    for c in d.claims:
        assert answer[c.span[0] : c.span[1]] == c.text


@settings(max_examples=500)
@given(text=st.text(st.characters(max_codepoint=127), max_size=300))
def test_ascii_fast_path_equals_the_regex(text):
    from citeverify_core.text import words

    assert words(text) == WORD_RE.findall(normalize(text))


@settings(max_examples=300)
@given(text=st.text(max_size=300))
def test_words_follow_the_design_definition(text):
    from citeverify_core.text import words

    assert words(text) == WORD_RE.findall(normalize(text))
