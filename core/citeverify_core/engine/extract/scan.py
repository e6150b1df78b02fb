"""What every extractor shares: the :class:`Found` citation, the limits, and the gated scans.

A pattern runs only over the chunks of an answer whose cheap gate (substring tests, or the
character classes computed once at C speed) says it may match.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from citeverify_core.policy.settings import CitationType

__all__ = ["MAX_CITATIONS", "MAX_MATCHES", "Extracted", "Found"]


@dataclass(frozen=True, slots=True)
class Found:
    """One citation found in an answer.

    Attributes:
        type: The ``extract_patterns`` type.
        kind: Finer kind: doi, pmid, pmcid, arxiv, url, case, short_case, id, supra, usc, cfr,
            federal_register, public_law, eu_act, percent, currency, amount, p_value,
            sample_size, ratio.
        start: Start of the citation in the answer.
        end: End (exclusive).
        text: The citation as written.
        normalized: Canonical form (lower-case DOI, digits of a PMID, ``12%`` ...).
        values: For statistics, the normalized numbers the context must contain.
        format_ok: For case law, whether the format check passed (None elsewhere).
        note: Why the format check passed or failed.
    """

    type: CitationType
    kind: str
    start: int
    end: int
    text: str
    normalized: str
    values: tuple[str, ...] = ()
    format_ok: bool | None = None
    note: str = ""


# --- helpers -------------------------------------------------------------------------------------

_TRAILING = ".,;:!?'\"”’»…"
_PAIRS = {")": "(", "]": "[", "}": "{", ">": "<"}


def _trim(text: str, start: int, end: int) -> int:
    """Trim trailing punctuation and unbalanced closing brackets; return the new end."""
    balance: dict[str, int] = {}  # closers minus openers in text[start:end], counted once
    while end > start:
        ch = text[end - 1]
        if ch in _TRAILING:
            end -= 1
        elif ch in _PAIRS:
            if ch not in balance:
                piece = text[start:end]
                balance[ch] = piece.count(ch) - piece.count(_PAIRS[ch])
            if balance[ch] > 0:
                balance[ch] -= 1
                end -= 1
            else:
                break
        else:
            break
    return end


class _Taken:
    """The union of the spans already claimed; overlap tests in O(log n)."""

    def __init__(self, spans: Iterable[tuple[int, int]] = ()) -> None:
        self._starts: list[int] = []  # disjoint, sorted intervals
        self._ends: list[int] = []
        for start, end in sorted(spans):  # in order, each add appends: linear
            self.add(start, end)

    def overlaps(self, start: int, end: int) -> bool:
        i = bisect.bisect_right(self._starts, start) - 1
        if i >= 0 and self._ends[i] > start:
            return True
        return i + 1 < len(self._starts) and self._starts[i + 1] < end

    def add(self, start: int, end: int) -> None:
        i = bisect.bisect_left(self._starts, start)
        # Merge with the neighbours it touches, so the intervals stay disjoint.
        while i > 0 and self._ends[i - 1] >= start:
            i -= 1
            start, end = min(start, self._starts[i]), max(end, self._ends[i])
            del self._starts[i], self._ends[i]
        while i < len(self._starts) and self._starts[i] <= end:
            end = max(end, self._ends[i])
            del self._starts[i], self._ends[i]
        self._starts.insert(i, start)
        self._ends.insert(i, end)


#: Extraction scans: the text is cut into chunks; a pattern runs only over the chunks whose cheap
#: gate (substring tests, C speed) says it may match, widened by a margin so that a citation that
#: straddles two chunks is still whole. Benchmark if changing (bench/bench_citations.py).
_CHUNK = 4096
_MARGIN = 256

#: Matches of one pattern examined per answer, and citations kept per answer: an answer is not a
#: bibliography, and each citation costs a check and a result object (an answer of 250,000 URLs
#: is refused quickly). Past either limit the answer's result says so in ``notes``, and the strict
#: options fail closed (see ``Extracted.truncated``).
MAX_MATCHES = 10_000
MAX_CITATIONS = 2_000


class Extracted(list[Found]):
    """The citations found, in text order; ``truncated`` names the types cut by the limits."""

    def __init__(self, found: Iterable[Found] = (), truncated: Iterable[str] = ()) -> None:
        super().__init__(found)
        self.truncated: set[str] = set(truncated)


_T = TypeVar("_T")


class _Limited:
    """Counts the matches a scan hands out and stops at ``MAX_MATCHES`` (sets ``hit``)."""

    def __init__(self) -> None:
        self.hit = False
        self._left = MAX_MATCHES

    def can_take(self, count: int) -> bool:
        """Whether ``count`` more matches stay within the limit (a fast path may skip counting)."""
        return count <= self._left

    def __call__(self, matches: Iterable[_T]) -> Iterator[_T]:
        for m in matches:
            if self._left <= 0:
                self.hit = True
                return
            self._left -= 1
            yield m


def _scan(
    text: str,
    pattern: re.Pattern[str],
    gate: Callable[[str], bool] | None = None,
    limited: _Limited | None = None,
) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text)``, restricted to the regions whose chunks pass ``gate``.

    At most ``MAX_MATCHES`` matches; ``limited.hit`` is set when there were more.
    """
    if gate is not None and len(text) <= _CHUNK and not gate(text):
        return iter(())  # the common case, without setting up the generators below
    return (limited or _Limited())(_scan_all(text, pattern, gate))


def _scan_all(
    text: str, pattern: re.Pattern[str], gate: Callable[[str], bool] | None
) -> Iterator[re.Match[str]]:
    if gate is None:
        yield from pattern.finditer(text)
        return
    if len(text) <= _CHUNK:
        if gate(text):
            yield from pattern.finditer(text)
        return
    regions: list[list[int]] = []
    for start in range(0, len(text), _CHUNK):
        if gate(text[start : start + _CHUNK]):
            lo, hi = max(0, start - _MARGIN), min(len(text), start + _CHUNK + _MARGIN)
            if regions and lo <= regions[-1][1]:
                regions[-1][1] = hi
            else:
                regions.append([lo, hi])
    for lo, hi in regions:
        # finditer(text, pos, endpos): lookbehinds still see the text before ``pos``.
        yield from pattern.finditer(text, lo, hi)


def _has(*needles: str, fold: bool = False) -> Callable[[str], bool]:
    """A gate: whether a chunk holds one of ``needles`` (after ``str.lower()`` with ``fold``)."""
    return _Has(needles, fold)


#: Needle characters from the rarest in prose to the commonest (about). A gate first looks for
#: one such character of each needle: finding one character is memchr (50 times faster than
#: finding a string of several), and where it is missing the needle is too (the
#: gates of a 300-word answer took 40 substring searches, 50 us, before).
_RARE_FIRST = "§QZXJKVUYOGNWHBEFLMDRPTCSAIqzxjvbpygfwmucldrhsnoate:/0123456789. ,-"


class _Has:
    __slots__ = ("fold", "groups")

    def __init__(self, needles: tuple[str, ...], fold: bool) -> None:
        self.fold = fold
        # With fold a needle is lower-case, and its key is found as either case. No character
        # beyond ASCII lowers to an ASCII letter but "İ" (to "i") and the Kelvin sign (to "k"),
        # so those two letters are never keys (tests/engine/test_extract_equivalence.py checks it).
        groups: dict[tuple[str, ...], list[str]] = {}
        for needle in needles:
            key = next(c for c in _RARE_FIRST if c in needle and not (fold and c in "ik"))
            groups.setdefault((key, key.upper()) if fold else (key,), []).append(needle)
        #: (keys, the needles' common prefix when it is worth a search, needles)
        self.groups = [
            (keys, prefix if len(prefix) > 1 and len(group) > 1 else "", tuple(group))
            for keys, group in groups.items()
            for prefix in [_common_prefix(group)]
        ]

    def __call__(self, chunk: str) -> bool:
        lowered = None
        for keys, prefix, needles in self.groups:
            for key in keys:
                if key in chunk:
                    break
            else:
                continue  # memchr: no needle of the group can be there
            if self.fold:
                lowered = _lower(chunk) if lowered is None else lowered
                if prefix in lowered and any(n in lowered for n in needles):
                    return True
            elif prefix in chunk and any(n in chunk for n in needles):
                return True
        return False


#: The last chunk lowered and its lower case: the fold gates of one answer (PubMed, PMC, arXiv,
#: Public Law) see the same short answer one after the other. One tuple, replaced whole, so
#: threads never see a chunk with another's lower case.
_LOWERED: tuple[str, str] = ("", "")


def _lower(chunk: str) -> str:
    global _LOWERED  # noqa: PLW0603
    last = _LOWERED
    if last[0] is chunk:
        return last[1]
    lowered = chunk.lower()
    _LOWERED = (chunk, lowered)
    return lowered


def _common_prefix(words: list[str]) -> str:
    first, last = min(words), max(words)
    size = 0
    while size < len(first) and first[size] == last[size]:
        size += 1
    return first[:size]


# --- character classes at C speed ---------------------------------------------------------------
#
# A regex pass costs about 10 ns per character wherever it cannot start from a literal (sre tries
# each position), and a 300-word answer took three of them (numbers, stretches without a
# statistic cue, case-law hints) before anything was found: the fixed cost of every answer.
# Instead the answer is encoded once as Latin-1 with "?" for the characters beyond it (one byte
# per character, so offsets stay the same) and translated to one class byte per character;
# ``bytes.find`` then locates the few places where a pattern can start, and the patterns run
# anchored there. Every decision is still made on the text itself; the classes only pick the
# places to look, and where they cannot see enough (decimal digits beyond Latin-1, a long stretch
# without a cue, more matches than the limit) the regex scans run as before.
# tests/engine/test_extract_equivalence.py checks both against each other. Benchmark if changing
# (bench/bench_speed.py --only small, bench/bench_citations.py).


def _class_of(ch: str) -> bytes:
    if "0" <= ch <= "9":
        return b"0"  # an ASCII digit (the only decimal digits in Latin-1)
    if ch in ".,":
        return ch.encode()
    if "A" <= ch <= "Z":
        return b"A"  # where a reporter can start (case-law hints)
    if ch.isalnum() or ch == "_":
        return b"a"  # \w, the characters that glue a number to a word
    # Whitespace, signs, and "?", which is also every character beyond Latin-1: one class, so
    # that each search below is one or two needles (the patterns tell them apart afterwards).
    return b" "


_CLASS_TABLE = b"".join(_class_of(chr(i)) for i in range(256))
#: ASCII letters and the statistic cue signs of ``_NO_CUE`` (statistics.py) that Latin-1
#: holds; everything else, "?" included (it stands for the characters beyond Latin-1, such as
#: "€" and "≤"), is not a cue, which can only send a text to the regex scan, never skip one.
_CUE_TABLE = bytes(
    1 if (chr(i).isascii() and chr(i).isalpha()) or chr(i) in "%:°µ$£¥=<>" else 0
    for i in range(256)
)
_NO_CUE_RUN = bytes(256)  # the minimum length of _NO_CUE (statistics.py)


class _Classes:
    """An answer's class bytes (see above), or ``usable`` false where they cannot stand in."""

    __slots__ = ("bytes", "raw", "usable")

    def __init__(self, text: str) -> None:
        self.raw = raw = text.encode("latin-1", "replace")
        self.bytes = raw.translate(_CLASS_TABLE)
        # Characters beyond Latin-1 are "?" here: the classes are blind to a decimal digit
        # among them ("٣", "５" are numbers for \d), so such a text takes the regex scans.
        marks = text.count("?")
        beyond = raw.count(b"?") - marks
        self.usable = not beyond or not _has_wide_digit(text, raw, beyond + marks)


def _has_wide_digit(text: str, raw: bytes, marks: int) -> bool:
    """Whether ``text`` has a decimal digit beyond Latin-1 (``raw`` has ``marks`` "?" bytes)."""
    if marks > 64:
        return _WIDE_DIGIT.search(text) is not None  # a regex pass, not a Python loop per "?"
    i = raw.find(b"?")
    while i >= 0:
        if text[i].isdecimal():
            return True
        i = raw.find(b"?", i + 1)
    return False


_WIDE_DIGIT = re.compile(r"[^\x00-\xff](?<=\d)")


def _class_hits(classes: bytes, needles: Iterable[bytes], offset: int) -> list[int] | None:
    """The offsets of every occurrence of ``needles``, plus ``offset``, sorted.

    None when there are so many that trying a pattern at each from Python would cost more than
    a regex scan (about a microsecond a try against 10 ns a character): a text like
    "1 A 1 A ..." takes the scan, so hostile inputs stay linear and fast.
    """
    left = 16 + len(classes) // 64
    found: list[int] = []
    for needle in needles:
        i = classes.find(needle)
        while i >= 0:
            found.append(i + offset)
            left -= 1
            if left < 0:
                return None
            i = classes.find(needle, i + 1)
    found.sort()
    return found
