"""The context's number index gives the same answers as the per-number search it replaces."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from citeverify._extract import NumberIndex, extract_statistics

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
