"""The linear-time paths of issue 9 give the answers of the simple paths they replace.

The number index against the per-number search, the inverted index of best documents against a
scan of every document, and the small-window quote mapper against whole-text normalization.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from citeverify_core.engine.claims import BestDocuments
from citeverify_core.engine.context import ContextDocument
from citeverify_core.engine.extract import NumberIndex, extract_statistics
from citeverify_core.text import match_normalize

# Texts made of the characters that decide number boundaries: ASCII and non-ASCII digits,
# separators, percent signs and words, letters and spaces.
_ALPHABET = st.sampled_from([*"0123456789.,%  ax٣５", " percent", " pct", ".0", ",000"])
_TEXT = st.lists(_ALPHABET, max_size=40).map("".join)
_VALUE = st.sampled_from(["0", "5", "12", "1250", "1000", "0.5", "0.05", "3.5", "100", "1250.5"])


@settings(max_examples=400)
@given(texts=st.lists(_TEXT, min_size=1, max_size=3), value=_VALUE, percent=st.booleans())
def test_indexed_lookup_equals_search(texts, value, percent):
    searched = NumberIndex(texts, scan_after=10**9)
    indexed = NumberIndex(texts, scan_after=0)
    assert indexed.contains(value, percent=percent) == searched.contains(value, percent=percent)


def test_many_numbers_switch_to_the_index_and_agree():
    context = ["Rates were 12%, 7.0 percent and 1,250 cases; p = .05; 33 pct."] * 3
    values = [("12", True), ("7", True), ("1250", False), ("0.05", False), ("33", True)]
    values += [(str(i), bool(i % 2)) for i in range(200, 240)]
    index = NumberIndex(context, scan_after=4)
    got = [index.contains(v, percent=p) for v, p in values]
    assert got[:5] == [True, True, True, True, True]
    assert not any(got[5:])


def test_digit_runs_longer_than_a_number_are_not_statistics():
    text = "growth of " + "9" * 5000 + "% and $" + "1" * 5000 + " and 12% too"
    found = extract_statistics(text)
    assert [f.normalized for f in found] == ["12%"]


def _best_by_scan(claim, hits):
    """The obviously correct best document: most shared words, first on ties."""
    best, best_count = None, 0
    for i, h in enumerate(hits):
        count = len(set(claim) & h)
        if count > best_count:
            best, best_count = i, count
    return best, best_count


_WORD = st.sampled_from(["a", "b", "c", "d", "e", "f"])


@settings(max_examples=300)
@given(
    hits=st.lists(st.sets(_WORD), max_size=12),
    claims=st.lists(st.lists(_WORD, min_size=1, max_size=5), min_size=1, max_size=6),
    budget=st.sampled_from([0, 3, 5_000_000]),
)
def test_best_document_equals_a_scan_of_every_document(hits, claims, budget):
    best = BestDocuments(hits, budget=budget)
    for claim in claims:
        got = best(claim)
        want = _best_by_scan(claim, hits)
        if budget == 5_000_000:
            assert got == want
        else:  # past the budget: a document holding the claim's rarest word, its true count
            assert (got[0] is None) == (want[0] is None)
            if got[0] is not None:
                assert got[1] == len(set(claim) & hits[got[0]]) > 0


_TEXT_CHARS = st.sampled_from([*"ab .,;\n\t", "文", "字", "é", "e\u0301", "ﬁ", "Å", "“", "—"])


@settings(max_examples=100)
@given(
    pieces=st.lists(_TEXT_CHARS, min_size=600, max_size=1500),
    start=st.integers(0, 2000),
    length=st.integers(1, 60),
)
def test_quote_offsets_in_small_windows_match_the_text(pieces, start, length):
    text = "".join(pieces)
    doc = ContextDocument(text)
    norm = doc.match_text
    if not norm:
        return
    start = min(start, len(norm) - 1)
    needle = norm[start : start + length].strip()
    if not needle:
        return
    span = doc.find(needle)
    assert span is not None
    assert needle in match_normalize(text[span[0] : span[1]])


def _split_claims_without_fast_path(text):
    """split_claims as it was before the wordless-stretch shortcut: every period decided."""
    import citeverify_core.text.claims as t

    protected = t._protected_spans(text)
    pieces = []
    start = p_index = 0
    for m in t._TERMINATOR.finditer(text):
        pos = m.start()
        while p_index < len(protected) and protected[p_index][1] <= pos:
            p_index += 1
        if p_index < len(protected) and protected[p_index][0] <= pos < protected[p_index][1]:
            continue
        if m.group() == "." and not t._period_ends_claim(text, pos):
            continue
        end = m.end()
        if m.group()[0] in ".!?":
            end = t._CLOSERS.match(text, end).end()
            if "[" in text or "【" in text:
                markers = t._TRAILING_MARKERS.match(text, end)
                if markers:
                    end = markers.end()
        t._add_piece(text, start, end, pieces)
        start = end
    t._add_piece(text, start, len(text), pieces)
    return pieces


_CLAIM_CHARS = st.sampled_from(
    [*". !?\n\r", "a", "B", "5", "[1]", "”", ")", "e.g.", "Dr.", "x@y.com", "http://a.b/c.", "No."]
)


@settings(max_examples=400)
@given(st.lists(_CLAIM_CHARS, max_size=40).map("".join))
def test_split_claims_equals_the_version_that_decides_every_period(text):
    from citeverify_core.text import split_claims

    assert split_claims(text) == _split_claims_without_fast_path(text)
