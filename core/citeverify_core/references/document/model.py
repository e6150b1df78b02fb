"""What a document's reading produces: its lines, its references, its citations, its findings.

The pipeline (issue 26)::

    read (pdf.py, docx.py, markup.py)   file -> DocumentText: lines with where they were
    segment (segment.py)                DocumentText -> the bibliography's references + the body
    consistency (consistency.py)        body + references -> in-text citations, findings
    extract_document (__init__.py)      all three -> ExtractedDocument

Each step's entry module keeps its public names and delegates to modules split by what they do:

    pdf.py        pdf_words (fonts, words), pdf_glyphs (glyph names -> text), pdf_lines (a
                  row's text, raised spans, body size, headings), pdf_columns (rows, columns),
                  pdf_furniture (line numbers, running text), pdf_notes (footnote areas)
    markup.py     markup_common, markup_markdown, markup_html, latex_scan, latex_text,
                  latex_macros (document macros), latex_bib (bibitem/.bbl/.bib), latex_document
    segment.py    segment_start (where the list starts), segment_split (entries, the list's
                  end), segment_labels (the learned line labeller for lists without layout;
                  segment_labels.json), segment_hyphens (joining lines; segment_words.txt),
                  segment_lines (one line), segment_furniture (running heads), segment_patterns
    consistency   citations_base, citations_numeric (labels, keys), citations_author_date,
                  citations_notes (footnotes, superscripts), consistency_findings

Every class here is plain data (dataclasses, no pydantic), so a document travels to a worker
process and into JSON (``to_dict``) as it is.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = [
    "DOCUMENT_FORMATS",
    "CitationCoverage",
    "ConsistencyFinding",
    "DocumentFormat",
    "DocumentLine",
    "DocumentText",
    "ExtractedDocument",
    "ExtractedReference",
    "FindingKind",
    "InTextCitation",
    "Location",
]

DocumentFormat = Literal["pdf", "docx", "tex", "bbl", "md", "html", "txt", "bib"]
#: The formats ``extract_document`` reads, by file suffix (".markdown" and ".htm" too).
DOCUMENT_FORMATS: tuple[DocumentFormat, ...] = (
    "pdf",
    "docx",
    "tex",
    "bbl",
    "md",
    "html",
    "txt",
    "bib",
)

FindingKind = Literal["missing-entry", "uncited-entry", "out-of-order", "duplicate-entry"]


@dataclass(frozen=True, slots=True)
class Location:
    """Where a line or a reference is: a page and a line on it, or a line of the file.

    ``page`` is 1-based and ``None`` for formats without pages (LaTeX, Markdown, HTML, text,
    BibTeX; Word, whose pages are made by the program that shows it). ``line`` is 1-based: the
    line on the page for a PDF, the paragraph for Word, the line of the file otherwise.
    """

    line: int
    page: int | None = None

    def __str__(self) -> str:
        if self.page is None:
            return f"line {self.line}"
        return f"page {self.page}, line {self.line}"

    def to_dict(self) -> dict[str, int | None]:
        """``{"page": ..., "line": ...}``."""
        return {"page": self.page, "line": self.line}


@dataclass(frozen=True, slots=True)
class DocumentLine:
    r"""One line of a document as read, before the bibliography is found.

    Attributes:
        text: The line's text (ligatures expanded, NFC), without its line break.
        location: Where it is.
        x0: Left edge in points from the page's left (PDF only), for hanging indents and columns.
        size: The font size in points (PDF only), for headings.
        label: A number the document's program drew and the text does not hold: Word's automatic
            numbering ("[3]", "3.").
        heading: The format says this line is a heading (a Word heading style, Markdown "#",
            HTML <h1>-<h6>, LaTeX \\section); a PDF's headings are found from their look.
        starts_paragraph: A new paragraph or list item starts here (Word, Markdown, HTML; a PDF's
            line after vertical space).
        raised: Character spans ``(start, end)`` of ``text`` set raised and smaller than the
            line (a PDF's superscripts: note calls and superscript numeric citations).
        footnote: The line is in a page's footnote area (a PDF's notes below the body text,
            in a smaller size), so a note's citations can be read as notes.
        unreliable: The line's text could not be fully recovered (a font without a Unicode
            map lost dashes or ligatures): what is read from it is marked, not trusted.
    """

    text: str
    location: Location
    x0: float | None = None
    size: float | None = None
    label: str | None = None
    heading: bool = False
    starts_paragraph: bool = False
    raised: tuple[tuple[int, int], ...] = ()
    footnote: bool = False
    unreliable: bool = False


@dataclass(slots=True)
class DocumentText:
    r"""A document's lines in reading order, with what its format knows besides.

    Attributes:
        format: The format it was read as.
        lines: Body and bibliography, in reading order (two columns: the left one first);
            running headers and footers, page numbers and review-copy line numbers removed.
        title: The document's title when the format says it (PDF metadata or first heading,
            Word core properties, LaTeX \\title, HTML <title>, Markdown's first "# ").
        pages: Pages of a PDF; ``None`` otherwise.
        entries: References the format itself delimits (``\\bibitem``, BibTeX entries):
            the segmenter then only has to take them.
        notes: What the reader noticed and a person should know ("2 pages have no text").
    """

    format: DocumentFormat
    lines: list[DocumentLine]
    title: str | None = None
    pages: int | None = None
    entries: list[ExtractedReference] | None = None
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ExtractedReference:
    r"""One reference of the document's list.

    Attributes:
        text: The reference as one string, as it will be verified: lines joined, a soft
            hyphen at a line end removed ("Bio-" + "logy" -> "Biology") and a real one kept
            ("Smith-" + "Jones" -> "Smith-Jones"), whitespace normalised, the label removed.
        number: Its position in the list, from 1.
        location: Where it starts.
        label: The label the document prints for it ("12" of "[12]" or "12."; "Smi20" of
            "[Smi20]"), without brackets; ``None`` for an author-date list.
        key: Its citation key (``\\bibitem{key}``, a BibTeX entry's key), for ``\\cite{key}``.
        end: Where it ends, when not on the same line.
        unreliable: Why its text is not to be trusted as read ("a font without a Unicode
            map"), or ``None``: a line of it was read from damaged text.
    """

    text: str
    number: int
    location: Location
    label: str | None = None
    key: str | None = None
    end: Location | None = None
    unreliable: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data."""
        return {
            "number": self.number,
            "text": self.text,
            "label": self.label,
            "key": self.key,
            "location": self.location.to_dict(),
            "end": None if self.end is None else self.end.to_dict(),
            "unreliable": self.unreliable,
        }


@dataclass(frozen=True, slots=True)
class InTextCitation:
    r"""A citation in the document's body, and the entries of the list it points to.

    Attributes:
        text: As written: "[3-5]", "(Smith et al., 2020)", "Smith (2020a)", "\\cite{key}".
        kind: ``numeric`` (labels, also superscript numbers), ``author-date`` (names and a
            year), ``key`` (LaTeX) or ``note`` (a footnote's full or short note, "Ibid.":
            an author's surname and words of the title).
        targets: What it names, one item each: labels ("3", "4", "5"), "Smith 2020a", keys.
        entries: The ``number`` of the entry each target matched (``None``: no entry).
        location: Where it is.
    """

    text: str
    kind: Literal["numeric", "author-date", "key", "note"]
    targets: tuple[str, ...]
    entries: tuple[int | None, ...]
    location: Location

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data."""
        return {
            "text": self.text,
            "kind": self.kind,
            "targets": list(self.targets),
            "entries": list(self.entries),
            "location": self.location.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class ConsistencyFinding:
    """A disagreement between the citations in the text and the reference list.

    Attributes:
        kind: ``missing-entry`` (a citation names no entry), ``uncited-entry`` (an entry no
            citation names), ``out-of-order`` (a numbered list whose entries are not numbered
            1, 2, 3, ... or, in a list numbered by first citation, not in that order) or
            ``duplicate-entry`` (two entries with one label, or the same work twice).
        message: One sentence a person can act on.
        target: The label, key or "Name year" concerned.
        entry: The entry concerned (its ``number``), when there is one.
        location: Where (the citation's, or the entry's).
    """

    kind: FindingKind
    message: str
    target: str | None = None
    entry: int | None = None
    location: Location | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data."""
        found = asdict(self)
        found["location"] = None if self.location is None else self.location.to_dict()
        return found


@dataclass(frozen=True, slots=True)
class CitationCoverage:
    """How much of the consistency check could be done: what was checked and what was not.

    A finding is only made where the reader is sure; what it could not be sure of is counted
    here instead ("12 entries not checked: citation forms not read").

    Attributes:
        entries: The entries of the list.
        checked: The entries whose citing was checked: found cited, or reported uncited.
        not_checked: ``(reason, count)`` for the others, one item per reason.
        citations: The in-text citations read.
        unread: Places that look like citations but were not read as one (a listed author
            near a year in a form not known, a note naming no entry).
    """

    entries: int
    checked: int
    not_checked: tuple[tuple[str, int], ...] = ()
    citations: int = 0
    unread: int = 0

    def notes(self) -> list[str]:
        """One sentence per reason entries were not checked, with its count."""
        return [
            f"{n} entr{'y' if n == 1 else 'ies'} not checked: {reason}"
            for reason, n in self.not_checked
        ]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data."""
        return {
            "entries": self.entries,
            "checked": self.checked,
            "not_checked": [{"reason": r, "count": n} for r, n in self.not_checked],
            "citations": self.citations,
            "unread": self.unread,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CitationCoverage:
        """Back from :meth:`to_dict`."""
        return cls(
            entries=int(data["entries"]),
            checked=int(data["checked"]),
            not_checked=tuple(
                (str(item["reason"]), int(item["count"])) for item in data.get("not_checked") or []
            ),
            citations=int(data.get("citations") or 0),
            unread=int(data.get("unread") or 0),
        )


@dataclass(slots=True)
class ExtractedDocument:
    r"""A document's reference list, its in-text citations and their consistency.

    Attributes:
        name: The file's name (or what the caller called it).
        format: The format it was read as.
        title: Its title, when found.
        pages: Its pages (PDF).
        heading: The heading the list was found under ("References"), or how it was found
            ("\\bibitem entries", "numbered list at the end").
        references: The entries of the list, in order.
        citations: The in-text citations found in the body.
        findings: Where citations and entries disagree.
        notes: What a person should know about the reading.
        coverage: How much of the consistency check was done (``None``: not checked, as for a
            document read by a version without it).
    """

    name: str
    format: DocumentFormat
    references: list[ExtractedReference]
    title: str | None = None
    pages: int | None = None
    heading: str | None = None
    citations: list[InTextCitation] = field(default_factory=list)
    findings: list[ConsistencyFinding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    coverage: CitationCoverage | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (the CLI's ``--json`` and the service's document)."""
        return {
            "name": self.name,
            "format": self.format,
            "title": self.title,
            "pages": self.pages,
            "heading": self.heading,
            "references": [r.to_dict() for r in self.references],
            "citations": [c.to_dict() for c in self.citations],
            "findings": [f.to_dict() for f in self.findings],
            "notes": list(self.notes),
            "coverage": None if self.coverage is None else self.coverage.to_dict(),
        }
