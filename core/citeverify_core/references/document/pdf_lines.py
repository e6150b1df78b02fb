"""PDF lines: a row's words made one line of text, and the marks a line gets from its look.

A line's text has spaces where its words are apart and accents drawn as glyphs of their own
placed on their letter (:func:`make_line`), with the spans of its raised words (superscripts)
and whether a glyph of it could not be read; paragraph starts and headings come from vertical
space and size relative to the document's body text (:func:`body_size`,
:func:`mark_paragraphs_and_headings`).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from itertools import pairwise

from citeverify_core.references.document.pdf_glyphs import LOST
from citeverify_core.references.document.pdf_words import ACCENTS, DOTLESS, Page, Word
from citeverify_core.references.document.segment_lines import body_text_size

__all__ = [
    "Line",
    "Row",
    "baseline",
    "body_size",
    "make_line",
    "mark_paragraphs_and_headings",
    "row_size",
]

# Markers around a raised word's text while the line is cleaned (private use: a word's own
# private-use characters of these two are dropped first), so that spans survive the cleaning.
_RAISE, _LOWER = "\ue000", "\ue001"


class Line:
    """A line as laid out: text, page, number on the page, left edge, size, flags, baseline.

    ``raised`` holds the character spans of raised, smaller words (superscripts), ``footnote``
    says the line is in its page's footnote area, ``unreliable`` that a glyph was not read, and
    ``x1`` is the right edge of its last word.
    """

    __slots__ = (
        "footnote",
        "heading",
        "number",
        "page",
        "raised",
        "size",
        "starts",
        "text",
        "unreliable",
        "x0",
        "x1",
        "y",
    )

    def __init__(self, text: str, page: int, x0: float, size: float, y: float) -> None:
        self.text, self.page, self.x0, self.size, self.y = text, page, x0, size, y
        self.x1 = x0
        self.number = 0
        self.heading = False
        self.starts = False
        self.footnote = False
        self.unreliable = False
        self.raised: list[tuple[int, int]] = []


Row = list[Word]


def baseline(row: Row) -> float:
    """The row's baseline: that of its most characters."""
    return max(row, key=lambda w: len(w.text)).y


def row_size(row: Iterable[Word]) -> float:
    """The font size of most of the row's characters."""
    sizes: Counter[float] = Counter()
    for word in row:
        sizes[round(word.size, 1)] += len(word.text)
    return sizes.most_common(1)[0][0] if sizes else 0.0


_OPENING = frozenset("“‘„‚«‹")


def make_line(page: Page, words: Row) -> Line:
    """One line from its words (left to right): spaces where words are apart, accents placed.

    A word whose baseline is above the row's by more than a fifth of the row's size and whose
    size is smaller than the row's is *raised* (a note call, a superscript citation, a power).
    Its text stays where and as the glyphs put it: no space is added before it, so
    "results³⁴" reads "results34" with the span of "34" in ``raised``. A space there would
    make the power "10⁵" read "10 5" and a note call a word of its own that the text does not
    have; a reader that needs the word without its note call cuts at the span.
    """
    words = _place_accents(words)
    size = row_size(words)
    base = baseline(words)
    logo = _tex_logo_letters(words, size, base)
    pitches = _pitches(words)
    tracked = _tracked(words, size)
    parts: list[str] = []
    previous: Word | None = None
    any_raised = False
    for k, word in enumerate(words):
        if previous is not None:
            gap = word.x0 - previous.x1
            consecutive = word.seq == previous.seq + 1 and word.space
            stretched = (
                pitches[k]
                and pitches[k - 1]
                and gap < 0.75 * pitches[k]
                and word.text[:1] not in "[("  # "1008.2849v1 [cs.DS]": a space before a bracket
            )
            if (
                (
                    gap > 0.13 * max(word.size, previous.size)
                    or (consecutive and gap > -0.5 * word.size)
                )
                and not (stretched or k in tracked)
            ) or (
                # A thin space between nested quotation marks: "“ ‘Intention’ und ..."
                gap > 0.08 * word.size
                and previous.text[-1:] in _OPENING
                and word.text[:1] in _OPENING
            ):
                parts.append(" ")
        text = word.text
        if _RAISE in text or _LOWER in text:
            text = text.replace(_RAISE, "").replace(_LOWER, "")
        if k in logo:
            parts.append(text.lower())  # the logo's raised "A" / lowered "E": no superscript
        elif word.y - base > 0.2 * size and word.size < 0.9 * size and text.strip(LOST):
            parts.append(_RAISE + text + _LOWER)
            any_raised = True
        else:
            parts.append(text)
        previous = word
    text = _clean("".join(parts))
    raised: list[tuple[int, int]] = []
    if any_raised:
        text, raised = _spans(text)
    unreliable = LOST in text
    if unreliable:
        text, raised = _drop_lost(text, raised)
    line = Line(text, page.number, words[0].x0, size, base)
    line.x1 = words[-1].x1
    line.raised, line.unreliable = raised, unreliable
    return line


def _tex_logo_letters(words: Row, size: float, base: float) -> set[int]:
    """The indices of the letters of TeX's logos that a reader writes in lower case.

    TeX's logo is "T", an "E" lowered by half an ex and kerned into both neighbours, "X";
    LaTeX's puts before it an "L" and a smaller "A" raised and kerned into the "L" and the
    "T". The text layer reads them "TEX" and "LATEX"; a reader writes "TeX", "LaTeX",
    "LuaTeX". Only that geometry makes the logo: the letters touch or overlap their
    neighbours and sit off the baseline, so "TEX" typed in capitals stays as it is.
    """
    found: set[int] = set()
    if size <= 0:
        return found
    touch = 0.05 * size
    for k in range(1, len(words) - 1):
        prev, word, nxt = words[k - 1], words[k], words[k + 1]
        if word.x0 > prev.x1 + touch or nxt.x0 > word.x1 + touch:
            continue
        if (
            word.text == "E"
            and base - word.y > 0.1 * size
            and prev.text.endswith("T")
            and nxt.text.startswith("X")
            and abs(prev.y - base) < 0.05 * size
            and abs(nxt.y - base) < 0.05 * size
        ) or (
            word.text == "A"
            and word.y - base > 0.1 * size
            and word.size < 0.9 * size
            and prev.text.endswith("L")
            and nxt.text.startswith("T")
            and k + 2 < len(words)
            and words[k + 2].text == "E"
        ):
            found.add(k)
    return found


def _tracked(words: Row, size: float) -> set[int]:
    r"""The indices of words that follow a letter of a letter-spaced word: no space before them.

    Letter-spaced text (small capitals tracked by microtype's ``\textls``, a heading set
    "B I B L I O G R A P H Y") puts every letter apart, by one same small space. A run of at
    least four one-letter words on one baseline in one size (not a formula's letters and
    indices) whose gaps are alike (within a quarter) and under 0.35 of a size is such text;
    inside it, a gap at least 1.6 times the smallest is a word space ("W O R K S C I T E D"
    -> "WORKS CITED"). The run's neighbours, when the line has any, must stand a word space
    off (1.6 times the tracking) and a lone run of gaps over a fifth of a size stays spaced:
    letters typed with spaces ("A C G T" in running text) are words, and so is a letter
    repeated to show a space's width ("x x x x": three different letters at least).
    """
    out: set[int] = set()
    if size <= 0:
        return out
    k = 0
    n = len(words)
    while k < n:
        if not (len(words[k].text) == 1 and words[k].text.isalpha()):
            k += 1
            continue
        j = k
        while j + 1 < n and len(words[j + 1].text) == 1 and words[j + 1].text.isalpha():
            j += 1
        if j - k + 1 >= 4:
            gaps = [words[i + 1].x0 - words[i].x1 for i in range(k, j)]
            track = min(gaps)
            inner = [g for g in gaps if g < 1.6 * max(track, 0.01 * size)]
            uniform = max(inner) <= 1.25 * max(track, 0.01 * size) + 0.02 * size
            before = words[k].x0 - words[k - 1].x1 if k > 0 else None
            after = words[j + 1].x0 - words[j].x1 if j + 1 < n else None
            apart = all(g is None or g >= 1.6 * max(inner) for g in (before, after))
            lone = before is None and after is None
            run = words[k : j + 1]
            level = all(
                abs(w.y - run[0].y) < 0.05 * size and abs(w.size - run[0].size) < 0.05 * size
                for w in run
            )
            if (
                track >= 0
                and level
                and len({w.text.lower() for w in run}) >= 3
                and uniform
                and max(inner) <= 0.35 * size
                and apart
                and not (lone and max(inner) > 0.2 * size)
                and len(inner) >= 0.5 * len(gaps)
            ):
                out.update(i + 1 for i in range(k, j) if gaps[i - k] in inner)
        k = j + 1
    return out


#: Marks that a proportional font draws narrow and a typewriter font a whole character wide.
_NARROW = frozenset("./:;,!|'")


def _pitches(words: Row) -> list[float]:
    r"""Each word's glyph pitch where it is set in a monospaced font as a run, else 0.

    A word is monospaced when all its glyphs have one width (its first's and last's, and its
    width that many times): a typewriter font. A URL set in one with stretchable breakpoints
    (biblatex's ``\url``) has its characters drawn apart by less than a character, where the
    font's own space is one whole character: such a gap is no space. One- or two-letter words
    can match any pitch by chance, and so do a proportional font's digits, dashes and some
    letters ("und", "1646" in Times): a word counts only in a run of such words of one pitch
    that holds a narrow punctuation mark (".", "/", ":"; a third of a letter in a proportional
    font, a whole character in a typewriter one) and three letters or digits.
    """
    pitch = [0.0] * len(words)
    # The room a word's glyphs are set apart by: a URL whose every character is a breakpoint
    # (biblatex's "biburllcpenalty") is drawn a little apart throughout ("http" 4 x 4.55 wide
    # glyphs over 19.7 points); None for a one-glyph word.
    track: list[float | None] = [None] * len(words)
    for k, w in enumerate(words):
        n = len(w.text)
        if not n or w.first_w <= 0 or abs(w.first_w - w.last_w) >= 0.01 * w.first_w:
            continue
        extra = (w.x1 - w.x0) - n * w.first_w
        if n == 1 and abs(extra) < 0.02 * w.first_w:
            pitch[k] = w.first_w
        elif n > 1 and -0.02 * w.first_w * n < extra < 0.4 * w.first_w * (n - 1):
            pitch[k] = w.first_w
            track[k] = max(0.0, extra / (n - 1))
    out = [0.0] * len(words)
    k = 0
    while k < len(words):
        if not pitch[k]:
            k += 1
            continue
        j = k
        while j + 1 < len(words) and abs(pitch[j + 1] - pitch[k]) < 0.01 * pitch[k]:
            j += 1
        text = "".join(words[i].text for i in range(k, j + 1))
        tracks = [t for t in track[k : j + 1] if t is not None]
        even = not tracks or max(tracks) - min(tracks) < 0.1 * pitch[k]
        if (
            j > k
            and even
            and any(c in _NARROW for c in text)
            and sum(c.isalnum() for c in text) >= 3
        ):
            step = max(tracks, default=0.0)
            for i in range(k, j + 1):
                out[i] = pitch[i] + step
        k = j + 1
    return out


def _spans(marked: str) -> tuple[str, list[tuple[int, int]]]:
    """The text without its raise markers, and the spans they enclosed (adjacent ones merged)."""
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    start = -1
    length = 0
    for ch in marked:
        if ch == _RAISE:
            start = length
        elif ch == _LOWER:
            if start >= 0 and length > start:
                if spans and spans[-1][1] == start:
                    spans[-1] = (spans[-1][0], length)  # "1" "," "2" drawn apart: one span
                else:
                    spans.append((start, length))
            start = -1
        else:
            out.append(ch)
            length += 1
    return "".join(out), spans


def _drop_lost(text: str, raised: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """The text without its unread glyphs, the raised spans moved with it."""
    kept: list[str] = []
    index: list[int] = []  # new offset of each old offset
    for ch in text:
        index.append(len(kept))
        if ch != LOST:
            kept.append(ch)
    index.append(len(kept))
    spans = [(index[a], index[b]) for a, b in raised if index[b] > index[a]]
    cleaned = "".join(kept)
    if "  " in cleaned or cleaned != cleaned.strip():
        # Only a glyph that was a word of its own leaves a double space: squeeze it, spans too.
        return _squeeze(cleaned, spans)
    return cleaned, spans


def _squeeze(text: str, raised: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """Spaces squeezed and the ends stripped, the raised spans moved with the text."""
    kept: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        index.append(len(kept))
        if ch == " " and (not kept or kept[-1] == " " or i == len(text) - 1):
            continue
        kept.append(ch)
    index.append(len(kept))
    while kept and kept[-1] == " ":
        kept.pop()
    n = len(kept)
    spans = [(min(index[a], n), min(index[b], n)) for a, b in raised]
    return "".join(kept), [(a, b) for a, b in spans if b > a]


def _place_accents(words: Row) -> Row:
    """Accents drawn as glyphs of their own, combined with the letter they stand over.

    TeX draws "ö" as a dieresis moved over an "o". When the accent is a word of its own, the
    letter under its middle gets it as a combining mark ("Scho¨lkopf" -> "Schölkopf"); one
    glued before a letter in a word is handled by :func:`_clean`.
    """
    accents = [
        w for w in words if len(w.text) == 1 and w.text in ACCENTS and w.x1 - w.x0 < 0.6 * w.size
    ]
    if not accents:
        return words
    placed: set[int] = set()
    for accent in accents:
        middle = (accent.x0 + accent.x1) / 2
        hosts = [
            w
            for w in words
            if w is not accent and id(w) not in placed and w.x0 - 0.5 <= middle <= w.x1 + 0.5
        ]
        if not hosts or not hosts[0].text:
            continue
        host = hosts[0]
        n = len(host.text)
        if middle <= host.x0 + host.first_w:
            at = 0
        elif middle >= host.x1 - host.last_w:
            at = n - 1
        else:
            at = min(n - 1, max(0, int((middle - host.x0) / max(host.x1 - host.x0, 1e-6) * n)))
        base = DOTLESS.get(host.text[at], host.text[at])
        host.text = host.text[:at] + base + ACCENTS[accent.text] + host.text[at + 1 :]
        placed.add(id(accent))
    return [w for w in words if id(w) not in placed]


def _clean(text: str) -> str:
    """NFC, soft hyphens made visible at the line end and dropped inside, spaces squeezed.

    (Accents glued before their letter are combined where the glyphs are drawn: see ``add``.)
    """
    text = text.strip()
    if text.endswith("\u00ad"):
        text = text[:-1] + "-"
    text = text.replace("\u00ad", "")
    text = re.sub(r"\s+", " ", text)
    return unicodedata.normalize("NFC", text)


def body_size(lines: list[Line]) -> float:
    """The size of the document's body text (:func:`.segment_lines.body_text_size`; 0: none)."""
    return body_text_size((line.size, line.text) for line in lines) or 0.0


def mark_paragraphs_and_headings(lines: list[Line], body: float) -> None:
    """``starts_paragraph`` from vertical space, ``heading`` from size (to ``body``) and shortness.

    The line spacing is estimated per document as the common ratio of baseline distance to
    font size (its lower fifth: most lines follow one at the normal spacing), and per run of
    lines of one column. A line starts a paragraph when the space above it is larger than
    that spacing by a fifth of a line or more; a line at the top of a column or page is not
    marked (what is above it is elsewhere).
    """
    ratios: list[float] = []
    for prev, line in pairwise(lines):
        step = prev.y - line.y
        size = max(prev.size, line.size)
        if prev.page == line.page and size > 0 and 0.8 * size < step < 3 * size:
            ratios.append(step / size)
    ratios.sort()
    ratio = ratios[len(ratios) // 5] if ratios else 1.2
    if lines:
        lines[0].starts = True
    for prev, line in pairwise(lines):
        step = prev.y - line.y
        size = max(prev.size, line.size)
        same_run = prev.page == line.page and step > 0.5 * size
        if same_run and step > ratio * size + max(1.0, 0.2 * size):
            line.starts = True
    for line in lines:
        if body and line.size >= 1.15 * body and len(line.text.split()) <= 15:
            line.heading = line.starts = True
