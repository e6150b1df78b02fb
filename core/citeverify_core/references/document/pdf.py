"""PDF: text lines with their page and line (pdfminer.six).

First version (to be replaced): pdfminer's plain text, page by page, no layout analysis.
"""

from __future__ import annotations

import io

from citeverify_core.errors import DocumentError, require_extra
from citeverify_core.references.document.model import DocumentLine, DocumentText, Location

__all__ = ["read_pdf"]


def read_pdf(data: bytes, *, name: str) -> DocumentText:
    """The lines of a PDF."""
    require_extra("documents", "reading PDF documents")
    from pdfminer.high_level import extract_pages  # noqa: PLC0415 - an extra
    from pdfminer.layout import LTTextContainer, LTTextLine  # noqa: PLC0415 - an extra

    lines: list[DocumentLine] = []
    pages = 0
    try:
        for pages, page in enumerate(extract_pages(io.BytesIO(data)), 1):
            number = 0
            for box in page:
                if not isinstance(box, LTTextContainer):
                    continue
                for item in box:
                    if isinstance(item, LTTextLine):
                        number += 1
                        lines.append(
                            DocumentLine(
                                text=item.get_text().rstrip("\n"),
                                location=Location(line=number, page=pages),
                                x0=item.x0,
                            )
                        )
    except Exception as exc:
        msg = f"{name}: not a readable PDF ({type(exc).__name__})"
        raise DocumentError(msg, code="corrupt") from exc
    return DocumentText(format="pdf", lines=lines, pages=pages)
