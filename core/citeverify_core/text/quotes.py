"""Quotations in an answer, and the normalization in which they are matched against documents.

Quote matching compares NFKC-casefolded text with quote and dash variants unified and every
whitespace run collapsed; :func:`normalize_with_offsets` maps a match back to the source.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from citeverify_core.text.tokens import WORD_RE, normalize

__all__ = [
    "ASCII_SPACES",
    "QuoteSpan",
    "ascii_match_normalize",
    "find_quotes",
    "match_normalize",
    "normalize_with_offsets",
    "trim_outer_punctuation",
]

# --- quotes ------------------------------------------------------------------------------------

#: Quoted text: straight or curly double quotes, German low-high quotes, and guillemets.
_QUOTE = re.compile(
    r'"(?P<a>[^"]{1,2000})"|“(?P<b>[^“”]{1,2000})”|„(?P<c>[^„“”]{1,2000})[“”]'
    r"|«(?P<d>[^«»]{1,2000})»|»(?P<e>[^«»]{1,2000})«"
)


@dataclass(frozen=True, slots=True)
class QuoteSpan:
    """A quotation in the answer: the span of the whole quote and of its inner text."""

    start: int
    end: int
    inner_start: int
    inner_end: int
    text: str


def find_quotes(text: str, *, limit: int | None = None) -> list[QuoteSpan]:
    """Find the quotations in ``text``; quotes without a word are skipped.

    With ``limit``, stop after that many quotations.
    """
    found: list[QuoteSpan] = []
    for m in _QUOTE.finditer(text):
        if limit is not None and len(found) >= limit:
            break
        group = m.lastgroup
        assert group is not None
        inner = m.group(group)
        if not WORD_RE.search(inner):
            continue
        found.append(QuoteSpan(m.start(), m.end(), m.start(group), m.end(group), inner))
    return found


_VARIANTS = str.maketrans(
    {
        "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "`": "'",
        "\u00b4": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
        "\u00ab": '"', "\u00bb": '"', "\u2039": "'", "\u203a": "'",
        "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-",
        "\u2212": "-", "\ufe58": "-", "\ufe63": "-", "\uff0d": "-",
    }
)  # fmt: skip
_SPACES = re.compile(r"\s+")


#: ASCII whitespace (what ``\s`` and ``str.isspace`` accept below 128) to a space.
ASCII_SPACES = str.maketrans(dict.fromkeys("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f", " "))


def match_normalize(text: str) -> str:
    """Normalize for quote matching: NFKC, casefold, quote and dash variants, whitespace.

    Every whitespace run becomes one space. Hot path for quotes against large documents: ASCII
    text takes :func:`ascii_match_normalize` (one ``str.translate`` and a search for a run of
    spaces); other text collapses whitespace by ``split`` (2x faster than the regex).
    tests/engine/test_speed_equivalence.py checks both against the regex.
    """
    if text.isascii():
        return ascii_match_normalize(text)[0]
    return _collapse_spaces(normalize(text).translate(_VARIANTS))


#: On ASCII text, what :func:`match_normalize` does character by character: lower case (NFKC
#: casefold there), the backtick (the one ASCII quote variant) and whitespace to a space.
_ASCII_MATCH = str.maketrans(
    {
        **{chr(c): chr(c + 32) for c in range(ord("A"), ord("Z") + 1)},
        "`": "'",
        **dict.fromkeys("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f", " "),
    }
)


def ascii_match_normalize(text: str) -> tuple[str, bool]:
    """:func:`match_normalize` of ASCII ``text``, and whether a whitespace run was collapsed.

    One ``str.translate`` (C speed, the ASCII fast path) and one search for two spaces; the runs
    are collapsed only when there is one. When none was, normalized offsets are the text's own.
    """
    spaced = text.translate(_ASCII_MATCH)
    if "  " not in spaced:
        return spaced, False
    while "  " in spaced:  # a run of n spaces needs log2(n) rounds
        spaced = spaced.replace("  ", " ")
    return spaced, True


def _collapse_spaces(text: str) -> str:
    r"""``_SPACES.sub(" ", text)``: ``str.split`` splits where ``\s`` matches."""
    parts = text.split()
    if not parts:
        return " " if text else ""
    lead = " " if text[0].isspace() else ""
    trail = " " if text[-1].isspace() else ""
    return lead + " ".join(parts) + trail


def trim_outer_punctuation(text: str) -> str:
    """Strip whitespace and punctuation (Unicode category P*) from both ends."""
    start, end = 0, len(text)
    while start < end and (text[start].isspace() or unicodedata.category(text[start])[0] == "P"):
        start += 1
    while end > start and (
        text[end - 1].isspace() or unicodedata.category(text[end - 1])[0] == "P"
    ):
        end -= 1
    return text[start:end]


def normalize_with_offsets(text: str) -> tuple[str, list[int]]:
    """``match_normalize`` that also returns, for each output character, its source offset.

    Works on combining sequences (a base character and its combining marks) so that NFKC
    composition inside a sequence maps to the sequence's start. Slow (a Python loop): use it only
    on the window of a document where a match was found.
    """
    out: list[str] = []
    starts: list[int] = []
    i = 0
    n = len(text)
    prev_space = False
    while i < n:
        j = i + 1
        while j < n and unicodedata.combining(text[j]):
            j += 1
        for ch in normalize(text[i:j]).translate(_VARIANTS):
            if ch.isspace():
                if prev_space:
                    continue
                ch = " "  # noqa: PLW2901
                prev_space = True
            else:
                prev_space = False
            out.append(ch)
            starts.append(i)
        i = j
    return "".join(out), starts
