"""The fast paths of citation extraction (issue 14) give the answers of the straightforward code.

Each reference below is the code the fast path replaced, kept here verbatim in substance: the
statistics read number by number with a regex over the whole answer and every pattern tried in
turn, the case-law number hint as a regex scan, the gates as one substring search per needle,
and the number index as one ``_WRITTEN_NUMBER`` scan per document.
"""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citeverify_core.engine.extract import MAX_NUMBER_CHARS, Found, extract, extract_statistics
from citeverify_core.engine.extract import identifiers as _identifiers
from citeverify_core.engine.extract import numbers as _numbers
from citeverify_core.engine.extract.legal import _CASE_HINTS, _REGULATORY_GATES, _hints
from citeverify_core.engine.extract.numbers import (
    _PERCENT_AFTER,
    _WRITTEN_NUMBER,
    _free_before,
    _index_numbers,
)
from citeverify_core.engine.extract.scan import _Classes, _Has, _Limited
from citeverify_core.engine.extract.statistics import (
    _AFTER_COLON,
    _AFTER_CURRENCY,
    _AFTER_IN,
    _AFTER_PERCENT,
    _AFTER_RATIO,
    _AFTER_SCALE,
    _AFTER_UNIT,
    _BEFORE_CURRENCY,
    _BEFORE_EFFECT,
    _BEFORE_N,
    _BEFORE_P,
    _BEFORE_RATIO_OF,
    _THOUSANDS,
    _canon,
    _currency,
    _live_numbers,
    _number,
    _stat,
)

_TRAILING_ZEROS = re.compile(r"\.0+\Z")

# --- references ----------------------------------------------------------------------------------


def _classify_reference(text: str, start: int, end: int) -> Found | None:
    raw = text[start:end]
    value = _number(raw)
    if value is None:
        return None
    v = _canon(value)
    lo = max(0, start - 24)
    if m := _AFTER_RATIO.match(text, end):
        return _stat("ratio", text, start, m.end(), f"{v}:{m.group(1)}", (v, m.group(1)))
    if _BEFORE_RATIO_OF.search(text, lo, start) and (m := _AFTER_COLON.match(text, end)):
        return _stat("ratio", text, start, m.end(), f"{v}:{m.group(1)}", (v, m.group(1)))
    if len(raw) <= 3 and (m := _AFTER_IN.match(text, end)):
        return _stat("ratio", text, start, m.end(), f"{v}:{m.group(1)}", (v, m.group(1)))
    if m := _AFTER_PERCENT.match(text, end):
        return _stat("percent", text, start, m.end(), f"{v}%", (v,))
    if b := _BEFORE_CURRENCY.search(text, lo, start):
        scale = _AFTER_SCALE.match(text, end)
        assert scale is not None
        return _currency(text, b.start(), scale.end(), value, scale.group(1))
    if m := _AFTER_CURRENCY.match(text, end):
        return _currency(text, start, m.end(), value, m.group(1))
    if b := _BEFORE_P.search(text, lo, start):
        return _stat("p_value", text, b.start(), end, v, (v,))
    if b := _BEFORE_N.search(text, lo, start):
        return _stat("sample_size", text, b.start(), end, v, (v,))
    if b := _BEFORE_EFFECT.search(text, lo, start):
        return _stat("ratio", text, b.start(), end, v, (v,))
    if m := _AFTER_UNIT.match(text, end):
        return _stat("amount", text, start, m.end(), v, (v,))
    return None


def _statistics_reference(text: str) -> tuple[list[Found], bool]:
    limited = _Limited()
    found: list[Found] = []
    last_end = -1
    for m in _live_numbers(text, limited):
        start = m.start()
        number = _THOUSANDS.match(text, start, min(m.end(), start + MAX_NUMBER_CHARS + 1))
        assert number is not None
        end = number.end()
        if end - start > MAX_NUMBER_CHARS:
            continue
        before = text[start - 1] if start else " "
        if before == "." and not (start > 1 and text[start - 2].isdigit()):
            start -= 1
        elif before.isalnum() or before in "._,":
            continue
        if start < last_end:
            continue
        item = _classify_reference(text, start, end)
        if item is not None:
            found.append(item)
            last_end = item.end
    return found, limited.hit


def _hints_reference(text: str) -> list[tuple[int, int]]:
    return sorted(m.span() for pattern, _ in _CASE_HINTS for m in pattern.finditer(text))


def _index_reference(texts: list[str]) -> tuple[set[str], set[str]]:
    plain: set[str] = set()
    percent: set[str] = set()
    for text in texts:
        for m in _WRITTEN_NUMBER.finditer(text):
            start, end = m.span()
            if len(m.group()) > MAX_NUMBER_CHARS:
                continue
            after = text[end : end + 2]
            if after[:1].isdigit() or (after[:1] in {".", ","} and after[1:2].isdigit()):
                continue
            forms = []
            if _free_before(text, start):
                forms.append(m.group())
                if "." in m.group() and (z := _TRAILING_ZEROS.search(m.group())):
                    head = m.group()[: z.start()]
                    if "." not in head:
                        forms.append(head)
            if start and text[start - 1] == "." and _free_before(text, start - 1):
                forms.append("." + m.group())
            if not forms:
                continue
            plain.update(forms)
            if _PERCENT_AFTER.match(text, end):
                percent.update(forms)
    return plain, percent


# --- inputs --------------------------------------------------------------------------------------

# Pieces that decide where numbers start and end and what they are: ASCII and other digits
# (Arabic-Indic, full-width, superscripts), separators, spaces of several kinds, letters next to
# numbers, the cues of each statistic kind, case-law and statute shapes, identifiers, and
# characters beyond Latin-1 (curly quotes) that the class bytes see as "?".
_PIECE_LIST = [
    *"0123456789",
    *".,.,",
    " ",
    "  ",
    "\t",
    "\n",
    "\u2009",
    "\xa0",
    *"%$€£¥:=<≤_-()?",
    *"pnPNaZéx",
    "٣",
    "５",
    "²",
    "文",
    "’",
    "“",
    " percent",
    " pct",
    " percentage points",
    " in ",
    " out of ",
    " million",
    " mn",
    " k",
    " mg",
    "µg",
    "°C",
    " patients",
    " dollars",
    " USD",
    "USD ",
    "US$",
    "p < ",
    "n = ",
    " OR ",
    "aHR ",
    "odds ratio ",
    "relative risk ",
    " was ",
    " of ",
    "ratio of ",
    " ratio",
    " AM",
    " U.S. ",
    " F.3d ",
    " S. Ct. ",
    " A.",
    " Bc.",
    " v. ",
    "Roe v. Wade, 410 U.S. 113 (1973)",
    "Id.",
    " supra",
    "42 U.S.C. § 1983",
    "10.1000/xyz",
    "PMID: 12345",
    "Decision",
    "Regulation (EU) 2016/679",
]
_TEXTS = st.lists(st.sampled_from(_PIECE_LIST), max_size=60).map("".join)
# Without decimal digits beyond Latin-1, which send a text to the regex scans: the class bytes.
_LATIN_TEXTS = st.lists(
    st.sampled_from([p for p in _PIECE_LIST if p not in ("٣", "５")]), max_size=60
).map("".join)
_NUMBERISH = st.lists(
    st.sampled_from([*"0123456789.,% a_-\u2009?é", " in ", ":", "$"]), max_size=50
)
# Where numbers meet separators ("1,.5%": one number, not ".5%").
_SEPARATED = st.lists(st.sampled_from([*"15.,,. a%"]), max_size=14)
# Digits, spaces of each kind and capitals: the places where a reporter hint can start.
_HINTISH = st.lists(
    st.sampled_from(["1", "12345", " ", "  ", "\t", "\u2009", "\xa0", "A", "Ab", "b", ".", "?", "“",
                     "U.S.", "x", "9 "]),
    max_size=16,
)  # fmt: skip


# --- properties ----------------------------------------------------------------------------------


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(_TEXTS, _LATIN_TEXTS, _NUMBERISH.map("".join), _SEPARATED.map("".join)))
def test_statistics_equal_the_reference(text):
    limited = _Limited()
    assert (extract_statistics(text, limited=limited), limited.hit) == _statistics_reference(text)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(_TEXTS, _LATIN_TEXTS, _HINTISH.map("".join)))
def test_case_law_hints_equal_the_reference_scan(text):
    assert sorted(_hints(text, _Limited(), _Classes(text))) == _hints_reference(text)


_GATES = [gate for _, gate in _CASE_HINTS if gate] + list(_REGULATORY_GATES.values())
_GATES += [
    _identifiers._PMID_GATE,
    _identifiers._PMCID_GATE,
    _identifiers._ARXIV_GATE,
    _identifiers._URL_GATE,
]
_NEEDLE_TEXT = st.lists(
    st.sampled_from(
        ["USC", "U.S.C", "C.F.R", "Fed. Reg", " FR ", "PubMed", "PMID", "pmc", "ArXiv", "Pub. L",
         "public law", "Regulation", "Decision", " v. ", "Id.", "Ibid.", "supra", "://", "İ", "K",
         "a", "U", "b", "p", " ", "."]
    ),
    max_size=12,
).map("".join)  # fmt: skip


@settings(max_examples=500)
@given(chunk=_NEEDLE_TEXT)
def test_gates_equal_one_search_per_needle(chunk):
    for gate in _GATES:
        assert isinstance(gate, _Has)
        needles = [n for _, _, group in gate.groups for n in group]
        haystack = chunk.lower() if gate.fold else chunk
        assert gate(chunk) == any(n in haystack for n in needles)


def test_no_character_lowers_to_a_gate_key_but_its_own_cases():
    # A fold gate looks for its key letter in both cases before lowering the chunk: that is
    # only sound where no other character lowers to the key ("İ" -> "i", Kelvin sign -> "k").
    keys = {k for gate in _GATES if gate.fold for keys, _, _ in gate.groups for k in keys}
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        for key in keys & set(ch.lower()):
            assert ch in (key, key.upper()), (ch, key)


@settings(max_examples=1000, deadline=None)
@given(
    texts=st.lists(
        st.lists(
            st.sampled_from([*"0123456789..,,%  ax٣５²é文\n_\0", " percent", " pct", ".0", ",000"]),
            max_size=40,
        ).map("".join),
        min_size=1,
        max_size=5,
    ),
    batch=st.sampled_from([1, 2, 3, 5, 8, 1 << 20]),
)
def test_number_index_equals_the_reference(texts, batch):
    # Small batches make runs cross the slices of one document and the joins of several.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_numbers, "_INDEX_BATCH", batch)
        assert _index_numbers(texts) == _index_reference(texts)


# --- the fallbacks, case by case -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("Uptake rose to ٣٥% in the trial.", ["35%"], id="arabic-indic-digits"),
        pytest.param("Uptake rose to ３５% in the trial.", ["35%"], id="full-width-digits"),
        pytest.param("“Uptake” rose to 35% and costs fell to $4 million.", ["35%", "4"],
                     id="beyond-latin-1-without-digits"),
        pytest.param("a1,.5% and x,.5% and 1.5,.5%", ["0.5%", "0.5%"], id="separators-that-meet"),
        pytest.param("1 2 3 " * 200 + "then 12% after", ["12%"], id="stretch-without-a-cue"),
    ],
)  # fmt: skip
def test_statistics_on_the_fallback_paths(text, expected):
    limited = _Limited()
    found = extract_statistics(text, limited=limited)
    assert [f.normalized for f in found] == expected
    assert (found, limited.hit) == _statistics_reference(text) == (found, False)


def test_more_numbers_than_the_limit_cut_as_before():
    text = "x7 " * 11_000 + "p = 0.04"  # 11,000 numbers (glued to a letter) before the p-value
    limited = _Limited()
    found = extract_statistics(text, limited=limited)
    assert (found, limited.hit) == _statistics_reference(text) == ([], True)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("See Roe v. Wade, 410\u2009U.S. 113 (1973).", id="thin-space"),
        pytest.param("See 410 U.S. 113 and 5 F.3d 1 and “quoted” 12 Cal. 4", id="curly"),
        pytest.param("1 A " * 5000 + "410 U.S. 113", id="dense-candidates"),
    ],
)
def test_case_law_hints_on_unusual_text(text):
    assert sorted(_hints(text, _Limited(), _Classes(text))) == _hints_reference(text)


def test_thin_space_case_citation_is_still_found():
    found = extract("See Roe v. Wade, 410\u2009U.S. 113 (1973).", ["case_law"], current_year=2026)
    assert [f.kind for f in found] == ["case"]  # the hint sees the space beyond Latin-1


def test_hint_reference_matches_the_module_pattern():
    # The reference above is the scan the fast path replaced: the same pattern, everywhere.
    assert _CASE_HINTS[0][0].pattern == re.compile(r"\d{1,4}\s+[A-Z][A-Za-z]{0,8}\.").pattern
