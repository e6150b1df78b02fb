"""The PDF reader's text (issue 34): digit-like characters, glyph names, damaged text marked.

PDFs are written with ``raw_pdf`` (test_document_pdf.py): a ToUnicode map makes a code stand
for any character, an /Encoding /Differences or a Type 3 font gives glyph names only.
"""

from __future__ import annotations

import pytest

from citeverify_core.references.document.pdf import read_pdf
from tests.references.test_document_pdf import raw_pdf, text_ops

pytest.importorskip("pdfminer", reason="the documents extra is not installed")

#: Codes of /F1 mapped to digit-like characters that ``str.isdigit`` accepts and ``int`` refuses
#: (superscripts, a circled digit) or that ``int`` reads but no line number is made of
#: (Arabic-Indic, fullwidth).
DIGIT_LIKE = {
    b"A": "\u00b3",  # superscript three
    b"B": "\u00b2",  # superscript two
    b"C": "\u0663",  # Arabic-Indic three
    b"D": "\uff13",  # fullwidth three
    b"E": "\u2460",  # circled one
}


def digit_like_pdf() -> bytes:
    """Stacks of digit-like characters in a margin and at line starts, as line numbers stand."""
    cmap = b"\n".join(b"<%02X> <%04X>" % (code[0], ord(ch)) for code, ch in DIGIT_LIKE.items())
    cmap += b"\n<61> <0061>\n<62> <0062>\n<20> <0020>"
    pages = []
    for code in DIGIT_LIKE:
        runs: list[tuple[float, float, bytes]] = []
        for i in range(12):
            y = 700 - 14 * i
            runs.append((40, y, code * (1 + i % 3)))  # a margin stack, growing
            runs.append((72, y, code + b" ab ba"))  # at the start of a line
        pages.append(text_ops(runs))
    return raw_pdf(pages, to_unicode=cmap)


def test_digit_like_characters_in_margins_and_at_line_starts_do_not_crash() -> None:
    doc = read_pdf(digit_like_pdf(), name="digits.pdf")
    assert doc.pages == len(DIGIT_LIKE)
    for page, ch in enumerate(DIGIT_LIKE.values(), 1):
        lines = [ln.text for ln in doc.lines if ln.location.page == page]
        # Nothing taken for line numbers: every line keeps its characters.
        assert len(lines) == 12
        assert all(f"{ch} ab ba" in line for line in lines)
        assert lines[0].startswith(ch)
