"""PDF furniture: what is printed on a page but is not its text.

Review-copy line numbers (a stack of bare sequential numbers in a margin), running headers and
footers (the same text, digits aside, at the same height on many pages), page numbers, and
words drawn twice (a fake bold).
"""

from __future__ import annotations

import bisect
import math
import re
import statistics
from collections import Counter, defaultdict
from itertools import pairwise

from citeverify_core.references.document.pdf_lines import Row, baseline, row_size
from citeverify_core.references.document.pdf_words import Page, Word
from citeverify_core.references.document.segment import running_text

__all__ = ["dedupe", "drop_line_numbers", "drop_numbers_at", "drop_running_text"]

_PAGE_NUMBER = re.compile(
    r"^(?:page|p\.|seite|pág\.?|página|pagina)?\s*[-–—(]?\s*(?:\d{1,4}|[ivxlcdm]{1,7})\s*[-–—)]?"
    r"(?:\s*(?:of|/|de|von|sur|di)\s*\d{1,4})?$",
    re.IGNORECASE,
)
# Digits (and the space around them) of a running head: its page number, where a recto's head
# prints it and a verso's does not ("Collapsed Cores 5" and "Collapsed Cores" are one head).
_DIGITS = re.compile(r"\s*\d+\s*")


def _bare_number(text: str) -> bool:
    """Whether ``text`` is a bare line number: one to four ASCII digits.

    Not ``str.isdigit``: superscripts ("³"), circled and other digit-like characters pass it
    and ``int`` raises on them; Arabic-Indic or fullwidth digits are not a review copy's line
    numbers either (and a stack of them is left as text, never dropped by guess).
    """
    return 0 < len(text) <= 4 and text.isascii() and text.isdecimal()


def dedupe(words: list[Word]) -> list[Word]:
    """Without the second copy of a word drawn twice (a fake bold, a shadow)."""
    seen: set[tuple[str, int, int]] = set()
    kept: list[Word] = []
    for word in words:
        key = (word.text, round(word.x0), round(word.y))
        if key in seen:
            continue
        seen.add(key)
        kept.append(word)
    return kept


def drop_line_numbers(
    words: list[Word], margins: set[tuple[str, int, float]]
) -> tuple[list[Word], int]:
    """Without the line numbers of a review copy, and how many were removed.

    Line numbers are bare numbers (no bracket, no dot) stacked in a margin: aligned on one edge,
    growing downwards, at least 5 on the page, left or right of all the other text of their
    rows, and either smaller than the text or counting every row (a numbered reference list's
    bare labels count references, not rows, and have the text's size).
    """
    numbers = [w for w in words if _bare_number(w.text)]
    if len(numbers) < 5:
        return words, 0
    body = [w for w in words if not _bare_number(w.text)]
    body_size = statistics.median(w.size for w in body) if body else 0.0
    stacks: dict[tuple[str, int], list[Word]] = defaultdict(list)
    for word in numbers:
        stacks["right", round(word.x1 / 2)].append(word)
        stacks["left", round(word.x0 / 2)].append(word)
    drop: set[int] = set()
    for stack in stacks.values():
        if len(stack) < 5:
            continue
        stack.sort(key=lambda w: -w.y)
        values = [int(w.text) for w in stack]
        steps = [b - a for a, b in pairwise(values)]
        if sum(s > 0 for s in steps) < 0.9 * len(steps):
            continue
        in_margin = all(_outside_text(w, body) for w in stack)
        if not in_margin:
            continue
        # Smaller than the text of the numbers' own rows: a reference list set in a smaller
        # font than the page's body has labels smaller than the body, not than their rows.
        row_size = _rows_size(stack, body) or body_size
        smaller = row_size and statistics.median(w.size for w in stack) < 0.9 * row_size
        gaps = [a.y - b.y for a, b in pairwise(stack)]
        pitch = min(gaps) if gaps else 0.0
        per_row = pitch > 0 and all(
            abs(g / pitch - s) < 0.35 for g, s in zip(gaps, steps, strict=False)
        )
        if smaller or (per_row and len(stack) >= 10):
            drop.update(id(w) for w in stack)
            edge = (
                "right"
                if len({round(w.x1) for w in stack}) <= len({round(w.x0) for w in stack})
                else "left"
            )
            at = statistics.median(w.x1 if edge == "right" else w.x0 for w in stack)
            margins.add((edge, round(at), round(statistics.median(w.size for w in stack), 1)))
    if not drop:
        return words, 0
    return [w for w in words if id(w) not in drop], len(drop)


def _rows_size(stack: list[Word], body: list[Word]) -> float:
    """The median size of the words on the rows of ``stack`` (0.0 when there are none)."""
    ys = sorted(w.y for w in stack)
    sizes = [
        w.size
        for w in body
        if (k := bisect.bisect_left(ys, w.y - 0.5 * w.size)) < len(ys)
        and ys[k] <= w.y + 0.5 * w.size
    ]
    return statistics.median(sizes) if sizes else 0.0


def drop_numbers_at(words: list[Word], margins: set[tuple[str, int, float]]) -> list[Word]:
    """Without the bare numbers standing where line numbers stand on other pages."""
    body = [w for w in words if not _bare_number(w.text)]

    def line_number(word: Word) -> bool:
        if not _bare_number(word.text):
            return False
        for edge, at, size in margins:
            x = word.x1 if edge == "right" else word.x0
            if abs(x - at) <= 2 and abs(word.size - size) <= 0.5:
                return _outside_text(word, body)
        return False

    return [w for w in words if not line_number(w)]


def _outside_text(number: Word, body: list[Word]) -> bool:
    """Whether no text of the number's row starts within 3 points after it or ends just before.

    A margin's number is apart from its row's text; a label is the text's first word and sits
    a space before it ("12 Smith, J."): such a number is not a line number.
    """
    for word in body:
        if abs(word.y - number.y) > 0.5 * max(word.size, number.size):
            continue
        if number.x1 <= word.x0 < number.x1 + 0.6 * word.size:
            return False
        if number.x0 - 0.6 * word.size < word.x1 <= number.x0:
            return False
    return True


def _edge_fragments(row: Row) -> list[Row]:
    """A row cut where words are more than two font sizes apart (header left, page right)."""
    fragments: list[Row] = [[row[0]]]
    for word in row[1:]:
        last = fragments[-1][-1]
        if word.x0 - last.x1 > 2 * max(word.size, last.size):
            fragments.append([word])
        else:
            fragments[-1].append(word)
    return fragments


def _apart(rows: list[Row], r: int) -> bool:
    """Whether row ``r`` (of the top or bottom three) is set off from the page's text by space.

    Running text is: a space wider than 1.5 font sizes separates it (or the block of edge rows
    it belongs to) from the body; the body's own first or last lines are not. The only row of
    a page (the running head over a page of figures) has no text to be apart from: it is
    running text when it repeats.
    """
    if len(rows) == 1:
        return True
    ys = [baseline(row) for row in rows]
    if r < 3:
        pairs = range(r, min(3, len(rows) - 1))
        return any(ys[k] - ys[k + 1] > 1.5 * row_size(rows[k]) for k in pairs)
    pairs = range(max(len(rows) - 3, 1), r + 1)
    return any(ys[k - 1] - ys[k] > 1.5 * row_size(rows[k]) for k in pairs)


def drop_running_text(pages: list[Page], rows_by_page: list[list[Row]]) -> int:
    """Remove running headers, footers and page numbers from the rows; how many were removed.

    Candidates are the fragments of the top three and bottom three rows of a page. A fragment
    is running text when the same text (digits aside, case aside) stands at the same height
    (within 4 points) on many pages: at least 2 pages of a short document, otherwise at least
    3 and a fifth of the pages; and it is apart from the text (more than 1.5 font sizes of
    space between it, or the block it opens or closes, and the text). A page number is a
    fragment that is only a number ("12", "Page 3 of 9", "- iv -"), alone on its page's first
    or last row, apart from the text.
    """
    keyed: dict[tuple[str, str], list[tuple[int, float, int, int, str]]] = defaultdict(list)
    for p, rows in enumerate(rows_by_page):
        for r in (*range(min(3, len(rows))), *range(max(3, len(rows) - 3), len(rows))):
            if not _apart(rows, r):
                continue
            for f, fragment in enumerate(_edge_fragments(rows[r])):
                text = " ".join(w.text for w in fragment)
                key = _DIGITS.sub(" ", re.sub(r"\s+", " ", text.lower())).strip()
                side = "top" if r < 3 else "bottom"
                keyed[side, key].append((p, fragment[0].y, r, f, text))
    need = 2 if len(pages) <= 4 else max(3, math.ceil(len(pages) / 5))
    drop: dict[int, set[int]] = defaultdict(set)
    for places in keyed.values():
        heights = Counter(round(pl[1] / 4) for pl in places)
        for height, _ in heights.most_common(2):
            near = [(pl[0], pl[4], pl) for pl in places if abs(round(pl[1] / 4) - height) <= 1]
            for p, _, r, f, _ in running_text(near, need):
                for word in _edge_fragments(rows_by_page[p][r])[f]:
                    drop[p].add(id(word))
    for p, rows in enumerate(rows_by_page):
        for r in (0, len(rows) - 1) if rows else ():
            row = rows[r]
            text = " ".join(w.text for w in row)
            if not _PAGE_NUMBER.match(text):
                continue
            # The row below a top row, above a bottom one; none on a page of one row.
            neighbour = (rows[1] if r == 0 else rows[r - 1]) if len(rows) > 1 else None
            size = row_size(row)
            if neighbour is None or abs(baseline(neighbour) - baseline(row)) > 1.6 * max(
                size, row_size(neighbour)
            ):
                drop[p].update(id(w) for w in row)
    removed = 0
    for p, ids in drop.items():
        kept_rows = []
        for row in rows_by_page[p]:
            kept = [w for w in row if id(w) not in ids]
            if len(kept) < len(row):
                removed += 1
            if kept:
                kept_rows.append(kept)
        rows_by_page[p] = kept_rows
    return removed
