"""PDF rows and columns: words into rows by baseline, a page's rows into lines in reading order.

Two columns are found per page from a vertical white gutter, the left column read before the
right one, full-width rows (a title, an abstract) kept in their place.
"""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

from citeverify_core.references.document.pdf_lines import (
    Line,
    Row,
    baseline,
    make_line,
    row_size,
)
from citeverify_core.references.document.pdf_words import Page, Word

__all__ = ["make_rows", "page_lines"]


def make_rows(words: list[Word]) -> list[Row]:
    """Words grouped by baseline, top to bottom, each row left to right.

    A word joins a row when its baseline is within 45% of the font size of the row's first
    word: a superscript or a label in another size stays on its line, the next line does not.
    When that first word is smaller (a raised note number, the first word from the top), a
    word that touches a word of the line's size in the row also joins within a quarter of the
    size of the row's largest word: a letter lowered below the line (the "E" of the TeX logo)
    stays in it; the lines of a column set at another baseline beside it, a gutter away, do
    not (the tolerance stays that of the first word).
    """
    rows: list[Row] = []
    row_y = row_size = big_y = big_size = 0.0
    for word in sorted(words, key=lambda w: -w.y):
        if rows and (
            abs(row_y - word.y) <= 0.45 * max(row_size, word.size)
            or (
                big_size > 1.1 * row_size
                and abs(big_y - word.y) <= 0.25 * big_size
                and _touches(word, rows[-1], big_size)
            )
            or _kerned_into(word, rows[-1])
        ):
            rows[-1].append(word)
            if word.size > big_size:
                big_y, big_size = word.y, word.size
        else:
            rows.append([word])
            row_y, row_size = word.y, word.size
            big_y, big_size = word.y, word.size
    for row in rows:
        row.sort(key=lambda w: w.x0)
    return rows


def _kerned_into(word: Word, row: Row) -> bool:
    """Whether ``word`` overlaps one of the row's last 64 words of its size, a little off its line.

    A little: within 30% of the size. The TeX logo's "E" is lowered and kerned into the "T"
    before it, LaTeX 2e's "ε" lowered right after the "2"; on a page of two columns whose
    baselines differ, the row is opened by the other column's line, and they are further from
    that line's baseline than a row's tolerance. The next line is a whole line lower.
    """
    reach = 0.05 * word.size
    return any(
        w.size >= 0.9 * word.size
        and abs(w.y - word.y) <= 0.3 * w.size
        and w.x0 - reach < word.x1
        and word.x0 < w.x1 + reach
        for w in row[-64:]
    )


def _touches(word: Word, row: Row, size: float) -> bool:
    """Whether ``word`` overlaps or touches one of the last 64 words of ``row`` of ``size``.

    The lowered letter comes after its line's words (it is lower): 64 are a long line's, and the
    bound keeps a page of adversarial words linear.
    """
    reach = 0.3 * size
    return any(
        w.size >= 0.9 * size and w.x0 - reach <= word.x1 and word.x0 <= w.x1 + reach
        for w in row[-64:]
    )


def _gutter(rows: list[Row]) -> tuple[float, float, float] | None:
    """The white strip between two columns (left x, right x, its middle), or ``None``.

    Words are merged into fragments where they are less than half a font size apart (words of
    a justified line, not two columns). The gutter is the x in the middle 40% of the text's
    width that the fewest rows cover, widened while as few rows cover it. Two columns need a
    strip at least 5 points wide that at most half the rows cross, and text right of it on at
    least two rows.
    """
    if len(rows) < 6:
        return None
    left = min(row[0].x0 for row in rows)
    right = max(max(w.x1 for w in row) for row in rows)
    width = right - left
    if width < 100:
        return None
    bins = int(width) + 1
    cover = [0] * (bins + 1)
    for row in rows:
        start, end = row[0].x0, row[0].x1
        for word in row[1:]:
            if word.x0 - end < 0.5 * word.size:
                end = max(end, word.x1)
                continue
            cover[int(start - left)] += 1
            cover[int(end - left) + 1] -= 1
            start, end = word.x0, word.x1
        cover[int(start - left)] += 1
        cover[int(end - left) + 1] -= 1
    running = 0
    for i in range(bins + 1):
        running += cover[i]
        cover[i] = running
    lo, hi = int(0.3 * width), int(0.7 * width)
    low = min(cover[lo:hi])
    if low > 0.5 * len(rows):
        return None
    best = min(range(lo, hi), key=lambda i: (cover[i], abs(i - width / 2)))
    limit = low + max(1, len(rows) // 20)
    g0 = g1 = best
    while g0 > 0 and cover[g0 - 1] <= limit:
        g0 -= 1
    while g1 < bins - 1 and cover[g1 + 1] <= limit:
        g1 += 1
    # Columns are set a gutter apart (LaTeX's \columnsep is 10 points for 10-point text): a
    # narrower strip is where a one-column page's lines happen to break (URLs at a line end).
    sizes = sorted(row_size(row) for row in rows)
    if g1 - g0 < max(5.0, 0.8 * sizes[len(sizes) // 2]):
        return None
    gl, gr = left + g0, left + g1 + 1
    # The middle of the strip's emptiest part: the widened strip may start left of where a few
    # overfull left lines end, and the middle of that would fall on them.
    c0 = c1 = best
    while c0 > g0 and cover[c0 - 1] == cover[best]:
        c0 -= 1
    while c1 < g1 and cover[c1 + 1] == cover[best]:
        c1 += 1
    middle = left + (c0 + c1 + 1) / 2
    # The right column starts at the leftmost x where several rows' right part starts: with
    # hanging indents the strip above also spans the indent (only first lines start left of
    # it); one over-long left line reaching into the strip does not count.
    # Full-width rows (a title, an abstract) say nothing of where a column starts.
    starts = Counter(
        round(next(w.x0 for w in row if w.x0 > gl + 1))
        for row in rows
        if any(w.x0 > gl + 1 for w in row) and not _spans(row, middle)
    )
    if not _aligned(starts):
        return None
    frequent = [x for x, n in starts.items() if n >= 2 and x < gr]
    if frequent:
        gr = max(min(frequent), gl + 5)
    both = sum(
        1
        for row in rows
        if any(w.x1 <= gl + 1 for w in row)
        and any(w.x0 >= gr - 1 for w in row)
        and not _spans(row, middle)
    )
    sides = sum(1 for row in rows if not _spans(row, middle) and any(w.x0 >= gr - 1 for w in row))
    # Text right of a clean strip on a few rows is a second column, even a short one (the
    # last lines of a reference list) or one whose baselines are not the left one's.
    if sides < 2 or sides + both < 3:
        return None
    return gl, gr, middle


def _aligned(starts: Counter[int]) -> bool:
    """Whether the text right of a white strip starts where a column does.

    A second column's lines start at its left edge (or at one indent from it): at least 60% of
    the rows with text right of the strip start within 2 points of its most common start, or
    of that and a second one that at least two rows share. A strip that the words of one
    justified column leave open by chance on a short page (the last lines of a reference list)
    has its right-hand words starting anywhere.
    """
    total = sum(starts.values())
    clusters = sorted((sum(n for x, n in starts.items() if abs(x - c) <= 2), c) for c in starts)[
        ::-1
    ]
    if not clusters or clusters[0][0] < 2:
        return False
    first, centre = clusters[0]
    second = next((n for n, c in clusters if abs(c - centre) > 4 and n >= 2), 0)
    return first + second >= 0.6 * total


def _split_at_gutter(row: Row, gl: float, gr: float, middle: float) -> int:
    """Where ``row`` (left to right) passes from the left column to the right one.

    At the widest space before a word that starts in the gutter, or before the first word that
    starts where the right column does (the last candidate): a left line that runs over into
    the gutter, even past the right column's start (an overfull justified line), stays left; a
    hanging reference's first line, which starts left of its column's other lines, goes right;
    a section number ("6" + a quad + "Conclusion") goes with its heading.
    """
    if row[0].x0 >= middle:
        return 0
    best, widest = len(row), -1.0
    for k in range(1, len(row)):
        word = row[k]
        if word.x0 <= gl:
            continue
        gap = word.x0 - row[k - 1].x1
        if gap > widest:
            best, widest = k, gap
        if word.x0 >= gr - 1:
            break
    return best


def _spans(row: Row, middle: float) -> bool:
    """Whether ``row`` runs across the gutter whose middle is ``middle`` (full width).

    It does when a word lies over the gutter's middle, or when the words either side of the
    middle are closer than half a font size (the spaces of one line, as :func:`_gutter` merges
    fragments), or are the space of one justified line: closer than a size, and no wider than
    the line's other spaces, stretched alike either side (a third wider at most: a sentence's
    period is followed by a wider one). A strip found by chance among a one-column list's
    lines can fall on such a space (a listing in columns above a justified reference list);
    columns are set further apart (1.6 sizes and more in the real two-column papers of
    ``bench/real_papers``), and two columns' lines are justified each to its own width. Not
    when a word merely reaches into the gutter: the widened strip can start left of where an
    overfull justified left line ends (fpdf2, LaTeX's overfull boxes).
    """
    before: Word | None = None
    after: Word | None = None
    for i, word in enumerate(row):
        if word.x0 <= middle <= word.x1:
            return True
        if word.x1 < middle:
            before = word
        elif after is None:
            after = word
            split = i
    if before is None or after is None:
        return False
    size = max(before.size, after.size)
    gap = after.x0 - before.x1
    if gap < 0.5 * size:
        return True
    if gap >= size:
        return False
    left, right = _spaces(row[:split], size), _spaces(row[split:], size)
    if left <= 0 or right <= 0:
        return False
    return abs(left - right) <= 0.2 * max(left, right) and gap <= 1.6 * max(left, right)


def _spaces(words: Row, size: float) -> float:
    """The median space between consecutive ``words`` that are apart (0 when none are)."""
    gaps = sorted(b.x0 - a.x1 for a, b in pairwise(words) if b.x0 - a.x1 > 0.13 * size)
    return gaps[len(gaps) // 2] if gaps else 0.0


def page_lines(page: Page, rows: list[Row]) -> list[Line]:
    """The page's lines in reading order: bands of full-width rows and of two columns."""
    gutter = _gutter(rows)
    if gutter is None:
        return [make_line(page, row) for row in rows]
    gl, gr, middle = gutter
    spanning = [_spans(row, middle) for row in rows]
    # A lone crossing row between column rows (an over-long URL running into the gutter) is a
    # column row: only a band of full-width rows, or one apart from the columns, spans. Its
    # neighbours must be column rows with text in the right column: a short last line of a
    # paragraph (all left of the gutter) says nothing, and between two of them stands a
    # full-width line of a one-column list that a strip was found in by chance.
    two_sided = [
        not s and any(w.x0 >= gr - 1 for w in r) for r, s in zip(rows, spanning, strict=True)
    ]
    for i, row in enumerate(rows):
        if not spanning[i] or i == 0 or i == len(rows) - 1:
            continue
        if not (two_sided[i - 1] and two_sided[i + 1]):
            continue
        size = row_size(row)
        above = baseline(rows[i - 1]) - baseline(row)
        below = baseline(row) - baseline(rows[i + 1])
        if above < 2 * size and below < 2 * size:
            spanning[i] = False
    lines: list[Line] = []
    band: list[Row] = []

    def flush() -> None:
        parts = [_split_at_gutter(row, gl, gr, middle) for row in band]
        lefts = [row[:k] for row, k in zip(band, parts, strict=True)]
        rights = [row[k:] for row, k in zip(band, parts, strict=True)]
        lines.extend(make_line(page, part) for part in lefts if part)
        lines.extend(make_line(page, part) for part in rights if part)
        band.clear()

    for row, spans in zip(rows, spanning, strict=True):
        if spans:
            flush()
            lines.append(make_line(page, row))
        else:
            band.append(row)
    flush()
    return lines
