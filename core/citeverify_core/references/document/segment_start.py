"""Where a document's reference list starts (issue 26, 34).

Its heading (the last one followed by reference-like lines), else a heading that qualifies the
list's name ("Example References", "Annotated Bibliography"), else a numbered list at the end,
else the whole file when it is nothing but a list, else the longest run of entries that look
like references (a list printed without a heading). Under a heading, the entries start past a
title block's lines set as headings (the author and term of a course bibliography).
"""

from __future__ import annotations

from collections.abc import Sequence

from citeverify_core.references.document.model import (
    DocumentLine,
)
from citeverify_core.references.document.segment_lines import (
    body_text_size,
    clusters,
    ends_list,
    ends_reference,
    line_number,
    reference_heading,
)
from citeverify_core.references.document.segment_patterns import (
    AUTHOR_START,
    LABEL,
    LABEL_ONLY,
    MAX_HEADING_CHARS,
    MAX_REFERENCE_LINES,
    QUALIFIED_HEADING,
    REPEATED_AUTHOR,
    RULE,
    SPLIT_CAPS,
    YEAR,
)

__all__ = ["ends_a_sentence", "find_start", "qualified_heading", "reference_like_after"]


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
        return _past_title_block(lines, chosen + 1, furniture), chosen, heading
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
    # A heading that qualifies the list's name ("Example References" closing a manual,
    # "Annotated Bibliography", "Basics and Theories: Bibliography"): weaker than a plain one,
    # as sections are called "Tabular Bibliographies" too, so only when no plain heading is
    # taken, and like it only when references follow (the last such heading wins).
    qualified = [
        i
        for i, line in enumerate(lines)
        if i not in furniture
        and qualified_heading(line.text)
        and _stands_alone(lines, i, furniture)
        and not ends_a_sentence(lines, i, furniture)
    ]
    for i in reversed(qualified[-_MAX_QUALIFIED:]):
        if reference_like_after(lines, i + 1, furniture) and _entries_follow(
            lines, i + 1, furniture
        ):
            return _past_title_block(lines, i + 1, furniture), i, lines[i].text.strip()
    numbered = _numbered_list_at_end(lines, furniture)
    if numbered is not None:
        return numbered, None, "numbered list at the end"
    if _whole_document_is_a_list(lines, furniture):
        return 0, None, "the whole document (a list without a heading)"
    run = _longest_entry_run(lines, furniture)
    if run is not None:
        return run, None, "a list without a heading (a run of entries that look like references)"
    return None


#: Qualified headings tried, from the last: a document has a few; a file of thousands of
#: such lines costs no more than these.
_MAX_QUALIFIED = 100


def qualified_heading(text: str) -> str | None:
    """The list's word when ``text`` is a heading naming a list with a qualifier, else None.

    >>> qualified_heading("Example References"), qualified_heading("Cross References")
    ('References', None)
    >>> qualified_heading("see the Example References") is None
    True

    Like :func:`reference_heading`: a whole line, starting with a capital (a sentence's end,
    "... in the annotated bibliography", is no heading), small capitals read apart joined.
    A line ending in a full stop or a comma is a sentence's or an entry's end.
    """
    line = text.strip()
    if not line or len(line) > MAX_HEADING_CHARS or line.endswith((".", ",", ";")):
        return None
    first = next((c for c in line if c.isalpha()), "")
    if not first.isupper():
        return None
    if m := QUALIFIED_HEADING.match(line):
        return m.group("word")
    if line.upper() == line and (m := QUALIFIED_HEADING.match(SPLIT_CAPS.sub(r"\1", line))):
        return m.group("word")
    return None


def _stands_alone(lines: Sequence[DocumentLine], i: int, furniture: set[int]) -> bool:
    """Line ``i`` is not the last line of a paragraph: a heading by its look or its place.

    A qualified heading's words are common ("Further Reading", "Secondary Literature"): the
    line is a heading when the format or its size says so, a paragraph starts on it, or the
    line before does not run on into it (it ends a sentence, or is on another page or in
    another size).
    """
    line = lines[i]
    if line.heading or line.starts_paragraph:
        return True
    j = i - 1
    while j >= 0 and (j in furniture or not lines[j].text.strip()):
        j -= 1
    if j < 0 or lines[j].location.page != line.location.page:
        return True
    prev = lines[j]
    if prev.size is not None and line.size is not None and abs(prev.size - line.size) > 0.5:
        return True
    tail = prev.text.rstrip()[-1:]
    return not (tail.isalnum() or tail in {",", "-", "‐", ";", ":"})


def _past_title_block(lines: Sequence[DocumentLine], start: int, furniture: set[int]) -> int:
    """Where the entries start under a heading: past up to four lines set as headings.

    A course bibliography's title ends in "Bibliography" and goes on with its author, its
    term and a first session's heading ("Dr. Paula Pan", "Summer Term 2015", "1 Introduction
    to ..."), all set large: the list's first line is the first reference after them. A
    heading-sized line that reads as an entry (an author or a label, and a year) is one.
    """
    j = start
    skipped = 0
    while j < len(lines) and skipped <= 4:
        line = lines[j]
        text = line.text.strip()
        if j in furniture or not text or RULE.match(text):
            j += 1
            continue
        if not line.heading or (_starts_entry(text) and YEAR.search(text[:400])):
            break
        skipped += 1
        j += 1
    if (
        skipped
        and skipped <= 4
        and j < len(lines)
        and not lines[j].heading
        and _starts_entry(lines[j].text.strip())
        and reference_like_after(lines, j, furniture)
    ):
        return j
    return start


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
    if sum(1 for t in following if LABEL_ONLY.match(t)) >= 3:
        return True
    # Entries longer than the lines above show (four lines or more, a long first entry): the
    # layout sets the entries apart; three of the first four carry a year in their first
    # lines, and two run over more than one line (running text, each line at the margin, does
    # not).
    if not any(YEAR.search(t[:400]) for t in longer):
        return False  # no year in ten lines: no dated entries (and no work for a hostile file)
    entries = _layout_entries(lines, start, furniture, 4)
    return (
        len(entries) >= 3
        and _dated(lines, entries[0])
        and sum(_dated(lines, e) for e in entries) >= 3
        and sum(len(e) > 1 for e in entries) >= 2
        and all(len(e) <= _MAX_ENTRY_LINES for e in entries)
    )


#: An entry of an annotated list, with its comment: longer is running text.
_MAX_ENTRY_LINES = 12
_MAX_ENTRY_CHARS = 1200


def _starts_entry(text: str) -> bool:
    """``text`` starts like a reference: an author, a repeated author's rule, or a label."""
    return bool(
        AUTHOR_START.match(text[:200])
        or REPEATED_AUTHOR.match(text[:12])
        or (LABEL.match(text[:40]) and not LABEL_ONLY.match(text))
    )


def _dated(lines: Sequence[DocumentLine], entry: Sequence[int]) -> bool:
    """A year (or "n.d.", "in press") in the entry's first three lines."""
    return any(YEAR.search(lines[j].text[:400]) for j in entry[:3])


def _page_bases(
    lines: Sequence[DocumentLine], indices: Sequence[int], size: float | None
) -> dict[int, float]:
    """For each of ``indices`` with an ``x0``: the left edge of its column on its page.

    The edges are learnt from the page's lines in ``size`` within 80 lines of them (a heading
    or a footnote starts elsewhere; a file of many heading-like lines costs no more than the
    lines around each), clustered as the splitter does (a gap over 40 points starts a column).
    """
    pages: dict[int | None, list[float]] = {}
    wanted = {lines[i].location.page for i in indices}
    low = max(0, min(indices) - 80)
    high = min(len(lines), max(indices) + 80)
    for j in range(low, high):
        line = lines[j]
        if line.location.page not in wanted or line.x0 is None or not line.text.strip():
            continue
        if size is not None and line.size is not None and abs(line.size - size) > 1.0:
            continue
        pages.setdefault(line.location.page, []).append(line.x0)
    bases = {page: clusters(sorted(xs)) for page, xs in pages.items()}
    out: dict[int, float] = {}
    for i in indices:
        x = lines[i].x0
        if x is None:
            continue
        edges = bases.get(lines[i].location.page) or [x]
        out[i] = max((b for b in edges if b <= x + 0.5), default=x)
    return out


def _group_entries(
    lines: Sequence[DocumentLine],
    indices: Sequence[int],
    indented_start: bool | None,
    size: float | None,
) -> list[list[int]]:
    """``indices`` (text lines in order) grouped into entries as the layout sets them apart.

    With left edges: an entry starts at each line whose indent is ``indented_start`` (False:
    flush, a hanging indent; None: as the first line's), in ``size`` when given (a smaller
    annotation or URL line belongs to its entry). Without: at each paragraph start, or at
    every line when the format marks no paragraph.
    """
    if not indices:
        return []
    first = lines[indices[0]]
    bases = _page_bases(lines, indices, size) if first.x0 is not None else {}

    def indent(i: int) -> bool | None:
        x = lines[i].x0
        return None if x is None or i not in bases else x - bases[i] > 2.0

    if indented_start is None:
        indented_start = bool(indent(indices[0]))
    paragraphs = any(lines[i].starts_paragraph or lines[i].label for i in indices[1:])
    entries: list[list[int]] = []
    for i in indices:
        line = lines[i]
        if not entries:
            starts = True
        elif (where := indent(i)) is not None:
            same_size = size is None or line.size is None or abs(line.size - size) <= 0.6
            starts = same_size and where == indented_start
        elif paragraphs:
            starts = line.starts_paragraph or bool(line.label)
        else:
            starts = True
        if starts:
            entries.append([i])
        else:
            entries[-1].append(i)
    return entries


def _text_lines(
    lines: Sequence[DocumentLine], start: int, stop: int, furniture: set[int]
) -> list[int]:
    return [
        i
        for i in range(start, min(stop, len(lines)))
        if i not in furniture and (t := lines[i].text.strip()) and not RULE.match(t)
    ]


def _layout_entries(
    lines: Sequence[DocumentLine], start: int, furniture: set[int], count: int
) -> list[list[int]]:
    """The first ``count`` entries from ``start``, set apart by a hanging indent or paragraphs.

    Only a hanging indent (a first-line indent is how running text sets its paragraphs). Only
    the next ``_MAX_ENTRY_LINES * count`` lines are looked at: the last entry may be cut.
    """
    window = _text_lines(lines, start, start + 20 * count, furniture)
    window = window[: _MAX_ENTRY_LINES * count]
    entries = _group_entries(lines, window, False, lines[window[0]].size if window else None)
    return entries[:count]


def _entries_follow(lines: Sequence[DocumentLine], start: int, furniture: set[int]) -> bool:
    """Entries follow ``start``: three of the next four start like references and are dated.

    What a qualified heading needs besides :func:`reference_like_after`, whose two years in
    six lines a paragraph of history under "Further Reading" also has.
    """
    entries = _layout_entries(lines, start, furniture, 4)
    return len(entries) >= 3 and sum(_entry_like(lines, e) for e in entries) >= 3


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


#: Fewest entries a list without a heading is taken from, and the share of its entries (from
#: its first reference-like one to its last) that must look like references.
_MIN_RUN = 5
_RUN_SHARE = 0.8


def _longest_entry_run(lines: Sequence[DocumentLine], furniture: set[int]) -> int | None:
    """The first line of the longest run of entries that look like references, or None.

    A document that is a list under a title and no heading (biblatex's ``heading=none``, a
    style sample): its entries, set apart by a hanging indent (or a first-line one) or by
    paragraphs, start with an author, a rule or a label and carry a year in their first
    lines. Precision first: at least five such entries, four in five of the run's entries
    alike, and never two unlike entries in a row (a sub-heading or an entry without a year
    may stand between, running text does not): prose with names and years is no run, as
    its lines, each at the margin, are entries of one line that rarely start with an author
    and a year.
    """
    # A list without a heading is set in the body's size: notes and captions, set smaller
    # and full of names and years ("33 See Otto Springer: ..., 12 (1950)"), are never it.
    body = body_text_size((ln.size, ln.text) for ln in lines[:20_000] if not ln.footnote)
    indices = [
        i
        for i in _text_lines(lines, 0, 20_000, furniture)
        if not lines[i].footnote and _in_size(lines[i], body)
    ]
    if len(indices) < _MIN_RUN:
        return None
    # With left edges, entries hang (first line flush, the rest indented): a first-line
    # indent is how running text sets its paragraphs, so it is not taken for entries here.
    entries = _group_entries(lines, indices, False, None)
    # An entry also ends as a reference does (a full stop, a bracket, a URL): a table's rows
    # ("1. Germany 2019 45.3") start and are dated like entries, but end on a number.
    alike = [_entry_like(lines, e) and ends_reference(lines[e[-1]].text) for e in entries]
    best: tuple[int, int] | None = None  # (entries alike, first line)
    run_start: int | None = None
    count = total = 0
    for k, like in enumerate(alike):
        if like:
            if run_start is None:
                run_start, count = k, 0
            count += 1
            total = k - run_start + 1
        elif run_start is not None and (k + 1 == len(alike) or not alike[k + 1]):
            # Two unlike entries in a row: the run is over.
            best = _better(best, count, total, entries[run_start][0])
            run_start = None
    if run_start is not None:
        best = _better(best, count, total, entries[run_start][0])
    return None if best is None else best[1]


def _in_size(line: DocumentLine, size: float | None) -> bool:
    """The line is set in ``size`` (half a point either way), or either is unknown."""
    return size is None or line.size is None or abs(line.size - size) <= 0.5


def _better(
    best: tuple[int, int] | None, count: int, total: int, first: int
) -> tuple[int, int] | None:
    """The longer of the best run so far and this one, when this one is long and like enough."""
    if count < _MIN_RUN or count < total * _RUN_SHARE:
        return best
    return (count, first) if best is None or count > best[0] else best


def _entry_like(lines: Sequence[DocumentLine], entry: Sequence[int]) -> bool:
    """An entry that looks like a reference: it starts like one, is dated, is not too long.

    Not too long in lines (a PDF's) nor in characters (a Word or HTML paragraph is one line:
    a paragraph of prose that starts with a name and a year is longer than a reference).
    """
    return (
        len(entry) <= _MAX_ENTRY_LINES
        and sum(len(lines[j].text) for j in entry) <= _MAX_ENTRY_CHARS
        and not lines[entry[0]].heading
        and _starts_entry(lines[entry[0]].text.strip())
        and _dated(lines, entry)
    )
