r"""PDF footnote areas: the notes below a page's (or a column's) body text.

A footnote area is the block of lines at the bottom of a column run that are set smaller than
the document's body text and stand below body text, set off from it by a short rule drawn
above their first line (TeX's ``\footnoterule``, Word's separator) or, without a rule, by
vertical space with a raised note number or a note symbol starting its first line ("³ Smith,
...", "* Thanks"). A running footer left under the notes (a line or two of any size)
does not hide them. A smaller block under a reference heading is a reference list, not notes.
Notes set in the body's own size are known by their rule only: a short rule at a column's
bottom with a note number ("1.", "12", raised) starting the line under it.

The lines are only marked (``DocumentLine.footnote``): they stay in the text, in place, and
the citation readers read notes from them.
"""

from __future__ import annotations

import re

from citeverify_core.references.document.pdf_lines import Line
from citeverify_core.references.document.pdf_words import Page

__all__ = ["mark_footnotes"]

#: A note's start by a symbol: "* Text", "† Text", "∗Version 2".
_NOTE_SYMBOL = re.compile(r"^[*∗†‡§¶]{1,3}\s*\S")
#: A note's plain number: "1. Text", "12 Text", or a symbol.
_NOTE_NUMBER = re.compile(r"^(?:\d{1,3}\.?\s+|[*∗†‡§¶]{1,3}\s*)\S")
#: A heading above a reference list set in a smaller size (not notes).
_LIST_HEADING = re.compile(
    r"^\W*(?:\d+(?:\.\d+)*\.?\s+)?(?:references?|bibliography|literature(?: cited)?|works cited"
    r"|sources|literatur(?:verzeichnis)?|références|bibliographie|bibliografía|referencias)\W*$",
    re.IGNORECASE,
)
#: Lines (of any size) left under the notes that do not hide them: a running footer.
_TRAILING = 2


def mark_footnotes(pages: list[Page], lines: list[Line], body: float) -> None:
    """Set ``footnote`` on the lines of every page's footnote areas (see the module)."""
    if body <= 0:
        return
    rules = {page.number: page.rules for page in pages}
    start = 0
    while start < len(lines):
        end = start + 1
        # A run: the lines of one column on one page, read downwards (a column break moves up).
        while (
            end < len(lines)
            and lines[end].page == lines[start].page
            and lines[end].y < lines[end - 1].y + 1
        ):
            end += 1
        _mark_run(lines[start:end], rules.get(lines[start].page, []), body)
        start = end


def _mark_run(run: list[Line], rules: list[tuple[float, float, float]], body: float) -> None:
    """Mark the footnote area at the bottom of one column run, if it has one."""
    small = 0.92 * body
    last = len(run)
    for _ in range(_TRAILING):
        if last and run[last - 1].size > small and len(run[last - 1].text.split()) <= 10:
            last -= 1
    first = last
    while first > 0 and run[first - 1].size <= small:
        first -= 1
    if first in (last, 0):
        # No smaller block, or nothing above it on this column: notes in the body's own size
        # (Turabian's manuals set them so) are known by their rule only.
        _mark_ruled_notes(run, _end_of_notes(run, body), rules, body)
        return
    # A short rule between two of the block's lines, or above it, starts the notes there
    # (smaller lines above the rule are the body's: a code sample, a table).
    right = max(ln.x1 for ln in run)
    for i in range(max(first, last - 80), last):  # a column's notes are fewer: linear
        if _rule_between(run[i - 1], run[i], run[i:last], rules, right, body):
            for line in run[i:last]:
                line.footnote = True
            return
    above, top = run[first - 1], run[first]
    if above.size < 0.95 * body or above.heading or _LIST_HEADING.match(above.text):
        return
    block = run[first:last]
    spaced = above.y - top.y > 1.5 * body
    # Without a rule, the first line must start with a raised note number or a note symbol: a
    # plain number also starts a code listing's or a numbered list's lines.
    numbered = bool(top.raised and top.raised[0][0] == 0) or _NOTE_SYMBOL.match(top.text)
    if spaced and numbered:
        for line in block:
            line.footnote = True


def _end_of_notes(run: list[Line], body: float) -> int:
    """Where the notes of a column end: before a line or two set well apart below them."""
    end = len(run)
    for _ in range(_TRAILING):
        if end >= 2 and run[end - 2].y - run[end - 1].y > 2.5 * body:
            end -= 1
    return end


def _mark_ruled_notes(
    run: list[Line], last: int, rules: list[tuple[float, float, float]], body: float
) -> None:
    """Mark the lines under a short rule that start with a note number, at a column's bottom.

    Only the lowest 80 lines are looked at (a column holds fewer; the bound keeps it linear).
    """
    if not rules:
        return
    right = max(ln.x1 for ln in run)
    for i in range(max(1, last - 80), last):
        top = run[i]
        numbered = bool(top.raised and top.raised[0][0] == 0) or _NOTE_NUMBER.match(top.text)
        if not numbered or _LIST_HEADING.match(run[i - 1].text):
            continue
        # Every line in the body's size (a box's own small note over body text and code is not
        # the page's notes).
        if any(abs(ln.size - body) > 0.05 * body for ln in run[i:last]):
            continue
        if _rule_between(run[i - 1], top, run[i:last], rules, right, body):
            for line in run[i:last]:
                line.footnote = True
            return


def _rule_between(
    above: Line,
    top: Line,
    block: list[Line],
    rules: list[tuple[float, float, float]],
    right: float,
    body: float,
) -> bool:
    """Whether a short rule lies between ``above`` and ``top``, at the block's left edge.

    A footnote rule is shorter than the column (TeX: two fifths of it): a table's full-width
    rules are not one.
    """
    if not rules:
        return False
    left = min(ln.x0 for ln in block)
    return any(
        top.y + 0.5 * top.size < y < above.y - 0.2 * above.size
        and abs(x0 - left) <= max(12.0, 1.5 * body)
        and x1 - x0 <= 0.7 * max(right - left, 1.0)
        for x0, x1, y in rules
    )
