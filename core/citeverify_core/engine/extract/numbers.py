"""Whether the context documents hold a number: a few searches, or one index of every number."""

from __future__ import annotations

import re
from collections.abc import Iterable

from citeverify_core.engine.extract.statistics import MAX_NUMBER_CHARS

__all__ = ["NumberIndex"]


class NumberIndex:
    """Answers "does the context contain this number?".

    The first questions are a few ``str.find`` calls (C speed) over the documents for the
    number's written forms (``1250``, ``1,250``; ``0.05``, ``.05``), with the neighbours of each
    hit checked: not inside another number or word; ``12.0`` counts as ``12``; a percentage needs
    a percent sign or word after it, so "9 percent" is not backed by "9 million". Digits are
    compared as written (no NFKC): full-width digits in a document do not count.

    After ``scan_after`` distinct questions the documents are scanned once and every number in
    them is indexed, with the same rules, so that an answer with thousands of numbers costs one
    pass over the context instead of one per number (10,000 percentages against 10 MB
    would otherwise take minutes). Both paths are checked against each other by
    tests/engine/test_fast_paths.py.
    """

    def __init__(self, texts: Iterable[str], *, scan_after: int = 16) -> None:
        self._texts = list(texts)
        self._memo: dict[tuple[str, bool], bool] = {}
        self._scan_after = scan_after
        self._index: tuple[set[str], set[str]] | None = None

    def contains(self, value: str, *, percent: bool = False) -> bool:
        """Whether a document holds the normalized number ``value``."""
        key = (value, percent)
        if key not in self._memo:
            if self._index is None and len(self._memo) >= self._scan_after:
                self._index = _index_numbers(self._texts)
            if self._index is not None:
                written = self._index[1] if percent else self._index[0]
                self._memo[key] = any(form in written for form in _forms(value))
            else:
                self._memo[key] = self._search(value, percent)
        return self._memo[key]

    def _search(self, value: str, percent: bool) -> bool:
        # Loops, not nested generators: this runs for every statistic of every answer.
        for form in _forms(value):
            for text in self._texts:
                pos = text.find(form)
                while pos >= 0:
                    if _number_at(text, pos, len(form), percent):
                        return True
                    pos = text.find(form, pos + 1)
        return False


# A maximal run of ASCII digits with inner separators: the unit at which _number_at accepts a
# form (a form that is only part of such a run is rejected by its neighbour checks).
_WRITTEN_NUMBER = re.compile(r"[0-9]+(?:[.,][0-9]+)*")


#: Documents are indexed in batches of about this many characters, joined by NUL: a NUL stands
#: where a document starts or ends for every check below (not a digit, separator, letter or
#: space), and one scan of a batch saves a call per document (10,000 documents of 1 KB).
_INDEX_BATCH = 1 << 20
#: Where the written numbers are: the text as Latin-1 (one byte per character, "?" beyond it)
#: translated to "0" for an ASCII digit, "." and "," for themselves and " " for the rest. The
#: runs of ``_DIGIT_RUN`` are then ``0[0.,]*`` there, a pattern with a literal first character
#: that sre finds with memchr; ``_WRITTEN_NUMBER`` on the text itself starts with a repetition
#: and is tried at every position (10 MB: about 10 ms against 96 ms). Benchmark if
#: changing (bench/bench_speed.py --only many).
_DIGIT_CLASSES = bytes(
    ord("0") if chr(i) in "0123456789" else i if chr(i) in ".," else ord(" ") for i in range(256)
)
_CLASS_RUN = re.compile(rb"0[0.,]*")
#: A run of digits and separators: ``_WRITTEN_NUMBER`` without its trailing separators, unless
#: two separators meet ("1..2").
_DIGIT_RUN = re.compile(r"[0-9][0-9.,]*")


def _index_numbers(texts: Iterable[str]) -> tuple[set[str], set[str]]:
    """The numbers written in ``texts``, in the forms that ``_number_at`` accepts.

    Returns all of them, and those followed by a percent sign or word.
    """
    plain: set[str] = set()
    percent: set[str] = set()
    batch: list[str] = []
    size = 0
    for text in texts:
        if len(text) >= _INDEX_BATCH:
            _index_text(text, plain, percent)  # alone: no copy
            continue
        batch.append(text)
        size += len(text)
        if size >= _INDEX_BATCH:
            _index_text("\0".join(batch), plain, percent)
            batch, size = [], 0
    if batch:
        _index_text("\0".join(batch), plain, percent)
    return plain, percent


def _index_text(text: str, plain: set[str], percent: set[str]) -> None:
    pos = 0
    while pos < len(text):
        stop = min(len(text), pos + _INDEX_BATCH)  # bounded memory for the class bytes
        classes = text[pos:stop].encode("latin-1", "replace").translate(_DIGIT_CLASSES)
        resume = stop
        for run in _CLASS_RUN.finditer(classes):
            start, end = run.span()
            start += pos
            if end + pos == stop:  # may go on past this slice
                whole = _DIGIT_RUN.match(text, start)
                assert whole is not None  # a digit
                number = whole.group()
                resume = whole.end()
            else:
                number = text[start : end + pos]
            if number[-1] in ".,":
                number = number.rstrip(".,")  # "in 2019." is 2019
            if ("." in number or "," in number) and (
                ".." in number or ",," in number or ".," in number or ",." in number
            ):
                # Separators that meet end a written number: read them as _WRITTEN_NUMBER does.
                for m in _WRITTEN_NUMBER.finditer(text, start, start + len(number)):
                    _index_number(text, m.start(), m.group(), plain, percent)
            else:
                _index_number(text, start, number, plain, percent)
        pos = resume


def _index_number(text: str, start: int, number: str, plain: set[str], percent: set[str]) -> None:
    """Index one ``_WRITTEN_NUMBER`` match ``number`` at ``start`` (a hot loop: benchmark)."""
    if len(number) > MAX_NUMBER_CHARS:
        return  # _forms never asks for such a number
    end = start + len(number)
    after = text[end : end + 2]
    if after[:1].isdigit() or (after[:1] in _SEPARATORS and after[1:2].isdigit()):
        return  # followed by a digit that is not ASCII
    before = text[start - 1] if start else ""
    free = not (
        before.isalnum() or (before in _SEPARATORS and start > 1 and text[start - 2].isdigit())
    )  # _free_before, inline
    head = None
    if free and "." in number:
        head, _, zeros = number.rpartition(".")
        if not zeros or zeros.strip("0") or "." in head:
            head = None  # only "12.0", "12.00" ... count as 12
    dotted = before == "." and _free_before(text, start - 1)  # ".05"
    if not (free or dotted):
        return
    targets = (plain, percent) if _PERCENT_AFTER.match(text, end) else (plain,)
    for forms in targets:
        if free:
            forms.add(number)
            if head is not None:
                forms.add(head)
        if dotted:
            forms.add("." + number)


_SEPARATORS = frozenset(".,")


def _forms(value: str) -> list[str]:
    whole, dot, frac = value.partition(".")
    forms = [value]
    if 3 < len(whole) <= MAX_NUMBER_CHARS:
        forms.append(f"{int(whole):,}" + dot + frac)
    if whole == "0" and frac:
        forms.append("." + frac)
    return forms


_PERCENT_AFTER = re.compile(r"\s?(?:%|percent\b|per\s?cent\b|pct\b)", re.IGNORECASE)
_ZEROS = re.compile(r"\.0+(?!\d)")


def _free_before(text: str, pos: int) -> bool:
    """No word or number right before ``pos``."""
    if pos:
        before = text[pos - 1]
        if before.isalnum() or (before in ".," and pos > 1 and text[pos - 2].isdigit()):
            return False
    return True


def _number_at(text: str, pos: int, length: int, percent: bool) -> bool:
    if not _free_before(text, pos):
        return False
    end = pos + length
    if "." not in text[pos:end] and (zeros := _ZEROS.match(text, end)):
        end = zeros.end()  # "12.0" is 12
    after = text[end : end + 2]
    if after[:1].isdigit() or (after[:1] in {".", ","} and after[1:2].isdigit()):
        return False
    return not percent or _PERCENT_AFTER.match(text, end) is not None
