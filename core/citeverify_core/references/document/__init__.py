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
from typing import TYPE_CHECKING, Any

from citeverify_core.errors import DocumentError
from citeverify_core.references.document.model import (
    DOCUMENT_FORMATS,
    CitationCoverage,
    ConsistencyFinding,
    DocumentFormat,
    DocumentLine,
    DocumentText,
    ExtractedDocument,
    ExtractedReference,
    InTextCitation,
    Location,
)

if TYPE_CHECKING:
    from citeverify_core.references.document.sandbox import Cancel

__all__ = [
    "DOCUMENT_FORMATS",
    "MAX_DOCUMENT_BYTES",
    "CitationCoverage",
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
    "extract_document_bounded",
    "read_document",
]

#: The largest document read (bytes of the file). The service documents the same limit.
MAX_DOCUMENT_BYTES = 50 * 1024 * 1024

_SUFFIXES: dict[str, DocumentFormat] = {
    **{f".{f}": f for f in DOCUMENT_FORMATS},
    ".markdown": "md",
    ".htm": "html",
    ".text": "txt",
    ".ltx": "tex",
    ".rnw": "tex",  # Sweave/knitr sources: their chunks are left out (latex_document.py)
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
    r"""Reads a file named relative to a ``.tex`` (its folder), or None.

    Only what a LaTeX source names for its text: a ``.bbl`` or ``.bib`` (the list) and a
    ``.tex`` (``\input``/``\include``). Never a file outside the source's folder, even through
    a symbolic link: a document is untrusted and its names must not read the user's other files.
    """
    folder = path.parent.resolve()

    def read(relative: str) -> bytes | None:
        if not relative.endswith((".bbl", ".bib", ".tex")) or "\x00" in relative:
            return None
        candidate = path.parent / relative
        try:
            if not candidate.is_file() or not candidate.resolve().is_relative_to(folder):
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
    # Deferred: the readers and the citation finders import regular expressions and the
    # reference parser, which `import citeverify_core.references.document` should not pay for.
    from citeverify_core.references.document.consistency import read_consistency  # noqa: PLC0415
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
    # segment.py says when the list may not have been read whole (a later field: read it so).
    checked = read_consistency(
        found.body, found.references, incomplete=getattr(found, "incomplete", None)
    )
    return ExtractedDocument(
        name=Path(name).name,
        format=text.format,
        title=text.title,
        pages=text.pages,
        heading=found.heading,
        references=found.references,
        citations=checked.citations,
        findings=checked.findings,
        notes=[*text.notes, *found.notes, *checked.notes],
        coverage=checked.coverage,
    )


#: What a document reader child imports while it waits as a warm spare: every format's reader
#: (those of an extra that is missing are skipped) and the list and citation finders.
_READER_PRELOAD = (
    "citeverify_core.references.document.segment",
    "citeverify_core.references.document.consistency",
    "citeverify_core.references.document.markup",
    "citeverify_core.references.document.pdf",
    "citeverify_core.references.document.docx",
    "pdfminer.pdfinterp",
    "pdfminer.pdfpage",
    "pdfminer.layout",
    "docx",
)


def extract_document_bounded(
    data: bytes,
    *,
    name: str,
    timeout: float,
    memory: int | None = None,
    cancel: Cancel | None = None,
    max_references: int | None = None,
) -> ExtractedDocument:
    """:func:`extract_document` of any format, in a child process bounded in time and memory.

    What a service does with an upload: the whole reading (the format's reader, the list and the
    citations) runs in one child that limits its own address space and CPU time, is killed when
    ``timeout`` expires or when ``cancel`` is called, and leaves this process untouched whatever
    the document holds (a text file of 50 MB without a list, an HTML page nested deep).

    Args:
        data: The file's bytes.
        name: The file's name (its suffix gives the format).
        timeout: Wall-clock seconds before the child is killed (``DocumentError("timeout")``).
        memory: The child's address-space limit (default: the sandbox's, 1 GiB).
        cancel: A :class:`~citeverify_core.references.document.sandbox.Cancel` another thread
            may call to give the reading up at once.
        max_references: More references than this is ``DocumentError("too-many-references")``,
            decided in the child (a huge list never travels back to be refused).

    Raises:
        DocumentError: as :func:`extract_document`; ``timeout`` when stopped, ``too-large``
            over the memory limit, ``unavailable`` when no child process can be started.
    """
    from citeverify_core.references.document.report import document_from_dict  # noqa: PLC0415
    from citeverify_core.references.document.sandbox import (  # noqa: PLC0415
        DEFAULT_MEMORY_BYTES,
        run_isolated,
    )

    if len(data) > MAX_DOCUMENT_BYTES:
        raise _too_large(name, len(data))
    document_format(name, data)  # an unsupported format is refused here, without a child
    try:
        found = run_isolated(
            "citeverify_core.references.document:_extract_in_child",
            data,
            options={"name": name, "max_references": max_references},
            preload=_READER_PRELOAD,
            timeout=timeout,
            memory=DEFAULT_MEMORY_BYTES if memory is None else memory,
            cancel=cancel,
            fallback=False,
        )
    except DocumentError as exc:
        if str(exc).startswith(f"{name}: "):
            raise
        raise DocumentError(f"{name}: {exc}", code=exc.code) from None
    try:
        return document_from_dict(found)
    except (ValueError, TypeError, KeyError) as exc:
        msg = f"{name}: the reader's answer is not a document ({exc})"
        raise DocumentError(msg, code="corrupt") from None


def _extract_in_child(data: bytes, options: dict[str, Any]) -> dict[str, Any]:
    """The child's side of :func:`extract_document_bounded` (run by the sandbox).

    A reference longer than the verifier takes (``MAX_REFERENCE_CHARS``) comes back cut to that
    length and "…": it cannot be verified anyway, and a list of 2,000 references of 10,000
    characters would otherwise travel, be stored and be answered whole (tens of MB).
    """
    from citeverify_core.references.parse import MAX_REFERENCE_CHARS  # noqa: PLC0415

    name = str(options["name"])
    found = extract_document(data, name=name).to_dict()
    most = options.get("max_references")
    if most is not None and len(found["references"]) > most:
        msg = (
            f"{name}: {len(found['references']):,} references found; a document may have at "
            f"most {most:,}"
        )
        raise DocumentError(msg, code="too-many-references")
    for reference in found["references"]:
        if len(reference["text"]) > MAX_REFERENCE_CHARS:
            reference["text"] = reference["text"][:MAX_REFERENCE_CHARS] + "…"
    return found


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
