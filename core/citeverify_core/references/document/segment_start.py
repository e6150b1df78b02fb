"""Where a document's reference list starts (issue 26).

Its heading (the last one followed by reference-like lines), else a numbered list at the end,
else the whole file when it is nothing but a list.
"""

from __future__ import annotations

from collections.abc import Sequence

from citeverify_core.references.document.model import (
    DocumentLine,
)
from citeverify_core.references.document.segment_lines import (
    ends_list,
    line_number,
    reference_heading,
)
from citeverify_core.references.document.segment_patterns import (
    AUTHOR_START,
    LABEL,
    LABEL_ONLY,
    MAX_REFERENCE_LINES,
    RULE,
    YEAR,
)

__all__ = ["ends_a_sentence", "find_start", "reference_like_after"]


def find_start(
    lines: Sequence[DocumentLine], furniture: set[int]
) -> tuple[int, int | None, str] | None:
    """(index of the list's first line, index of its heading or None, how it was found)."""
    candidates = [
        i
        for i, line in enumerate(lines)
        if i not in furniture
        and reference_heading(line.text)
        and not ends_a_sentence(lines, i, furniture)
    ]
    chosen: int | None = None
    for i in reversed(candidates):
        if reference_like_after(lines, i + 1, furniture):
            chosen = i
            break
    if chosen is not None:
        # A running header "References" on each page of the list is not a new list: go back
        # to the first heading of the chain as long as what is between looks like references.
        for i in reversed([c for c in candidates if c < chosen]):
            if (
                chosen - i <= 150
                and _top_of_page(lines, chosen)
                and _same_heading(lines[i].text, lines[chosen].text)
                and _all_reference_like(lines, i + 1, chosen, furniture)
            ):
                chosen = i
            else:
                break
        heading = lines[chosen].text.strip()
        return chosen + 1, chosen, heading
    # The list's own heading is followed by something else: the other column of the section
    # before, read after the heading, in a size of its own. The list starts after it.
    for i in reversed(candidates):
        after = _after_interlude(lines, i + 1, furniture)
        if after is not None:
            return after, i, lines[i].text.strip()
    # A running head names the list on the pages it fills ("E. Bibliography" atop pages 70
    # and 71): the list starts under the first such head.
    for i in sorted(furniture)[:2000]:
        if reference_heading(lines[i].text) and reference_like_after(lines, i + 1, furniture):
            return i + 1, i, lines[i].text.strip()
    numbered = _numbered_list_at_end(lines, furniture)
    if numbered is not None:
        return numbered, None, "numbered list at the end"
    if _whole_document_is_a_list(lines, furniture):
        return 0, None, "the whole document (a list without a heading)"
    return None


def _after_interlude(lines: Sequence[DocumentLine], start: int, furniture: set[int]) -> int | None:
    """Where reference-like lines start after a run of lines in another size, or None.

    The run (up to 60 lines, one size, no heading) is what a reader put between a list's
    heading and its entries: the other column of the page's previous section.
    """
    sizes: set[float] = set()
    for j in range(start, min(len(lines), start + 60)):
        line = lines[j]
        if j in furniture or not line.text.strip():
            continue
        if line.size is None or line.heading or reference_heading(line.text):
            return None
        if sizes and all(abs(line.size - s) > 1.0 for s in sizes):
            return j if j > start and reference_like_after(lines, j, furniture) else None
        sizes.add(line.size)
    return None


def ends_a_sentence(lines: Sequence[DocumentLine], i: int, furniture: set[int]) -> bool:
    """Line ``i`` ("Literature.") is the last word of the line before, not a heading.

    That is: the line before runs on (ends in a letter, a comma or a hyphen), is set in the
    same size, and line ``i`` ends with a full stop or is indented from it (a hanging indent).
    """
    j = i - 1
    while j >= 0 and (j in furniture or not lines[j].text.strip()):
        j -= 1
    if j < 0 or lines[j].location.page != lines[i].location.page:
        return False
    prev, line = lines[j], lines[i]
    tail = prev.text.rstrip()[-1:]
    if not (tail.isalpha() or tail in {",", "-", "‐"}):
        return False
    if prev.size is not None and line.size is not None and abs(prev.size - line.size) > 0.2:
        return False
    if line.heading:
        return False
    indented = prev.x0 is not None and line.x0 is not None and 2.0 < line.x0 - prev.x0 < 60
    return line.text.rstrip().endswith(".") or indented


def _top_of_page(lines: Sequence[DocumentLine], i: int) -> bool:
    """Line ``i`` is among the first three of its page or column (False without pages)."""
    line = lines[i]
    if line.location.page is None:
        return False  # no pages, no running headers
    before = 0
    for j in range(i - 1, max(-1, i - 4), -1):
        prev = lines[j]
        if prev.location.page != line.location.page or (
            prev.x0 is not None and line.x0 is not None and abs(prev.x0 - line.x0) > 100
        ):
            break
        before += 1
    return before < 3


def _same_heading(a: str, b: str) -> bool:
    return (reference_heading(a) or "").casefold() == (reference_heading(b) or "").casefold()


def _next_lines(
    lines: Sequence[DocumentLine], start: int, furniture: set[int], count: int
) -> list[str]:
    out: list[str] = []
    i = start
    while i < len(lines) and len(out) < count:
        t = lines[i].text.strip()
        if t and i not in furniture and not RULE.match(t):
            out.append(t)
        i += 1
    return out


def reference_like_after(lines: Sequence[DocumentLine], start: int, furniture: set[int]) -> bool:
    """The lines after ``start`` look like a reference list (not a table of contents)."""
    following = _next_lines(lines, start, furniture, 6)
    if not following:
        return False
    if any(reference_heading(t) for t in following[:1]):
        return False
    labelled = sum(1 for t in following if LABEL.match(t[:40]) and not LABEL_ONLY.match(t))
    years = sum(1 for t in following if YEAR.search(t[:400]))
    if labelled and years:
        return True
    if years >= 2 or (years and len(following) <= 2):
        return True
    # MLA puts the year at an entry's end, often on its second or third line: one year and
    # lines that start with an author ("Caan, Michael N., ...") are a list too.
    # A first entry of six lines or more: look at ten.
    longer = _next_lines(lines, start, furniture, 10)
    authors = sum(1 for t in longer if AUTHOR_START.match(t[:200]))
    if authors >= 2 and any(YEAR.search(t[:400]) for t in longer):
        return True
    # A list without years (software, web pages, manuals): "[1]" and "[2]" at the starts of
    # the next lines, in order, each with text after it. Brackets only: a contents page's
    # "1 Introduction" / "2 Methods" has none.
    bracketed = [
        m.group("b") for t in longer if (m := LABEL.match(t[:40])) and not LABEL_ONLY.match(t)
    ]
    if bracketed[:2] == ["1", "2"]:
        return True
    # Only labels and no years yet (a margin column of labels read before the text).
    return sum(1 for t in following if LABEL_ONLY.match(t)) >= 3


def _all_reference_like(
    lines: Sequence[DocumentLine], start: int, stop: int, furniture: set[int]
) -> bool:
    texts = [
        lines[i].text.strip()
        for i in range(start, stop)
        if i not in furniture and lines[i].text.strip()
    ]
    if not texts:
        return True
    if any(ends_list(t, lines[start].size) for t in texts):
        return False
    hits = sum(1 for t in texts if YEAR.search(t[:400]) or LABEL.match(t[:40]))
    return hits * 3 >= len(texts)


def _numbered_list_at_end(lines: Sequence[DocumentLine], furniture: set[int]) -> int | None:
    """The index of "[1]"/"1." that starts the last numbered list with reference-like items."""
    numbers = [None if i in furniture else line_number(line) for i, line in enumerate(lines)]
    ones = [i for i, number in enumerate(numbers) if number == 1][-50:]
    best: int | None = None
    best_count = 0
    for i in ones:
        expected, count, last = 2, 1, i
        years = int(bool(YEAR.search(lines[i].text[:400])))
        for j in range(i + 1, len(lines)):
            if numbers[j] == expected:
                expected += 1
                count += 1
                last = j
                after = lines[j + 1].text[:400] if j + 1 < len(lines) else ""
                years += bool(YEAR.search(lines[j].text[:400]) or YEAR.search(after))
            elif j - last > MAX_REFERENCE_LINES:
                break
        if count >= 2 and years * 2 >= count >= best_count:
            best, best_count = i, count
    return best


def _whole_document_is_a_list(lines: Sequence[DocumentLine], furniture: set[int]) -> bool:
    texts = [ln.text.strip() for i, ln in enumerate(lines) if i not in furniture]
    texts = [t for t in texts if t]
    if not texts or len(texts) > 20_000:
        return False
    like = sum(1 for t in texts if YEAR.search(t[:400]) or LABEL.match(t[:40]))
    return like * 10 >= len(texts) * 6
