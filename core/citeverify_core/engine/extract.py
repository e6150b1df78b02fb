"""Citation extraction (seed 000, step 4): pure functions from an answer to what it cites.

One extractor per ``extract_patterns`` type. Each returns :class:`Found` items with a span into the
answer and a normalized value; checking them (context, lookups, format) happens elsewhere. The
academic identifiers are validated and normalized with idutils; case law is found by eyecite.
"""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import Any, TypeVar

from citeverify_core.policy.settings import CitationType
from citeverify_core.text import MARKER_RE

__all__ = ["MAX_CITATIONS", "Extracted", "Found", "NumberIndex", "extract", "find_markers"]


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
#: bibliography, and each citation costs a check and a result object (issue 9: 250,000 URLs in
#: one answer). Past either limit the answer's result says so in ``notes``, and the strict
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
#: finding a string of several), and where it is missing the needle is too (issue 14: the
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


# --- character classes at C speed (issue 14) -----------------------------------------------------
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
#: ASCII letters and the statistic cue signs of _NO_CUE that Latin-1 holds; everything else,
#: "?" included (it stands for the characters beyond Latin-1, such as "€" and "≤"), is not a cue,
#: which can only send a text to the regex scan, never skip one.
_CUE_TABLE = bytes(
    1 if (chr(i).isascii() and chr(i).isalpha()) or chr(i) in "%:°µ$£¥=<>" else 0
    for i in range(256)
)
_NO_CUE_RUN = bytes(256)  # _NO_CUE's minimum length


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
    "1 A 1 A ..." takes the scan, so issue 9's hostile inputs stay linear and fast.
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


# --- academic: DOIs, PubMed IDs, PMCIDs, arXiv IDs -----------------------------------------------

# A DOI is found by its literal "10." start (fast to scan); its prefix is read backwards.
_DOI = re.compile(r"10\.\d{4,9}/[^\s\"<>“”‘’]+")
_DOI_PREFIX = re.compile(r"(?:doi:\s*|https?://(?:dx\.)?doi\.org/)$", re.IGNORECASE)
_PMID = re.compile(
    r"\bPMID:?\s*(\d{1,9})\b"
    r"|\bhttps?://(?:www\.)?(?:pubmed\.ncbi\.nlm\.nih\.gov|ncbi\.nlm\.nih\.gov/pubmed)/(\d{1,9})\b/?",
    re.IGNORECASE,
)
_PMCID = re.compile(
    r"(?:\bhttps?://(?:www\.)?ncbi\.nlm\.nih\.gov/pmc/articles/)?\bPMC\d{4,9}\b/?", re.IGNORECASE
)
_ARXIV = re.compile(
    r"(?:\barXiv:\s*|\bhttps?://(?:www\.)?arxiv\.org/(?:abs|pdf)/)"
    r"(\d{4}\.\d{4,5}(?:v\d+)?|[a-z][a-z.-]*/\d{7}(?:v\d+)?)(?:\.pdf)?",
    re.IGNORECASE,
)

_DOI_GATE = _has("10.")
_PMID_GATE = _has("pmid", "pubmed", fold=True)
_PMCID_GATE = _has("pmc", fold=True)
_ARXIV_GATE = _has("arxiv", fold=True)


@cache
def _idutils() -> Any:
    # Imported on first use: idutils scans the installed packages' entry points at import
    # (about 0.5 s), which `import citeverify_core`, `citeverify --help` and `lint` need not pay.
    import idutils  # noqa: PLC0415

    return idutils


def extract_academic(text: str, *, limited: _Limited | None = None) -> list[Found]:
    """DOIs (bare, ``doi:``, doi.org links), PubMed IDs, PMCIDs and arXiv IDs.

    idutils is asked only about candidates that the patterns found: text with no identifier never
    imports it (it compiles its regexes at import, about 0.3 s; issue 14).
    """
    found: list[Found] = []
    for m in _scan(text, _DOI, _DOI_GATE, limited):
        prefix = _DOI_PREFIX.search(text, max(0, m.start() - 24), m.start())
        start = prefix.start() if prefix else m.start()
        if (
            prefix is None
            and m.start()
            and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "/._")
        ):
            continue  # inside another token ("v10.1234/x", a path)
        end = _trim(text, m.start(), m.end())
        doi = text[m.start() : end]
        idutils = _idutils()
        if not idutils.is_doi(doi):
            continue
        normalized = idutils.normalize_doi(doi).lower()
        found.append(Found("academic", "doi", start, end, text[start:end], normalized))
    for m in _scan(text, _PMID, _PMID_GATE, limited):
        pmid = m.group(1) or m.group(2)
        if _idutils().is_pmid(pmid):
            end = _trim(text, m.start(), m.end())
            found.append(Found("academic", "pmid", m.start(), end, text[m.start() : end], pmid))
    for m in _scan(text, _PMCID, _PMCID_GATE, limited):
        end = _trim(text, m.start(), m.end())
        pmc = re.search(r"PMC\d+", m.group(), re.IGNORECASE)
        assert pmc is not None
        pmcid = pmc.group().upper()
        if _idutils().is_pmcid(pmcid):
            found.append(Found("academic", "pmcid", m.start(), end, text[m.start() : end], pmcid))
    for m in _scan(text, _ARXIV, _ARXIV_GATE, limited):
        ident = m.group(1)
        idutils = _idutils()
        if idutils.is_arxiv(f"arXiv:{ident}"):
            normalized = idutils.normalize_arxiv(f"arXiv:{ident}")
            found.append(Found("academic", "arxiv", m.start(), m.end(), m.group(), normalized))
    return found


# --- URLs ----------------------------------------------------------------------------------------

_URL = re.compile(r"https?://[^\s<>\"'`“”‘’{}|\\^]+", re.IGNORECASE)
_URL_GATE = _has("://")


def extract_urls(
    text: str, *, taken: Iterable[tuple[int, int]] = (), limited: _Limited | None = None
) -> list[Found]:
    """http(s) URLs, trailing punctuation and unbalanced brackets trimmed.

    URLs inside ``taken`` spans (already found as DOIs, PubMed or arXiv links) are skipped.
    """
    claimed = _Taken(taken)
    found = []
    for m in _scan(text, _URL, _URL_GATE, limited):
        if m.start() and text[m.start() - 1].isalnum():
            continue  # "xhttp://" is not a URL start
        end = _trim(text, m.start(), m.end())
        if end - m.start() <= len("https://") or claimed.overlaps(m.start(), end):
            continue
        url = text[m.start() : end]
        scheme, rest = url.split("://", 1)
        host, sep, path = rest.partition("/")
        normalized = f"{scheme.lower()}://{host.lower()}{sep}{path}"
        found.append(Found("url", "url", m.start(), end, url, normalized))
    return found


# --- case law ------------------------------------------------------------------------------------

# Cheap pre-filter: eyecite is thorough but runs at about 1 MB/s, so it only sees windows around
# something that looks like "volume reporter page", "Id.", "supra" or "v.".
# Reporters are abbreviations with a period ("U.S.", "F.3d", "S. Ct.", "N.E.2d"), so a hint is a
# number followed by a capitalized token that has one. Digit first: the scan runs at C speed.
_CASE_HINTS = (
    (re.compile(r"\d{1,4}\s+[A-Z][A-Za-z]{0,8}\."), None),
    (re.compile(r" v\. "), _has(" v. ")),
    (re.compile(r"\b(?:Id|Ibid)\.|\bsupra\b"), _has("Id.", "Ibid.", "supra")),
)

# A case name and a "volume reporter page" that eyecite may not know (fabricated reporters).
# Every token and gap is bounded: the pattern is tried at each capital letter of a window, and an
# unbounded token made a long run of capitals quadratic (issue 9: 40,000 letters took 16 s).
_CASE_LIKE = re.compile(
    r"(?P<name>(?:[A-Z][\w.'&-]{0,40}\s{1,3}){1,5}v\.\s{1,3}"
    r"(?:[A-Z][\w.'&-]{0,40},?\s{1,3}){0,5}?[A-Z][\w.'&-]{0,40}),\s{1,3}"
    r"(?P<volume>\d{1,4})\s{1,3}"
    r"(?P<reporter>[A-Z][A-Za-z.']{0,20}(?:\s{1,3}(?:\d[a-z]{1,2}|[A-Z][A-Za-z.']{0,20})){0,4})"
    r"\s{1,3}(?P<page>\d{1,5})"
)
_WINDOW = 200
#: Widening a window to whitespace stops after this many characters (a token that long is no
#: part of a citation; unbounded, a text without spaces made each window the whole text).
_WIDEN = 64
#: At most this many characters of windows go to eyecite in one answer. eyecite reads dense
#: legal text at 100-250 KB/s, so this bounds case-law extraction to about half a second
#: whatever the answer (issue 9: 100,000 characters of "Id. supra" took 7 s, 1 MB over 90 s).
#: Citations past the budget are not found; docs/citations.md says so.
MAX_CASE_LAW_CHARS = 30_000
#: Merged windows grow to at most this size; the next one overlaps it (citations found twice are
#: kept once). eyecite resolves each citation's pin cites by scanning its whole input, so one
#: window of dense citations was quadratic (100,000 characters of "Roe v. Wade, 410 U.S. 113
#: (1973)." took seconds).
_MAX_WINDOW = 4_000


def _windows(
    text: str, taken: _Taken, limited: _Limited, classes: _Classes | None = None
) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    hints = sorted(_hints(text, limited, classes))
    budget = MAX_CASE_LAW_CHARS
    for hint_start, hint_end in hints:
        if taken.overlaps(hint_start, hint_end):
            continue  # "42 U.S.C." looks like "5 U.S." but is a statute, already found
        start = max(0, hint_start - _WINDOW)
        end = min(len(text), hint_end + _WINDOW)
        # Widen to whitespace so that no token is cut.
        floor, ceiling = max(0, start - _WIDEN), min(len(text), end + _WIDEN)
        while start > floor and not text[start - 1].isspace():
            start -= 1
        while end < ceiling and not text[end].isspace():
            end += 1
        if spans and start <= spans[-1][1] and end - spans[-1][0] <= _MAX_WINDOW:
            grown = max(0, end - spans[-1][1])
            if grown > budget:
                limited.hit = True
                break
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            grown = end - start
            if grown > budget:
                limited.hit = True
                break
            spans.append((start, end))
        budget -= grown
    return spans


def _hints(text: str, limited: _Limited, classes: _Classes | None) -> Iterator[tuple[int, int]]:
    """The spans of the ``_CASE_HINTS`` matches, pattern by pattern, at most ``MAX_MATCHES``."""
    (number, number_gate), *others = _CASE_HINTS
    candidates = None
    if classes is not None and classes.usable:
        candidates = _class_hits(classes.bytes, (b"0 A", b"0  "), 0)
    if candidates is not None:
        yield from limited(_number_hints(text, candidates))
    else:
        yield from (m.span() for m in _scan(text, number, number_gate, limited))
    for pattern, gate in others:
        yield from (m.span() for m in _scan(text, pattern, gate, limited))


def _number_hints(text: str, candidates: list[int]) -> Iterator[tuple[int, int]]:
    """The matches of the first case hint, tried only at ``candidates``.

    A match is "1 to 4 digits, whitespace, a capital": it starts at most 3 digits before the
    last digit of a run, and that digit stands before a space class byte (whitespace among
    others) and a capital or another space class byte.
    """
    pattern = _CASE_HINTS[0][0]
    for last in candidates:
        start = last
        while start > last - 3 and start and text[start - 1].isdecimal():
            start -= 1
        if m := pattern.match(text, start):
            yield m.span()


@cache
def _eyecite() -> Callable[[str], list[Any]]:
    # Imported on first use: eyecite builds its reporter tokenizer at import (about 1 s).
    logging.getLogger("eyecite").setLevel(logging.ERROR)  # it logs "Unknown overlap case"
    from eyecite import get_citations  # noqa: PLC0415

    return get_citations


def extract_case_law(
    text: str,
    *,
    current_year: int,
    taken: Iterable[tuple[int, int]] = (),
    limited: _Limited | None = None,
    classes: _Classes | None = None,
) -> list[Found]:
    """Case citations via eyecite (full, short, id., supra), with a format check.

    Full citations pass when eyecite knows the reporter, volume and page are numbers and the
    year, if given, is not in the future. A "Name v. Name, volume Reporter page" that eyecite does
    not recognize is reported with a failed format check (unknown reporter). Spans in ``taken``
    (statutes) are not searched for cases.
    """
    found: list[Found] = []
    windows = _windows(text, _Taken(taken), limited or _Limited(), classes or _Classes(text))
    if not windows:
        return found
    get_citations = _eyecite()
    starts: set[int] = set()
    for w_start, w_end in windows:
        window = text[w_start:w_end]
        in_window: list[Found] = []
        for cite in get_citations(window):
            f = _from_eyecite(cite, window, w_start, current_year)
            if f is not None and f.start not in starts:
                starts.add(f.start)
                in_window.append(f)
        found.extend(in_window)
        if "v." not in window:
            continue  # the fallback below needs a case name
        known = _Taken((f.start, f.end) for f in in_window)
        for m in _CASE_LIKE.finditer(window):
            start, end = w_start + m.start("volume"), w_start + m.end("page")
            if known.overlaps(start, end) or w_start + m.start() in starts:
                continue
            starts.add(w_start + m.start())
            reporter = m.group("reporter")
            found.append(
                Found(
                    "case_law",
                    "case",
                    w_start + m.start(),
                    end,
                    m.group(),
                    f"{m.group('volume')} {reporter} {m.group('page')}",
                    format_ok=False,
                    note=f"unknown reporter {reporter!r}",
                )
            )
    found.sort(key=lambda f: f.start)
    return found


def _from_eyecite(cite: Any, window: str, offset: int, current_year: int) -> Found | None:
    kind = type(cite).__name__
    start, end = cite.span()
    if kind == "FullCaseCitation":
        full_start, _ = cite.full_span()
        year = getattr(cite.metadata, "year", None)
        groups = cite.groups
        problems = []
        if not str(groups.get("volume", "")).isdigit():
            problems.append(f"volume {groups.get('volume')!r} is not a number")
        if not str(groups.get("page", "")).isdigit():
            problems.append(f"page {groups.get('page')!r} is not a number")
        if year is not None and str(year).isdigit() and int(year) > current_year:
            problems.append(f"year {year} is in the future")
        reporter = groups.get("reporter", "")
        note = "; ".join(problems) or f"known reporter {reporter!r}"
        start = min(start, full_start)
        text = window[start:end]
        return Found(
            "case_law",
            "case",
            offset + start,
            offset + end,
            text,
            cite.corrected_citation(),
            format_ok=not problems,
            note=note,
        )
    if kind == "ShortCaseCitation":
        return Found(
            "case_law", "short_case", offset + start, offset + end, window[start:end],
            cite.corrected_citation(), format_ok=True, note="short form of a known reporter",
        )  # fmt: skip
    if kind in {"IdCitation", "SupraCitation"}:
        short = "id" if kind == "IdCitation" else "supra"
        return Found(
            "case_law", short, offset + start, offset + end, window[start:end],
            window[start:end].strip().lower(), format_ok=True, note=f"{short} reference",
        )  # fmt: skip
    return None


# --- regulations ---------------------------------------------------------------------------------

_SECTION = r"(?:\s*§§?\s*|\s+(?:sec(?:tion)?s?\.?\s+)?)"
_REGULATORY: list[tuple[str, re.Pattern[str]]] = [
    ("usc", re.compile(
        rf"\b(\d{{1,2}})\s+U\.?\s?S\.?\s?C\.?(?:\s+A\.?)?{_SECTION}"
        r"(\d+[a-z]?(?:-\d+)?(?:\([a-z0-9]+\))*)"
    )),
    ("cfr", re.compile(
        rf"\b(\d{{1,2}})\s+C\.?\s?F\.?\s?R\.?(?:{_SECTION}|\s+(?:Part|pt\.)\s+)"
        r"(\d+(?:\.\d+)?(?:\([a-z0-9]+\))*)"
    )),
    ("federal_register", re.compile(r"\b(\d{1,3})\s+(?:Fed\.\s?Reg\.|FR)\s+(\d{1,6})\b")),
    ("public_law", re.compile(
        r"\b(?:Pub(?:lic)?\.?\s?L(?:aw|\.)?)(?:\s+No\.)?\s+(\d{1,3})[-–](\d{1,4})\b"
    )),
    ("eu_act", re.compile(
        r"\b(Regulation|Directive|Decision)\s+(?:\((EU|EC|EEC|Euratom)\)\s+)?(?:No\.?\s+)?"
        r"(\d{1,4})/(\d{1,4})(?:/(EU|EC|EEC|Euratom))?\b"
    )),
]  # fmt: skip


_REGULATORY_GATES = {
    "usc": _has("U.S.C", "USC", "U. S. C"),
    "cfr": _has("C.F.R", "CFR", "C. F. R"),
    "federal_register": _has("Fed. Reg", "Fed.Reg", " FR "),
    "public_law": _has("pub. l", "pub.l", "public law", "pub l", fold=True),
    "eu_act": _has("Regulation", "Directive", "Decision"),
}


def extract_regulatory(text: str, *, limited: _Limited | None = None) -> list[Found]:
    """U.S.C., C.F.R., Federal Register, Public Law, and EU regulations and directives."""
    found = []
    for kind, pattern in _REGULATORY:
        for m in _scan(text, pattern, _REGULATORY_GATES[kind], limited):
            if kind == "eu_act" and not (m.group(2) or m.group(5)):
                continue  # "Decision 3/4" in prose is not an EU act: the series must be named
            normalized = _normalize_regulatory(kind, m)
            found.append(Found("regulatory", kind, m.start(), m.end(), m.group(), normalized))
    return found


def _normalize_regulatory(kind: str, m: re.Match[str]) -> str:
    if kind == "usc":
        return f"{m.group(1)} U.S.C. § {m.group(2)}"
    if kind == "cfr":
        return f"{m.group(1)} C.F.R. § {m.group(2)}"
    if kind == "federal_register":
        return f"{m.group(1)} Fed. Reg. {m.group(2)}"
    if kind == "public_law":
        return f"Pub. L. No. {m.group(1)}-{m.group(2)}"
    series = m.group(2) or m.group(5)
    return f"{m.group(1)} ({series}) {m.group(3)}/{m.group(4)}"


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
#: an int: issue 9).
MAX_NUMBER_CHARS = 40


# A stretch with none of the characters that can mark a statistic (percent, currency, comparison
# signs, colons, units and words) holds no statistic: "1 2 3 ..." is skipped at C speed instead
# of classifying each number in Python (issue 9). The stretch's edges stay live by _EDGE.
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


class NumberIndex:
    """Answers "does the context contain this number?".

    The first questions are a few ``str.find`` calls (C speed) over the documents for the
    number's written forms (``1250``, ``1,250``; ``0.05``, ``.05``), with the neighbours of each
    hit checked: not inside another number or word; ``12.0`` counts as ``12``; a percentage needs
    a percent sign or word after it, so "9 percent" is not backed by "9 million". Digits are
    compared as written (no NFKC): full-width digits in a document do not count.

    After ``scan_after`` distinct questions the documents are scanned once and every number in
    them is indexed, with the same rules, so that an answer with thousands of numbers costs one
    pass over the context instead of one per number (issue 9: 10,000 percentages against 10 MB
    took 116 s). Both paths are checked against each other by tests/engine/test_fast_paths.py.
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
#: and is tried at every position (10 MB: about 10 ms against 96 ms; issue 14). Benchmark if
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


# --- inline source markers -----------------------------------------------------------------------


_MARKER_LIST = re.compile(r"\s*(?:,|and)\s*")
_MARKER_RANGE = re.compile(r"\s*[–-]\s*")


def find_markers(text: str, *, limit: int | None = None) -> list[tuple[int, int, list[int]]]:
    """Inline source markers (``[1]``, ``[2, 3]``, ``[1-3]``, ``[Source 2]``, ``【3】``).

    Returns ``(start, end, numbers)`` with the 1-based source numbers as written; with ``limit``,
    at most that many markers.
    """
    markers: list[tuple[int, int, list[int]]] = []
    for m in MARKER_RE.finditer(text):
        if limit is not None and len(markers) >= limit:
            break
        raw = m.group(1) or m.group(2)
        if raw.isdigit():  # the common "[3]": no splitting
            markers.append((m.start(), m.end(), [int(raw)]))
            continue
        numbers: list[int] = []
        for part in _MARKER_LIST.split(raw):
            bounds = _MARKER_RANGE.split(part)
            if len(bounds) == 2 and bounds[0].isdigit() and bounds[1].isdigit():
                lo, hi = int(bounds[0]), int(bounds[1])
                if lo <= hi and hi - lo < 50:
                    numbers.extend(range(lo, hi + 1))
            elif part.isdigit():
                numbers.append(int(part))
        if numbers:
            markers.append((m.start(), m.end(), numbers))
    return markers


# --- all together --------------------------------------------------------------------------------


def extract(text: str, patterns: Iterable[CitationType], *, current_year: int) -> Extracted:
    """Extract every citation of the given types (``quote`` is handled with the context).

    At most ``MAX_CITATIONS``, the first in the text; ``truncated`` on the result names the types
    where a limit was reached.
    """
    wanted = set(patterns)
    found: list[Found] = []
    classes = _Classes(text) if wanted & {"case_law", "statistic"} else None
    limits = {t: _Limited() for t in ("academic", "url", "case_law", "regulatory", "statistic")}
    if "academic" in wanted:
        found.extend(extract_academic(text, limited=limits["academic"]))
    if "url" in wanted:
        # Identifier links (doi.org, PubMed, arXiv) are academic citations, not plain URLs; they
        # are skipped here even when academic extraction is off, so one link is one citation.
        taken = (
            [(f.start, f.end) for f in extract_academic(text, limited=limits["academic"])]
            if "academic" not in wanted
            else [(f.start, f.end) for f in found]
        )
        found.extend(extract_urls(text, taken=taken, limited=limits["url"]))
    statutes = (
        extract_regulatory(text, limited=limits["regulatory"])
        if wanted & {"case_law", "regulatory"}
        else []
    )
    if "case_law" in wanted:
        spans = [(f.start, f.end) for f in statutes]
        found.extend(
            extract_case_law(
                text,
                current_year=current_year,
                taken=spans,
                limited=limits["case_law"],
                classes=classes,
            )
        )
    if "regulatory" in wanted:
        found.extend(statutes)
    if "statistic" in wanted:
        statistics = extract_statistics(text, limited=limits["statistic"], classes=classes)
        if found:
            claimed = _Taken((f.start, f.end) for f in found)
            statistics = [f for f in statistics if not claimed.overlaps(f.start, f.end)]
        found.extend(statistics)
    found.sort(key=lambda f: (f.start, f.end))
    truncated = {t for t, limit in limits.items() if limit.hit and t in wanted}
    if len(found) > MAX_CITATIONS:
        truncated |= {f.type for f in found[MAX_CITATIONS:]}
        del found[MAX_CITATIONS:]
    return Extracted(found, truncated)
