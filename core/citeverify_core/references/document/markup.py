"""Text formats: LaTeX, .bbl, Markdown, HTML, plain text and BibTeX.

First version (to be replaced): text and Markdown as lines.
"""

from __future__ import annotations

from citeverify_core.errors import DocumentError
from citeverify_core.references.document.model import (
    DocumentFormat,
    DocumentLine,
    DocumentText,
    Location,
)

__all__ = ["read_markup"]


def read_markup(data: bytes, fmt: DocumentFormat, *, name: str) -> DocumentText:
    """The lines of a text document, numbered from 1."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    if "\x00" in text:
        msg = f"{name}: not a text file (it holds NUL bytes)"
        raise DocumentError(msg, code="corrupt")
    lines = [
        DocumentLine(text=line, location=Location(line=number))
        for number, line in enumerate(text.splitlines(), 1)
    ]
    return DocumentText(format=fmt, lines=lines)
