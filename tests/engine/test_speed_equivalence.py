"""The fast paths give the answers of the straightforward code they replace.

Best documents by byte lanes against every claim compared with every document; the bytes
tokenization of many small documents; quote normalization without the regex; the ASCII offset
mapper against the window walk; the context cache in each of its admission modes; and for small
answers, results that round-trip through their JSON, claim words from one lowered answer and the
token before a period found by ``rstrip``.
"""

from __future__ import annotations

import dataclasses
import json
import string

from hypothesis import given, settings
from hypothesis import strategies as st

import citeverify_core.text.claims as _text
from citeverify_core import CitationVerifier, ContextCache, VerificationResult
from citeverify_core.engine.claims import (
    BestDocuments,
    best_document_reference,
    markers_by_claim,
    words_of_claims,
    words_of_claims_reference,
)
from citeverify_core.engine.context import ContextDocument, document_hits
from citeverify_core.engine.extract import find_markers
from citeverify_core.text import match_normalize, normalize, split_claims, words
from citeverify_core.text.quotes import _SPACES, _VARIANTS
from tests.support.answers import ANSWER_PARTS, DOCS

_WORD = st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "h"])


@settings(max_examples=300)
@given(
    hits=st.lists(st.sets(_WORD), max_size=40),
    claims=st.lists(st.lists(_WORD, min_size=1, max_size=6), min_size=1, max_size=8),
    lane_bytes=st.sampled_from([0, 10**9]),
    scan_documents=st.sampled_from([0, 8, 100]),
)
def test_best_documents_equal_the_reference(hits, claims, lane_bytes, scan_documents):
    best = BestDocuments(hits, budget=10**9, lane_bytes=lane_bytes, scan_documents=scan_documents)
    supported = set().union(*hits)
    for claim in claims:
        assert best(claim) == best_document_reference(claim, hits)
        unique = list(dict.fromkeys(claim))  # the claim words of a verification
        most = len(supported.intersection(unique))
        if most:  # the scan that stops at a document holding every supported word
            assert best.best(unique, most) == best_document_reference(unique, hits)


@settings(max_examples=30)
@given(
    hits=st.lists(st.sets(st.integers(0, 400).map(str), max_size=300), min_size=9, max_size=20),
    claim=st.lists(st.integers(0, 400).map(str), min_size=256, max_size=400),
)
def test_best_documents_of_claims_past_255_words_equal_the_reference(hits, claim):
    # Past 255 words a byte cannot hold a count: the lanes are summed in parts.
    assert BestDocuments(hits)(claim) == best_document_reference(claim, hits)


_DOC_WORDS = st.sampled_from(["Alpha", "beta", "GAMMA", "delta", "eps", "3.5", "x_y", "42", "zeta"])
_DOC = st.lists(_DOC_WORDS, max_size=12).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(_DOC, min_size=1, max_size=40),
    answer=st.lists(
        st.lists(_DOC_WORDS, min_size=1, max_size=6).map(" ".join), min_size=1, max_size=6
    ),
)
def test_verify_scores_claims_as_the_reference(docs, answer):
    text = ". ".join(answer) + "."
    result = CitationVerifier({"require_sources": False}).verify(text, docs)
    doc_words = [set(words(d)) for d in docs]
    supported = set().union(*doc_words)
    for claim in result.details.claims:
        claim_words = list(dict.fromkeys(words(claim.text)))
        hits = [s & set(claim_words) for s in doc_words]
        best, count = best_document_reference(claim_words, hits)
        assert claim.best_document == best
        if best is not None:
            assert claim.best_document_groundedness == count / len(claim_words)
        assert claim.missing_words == [w for w in claim_words if w not in supported]


@settings(max_examples=200)
@given(
    docs=st.lists(
        st.text(alphabet=string.printable + "é文", max_size=80), min_size=17, max_size=30
    ),
    answer_words=st.sets(st.sampled_from(["ab", "a1", "x", "y2k", "é", "文", "zz", "9"])),
)
def test_bytes_tokenization_of_many_documents_equals_words(docs, answer_words):
    parsed = [ContextDocument(d) for d in docs]
    assert document_hits(parsed, answer_words) == [
        answer_words.intersection(words(d)) for d in docs
    ]


_NORM_TEXT = st.lists(
    st.sampled_from([*"aZ `'\t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u2028\u3000é文Å“—", "e\u0301"]),
    max_size=40,
).map("".join)


@settings(max_examples=500)
@given(text=_NORM_TEXT)
def test_match_normalize_equals_the_regex(text):
    assert match_normalize(text) == _SPACES.sub(" ", normalize(text).translate(_VARIANTS))


_ASCII_TEXT = st.lists(
    st.sampled_from([*"ab`'.,", " ", "  ", "\t", "\n \n", "   ", "X", "\x1c"]), max_size=300
).map("".join)


@settings(max_examples=300)
@given(text=_ASCII_TEXT, start=st.integers(0, 400), length=st.integers(1, 40))
def test_ascii_offsets_equal_the_window_walk(text, start, length):
    doc = ContextDocument(text)
    norm = doc.match_text
    if not norm.strip():
        return
    start = min(start, len(norm) - 1)
    needle = norm[start : start + length].strip()
    if not needle:
        return
    pos = norm.find(needle)
    fast = doc._ascii_span(pos, pos + len(needle))
    assert fast == doc._window_span(pos, pos + len(needle), needle)
    assert match_normalize(text[fast[0] : fast[1]]) == needle


def test_the_cache_gives_the_same_results_in_every_mode():
    docs = [f"The museum {i} opens at {i % 7} o'clock. Tickets cost {i} euros." for i in range(60)]
    answers = [f"The museum {i} opens at nine. Tickets cost {i} euros." for i in range(0, 60, 7)]
    plain = CitationVerifier({"require_sources": False})
    want = [plain.verify(a, docs) for a in answers]
    for rate in (1.0, 0.3, 0.0):  # caching everything, not evicting, first sightings skipped
        cache = ContextCache(max_documents=40)
        cached = CitationVerifier({"require_sources": False}, context_cache=cache)
        for _ in range(3):
            cache._rate = rate
            assert [cached.verify(a, docs) for a in answers] == want


def test_a_cache_seeing_documents_rarely_repeated_stops_caching_until_hits_come_back():
    cache = ContextCache()
    for i in range(2 * ContextCache.WINDOW):  # the first window is cached, the second is not
        cache.get(f"document {i}")
    assert cache._rate < ContextCache.SKIP_BELOW
    assert len(cache) == ContextCache.WINDOW - 1  # the last lookup of a window sees its rate
    assert cache.get("a new document").words is None  # streamed, not indexed
    assert cache.get("a new document").words is None
    for i in range(ContextCache.WINDOW - 1):  # the cached documents come back
        assert cache.get(f"document {i}").words is not None
    assert cache.get("a new document").words is not None  # cached again


def test_a_full_cache_with_few_hits_keeps_what_it_has():
    cache = ContextCache(max_documents=10)
    cache._rate = 0.3
    for i in range(20):
        cache.get(f"doc {i}")
    assert [cache.get(f"doc {i}").words is not None for i in range(10)] == [True] * 10
    assert cache.hits == 10


# --- small answers ------------------------------------------------------------------------------


class _Text(str):
    """A subclass of str: the result's texts are plain str all the same."""


_DETAIL_KEYS = ["verified", "groundedness"]
_LISTS = ["claim_confidence", "claims", "quotes", "citations", "external_lookup"]


@settings(max_examples=150, deadline=None)
@given(
    parts=st.lists(ANSWER_PARTS, max_size=12),
    docs=DOCS,
    action=st.sampled_from(["block", "redact", "flag"]),
    strict=st.booleans(),
    subclass=st.booleans(),
    report=st.booleans(),
)
def test_results_round_trip_through_their_json(parts, docs, action, strict, subclass, report):
    policy = {
        "require_sources": False,
        "output_action": {"unverified_action": action},
        "extensions": {
            "lookups": {"enabled": False},
            "strict_quotes": strict,
            "strict_statistics": strict,
        },
        "response": {"include_verification_report": report},
    }
    answer = _Text("".join(parts)) if subclass else "".join(parts)
    result = CitationVerifier(policy).verify(answer, docs or None)
    data = result.to_dict()
    assert json.loads(json.dumps(data)) == data
    rebuilt = VerificationResult.from_dict(data)
    assert rebuilt == result
    assert rebuilt.to_dict() == data
    assert type(result.answer) is type(result.original_answer) is str
    d = result.details
    for item in [*(d.claims or []), *(d.quotes or []), *(d.citations or [])]:
        # Built without __init__ (results.assemble): every field, in field order.
        assert list(vars(item)) == [f.name for f in dataclasses.fields(item)]
    details = data["details"]
    if not report:
        assert list(details) == _DETAIL_KEYS
    else:
        tail = ["verification_report"] if result.verified else ["unverified_claims"]
        tail += [] if result.verified else ["unverified_claim_count"]
        assert list(details) == _DETAIL_KEYS + _LISTS + tail
        for claim in details["claims"]:
            assert ("cited_groundedness" in claim) is (claim["groundedness"] is not None)
            assert "tier" not in claim  # only with a semantic scorer
            assert "semantic_score" not in claim


@settings(max_examples=300)
@given(parts=st.lists(ANSWER_PARTS, max_size=16))
def test_claim_words_equal_the_words_of_each_claim(parts):
    answer = "".join(parts)
    pieces = split_claims(answer)
    markers = markers_by_claim(pieces, find_markers(answer))
    assert words_of_claims(answer, pieces, markers) == words_of_claims_reference(pieces, markers)


def _period_ends_claim_reference(text, pos):
    """_period_ends_claim with the token before the period found character by character."""
    after = text[pos + 1 : pos + 2]
    if after and (after.isalnum() or after == "_"):
        return False
    start = pos
    while start > 0 and pos - start < 24 and (text[start - 1].isalpha() or text[start - 1] == "."):
        start -= 1
    ends = _text._token_ends_claim(text[start:pos])
    if ends is None:
        return not _text._NUMBER_AFTER.match(text, pos + 1, pos + 8)
    return ends


_PERIOD_TEXT = st.lists(
    st.sampled_from([".", " ", "a", "B", "e.g", "U.S", "No", "5", "é", "ß", "_", "Kuhn", "x" * 30]),
    max_size=30,
).map("".join)


@settings(max_examples=500)
@given(text=_PERIOD_TEXT)
def test_the_token_before_a_period_is_found_as_character_by_character(text):
    for pos, char in enumerate(text):
        if char == ".":
            assert _text._period_ends_claim(text, pos) == _period_ends_claim_reference(text, pos)
