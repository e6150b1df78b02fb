"""PDF: the visual lines of a paper in reading order, with their page, line and look (pdfminer.six).

Reading happens in two steps, both in a child process bounded in time and memory
(:mod:`~citeverify_core.references.document.sandbox`); each part lives in a module of its own:

1. **Words** (:mod:`.pdf_words`): pdfminer's interpreter runs each page's content stream into a
   small device of ours that keeps words (edges, baseline, size, bold), not pdfminer's layout
   objects; fonts without a Unicode map are read from their glyph names (:mod:`.pdf_glyphs`).
2. **Layout** (:func:`_layout` here, pure Python on the words): furniture removed
   (:mod:`.pdf_furniture`: review-copy line numbers, running headers and footers, page
   numbers); words into rows by baseline and rows into columns (:mod:`.pdf_columns`: two
   columns found per page from a vertical white gutter, the left one read before the right
   one, full-width rows kept in their place); each row of a column becomes one
   :class:`DocumentLine` (:mod:`.pdf_lines`) with ``x0``, ``size``, ``starts_paragraph``
   (vertical space above it larger than the line spacing), ``heading``, its raised spans and
   whether it is in a page's footnote area.

A label drawn in a margin column ("[12]" left of a hanging-indented reference) sits on its
reference's baseline, so it lands at the start of that line. Hyphenated line ends are kept as
they are: the segmenter joins lines and needs to see the breaks.
"""

from __future__ import annotations

import bisect
import re
import statistics
import sys
from typing import Any

from citeverify_core.errors import DocumentError, require_extra
from citeverify_core.references.document.model import DocumentLine, DocumentText, Location
from citeverify_core.references.document.pdf_columns import make_rows, page_lines
from citeverify_core.references.document.pdf_furniture import (
    dedupe,
    drop_line_numbers,
    drop_numbers_at,
    drop_running_text,
)
from citeverify_core.references.document.pdf_glyphs import LOST
from citeverify_core.references.document.pdf_lines import (
    Line,
    Row,
    body_size,
    mark_paragraphs_and_headings,
)
from citeverify_core.references.document.pdf_notes import mark_footnotes
from citeverify_core.references.document.pdf_words import Page, Word, read_words
from citeverify_core.references.document.sandbox import (
    DEFAULT_MEMORY_BYTES,
    DEFAULT_TIMEOUT_SECONDS,
    run_isolated,
)

__all__ = ["MAX_PDF_CHARACTERS", "MAX_PDF_PAGES", "extract_pdf", "read_pdf"]

#: Pages read at most; a document with more is refused (``too-large``).
MAX_PDF_PAGES = 2000
#: Characters read at most (a 40-page paper has about 200,000).
MAX_PDF_CHARACTERS = 20_000_000

_PRELOAD = (
    "pdfminer.pdfinterp",
    "pdfminer.pdfpage",
    "pdfminer.pdfdevice",
    "pdfminer.pdfdocument",
    "citeverify_core.references.document.pdf",
)

_FILE_TITLE = re.compile(
    r"(?:\.(?:pdf|docx?|tex|dvi|ps|rtf|odt|indd|txt)$|^microsoft word|^title$|^none$"
    r"|^\(?(?:anonymous|unspecified|untitled)\b)",
    re.IGNORECASE,
)


def read_pdf(
    data: bytes,
    *,
    name: str,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    memory: int | None = DEFAULT_MEMORY_BYTES,
) -> DocumentText:
    """The lines of a PDF in reading order, headers, footers and line numbers removed.

    Args:
        data: The file's bytes.
        name: The file's name (for messages).
        timeout: Seconds the reading may take before it is stopped.
        memory: Bytes of address space the reading may use (``None``: no limit).

    Raises:
        DocumentError: ``corrupt`` (not a PDF, truncated, unreadable), ``encrypted`` (needs a
            password), ``no-text-layer`` (scanned: "no text layer: run OCR first"),
            ``too-large`` (too many pages or characters, or over ``memory``), ``timeout``.
    """
    require_extra("documents", "reading PDF documents")
    head = data[:1024]
    if b"%PDF-" not in head:
        what = "an empty file" if not data.strip() else "not a PDF (no %PDF- header)"
        msg = f"{name}: {what}"
        raise DocumentError(msg, code="corrupt")
    try:
        found = run_isolated(
            "citeverify_core.references.document.pdf:extract_pdf",
            data,
            preload=_PRELOAD,
            timeout=timeout,
            memory=memory,
        )
    except DocumentError as exc:
        msg = f"{name}: {exc}"
        raise DocumentError(msg, code=exc.code) from None
    lines = [
        DocumentLine(
            text=text,
            location=Location(line=line, page=page),
            x0=x0,
            size=size,
            heading=heading,
            starts_paragraph=starts,
            raised=tuple((a, b) for a, b in raised),
            footnote=footnote,
            unreliable=unreliable,
        )
        for text, page, line, x0, size, heading, starts, raised, footnote, unreliable in found[
            "lines"
        ]
    ]
    return DocumentText(
        format="pdf",
        lines=lines,
        title=found["title"],
        pages=found["pages"],
        notes=list(found["notes"]),
    )


def extract_pdf(data: bytes, options: dict[str, Any]) -> dict[str, Any]:
    """Read ``data`` in this process: the JSON-able lines, title, pages and notes.

    The target :func:`read_pdf` runs in its child process; unbounded when called directly.

    Raises:
        DocumentError: as :func:`read_pdf`.
    """
    import logging  # noqa: PLC0415 - only where pdfminer runs

    # pdfminer logs every oddity of a malformed file as a warning: not the user's concern.
    logging.getLogger("pdfminer").setLevel(logging.CRITICAL)
    if options.get("sandboxed"):
        _quiet_pdfminer()
    max_pages = int(options.get("max_pages", MAX_PDF_PAGES))
    max_chars = int(options.get("max_chars", MAX_PDF_CHARACTERS))
    pages, info = read_words(data, max_pages=max_pages, max_chars=max_chars)
    lines, notes = _layout(pages)
    broken = info.pop("__broken__", [])
    if broken:
        notes.append(f"unreadable and left out: {', '.join(broken[:10])}")
    if not lines:
        images = sum(p.images for p in pages)
        undefined = sum(p.undefined for p in pages)
        if undefined:
            why = "its fonts do not say which letters they draw"
        elif images:
            why = f"{len(pages)} page{'s' if len(pages) != 1 else ''} of images"
        else:
            why = "the pages hold no text"
        msg = f"no text layer: run OCR first ({why})"
        raise DocumentError(msg, code="no-text-layer")
    return {
        "lines": [
            [
                ln.text,
                ln.page,
                ln.number,
                round(ln.x0, 2),
                round(ln.size, 2),
                ln.heading,
                ln.starts,
                ln.raised,
                ln.footnote,
                ln.unreliable,
            ]
            for ln in lines
        ],
        "title": _title(info, pages, lines),
        "pages": len(pages),
        "notes": notes,
    }


class _Quiet:
    """A logger that does nothing, as cheaply as possible."""

    def _nothing(self, *args: object, **kwargs: object) -> None:
        return None

    debug = info = warning = error = exception = critical = _nothing


def _quiet_pdfminer() -> None:
    """Replace pdfminer's module loggers by :class:`_Quiet` (in the parsing child only).

    pdfminer calls ``log.debug`` for every token and operator: with logging off, the calls
    alone are 7% of the reading (a disabled logger still costs a call and a level check).
    Only the child process does this: it reads one document and exits. Benchmark if changing.
    """
    import pdfminer.pdfinterp  # noqa: PLC0415 - the extra, in the child; imported so its log is set
    import pdfminer.pdfpage  # noqa: PLC0415, F401 - the extra, in the child only; its log set too

    for name, module in list(sys.modules.items()):
        if name.startswith("pdfminer.") and hasattr(module, "log"):
            setattr(module, "log", _Quiet())  # noqa: B010 - a module attribute mypy cannot see


#: Characters of text turned a quarter on a page from which it is read: a landscape table and
#: its caption; not a figure's axis labels or an arXiv stamp in the margin.
_MIN_SIDEWAYS_CHARS = 200


def _sideways_lines(page: Page) -> list[Line]:
    """The lines of the page's text turned a quarter, read in their own upright frame."""
    words = [w for w in page.sideways if w.text.strip(LOST)]
    if sum(len(w.text) for w in words) < _MIN_SIDEWAYS_CHARS:
        return []
    turned = Page(page.number, page.height, page.width)
    return [ln for ln in page_lines(turned, make_rows(dedupe(words))) if ln.text]


def _layout(pages: list[Page]) -> tuple[list[Line], list[str]]:
    """The lines of every page in reading order, and notes on what was removed or missing."""
    notes: list[str] = []
    rows_by_page: list[list[Row]] = []
    numbered = 0
    kept_words: list[list[Word]] = []
    lost_words: list[list[Word]] = []
    margins: set[tuple[str, int, float]] = set()
    for page in pages:
        # Words of unread glyphs only (a math font's big delimiters) take no part in the layout:
        # in a gutter they would join two columns. They only mark the line they stand on.
        lost_words.append([w for w in page.words if not w.text.strip(LOST)])
        words = dedupe([w for w in page.words if w.text.strip(LOST)])
        words, removed = drop_line_numbers(words, margins)
        numbered += removed > 0
        kept_words.append(words)
    if margins:
        # A page with only a few lines (the end of a list) has too short a stack to be told
        # from labels: it loses the numbers that stand where other pages' line numbers stand.
        for i, words in enumerate(kept_words):
            kept_words[i] = drop_numbers_at(words, margins)
    rows_by_page.extend(make_rows(words) for words in kept_words)
    if numbered:
        notes.append(f"line numbers of a review copy removed on {numbered} pages")
    removed_edges = drop_running_text(pages, rows_by_page)
    if removed_edges:
        notes.append(f"running headers, footers and page numbers removed ({removed_edges} lines)")
    lines: list[Line] = []
    empty: list[int] = []
    sideways: set[int] = set()
    for page, rows, lost in zip(pages, rows_by_page, lost_words, strict=True):
        on_page = [ln for ln in page_lines(page, rows) if ln.text]  # not lines of lost glyphs
        if lost:
            _mark_lost(on_page, lost)
        if not on_page and not any(w.text.strip(LOST) for w in page.words):
            empty.append(page.number)  # not a page whose only text was its running head
        turned = _sideways_lines(page)
        sideways.update(id(line) for line in turned)
        on_page += turned
        for number, line in enumerate(on_page, 1):
            line.number = number
        lines.extend(on_page)
    body = body_size(lines)
    mark_paragraphs_and_headings(lines, body)
    mark_footnotes(pages, lines, body)
    for line in lines:
        if id(line) in sideways:
            # After the page's own lines, out of their order: read for citations, never part
            # of a reference list (as a page's notes).
            line.footnote = True
    if empty and len(empty) < len(pages):
        notes.append(
            f"{_pages_text(empty)} {'has' if len(empty) == 1 else 'have'} no text "
            "(scanned? run OCR on them)"
        )
    skipped = sum(p.skipped for p in pages)
    if skipped:
        what = "figure" if skipped == 1 else "figures"
        notes.append(
            f"{skipped} {what} not read for text (more than 1 MB of drawing, or past the"
            " document's budget of nested drawings)"
        )
    undefined = sum(p.undefined for p in pages)
    if lines and undefined:
        notes.append(f"{undefined} characters of fonts without a Unicode map were left out")
    return lines, notes


def _mark_lost(lines: list[Line], lost: list[Word]) -> None:
    """Mark unreliable the lines that a word of unread glyphs stands on (baseline and extent)."""
    by_y = sorted(lines, key=lambda ln: ln.y)
    ys = [ln.y for ln in by_y]
    for word in lost:
        reach = 0.5 * max(word.size, 1.0)
        k = bisect.bisect_left(ys, word.y - reach)
        while k < len(by_y) and ys[k] <= word.y + reach:
            line = by_y[k]
            if line.x0 - reach <= word.x0 <= line.x1 + reach:
                line.unreliable = True
                break
            k += 1


def _pages_text(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:10])
    more = f" and {len(numbers) - 10} more" if len(numbers) > 10 else ""
    return f"page{'s' if len(numbers) > 1 else ''} {shown}{more}"


def _title(info: dict[str, Any], pages: list[Page], lines: list[Line]) -> str | None:
    """The metadata's Title when it looks like one, else the largest text on page 1."""
    raw = info.get("Title")
    title = _decode_pdf_string(raw)
    if title:
        title = re.sub(r"\s+", " ", title).strip()
        letters = sum(ch.isalpha() for ch in title)
        if letters >= 4 and not _FILE_TITLE.search(title) and len(title) <= 400:
            return title
    first = [ln for ln in lines if ln.page == 1 and ln.text]
    if not first or not pages:
        return None
    largest = max(ln.size for ln in first)
    body = statistics.median(ln.size for ln in first)
    if largest < 1.15 * body:
        return None
    parts: list[str] = []
    for line in first:
        if abs(line.size - largest) <= 0.5:
            parts.append(line.text)
        elif parts:
            break
    text = " ".join(parts).strip()
    return text or None


def _decode_pdf_string(value: object) -> str | None:
    """A PDF text string (PDFDocEncoding or UTF-16 with a BOM) as ``str``."""
    if isinstance(value, str):
        return value
    if not isinstance(value, bytes):
        return None
    if value.startswith((b"\xfe\xff", b"\xff\xfe")):
        return value.decode("utf-16", errors="replace")
    if value.startswith(b"\xef\xbb\xbf"):
        return value[3:].decode("utf-8", errors="replace")
    from pdfminer.utils import decode_text  # noqa: PLC0415 - the extra (PDFDocEncoding), in the child

    return decode_text(value)
