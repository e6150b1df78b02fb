"""Word (.docx): paragraphs with their automatic numbering (python-docx).

First version (to be replaced): paragraphs as lines.
"""

from __future__ import annotations

import io

from citeverify_core.errors import DocumentError, require_extra
from citeverify_core.references.document.model import DocumentLine, DocumentText, Location

__all__ = ["read_docx"]


def read_docx(data: bytes, *, name: str) -> DocumentText:
    """The paragraphs of a Word document, each a line."""
    require_extra("documents", "reading Word documents")
    import docx  # noqa: PLC0415 - an extra

    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:
        msg = f"{name}: not a readable Word document ({type(exc).__name__})"
        raise DocumentError(msg, code="corrupt") from exc
    lines = [
        DocumentLine(
            text=paragraph.text,
            location=Location(line=number),
            heading=paragraph.style is not None
            and (paragraph.style.name or "").startswith("Heading"),
            starts_paragraph=True,
        )
        for number, paragraph in enumerate(document.paragraphs, 1)
    ]
    return DocumentText(format="docx", lines=lines, title=document.core_properties.title or None)
