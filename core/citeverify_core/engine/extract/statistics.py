"""Statistics in an answer: percentages, amounts, p-values, sample sizes, ratios."""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation

from citeverify_core.engine.extract.scan import (
    _CUE_TABLE,
    _NO_CUE_RUN,
    Found,
    _class_hits,
    _Classes,
    _Limited,
)

__all__ = ["MAX_NUMBER_CHARS", "extract_statistics"]

# --- statistics ----------------------------------------------------------------------------------

# One pass over the numbers of the text; each number is then classified by what stands right
# before and after it (anchored matches at its position), instead of one full scan per kind.
# Benchmark if changing (bench/bench_citations.py).
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")
_SCALE = r"(?:\s?(million|billion|trillion|thousand|mn|bn|m|k)\b)?"
_UNITS = (
    r"mg|g|kg|µg|μg|mcg|ng|ml|mL|l|L|dl|dL|mmol|mol|km|m|cm|mm|nm|mi|miles|ft|feet|kWh|MWh|"
    r"GWh|TWh|W|kW|MW|GW|Hz|kHz|MHz|GHz|°C|°F|mmHg|bpm|kcal|cal|ha|acres|tonnes|tons|"
    r"patients|participants|subjects|respondents|people|persons|adults|children|deaths|cases|"
    r"households|students|employees"
)
_AFTER_PERCENT = re.compile(r"\s?(?:%|percent\b|per\s?cent\b|pct\b|percentage points?\b)", re.I)
_AFTER_CURRENCY = re.compile(_SCALE + r"\s?(?:dollars|euros|pounds|yen|USD|EUR|GBP)\b", re.I)
_AFTER_SCALE = re.compile(_SCALE, re.I)
_AFTER_UNIT = re.compile(r"\s?(?:" + _UNITS + r")(?![\w/])")
_AFTER_RATIO = re.compile(r"\s?:\s?(\d{1,3})(?![\w.:])(?=\s+(?:ratio|odds)\b)")
_AFTER_COLON = re.compile(r"\s?:\s?(\d{1,3})(?![\w.:])")
_AFTER_IN = re.compile(r"\s+(?:in|out of)\s+(\d{1,4})\b(?!\s*(?:AM|PM|am|pm))")
# The before-patterns end with \Z, not $: searched with endpos at the number, $ would also match
# before a line break that ends the window, reaching one space further back than the two that
# _classify looks past.
_BEFORE_CURRENCY = re.compile(r"(?:US\$|\$|€|£|¥|USD\s?|EUR\s?|GBP\s?)\s?\Z")
_BEFORE_P = re.compile(r"(?<![\w.])[pP]\s?(?:<=|>=|<|>|=|≤|≥)\s?\Z")
_BEFORE_N = re.compile(r"(?<![\w.])[nN]\s?=\s?\Z")
_BEFORE_EFFECT = re.compile(
    r"\b(?:odds ratio|hazard ratio|risk ratio|relative risk|OR|HR|RR|aOR|aHR)"
    r"\s?(?:=|of|:|was|is)?\s?\Z"
)
_BEFORE_RATIO_OF = re.compile(r"\bratio of\s+\Z")
_SCALES = {
    "thousand": 10**3, "k": 10**3, "million": 10**6, "mn": 10**6, "m": 10**6,
    "billion": 10**9, "bn": 10**9, "trillion": 10**12,
}  # fmt: skip


def _number(raw: str) -> Decimal | None:
    try:
        return Decimal(raw.replace(",", ""))
    except InvalidOperation:
        return None


def _canon(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


#: Longer digit runs are not statistics (and Python refuses to turn more than 4,300 digits into
#: an int).
MAX_NUMBER_CHARS = 40


# A stretch with none of the characters that can mark a statistic (percent, currency, comparison
# signs, colons, units and words) holds no statistic: "1 2 3 ..." is skipped at C speed instead
# of classifying each number in Python. The stretch's edges stay live by _EDGE.
_NO_CUE = re.compile(r"[^%:°µμ$€£¥=<>≤≥A-Za-z]{256,}")
_EDGE = 64


def _live_numbers(text: str, limited: _Limited) -> Iterator[re.Match[str]]:
    """The numbers of ``text`` that a statistic cue is near, at most ``MAX_MATCHES``."""
    regions: list[tuple[int, int]] = []
    pos = 0
    for m in _NO_CUE.finditer(text):
        regions.append((pos, m.start() + _EDGE))
        pos = m.end() - _EDGE
    regions.append((pos, len(text)))
    for lo, hi in regions:
        start, floor = lo, max(0, lo - _EDGE)
        while start > floor and (text[start - 1].isdigit() or text[start - 1] in ".,"):
            start -= 1  # at the beginning of a number, not inside it
        yield from limited(_NUMBER.finditer(text, start, hi))


def extract_statistics(
    text: str, *, limited: _Limited | None = None, classes: _Classes | None = None
) -> list[Found]:
    """Percentages, currency amounts, amounts with units, p-values, sample sizes, ratios.

    ``classes`` (of ``text``) lets the numbers be found without the regex scans where it can.
    """
    limited = limited or _Limited()
    numbers = _fast_numbers(text, classes or _Classes(text), limited)
    if numbers is None:
        numbers = ((m.start(), m.end()) for m in _live_numbers(text, limited))
    found: list[Found] = []
    last_end = -1
    for number_start, number_end in numbers:
        start = number_start
        number = _THOUSANDS.match(text, start, min(number_end, start + MAX_NUMBER_CHARS + 1))
        assert number is not None  # "1,2" in a list is 1, not 12
        end = number.end()
        if end - start > MAX_NUMBER_CHARS:
            continue
        before = text[start - 1] if start else " "
        if before == "." and not (start > 1 and text[start - 2].isdigit()):
            start -= 1  # ".05"
        elif before.isalnum() or before in "._,":
            continue  # inside a word or another number ("v2", "1.2.3")
        if start < last_end:
            continue  # part of the statistic found just before ("3:1", "1 in 5")
        item = _classify(text, start, end)
        if item is not None:
            found.append(item)
            last_end = item.end
    return found


def _fast_numbers(
    text: str, classes: _Classes, limited: _Limited
) -> Iterator[tuple[int, int]] | None:
    """The numbers that ``_live_numbers`` hands out and the loop above keeps, as spans.

    None where it cannot tell (see ``_Classes``): the text holds a stretch without a statistic
    cue (``_live_numbers`` skips its middle), or more numbers than the limit could take (numbers
    are at least two characters apart, so a text under twice the limit cannot reach it).

    ``_live_numbers`` reads the numbers as a chain (each ``_NUMBER`` match starts where the one
    before ended), and the loop drops every number right after a letter, digit, "_" or ",". So
    the numbers worth handing out start at a digit after a space, a sign or the start of the
    text (always the start of a chain link: no number ends in those), or after a "." that is not
    itself after a digit (".05"), where the chain is followed to see whether the digit starts a
    link ("1,.5" is one number).
    """
    if not classes.usable or not limited.can_take((len(text) + 1) // 2):
        return None
    if len(text) >= len(_NO_CUE_RUN) and _NO_CUE_RUN in classes.raw.translate(_CUE_TABLE):
        return None
    candidates = _class_hits(classes.bytes, (b" 0", b".0"), 1)
    return None if candidates is None else _chain_starts(text, candidates)


def _chain_starts(text: str, candidates: list[int]) -> Iterator[tuple[int, int]]:
    if text[:1].isdecimal():
        candidates.insert(0, 0)
    link_start, link_end = -1, 0  # the last link of the chain followed so far
    for start in candidates:
        before = text[start - 1] if start else " "
        if before == ".":
            if start > 1 and text[start - 2].isdigit():
                continue  # "1.2.3", "1.5" (dropped as a link, not a link at all otherwise)
            if start > 1 and text[start - 2] == ",":
                if start >= link_end:
                    # Back to a character no link can hold (or to the chain followed so far),
                    # where the chain is in step, then follow it to this digit.
                    pos = start - 1
                    while pos > link_end and (text[pos - 1] in ",." or text[pos - 1].isdecimal()):
                        pos -= 1
                    for m in _NUMBER.finditer(text, pos):
                        link_start, link_end = m.span()
                        if link_start >= start:
                            break
                if link_start != start:
                    continue  # inside a number: "1,.5"
        elif before.isalnum() or before in "_,":
            continue  # a character beyond Latin-1 after all a letter
        number = _NUMBER.match(text, start)
        assert number is not None  # a digit
        yield start, number.end()


#: The characters that can end what a before-pattern of ``_classify`` reads (within two spaces
#: of the number): currency signs and codes, comparison signs, and the last letters of "of",
#: "was", "is", "... ratio", "relative risk", "OR", "HR", "RR".
_BEFORE_ENDS = frozenset("$€£¥DRP<>=≤≥:fsok")


def _classify(text: str, start: int, end: int) -> Found | None:
    # Each pattern below is tried only where the characters around the number allow it (one
    # character test instead of up to 11 regex calls for a number that is no statistic, such as
    # a year); the order of the patterns is the order of precedence. Benchmark if changing.
    after = text[end : end + 1]
    spaced = after.isspace()
    next_ = text[end + 1 : end + 2] if spaced else after  # after at most one space
    before = start - 1
    for _ in range(2):
        if before >= 0 and text[before].isspace():
            before -= 1
    prior = text[before] if before >= 0 else ""
    colon = next_ == ":"
    word_after = next_.isalpha() or next_ in "%°"  # a percent sign or word, a scale, a unit
    if not (colon or spaced or word_after or prior in _BEFORE_ENDS):
        return None
    raw = text[start:end]
    value = _number(raw)
    if value is None:
        return None
    v = _canon(value)
    lo = max(0, start - 24)
    if colon and (m := _AFTER_RATIO.match(text, end)):
        return _stat("ratio", text, start, m.end(), f"{v}:{m.group(1)}", (v, m.group(1)))
    if colon and _BEFORE_RATIO_OF.search(text, lo, start) and (m := _AFTER_COLON.match(text, end)):
        return _stat("ratio", text, start, m.end(), f"{v}:{m.group(1)}", (v, m.group(1)))
    if spaced and len(raw) <= 3 and (m := _AFTER_IN.match(text, end)):
        return _stat("ratio", text, start, m.end(), f"{v}:{m.group(1)}", (v, m.group(1)))
    if word_after and (m := _AFTER_PERCENT.match(text, end)):
        return _stat("percent", text, start, m.end(), f"{v}%", (v,))
    if prior in _BEFORE_ENDS and (b := _BEFORE_CURRENCY.search(text, lo, start)):
        scale = _AFTER_SCALE.match(text, end)
        assert scale is not None  # the scale is optional
        return _currency(text, b.start(), scale.end(), value, scale.group(1))
    if word_after and (m := _AFTER_CURRENCY.match(text, end)):
        return _currency(text, start, m.end(), value, m.group(1))
    if prior in _BEFORE_ENDS:
        if b := _BEFORE_P.search(text, lo, start):
            return _stat("p_value", text, b.start(), end, v, (v,))
        if b := _BEFORE_N.search(text, lo, start):
            return _stat("sample_size", text, b.start(), end, v, (v,))
        if b := _BEFORE_EFFECT.search(text, lo, start):
            return _stat("ratio", text, b.start(), end, v, (v,))
    if word_after and (m := _AFTER_UNIT.match(text, end)):
        return _stat("amount", text, start, m.end(), v, (v,))
    return None


def _currency(text: str, start: int, end: int, value: Decimal, scale: str | None) -> Found:
    v = _canon(value)
    # "$3.5 million" is supported by "3.5 million" and by "3,500,000".
    values = (v,) if scale is None else (v, _canon(value * _SCALES[scale.lower()]))
    return _stat("currency", text, start, end, v, values)


def _stat(
    kind: str, text: str, start: int, end: int, normalized: str, values: tuple[str, ...]
) -> Found:
    return Found("statistic", kind, start, end, text[start:end], normalized, values=values)
