"""Splitting an answer into claims at sentence ends, line breaks and inline source markers."""

from __future__ import annotations

import functools
import re
import string
from typing import NamedTuple

from citeverify_core.text.tokens import WORD_RE, normalize

__all__ = ["ABBREVIATIONS", "MARKER_RE", "Piece", "split_claims"]

# --- claims ------------------------------------------------------------------------------------

#: Abbreviations whose period does not end a claim (design: "Grounding semantics"). Compared
#: casefolded, without their final period. ``no`` only counts before a number (``No. 5``).
ABBREVIATIONS = frozenset(
    {
        "e.g", "i.e", "et al", "al", "dr", "u.s", "u.k", "u.n", "e.u", "fig", "figs", "no", "nos",
        "vs", "cf", "mr", "mrs", "ms", "prof", "st", "jr", "sr", "inc", "ltd", "co", "corp",
        "vol", "vols", "pp", "p", "ed", "eds", "eq", "eqs", "ref", "refs", "sec", "ch", "approx",
        "etc", "ca", "art", "para", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
        "sept", "oct", "nov", "dec", "gen", "gov", "rev", "hon", "mt", "ave", "dept", "univ",
        "est", "viz", "op", "cit", "ibid", "resp", "min", "max", "n.d",
        # Legal citations, for legal users: "Smith v. Jones", "F. Supp.", "9th Cir.",
        # "Cal. Rptr.", "Fed. Reg.", "Stat.", "Ann.", "App.", "Ct.".
        "v", "supp", "cir", "ct", "app", "rptr", "fed", "reg", "stat", "ann", "cal", "ill",
        "mass", "pa", "tex", "fla", "wash", "mich", "wis", "minn", "colo", "conn", "md", "va",
        "pt", "cl", "tit", "amend", "const",
    }
)  # fmt: skip

# Spans in which `.`, `!` and `?` never end a claim: URLs, DOIs and e-mail addresses. Each
# pattern runs only when its cheap marker is in the text (the e-mail one is slow to scan).
_PROTECTED = (
    ("://", re.compile(r"(?:https?|ftp)://[^\s<>\"'“”]+", re.IGNORECASE)),
    ("www.", re.compile(r"\bwww\.[^\s<>\"'“”]+", re.IGNORECASE)),
    ("10.", re.compile(r"\b10\.\d{4,9}/[^\s<>\"'“”]+")),
)
# E-mail addresses: every part bounded (RFC 5321: a local part of at most 64 characters, labels
# of at most 63), and a match may only start where a local part starts (the lookbehind), so the
# engine never rescans a long word run from each of its positions: an unbounded
# ``[\w.+-]+@`` was quadratic (100,000 letters and one "@" took
# seconds).
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}")
_TRAILING_PUNCT = ".,;:!?)]}'\"”’»"

# One character class first: an alternation here made the scan 4x slower (benchmark if changing).
# A line break absorbs no following punctuation of its own; "\r\n" gives an empty piece, dropped.
_TERMINATOR = re.compile(r"[.!?\n\r\v\f\x1c-\x1e\x85\u2028\u2029][.!?]*")
_CLOSER_CHARS = "\"'”’»)]}"
_CLOSERS = re.compile(r"[\"'”’»)\]}]*")

#: Inline source markers as citation prompts and LlamaIndex's CitationQueryEngine write them:
#: ``[1]``, ``[2, 3]``, ``[1-3]``, ``[Source 2]``, ``【3】``, ``【3†source】``.
MARKER_RE = re.compile(
    r"\[(?:(?:source|src|doc(?:ument)?|ref)\s*)?(\d{1,3}(?:\s*(?:,|–|-|and)\s*\d{1,3})*)\]"
    r"|【(\d{1,3})(?:†[^】\n]{0,40})?】",
    re.IGNORECASE,
)
# Markers right after a terminator belong to the claim before it ("... in 2021. [1] Next").
_TRAILING_MARKERS = re.compile(r"(?:[ \t]*(?:" + MARKER_RE.pattern + r"))+", re.IGNORECASE)


def _protected_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    lowered = text.lower()
    for marker, pattern in _PROTECTED:
        if marker not in lowered:
            continue
        for m in pattern.finditer(text):
            spans.append((m.start(), _trim_trailing(text, m.start(), m.end())))
    if "@" in text:
        for m in _EMAIL.finditer(text):
            spans.append((m.start(), _trim_trailing(text, m.start(), m.end())))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:  # a DOI inside a URL: one span
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _trim_trailing(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1] in _TRAILING_PUNCT:
        end -= 1
    return end


def _period_ends_claim(text: str, pos: int) -> bool:
    """Whether the single ``.`` at ``pos`` ends a claim.

    Hot path (one call per period; benchmark if changing: bench/bench_hostile.py).
    """
    after = text[pos + 1 : pos + 2]
    if after and (after.isalnum() or after == "_"):
        # "3.5", "Node.js", "e.g.x": a period glued to the next word never ends a sentence.
        return False
    # The token before the period: letters and inner periods ("e.g", "U.S", "T", "Kuhn"), at
    # most 24 characters. In ASCII the letters are [A-Za-z]: the run is found at C speed.
    before = text[max(0, pos - 24) : pos]
    if before.isascii():
        token = before[len(before.rstrip(_ASCII_TOKEN)) :]
    else:
        start = pos
        while (
            start > 0 and pos - start < 24 and (text[start - 1].isalpha() or text[start - 1] == ".")
        ):
            start -= 1
        token = text[start:pos]
    ends = _token_ends_claim(token)
    if ends is None:  # "No." ends a claim unless a number follows ("No. 5")
        return not _NUMBER_AFTER.match(text, pos + 1, pos + 8)
    return ends


_NUMBER_AFTER = re.compile(r"\s*\d")
_ASCII_TOKEN = string.ascii_letters + "."


@functools.lru_cache(maxsize=4096)
def _token_ends_claim(token: str) -> bool | None:
    """The decision for a period after ``token``; None when it depends on what follows."""
    token = token.lstrip(".")
    if not token or not token[-1].isalpha():
        return True
    # An initial: one letter, upper case ("T. S. Kuhn", "J. Smith").
    if len(token) == 1 and token.isupper():
        return False
    # Dotted capitalized abbreviations: "U.S.C.", "C.F.R.", "N.E.", "Ph.D." (not "x.y.z", the end
    # of an identifier; "e.g." and "i.e." are in ABBREVIATIONS).
    if "." in token and all(0 < len(p) <= 3 and p[0].isupper() for p in token.split(".")):
        return False
    key = token.casefold()
    if key == "no":
        return None
    return key not in ABBREVIATIONS


class Piece(NamedTuple):
    """A claim's text and its ``[start, end)`` span in the answer.

    A named tuple: immutable, and made several times faster than a frozen dataclass (one per
    claim).
    """

    start: int
    end: int
    text: str


def split_claims(text: str, *, limit: int | None = None) -> list[Piece]:
    """Split an answer into claims at ``.``, ``!``, ``?`` and line breaks.

    A period does not split inside a number, URL, DOI or e-mail address, after an initial, or
    after a common abbreviation. Closing quotes and brackets after a terminator stay with the
    claim. Pieces without a word are dropped; surrounding whitespace is not part of a claim.
    With ``limit``, stop once more than ``limit`` claims were found (the caller refuses such an
    answer; the rest is not split).
    """
    protected = _protected_spans(text)
    has_markers = "[" in text or "【" in text  # once: a scan per claim is quadratic
    pieces: list[Piece] = []
    start = 0
    p_index = 0
    # Where the next word starts: a terminator with no word since the last cut makes a piece
    # without words, which is dropped, so its period needs no decision and the piece no checks
    # (". " or "\r\n" a million times would otherwise cost seconds).
    plain = text.isascii()  # then words need no NFKC to be found
    raw_word = _next_word(text, 0)
    next_word = raw_word if plain else _next_nfkc_word(text, 0, raw_word)
    n = len(text)
    for m in _TERMINATOR.finditer(text):
        pos, end = m.span()
        if protected:
            while p_index < len(protected) and protected[p_index][1] <= pos:
                p_index += 1
            if p_index < len(protected) and protected[p_index][0] <= pos < protected[p_index][1]:
                continue
        if next_word < start:
            if raw_word < start:
                raw_word = _next_word(text, start)
            if plain or (raw_word - start <= 64 and text[start:raw_word].isascii()):
                next_word = raw_word  # the usual gap: a space, a quote
            else:
                next_word = _next_nfkc_word(text, start, raw_word)
        wordless = next_word > end  # no word in text[start:end], none glued after it
        group = m.group()
        if group == "." and not wordless and not _period_ends_claim(text, pos):
            continue
        if group[0] in ".!?":
            if end < n and text[end] in _CLOSER_CHARS:  # the regex only when one follows
                end = _CLOSERS.match(text, end).end()  # type: ignore[union-attr]
            if has_markers:
                markers = _TRAILING_MARKERS.match(text, end)
                if markers:
                    end = markers.end()
        if not wordless or next_word < end:
            _add_piece(text, start, end, pieces)
        start = end
        if limit is not None and len(pieces) > limit:
            return pieces
    _add_piece(text, start, len(text), pieces)
    return pieces


def _next_word(text: str, start: int) -> int:
    m = WORD_RE.search(text, start)
    return m.start() if m else len(text)


def _next_nfkc_word(text: str, start: int, end: int) -> int:
    """Where a word starts in ``text[start:end]`` once NFKC-normalized, else ``end``.

    ``end`` is the next raw word (:func:`_next_word`). Before it only a symbol whose NFKC form
    holds a word can start one ("⒜" is "(a)", "™" is "TM"; design: "Words"). Parts growing 4x
    from ``start`` are normalized, then the part with a word is halved down to its first: each
    character is normalized about three times, and the calls of one split scan disjoint gaps, so
    a split stays linear.
    """
    lo, size = start, 64
    while lo < end:
        hi = min(lo + size, end)
        part = text[lo:hi]
        if not part.isascii() and WORD_RE.search(normalize(part)):
            while hi - lo > 1:  # the first hit is in [lo, hi): halve, normalizing the left half
                mid = (lo + hi) // 2
                if WORD_RE.search(normalize(text[lo:mid])):
                    hi = mid
                else:
                    lo = mid
            return lo
        lo, size = hi, size * 4
    return end


def _add_piece(text: str, start: int, end: int, pieces: list[Piece]) -> None:
    if start >= end:
        return
    chunk = text[start:end]
    if WORD_RE.search(chunk) is None and (  # a word once NFKC-normalized (raw first)
        chunk.isascii() or WORD_RE.search(normalize(chunk)) is None
    ):
        return
    left = len(chunk) - len(chunk.lstrip())
    right = len(chunk.rstrip())
    pieces.append(Piece(start + left, start + right, chunk[left:right]))
