r"""Text formats: LaTeX (.tex, .bbl), Markdown, HTML, plain text and BibTeX, as document lines.

This module reads the bytes and hands each format to its reader:

* ``.tex`` (and Sweave/knitr ``.Rnw`` read as ``tex``): ``latex_document`` - body lines with
  citation commands kept, the document's macros expanded (``latex_macros``), LaTeX made text
  (``latex_text``), the ``thebibliography`` list or the ``.bbl``/``.bib`` beside the file.
* ``.bbl`` and ``.bib``: ``latex_bib`` - bibtex's ``\bibitem`` list, biblatex's ``\entry``
  blocks; a BibTeX entry's text is the entry itself (the verifier reads BibTeX), its key kept.
* ``.md``: ``markup_markdown``; ``.html``/``.htm``: ``markup_html``.
* ``.txt``: lines; a line after a blank one starts a paragraph.

The package imports this module only when a text format is read (``__init__.py``), so the
readers are imported here at the top: nothing is gained by deferring them further.
"""

from __future__ import annotations

from citeverify_core.errors import DocumentError
from citeverify_core.references.document.latex_bib import bbl_entries, bib_entries
from citeverify_core.references.document.latex_document import SiblingReader, read_tex
from citeverify_core.references.document.latex_text import latex_to_text
from citeverify_core.references.document.markup_common import (
    MAX_DOCUMENT_LINES,
    decode,
    plain_lines,
)
from citeverify_core.references.document.markup_html import read_html
from citeverify_core.references.document.markup_markdown import read_markdown
from citeverify_core.references.document.model import (
    DocumentFormat,
    DocumentText,
    ExtractedReference,
)

__all__ = ["MAX_DOCUMENT_LINES", "SiblingReader", "latex_to_text", "read_markup"]


def read_markup(
    data: bytes, fmt: DocumentFormat, *, name: str, sibling: SiblingReader | None = None
) -> DocumentText:
    r"""A text document's lines (and the entries its format delimits), numbered from 1.

    Args:
        data: The file's bytes.
        fmt: Its format (not ``pdf`` or ``docx``).
        name: Its name, for messages.
        sibling: Reads a file next to it (a ``.tex``'s ``.bbl``, ``.bib`` and ``\input``
            files); None when the document came as bytes alone.

    Raises:
        DocumentError: ``corrupt`` (NUL bytes, bytes no text encoding reads, a binary file),
            ``too-large`` (over :data:`MAX_DOCUMENT_LINES` lines).
    """
    line_count = max(data.count(b"\n"), data.count(b"\r"))  # a file may end its lines with CR alone
    if line_count > MAX_DOCUMENT_LINES:
        # Counted in the bytes, before any line object is made: a 20 MB file of "a\n" would
        # otherwise build ten million of them (gigabytes) before it is known to hold no list.
        most = MAX_DOCUMENT_LINES
        msg = f"{name}: {line_count:,} lines is over the {most:,} lines a document may have"
        raise DocumentError(msg, code="too-large")
    text = decode(data, name)
    if fmt == "tex":
        return read_tex(text, name, sibling)
    if fmt in {"bbl", "bib"}:
        entries = bbl_entries(text) if fmt == "bbl" else bib_entries(text, name)
        return DocumentText(format=fmt, lines=[], entries=entries, notes=_no_entries(entries))
    if fmt == "md":
        return read_markdown(text)
    if fmt == "html":
        return read_html(text)
    return DocumentText(format=fmt, lines=plain_lines(text))


def _no_entries(entries: list[ExtractedReference]) -> list[str]:
    return [] if entries else ["the file holds no bibliography entries"]
