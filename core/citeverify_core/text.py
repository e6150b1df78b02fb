r"""Text primitives: word normalization, claim splitting, quote finding, offset mapping.

Everything here is a pure function of strings. Words follow the design's grounding semantics:
runs of Unicode letters and digits (``[^\\W_]+``) after NFKC normalization and casefolding.
"""

from __future__ import annotations

import functools
import itertools
import re
import string
import threading
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from citeverify_core.errors import PolicyError

__all__ = [
    "ASCII_NON_WORD",
    "MARKER_RE",
    "WORD_RE",
    "Piece",
    "QuoteSpan",
    "WordMatcher",
    "ascii_match_normalize",
    "find_quotes",
    "iter_text_chunks",
    "match_normalize",
    "normalize",
    "split_claims",
    "trim_outer_punctuation",
    "unique_words",
    "words",
]

#: A word: a run of Unicode letters and digits. Benchmark if changing (bench/bench_grounding.py).
WORD_RE = re.compile(r"[^\W_]+")


def normalize(text: str) -> str:
    """NFKC-normalize and casefold ``text`` (the form in which words are compared)."""
    return unicodedata.normalize("NFKC", text).casefold()


# ASCII fast path: on ASCII text NFKC is the identity, casefold is lower(), and ``[^\W_]`` is
# ``[A-Za-z0-9]``; so mapping every other ASCII character to a space and splitting gives exactly
# the regex's words, about 2.5x faster (tests/engine/test_properties.py checks the equivalence).
ASCII_NON_WORD = str.maketrans({chr(i): " " for i in range(128) if not chr(i).isalnum()})


def words(text: str) -> list[str]:
    """The normalized words of ``text``, in order, with repetitions.

    Hot path: benchmark if changing (bench/bench_grounding.py).
    """
    if text.isascii():
        return text.lower().translate(ASCII_NON_WORD).split()
    return WORD_RE.findall(normalize(text))


def unique_words(text: str) -> list[str]:
    """The normalized words of ``text``, each once, in order of first appearance."""
    return list(dict.fromkeys(words(text)))


#: Size of the pieces in which long documents are tokenized, so that the transient list of
#: words stays bounded whatever the document size (memory follows the unique words).
CHUNK_CHARS = 1 << 18

_CHUNK_BOUNDARY = re.compile(r"\S\s")


def iter_text_chunks(text: str, size: int = CHUNK_CHARS) -> Iterator[tuple[int, str]]:
    """Split ``text`` into ``(offset, chunk)`` pieces of about ``size`` characters.

    A piece ends just before a whitespace character that follows a non-whitespace one, so no
    word, no run of whitespace and no combining sequence is cut: normalizing or tokenizing the
    pieces one by one gives the same result as doing it on the whole text.
    """
    start = 0
    n = len(text)
    while n - start > size:
        m = _CHUNK_BOUNDARY.search(text, start + size)
        if m is None:
            break
        end = m.start() + 1
        yield start, text[start:end]
        start = end
    yield start, text[start:]


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
        # Legal citations (issue 3: legal users): "Smith v. Jones", "F. Supp.", "9th Cir.",
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
# ``[\w.+-]+@`` was quadratic (issue 9: 100,000 letters and one "@" took 38 s).
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
    claim; issue 14).
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
    has_markers = "[" in text or "【" in text  # once: a scan per claim is quadratic (issue 9)
    pieces: list[Piece] = []
    start = 0
    p_index = 0
    # Where the next word starts: a terminator with no word since the last cut makes a piece
    # without words, which is dropped, so its period needs no decision and the piece no checks
    # (". " or "\r\n" a million times would otherwise cost seconds; issue 9).
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
    a split stays linear (issue 9).
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


# --- matching options (issue 16) ----------------------------------------------------------------

#: Languages that ``extensions.language`` accepts: the Snowball stemmers (PyStemmer's names).
STEM_LANGUAGES = (
    "arabic", "armenian", "basque", "catalan", "danish", "dutch", "english", "finnish", "french",
    "german", "greek", "hindi", "hungarian", "indonesian", "irish", "italian", "lithuanian",
    "nepali", "norwegian", "portuguese", "romanian", "russian", "serbian", "spanish", "swedish",
    "tamil", "turkish", "yiddish",
)  # fmt: skip


def _word_list(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Function words that ``stopwords: ignore`` takes out of a claim, per language: articles,
#: personal pronouns of the third person, auxiliaries, plain prepositions, conjunctions,
#: demonstratives and question words. Chosen from the Snowball project's stop word lists
#: (https://snowballstem.org/algorithms/<language>/stop.txt, BSD-3-Clause), kept small on
#: purpose. Never in them: negations ("not", "no", "nor", "never", "n't" pieces), quantifiers
#: ("all", "most", "only"), modal verbs, and first- and second-person pronouns, which say who
#: speaks rather than what the source says (on BEGIN's dev subsets, stems and these stop words
#: reach a balanced accuracy of 0.888 with tuned thresholds; ignoring those pronouns too, 0.866).
STOPWORDS: dict[str, frozenset[str]] = {
    "english": _word_list(
        """
        he him his himself she her hers herself it its itself they them their theirs themselves
        what which who whom whose this that these those
        am is are was were be been being have has had having do does did doing
        a an the and but if or because as until while than so then
        of at by for with about into through during to from in on
        here there when where why how s d ll re ve
        """
    ),
    "german": _word_list(
        """
        der die das den dem des ein eine einen einem einer eines er sie es ihn ihm ihr ihre
        ihren ihrem ihrer sein seine seinen seinem seiner dieser diese dieses diesen diesem
        ist sind war waren sein gewesen hat haben hatte hatten wird werden wurde wurden
        und oder aber wenn weil als wie dass so dann
        von zu mit bei aus nach für auf an in im am vom zum zur um über durch
        was wer wo wann warum da hier dort
        """
    ),
    "french": _word_list(
        """
        le la les l un une des du de d au aux il elle ils elles lui leur leurs son sa ses se
        ce cet cette ces c qui que qu quoi dont où
        est sont était étaient être été a ont avait avaient avoir eu
        et ou mais si car comme donc puis
        à en dans par pour sur avec chez
        """
    ),
    "spanish": _word_list(
        """
        el la lo los las un una unos unas del al él ella ellos ellas le les su sus se
        este esta esto estos estas ese esa eso esos esas que quien quienes cual cuales donde
        es son era eran fue fueron ser sido ha han había habían haber está están estaba
        y e o u pero si porque como pues entonces
        de a en por para con sobre entre desde hasta
        """
    ),
}

# Numbers as one word each under ``numbers: value``: digit groups with inner separators.
_NUMBER_OR_WORD = re.compile(r"\d+(?:[.,]\d+)+(?![^\W_])|[^\W_]+")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_DECIMAL = re.compile(r"\d+\.\d+")
_NUMBER_KEY = re.compile(r"\d+(?:\.\d+)?")


def number_value(token: str) -> str | None:
    """The canonical form of a written number, or None when its separators are ambiguous.

    ``4,000`` -> ``4000``, ``4.50`` -> ``4.5``, ``12.0`` -> ``12``; ``4,5`` and ``1.2.3`` -> None.
    """
    if _THOUSANDS.fullmatch(token):
        token = token.replace(",", "")
    if "," in token:
        return None
    if "." in token:
        if not _DECIMAL.fullmatch(token):
            return None
        token = token.rstrip("0").rstrip(".")
    return token


_DIGIT_SEPARATOR = re.compile(r"\d[.,]\d")

# Numbers written in words (English), read under ``numbers: value`` (issue 16: "4,000" = "4000" =
# "four thousand").
_UNITS = {
    w: i
    for i, w in enumerate(
        (
            "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
            "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
            "seventeen", "eighteen", "nineteen",
        )
    )
}  # fmt: skip
_TENS = {
    w: 10 * i
    for i, w in enumerate(
        ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"), 2
    )
}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
#: The words of a number written in words.
NUMBER_WORDS = frozenset(_UNITS) | frozenset(_TENS) | frozenset(_SCALES) | {"hundred"}


def spelled_value(tokens: list[str]) -> str | None:
    """The value of a number written in words (``["four", "thousand"]`` -> ``"4000"``).

    None when the words are not one number ("one two", "thousand million"), and for a single
    word below ten ("one", "two": more often words than figures: "one of them").
    """
    total = current = 0
    last = ""
    scale = 0
    count = 0
    for t in tokens:
        if t == "and":
            continue
        count += 1
        if t in _UNITS:
            v = _UNITS[t]
            if last in ("unit", "teen") or (last == "tens" and not 0 < v < 10):
                return None
            current += v
            last = "unit" if v < 10 else "teen"
        elif t in _TENS:
            if last in ("unit", "teen", "tens"):
                return None
            current += _TENS[t]
            last = "tens"
        elif t == "hundred":
            if last in ("tens", "hundred") or current >= 100:
                return None
            current = (current or 1) * 100
            last = "hundred"
        elif t in _SCALES:
            if last == "scale" or (scale and _SCALES[t] >= scale):
                return None
            scale = _SCALES[t]
            total += (current or 1) * scale
            current = 0
            last = "scale"
        else:
            return None
    value = total + current
    if count == 1 and value < 10:
        return None
    return str(value)


def _spelled_runs(tokens: list[str]) -> list[tuple[int, int, str | None]]:
    """The runs of number words in ``tokens``: (start, end, value or None), in order.

    A run is consecutive number words, or two joined by "and" ("one hundred and five"); words are
    tokens, so punctuation between them does not end a run. Only the positions of number words
    are visited (found at C speed): documents pay one pass over their tokens.
    """
    hits = list(itertools.compress(range(len(tokens)), map(NUMBER_WORDS.__contains__, tokens)))
    runs = []
    k = 0
    while k < len(hits):
        start = end = hits[k]
        k += 1
        while k < len(hits) and (
            hits[k] == end + 1 or (hits[k] == end + 2 and tokens[end + 1] == "and")
        ):
            end = hits[k]
            k += 1
        runs.append((start, end + 1, _spelled_value(tuple(tokens[start : end + 1]))))
    return runs


@functools.lru_cache(maxsize=4096)
def _spelled_value(tokens: tuple[str, ...]) -> str | None:
    # Documents repeat their numbers ("one", "two thousand"): each is read once.
    return spelled_value(list(tokens))


def _spelled_numbers(tokens: list[str], *, keep_words: bool) -> list[str]:
    """``tokens`` with each run of number words read as its value (kept too with keep_words)."""
    out: list[str] = []
    last = 0
    for start, end, value in _spelled_runs(tokens):
        if value is None:
            continue
        out += tokens[last:end] if keep_words else tokens[last:start]
        out.append(value)
        last = end
    out += tokens[last:]
    return out


def value_words(text: str, *, keep_words: bool = False) -> list[str]:
    """Like :func:`words`, but each written number is one word, by value (``numbers: value``).

    ``4,000`` and ``4000`` give ``4000``; ``4.5`` gives ``4.5``, not ``4`` and ``5``. A number
    with ambiguous separators (``4,5``) gives its parts, as :func:`words` does. Numbers written in
    words are read too ("four thousand" gives ``4000``, "twelve" ``12``; see
    :func:`spelled_value`); with ``keep_words`` (documents) their words stay beside the value.
    """
    if text.isascii() and not _DIGIT_SEPARATOR.search(text):
        out = words(text)  # no separated number: the same words
        if NUMBER_WORDS.isdisjoint(out):
            return out
        return _spelled_numbers(out, keep_words=keep_words)
    out = []
    for token in _NUMBER_OR_WORD.findall(normalize(text)):
        if token[0].isdigit() and ("," in token or "." in token):
            value = number_value(token)
            if value is None:
                out.extend(WORD_RE.findall(token))
            else:
                out.append(value)
        else:
            out.append(token)
    if NUMBER_WORDS.isdisjoint(out):
        return out
    return _spelled_numbers(out, keep_words=keep_words)


# A number with separators in ASCII text (whether it is a word of its own is checked after: a
# lookbehind here made the scan 4x slower).
_SEPARATED_NUMBER = re.compile(r"[0-9]+(?:[.,][0-9]+)+")


def value_word_set(text: str) -> set[str]:
    """``set(value_words(text, keep_words=True))``, faster on ASCII text (documents).

    Tests check the equality. The separated numbers are found first and blanked out; the rest
    takes the fast path of :func:`words`; numbers written in words add their values.
    """
    if not text.isascii():
        return set(value_words(text, keep_words=True))
    found: set[str] = set()
    parts: list[str] = []
    last = 0
    for m in _SEPARATED_NUMBER.finditer(text):
        start, end = m.span()
        if (start and text[start - 1].isalnum()) or (end < len(text) and text[end].isalnum()):
            continue  # inside a word ("v1.2", "3.5x"): words as usual
        value = number_value(m.group())
        if value is None:
            continue  # ambiguous ("4,5"): its parts, as usual
        found.add(value)
        parts.append(text[last:start])
        last = end
    if parts:
        parts.append(text[last:])
        text = " ".join(parts)
    tokens = words(text)
    found.update(tokens)
    if not NUMBER_WORDS.isdisjoint(found):
        found.update(value for _, _, value in _spelled_runs(tokens) if value is not None)
    return found


def is_number_key(word: str) -> bool:
    """Whether a compared word is a number (``1932``, ``4.5``)."""
    return word[:1].isdigit() and _NUMBER_KEY.fullmatch(word) is not None


class _Stems:
    """Memoized Snowball stems for one language (PyStemmer), shared by every matcher."""

    #: Words kept at most; past it the memo starts again (a corpus has a few 100,000 words).
    MAX_WORDS = 200_000

    def __init__(self, language: str) -> None:
        try:
            import Stemmer  # noqa: PLC0415 - optional: the `stem` extra
        except ImportError:  # pragma: no cover - the extra is installed in tests
            msg = (
                "extensions.words: stem needs PyStemmer: the stem extra (from a clone, "
                "python -m pip install '.[stem]')"
            )
            raise PolicyError(msg, path="extensions.words") from None
        try:
            self._stemmer = Stemmer.Stemmer(language)
        except KeyError:  # an older PyStemmer without this language
            msg = f"extensions.language: the installed PyStemmer has no {language!r} stemmer"
            raise PolicyError(msg, path="extensions.language") from None
        self._memo: dict[str, str] = {}
        self._lock = threading.Lock()  # a PyStemmer object is not thread-safe

    def map(self, words: list[str]) -> list[str]:
        """The stem of each word (hot path: one dict lookup a word once the memo holds it)."""
        try:
            return list(map(self._memo.__getitem__, words))
        except KeyError:
            pass
        memo = self._memo
        new = [w for w in dict.fromkeys(words) if w not in memo]
        with self._lock:
            stems = self._stemmer.stemWords(new)
        # Numbers are not stemmed ("1990s" stays).
        fresh = {w: w if w[:1].isdigit() else s for w, s in zip(new, stems, strict=True)}
        if len(memo) > self.MAX_WORDS:
            memo.clear()  # another thread may be reading: it falls back to _one
        memo.update(fresh)
        return [fresh.get(w) or memo.get(w) or self._one(w) for w in words]

    def _one(self, word: str) -> str:  # the memo was cleared by another thread meanwhile
        if word[:1].isdigit():
            return word
        with self._lock:
            return str(self._stemmer.stemWord(word))


_STEMS: dict[str, _Stems] = {}
_STEMS_LOCK = threading.Lock()


def _stems(language: str) -> _Stems:
    with _STEMS_LOCK:
        if language not in _STEMS:
            _STEMS[language] = _Stems(language)
        return _STEMS[language]


@dataclass(frozen=True, slots=True)
class WordMatcher:
    """How the words of a claim are compared with the context (``extensions``, issue 16).

    The seed's exact mode compares the normalized words themselves (``exact`` is then True and
    nothing here is used on the hot path). Options:

    - ``stem``: words are compared by their Snowball stem in ``language`` ("opens", "opened",
      "open" match); ``missing_words`` still shows the words as written;
    - ``stopwords``: the language's function words (:data:`STOPWORDS`) are taken out of each
      claim, so they count neither for nor against it; a claim made only of them keeps them;
    - ``numbers``: a written number is one word, compared by value (``4,000`` = ``4000``,
      ``4.5`` is not ``4``).
    """

    stem: bool = False
    stopwords: bool = False
    numbers: bool = False
    language: str = "english"

    @classmethod
    def of(cls, options: Any) -> WordMatcher:
        """The matcher of a policy's ``extensions``: ``Extensions`` or its plain twin.

        Reads ``words``, ``stopwords``, ``numbers`` and ``language``.
        """
        return cls(
            stem=options.words == "stem",
            stopwords=options.stopwords == "ignore",
            numbers=options.numbers == "value",
            language=options.language,
        )

    @property
    def exact(self) -> bool:
        """Whether words are compared as written (no stemming, stopwords or number forms)."""
        return not (self.stem or self.stopwords or self.numbers)

    def prepare(self) -> None:
        """Load the stemmer now (a missing PyStemmer is a PolicyError when the verifier is made)."""
        if self.stem:
            _stems(self.language)

    def tokens(self, text: str) -> list[str]:
        """The words of ``text`` as written (normalized), numbers by value when asked."""
        return value_words(text) if self.numbers else words(text)

    def keys(self, surface: list[str]) -> list[str]:
        """The compared form of each word."""
        return _stems(self.language).map(surface) if self.stem else surface

    def claim(self, text: str) -> tuple[list[str], dict[str, str] | None]:
        """A claim's compared words, each once, and for each the first word written so.

        The second item is None when the compared words are the words as written (no stems).
        """
        surface = list(dict.fromkeys(self.tokens(text)))
        if self.stopwords:
            stop = STOPWORDS.get(self.language, frozenset())
            kept = [w for w in surface if w not in stop]
            surface = kept or surface
        if not self.stem:
            return surface, None
        written: dict[str, str] = {}
        for key, word in zip(self.keys(surface), surface, strict=True):
            if key not in written:
                written[key] = word
        return list(written), written

    def document_keys(self, text: str) -> set[str]:
        """Every compared word of a document (one pass, in chunks)."""
        found: set[str] = set()
        for _, chunk in iter_text_chunks(text):
            found |= self.token_set(chunk)
        return set(self.keys(list(found))) if self.stem else found

    def token_set(self, text: str) -> set[str]:
        """``set(self.tokens(text))``, the fast way."""
        return value_word_set(text) if self.numbers else set(words(text))
