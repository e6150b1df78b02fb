r"""Whole documents: read a paper's reference list and check its citations against it (issue 26).

>>> from citeverify_core.references.document import extract_document
>>> doc = extract_document(b"Intro [1].\n\nReferences\n\n[1] Kuhn, T. S. (1962). The "
...                        b"Structure of Scientific Revolutions. Univ. of Chicago Press.\n",
...                        name="paper.txt")
>>> doc.references[0].label, doc.references[0].location.line
('1', 5)

Formats: PDF, Word (.docx), LaTeX (.tex, with its .bbl), .bbl, Markdown, HTML, plain text and
BibTeX. PDF and Word need the ``documents`` extra (pdfminer.six, python-docx);
LaTeX is read by the core (docs/documents.md says why not pylatexenc).
See docs/documents.md.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from citeverify_core.errors import DocumentError
from citeverify_core.references.document.model import (
    DOCUMENT_FORMATS,
    ConsistencyFinding,
    DocumentFormat,
    DocumentLine,
    DocumentText,
    ExtractedDocument,
    ExtractedReference,
    InTextCitation,
    Location,
)

__all__ = [
    "DOCUMENT_FORMATS",
    "MAX_DOCUMENT_BYTES",
    "ConsistencyFinding",
    "DocumentError",
    "DocumentFormat",
    "DocumentLine",
    "DocumentText",
    "ExtractedDocument",
    "ExtractedReference",
    "InTextCitation",
    "Location",
    "document_format",
    "extract_document",
    "read_document",
]

#: The largest document read (bytes of the file). The service documents the same limit.
MAX_DOCUMENT_BYTES = 50 * 1024 * 1024

_SUFFIXES: dict[str, DocumentFormat] = {
    **{f".{f}": f for f in DOCUMENT_FORMATS},
    ".markdown": "md",
    ".htm": "html",
    ".text": "txt",
}


def document_format(name: str, data: bytes | None = None) -> DocumentFormat:
    """The format of a file, from its suffix (and its first bytes when the suffix says nothing).

    Raises:
        DocumentError: ``unsupported-format``, naming the formats read.
    """
    suffix = Path(name).suffix.lower()
    if suffix in _SUFFIXES:
        return _SUFFIXES[suffix]
    if data is not None:
        if data.startswith(b"%PDF-"):
            return "pdf"
        if data.startswith(b"PK\x03\x04"):
            return "docx"
    known = ", ".join(sorted(_SUFFIXES))
    msg = f"{name}: unsupported document format {suffix or '(no suffix)'!r}; read: {known}"
    raise DocumentError(msg, code="unsupported-format")


def read_document(
    source: str | Path | bytes, *, name: str | None = None, format: DocumentFormat | None = None
) -> DocumentText:
    """A document's lines with their locations (no bibliography found yet).

    Args:
        source: A path, or the file's bytes.
        name: The file's name when ``source`` is bytes (its suffix gives the format).
        format: The format, when neither the name nor the bytes say it.

    Raises:
        DocumentError: unreadable, encrypted, without text, too large, unsupported.
    """
    path = Path(source) if isinstance(source, str | Path) else None
    name, data = _load(source, name)
    fmt = format or document_format(name, data)
    if fmt == "pdf":
        from citeverify_core.references.document.pdf import read_pdf  # noqa: PLC0415 - extra

        return read_pdf(data, name=name)
    if fmt == "docx":
        from citeverify_core.references.document.docx import read_docx  # noqa: PLC0415 - extra

        return read_docx(data, name=name)
    from citeverify_core.references.document.markup import read_markup  # noqa: PLC0415

    sibling = _sibling_reader(path) if path is not None and fmt == "tex" else None
    return read_markup(data, fmt, name=name, sibling=sibling)


def _sibling_reader(path: Path) -> Callable[[str], bytes | None]:
    """Reads a ``.bbl`` or ``.bib`` named relative to a ``.tex`` (its folder), or None."""

    def read(relative: str) -> bytes | None:
        if not relative.endswith((".bbl", ".bib")) or "\x00" in relative:
            return None
        candidate = path.parent / relative
        try:
            if not candidate.is_file():
                return None
            size = candidate.stat().st_size
            if size > MAX_DOCUMENT_BYTES:
                raise _too_large(candidate.name, size)
            return candidate.read_bytes()
        except OSError:
            return None

    return read


def extract_document(
    source: str | Path | bytes, *, name: str | None = None, format: DocumentFormat | None = None
) -> ExtractedDocument:
    """Read a document, find its reference list, and check its citations against the list.

    Raises:
        DocumentError: as :func:`read_document`, and ``no-reference-list`` when no list is found.
    """
    from citeverify_core.references.document.consistency import check_consistency  # noqa: PLC0415
    from citeverify_core.references.document.segment import find_references  # noqa: PLC0415

    text = read_document(source, name=name, format=format)
    if name is None:
        name = Path(source).name if isinstance(source, str | Path) else "document"
    found = find_references(text)
    if not found.references:
        msg = (
            f"{name}: no reference list found (no heading such as 'References' or "
            "'Bibliography' followed by references, no numbered list at the end, no \\bibitem "
            "entries)"
        )
        raise DocumentError(msg, code="no-reference-list")
    citations, findings = check_consistency(found.body, found.references)
    return ExtractedDocument(
        name=Path(name).name,
        format=text.format,
        title=text.title,
        pages=text.pages,
        heading=found.heading,
        references=found.references,
        citations=citations,
        findings=findings,
        notes=[*text.notes, *found.notes],
    )


def _load(source: str | Path | bytes, name: str | None) -> tuple[str, bytes]:
    """The file's name and bytes, refusing what is over :data:`MAX_DOCUMENT_BYTES`."""
    if isinstance(source, bytes | bytearray | memoryview):
        data = bytes(source)
        name = name or "document"
    elif isinstance(source, str | Path):
        path = Path(source)
        name = name or path.name
        try:
            size = path.stat().st_size
            if size > MAX_DOCUMENT_BYTES:
                raise _too_large(name, size)
            data = path.read_bytes()
        except OSError as exc:
            msg = f"{path}: cannot read the file ({exc.strerror or exc})"
            raise DocumentError(msg, code="corrupt") from exc
    else:
        msg = f"a document is a path or bytes, not {type(source).__name__}"
        raise TypeError(msg)
    if len(data) > MAX_DOCUMENT_BYTES:
        raise _too_large(name, len(data))
    return name, data


def _too_large(name: str, size: int) -> DocumentError:
    msg = (
        f"{name}: {size / 1e6:.1f} MB is over the {MAX_DOCUMENT_BYTES / 1e6:.0f} MB "
        "a document may have"
    )
    return DocumentError(msg, code="too-large")
