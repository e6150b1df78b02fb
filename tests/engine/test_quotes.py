"""Quotes: extraction, normalized matching, and offsets into the original documents."""

import unicodedata

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from citeverify_core import CitationVerifier
from citeverify_core.engine.context import ContextDocument
from citeverify_core.text import find_quotes, match_normalize, trim_outer_punctuation


def quotes(answer, docs):
    return CitationVerifier({"require_sources": False}).verify(answer, docs).details.quotes


@pytest.mark.parametrize(
    ("answer", "inner"),
    [
        pytest.param('He said "opens at nine" today', "opens at nine", id="straight"),
        pytest.param("He said “opens at nine” today", "opens at nine", id="curly"),
        pytest.param("Er sagte „öffnet um neun“ heute", "öffnet um neun", id="german"),
        pytest.param("Il a dit « ouvre à neuf » hier", " ouvre à neuf ", id="guillemets"),
        pytest.param("Er sagte »öffnet um neun« heute", "öffnet um neun", id="reversed-guillemets"),
    ],
)
def test_quote_styles_are_found(answer, inner):
    (q,) = find_quotes(answer)
    assert q.text == inner
    assert answer[q.inner_start : q.inner_end] == inner


def test_quotes_without_words_are_skipped():
    assert find_quotes('a "..." b “ ” c') == []


@pytest.mark.parametrize(
    ("quoted", "document"),
    [
        pytest.param(
            "The museum opens at nine.", "the   museum\nopens at nine", id="case-space-punct"
        ),
        pytest.param("it’s “fine”", 'It\'s "fine" indeed', id="quote-variants"),
        pytest.param("1990–2000", "from 1990-2000", id="dash-variants"),
        pytest.param("ﬁnal offer", "the final offer", id="nfkc"),
    ],
)
def test_quotes_match_after_normalization(quoted, document):
    (q,) = quotes(f"They wrote «{quoted}».", [document])
    assert q.matched is True
    start, end = q.document_span
    assert (
        match_normalize(document[start:end])
        == match_normalize(trim_outer_punctuation(quoted)).strip()
    )


def test_altered_quote_does_not_match():
    (q,) = quotes(
        'The audit says "maintenance is the only cause".', ["maintenance is the main cause"]
    )
    assert q.matched is False
    assert q.document is None


def test_match_reports_first_document_and_original_offsets():
    docs = ["nothing here", "Intro.  The  MUSEUM opens at nine. Outro."]
    (q,) = quotes('"the museum opens at nine"', docs)
    assert q.document == 1
    assert docs[1][q.document_span[0] : q.document_span[1]] == "The  MUSEUM opens at nine"


def test_offsets_in_a_long_document_far_from_the_start():
    filler = "lorem ipsum dolor sit amet " * 20_000  # ~540 KB: several mapping windows
    doc = filler + "Ｔｈｅ  museum\u00a0opens at ninе" + filler  # fullwidth, NBSP
    d = ContextDocument(doc)
    span = d.find(match_normalize("the museum opens at nin"))
    assert span is not None
    assert doc[span[0] : span[1]] == "Ｔｈｅ  museum\u00a0opens at nin"


ALPHABET = st.sampled_from(list("ab AB\u00dfﬁ\u2019'\u2014-\n\u00e9\u0301Ｆ"))


@settings(max_examples=200, deadline=None)
@given(doc=st.text(ALPHABET, min_size=1, max_size=25), data=st.data())
def test_offset_mapper_against_reference(doc, data):
    i = data.draw(st.integers(0, len(doc) - 1))
    j = data.draw(st.integers(i + 1, len(doc)))
    # Spans that cut a combining sequence (a letter from its accent) are not substrings of the
    # normalized text, by design.
    assume(not unicodedata.combining(doc[i]))
    assume(j == len(doc) or not unicodedata.combining(doc[j]))
    needle = match_normalize(doc[i:j]).strip()
    assume(needle)
    d = ContextDocument(doc)
    span = d.find(needle)
    assert span is not None, "a substring of the document must be found"
    start, end = span
    assert needle in match_normalize(doc[start:end])
    # The span is tight: dropping its last character (with its combining marks) loses the match.
    last = end - 1
    while last > start and unicodedata.combining(doc[last]):
        last -= 1
    assert last == start or needle not in match_normalize(doc[start:last])
