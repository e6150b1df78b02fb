"""PDF lines: a row's words made one line of text, and the marks a line gets from its look.

A line's text has spaces where its words are apart and accents drawn as glyphs of their own
placed on their letter (:func:`make_line`); paragraph starts and headings come from vertical
space and size (:func:`mark_paragraphs_and_headings`).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from itertools import pairwise

from citeverify_core.references.document.pdf_words import ACCENTS, DOTLESS, Page, Word

__all__ = ["Line", "Row", "baseline", "make_line", "mark_paragraphs_and_headings", "row_size"]


class Line:
    """A line as laid out: text, page, number on the page, left edge, size, flags, baseline."""

    __slots__ = ("heading", "number", "page", "size", "starts", "text", "x0", "y")

    def __init__(self, text: str, page: int, x0: float, size: float, y: float) -> None:
        self.text, self.page, self.x0, self.size, self.y = text, page, x0, size, y
        self.number = 0
        self.heading = False
        self.starts = False


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


def make_line(page: Page, words: Row) -> Line:
    """One line from its words (left to right): spaces where words are apart, accents placed."""
    words = _place_accents(words)
    parts: list[str] = []
    previous: Word | None = None
    for word in words:
        if previous is not None:
            gap = word.x0 - previous.x1
            consecutive = word.seq == previous.seq + 1 and word.space
            if gap > 0.13 * max(word.size, previous.size) or (
                consecutive and gap > -0.5 * word.size
            ):
                parts.append(" ")
        parts.append(word.text)
        previous = word
    text = _clean("".join(parts))
    size = row_size(words)
    return Line(text, page.number, words[0].x0, size, baseline(words))


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


def mark_paragraphs_and_headings(lines: list[Line]) -> None:
    """``starts_paragraph`` from vertical space, ``heading`` from size and shortness.

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
    sizes = sorted(ln.size for ln in lines if ln.text)
    body = sizes[len(sizes) // 2] if sizes else 0.0
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
