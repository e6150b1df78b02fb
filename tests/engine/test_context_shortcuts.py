"""The context's shortcuts give what the plain ways give: the ASCII match text made in one pass,
a quote searched once then located, and cached documents with interned words."""

import re

from hypothesis import given
from hypothesis import strategies as st

from citeverify_core import CitationVerifier, ContextCache
from citeverify_core.engine.context import ContextDocument, ContextSearch
from citeverify_core.text import ascii_match_normalize, match_normalize

_ASCII = st.text(st.sampled_from([*"aAbZ `'\t\n\r\x0b\x0c\x1c\x1f.,-"]), max_size=60)


@given(_ASCII)
def test_ascii_match_text_is_the_regex_form(text):
    folded, collapsed = ascii_match_normalize(text)
    expected = re.sub(r"\s+", " ", text.lower().replace("`", "'"))
    assert folded == expected == match_normalize(text)
    assert collapsed == (re.search(r"\s\s", text) is not None)


@given(_ASCII, st.integers(0, 59), st.integers(1, 12))
def test_a_searched_needle_is_located_as_in_a_fresh_document(text, start, length):
    needle = match_normalize(text)[start : start + length]
    if not needle.strip():
        return
    searched = ContextDocument(text)
    assert ContextSearch([searched]).first(needle) == (True, 0)
    assert searched.find(needle) == ContextDocument(text).find(needle)


def test_cached_documents_give_the_uncached_results():
    docs = [f"Document {i} says the rate was {i}.5% in Paris and Lyon." for i in range(40)]
    answer = "The rate was 3.5% in Paris. Lyon reported 7.5%. Berlin is not mentioned."
    plain = CitationVerifier({"require_sources": False})
    cache = ContextCache()
    cached = CitationVerifier({"require_sources": False}, context_cache=cache)
    expected = plain.verify(answer, docs)
    for _ in range(3):  # filling the cache, then from it
        got = cached.verify(answer, docs)
        assert got.to_dict() == expected.to_dict()
    assert cache.hits > 0
