r"""Find a document's reference list among its lines and split it into references.

Works on :class:`DocumentLine` lists from any reader (PDF, Word, LaTeX, Markdown, HTML, text),
using what each line carries: its text, and when the reader knows them its left edge (``x0``),
font size, Word's automatic number (``label``), whether the format calls it a heading, and
whether a paragraph starts on it. The steps (docs/documents.md says why each is so):

1. Page furniture a reader left (a running header repeated at the top of pages, a page number
   alone on a line at a page's edge) is set aside.
2. The start: the last heading naming a reference list (English, German, French, Spanish,
   Italian, Portuguese, Dutch, Scandinavian, Polish, Turkish, Russian, Greek, Chinese, Japanese
   and Korean words; numbered or not; any case) that is followed by lines that look like
   references. Without one: the numbered list at the end of the document; or, for a file that
   is nothing but a list, the whole file.
3. The end: an appendix, acknowledgements, biography, affiliation or other closing heading, a
   new numbered or lettered section, a figure or table caption after which the list does not
   go on (a page of figures inside the list is skipped), a heading of the format, or running
   text (a long paragraph with no year). Footnotes and figure text set small never join it.
   A numbered list is not ended by a heading-looking line when the next number of the list
   follows it closely (refextract's check).
4. The split: labels in sequence ("[1]", "1.", "(1)", "1", "[Smi20]", Word's numbers), else
   hanging or first-line indents (``x0``), else paragraph starts, else a line that starts
   "Surname, X." after a line that ended a reference, and in a list with nothing but its text
   a learned line labeller where those rules see no start (``segment_labels``). A page or
   column break is never a boundary on its own.
5. Each reference's lines are joined: a hyphen at a line end is dropped when it breaks a word
   ("Bio-" + "logy") and kept when it is a real one ("Smith-" + "Jones", "self-" +
   "assessment", "COVID-" + "19"), judged first by how the document itself writes the word,
   then by a compact English word list ("Cor-" + "related" -> "Correlated").
6. Whether the list was read whole: ``FoundReferences.incomplete`` says why not (a page of it
   without text, numbers that skip, an end that is unsure), so that no finding rests on it.

Where each step lives: ``segment_furniture`` (1), ``segment_start`` (2), ``segment_split``
(3, 4), ``segment_labels`` (4, lists without layout), ``segment_hyphens`` (5), this module (6
and the whole); ``segment_lines`` reads one line alone (a heading, a caption, a label, a
reference's end) and ``segment_patterns`` holds the patterns they share.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from citeverify_core.references.document.model import (
    DocumentLine,
    DocumentText,
    ExtractedReference,
)
from citeverify_core.references.document.segment_furniture import (
    page_furniture,
    running_text,
)
from citeverify_core.references.document.segment_hyphens import document_vocabulary, join_lines
from citeverify_core.references.document.segment_lines import (
    looks_like_reference,
    reference_heading,
)
from citeverify_core.references.document.segment_patterns import UNRELIABLE_TEXT
from citeverify_core.references.document.segment_split import (
    LineGroup,
    Splitter,
)
from citeverify_core.references.document.segment_start import (
    find_start,
)

__all__ = [
    "UNRELIABLE_TEXT",
    "FoundReferences",
    "find_references",
    "join_lines",
    "reference_heading",
    "running_text",
]


@dataclass(slots=True)
class FoundReferences:
    """The reference list of a document and the rest of it.

    Attributes:
        references: The entries, in order.
        body: The lines outside the list (where in-text citations are looked for).
        heading: The heading the list was found under, or how it was found.
        notes: What a person should know ("the list ends before 'Appendix A', page 14").
        start: The index in the document's lines of the list's first line (its heading, when
            there is one); ``None`` when the format delimited the entries itself.
        end: The index of the first line after the list.
        incomplete: Why the list may not have been read whole ("the list runs past page 7,
            which has no text"), or ``None``: then no entry is called uncited or missing on
            the strength of this reading (precision first).
    """

    references: list[ExtractedReference]
    body: list[DocumentLine]
    heading: str | None = None
    notes: list[str] = field(default_factory=list)
    start: int | None = None
    end: int | None = None
    incomplete: str | None = None


def find_references(text: DocumentText) -> FoundReferences:
    """The reference list of ``text``: its entries with labels and locations, and the body."""
    if text.entries:
        heading = "BibTeX entries" if text.entries[0].text.startswith("@") else "\\bibitem entries"
        return FoundReferences(list(text.entries), list(text.lines), heading=heading)
    lines = text.lines
    if not lines:
        return FoundReferences([], [])
    furniture = page_furniture(lines)
    found = find_start(lines, furniture)
    if found is None:
        return FoundReferences([], list(lines))
    first, heading_index, heading = found
    splitter = Splitter(lines, furniture, first, document_vocabulary(lines))
    groups, end, end_note = splitter.split()
    references = [splitter.reference(group, number) for number, group in enumerate(groups, 1)]
    # A sub-heading inside an author-date list ("Primary sources") is not an entry.
    references = [
        r
        for r in references
        if r.text and (r.label is not None or len(r.text) >= 60 or looks_like_reference(r.text))
    ]
    references = [
        ExtractedReference(r.text, n, r.location, r.label, r.key, r.end, r.unreliable)
        for n, r in enumerate(references, 1)
    ]
    start = heading_index if heading_index is not None else first
    body = [*lines[:start], *lines[end:]]
    notes = list(splitter.notes)
    if end_note:
        notes.append(end_note)
    incomplete = (
        splitter.incomplete
        or _unread_pages(lines, groups, end, text.pages)
        or _numbering_gaps(references)
    )
    return FoundReferences(
        references,
        body,
        heading=heading,
        notes=notes,
        start=start,
        end=end,
        incomplete=incomplete,
    )


def _unread_pages(
    lines: Sequence[DocumentLine], groups: Sequence[LineGroup], end: int, pages: int | None
) -> str | None:
    """Why the list may run over pages that have no text (scanned, or unreadable), or None.

    A page between the list's first and last lines with no line at all, or pages after the
    list's last line when the list runs to the end of what was read: a figure page of images
    looks the same, and is taken as unread too (precision first: no finding is made then).
    """
    list_pages = sorted(
        {p for g in groups for j in g.indices if (p := lines[j].location.page) is not None}
    )
    if not list_pages:
        return None
    read_pages = {p for ln in lines if (p := ln.location.page) is not None}
    for page in range(list_pages[0], list_pages[-1]):
        if page not in read_pages:
            return f"the list runs past page {page}, which has no text that could be read"
    if end >= len(lines) and pages is not None and list_pages[-1] < pages:
        missing = [p for p in range(list_pages[-1] + 1, pages + 1) if p not in read_pages]
        if missing:
            return f"the list may go on on page {missing[0]}, which has no text that could be read"
    return None


def _numbering_gaps(references: Sequence[ExtractedReference]) -> str | None:
    """Why a numbered list may lack entries (its numbers skip some), or None."""
    numbers = [int(r.label) for r in references if r.label and r.label.isdecimal()]
    if len(numbers) < 2 or len(numbers) * 10 < len(references) * 9:
        return None
    if max(numbers) - min(numbers) > 20_000:
        return "the list's numbers skip thousands: entries were not read apart"
    missing = sorted(set(range(min(numbers), max(numbers) + 1)) - set(numbers))
    if min(numbers) > 1:
        missing = [*range(1, min(numbers)), *missing]
    if not missing:
        return None
    shown = ", ".join(str(n) for n in missing[:5]) + (", ..." if len(missing) > 5 else "")
    return f"the list's numbers skip {shown}: entries were not read apart"
