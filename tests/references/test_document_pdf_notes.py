"""The PDF reader's superscripts and footnote areas (issue 34), and the body size they need.

Pages are drawn with reportlab: text runs at given positions and sizes (a superscript is a
smaller run drawn above the baseline), and a footnote rule as a thin filled rectangle, as TeX
draws ``\\footnoterule``.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import pytest

from citeverify_core.references.document.model import DocumentLine
from citeverify_core.references.document.pdf import read_pdf

pytest.importorskip("pdfminer", reason="the documents extra is not installed")

#: x, y (baseline), text, size.
Run = tuple[float, float, str, float]
#: x, y, width: a 0.4-point rule.
Rule = tuple[float, float, float]

BODY = "The experiments confirm what the earlier studies of this question had suggested about it"


def drawn(pages: Sequence[tuple[Sequence[Run], Sequence[Rule]]]) -> bytes:
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    c = canvas.Canvas(out, pagesize=(612, 792))
    for runs, rules in pages:
        for x, y, text, size in runs:
            c.setFont("Times-Roman", size)
            c.drawString(x, y, text)
        for x, y, width in rules:
            c.rect(x, y, width, 0.4, stroke=0, fill=1)
        c.showPage()
    c.save()
    return out.getvalue()


def stringWidth(text: str, font: str, size: float) -> float:
    from reportlab.pdfbase.pdfmetrics import stringWidth as width

    return float(width(text, font, size))


def body_lines(top: float, n: int, size: float = 12, leading: float = 14.5) -> list[Run]:
    return [(72, top - i * leading, f"{BODY} {i}.", size) for i in range(n)]


def note(x: float, y: float, number: str, text: str, size: float = 10) -> list[Run]:
    """A note: its number raised and smaller, then its text."""
    width = stringWidth(number, "Times-Roman", 0.7 * size)
    return [(x, y + 0.35 * size, number, 0.7 * size), (x + width, y, text, size)]


def lines_of(pdf: bytes) -> list[DocumentLine]:
    return read_pdf(pdf, name="notes.pdf").lines


def test_superscript_citations_are_raised_spans_of_their_line() -> None:
    runs = body_lines(700, 6)
    x = 72.0
    for text, raised in [
        ("as the results", False),
        ("3,4", True),
        (" show, and the power 10", False),
        ("5", True),
        (" is large.", False),
    ]:
        size = 8.4 if raised else 12.0
        runs.append((x, 604.5 if raised else 600, text, size))
        x += stringWidth(text, "Times-Roman", size)
    line = next(ln for ln in lines_of(drawn([(runs, [])])) if ln.text.startswith("as the"))
    assert [line.text[a:b] for a, b in line.raised] == ["3,4", "5"]
    # The raised text stays where the glyphs put it; the spans say which characters it is.
    assert line.text.startswith("as the results3,4 show")
    assert not line.footnote


def test_notes_under_a_rule_are_footnotes_and_body_size_is_weighted_by_characters() -> None:
    pages = []
    for _ in range(3):
        runs = body_lines(720, 8)
        runs.insert(0, (72, 740, "A Short Section Heading", 14.4))
        y = 560.0
        for n in range(1, 14):
            runs += note(
                72, y, str(n), f"John Smith, The Title of Book {n} (Chicago: Press, 1990), {n}."
            )
            y -= 12
        pages.append((runs, [(72, 575, 150)]))
    lines = lines_of(drawn(pages))
    notes = [ln for ln in lines if ln.footnote]
    body = [ln for ln in lines if ln.text.startswith("The experiments")]
    assert len(notes) == 39
    assert all(ln.text[: ln.raised[0][1]].isdigit() for ln in notes)
    assert len(body) == 24 and not any(ln.footnote or ln.heading for ln in body)
    # More characters are in 10-point notes than in 12-point body lines: the body is still 12.
    assert sum(len(ln.text) for ln in notes) > sum(len(ln.text) for ln in body)
    assert [ln.text for ln in lines if ln.heading] == ["A Short Section Heading"] * 3


def test_notes_without_a_rule_need_space_and_a_raised_number() -> None:
    runs = body_lines(720, 20)
    runs += note(72, 400, "1", "Smith, Title, 23.") + note(72, 388, "2", "Ibid., 24.")
    lines = lines_of(drawn([(runs, [])]))
    assert [ln.text for ln in lines if ln.footnote] == ["1Smith, Title, 23.", "2Ibid., 24."]


def test_a_smaller_list_under_a_heading_and_a_numbered_listing_are_not_notes() -> None:
    refs = body_lines(720, 12)
    refs.append((72, 530, "References", 12))
    refs += [
        (72, 510 - 12 * i, f"{i + 1}. Smith J. A title of a work. 2004.", 10) for i in range(8)
    ]
    listing = body_lines(720, 12)
    listing += [(72, 520 - 11 * i, f"{i + 10} \\def\\x{{{i}}}", 9) for i in range(10)]
    lines = lines_of(drawn([(refs, []), (listing, [])]))
    assert not any(ln.footnote for ln in lines)
    assert sum(ln.text.startswith("3. Smith") for ln in lines) == 1


def test_a_lowered_letter_stays_in_a_line_opened_by_a_raised_note_number() -> None:
    # A note's number is the first word from the top; the TeX logo's "E" is set lower.
    runs = body_lines(720, 6)
    x = 72.0
    for text, dy, size in [("1", 3.5, 7.0), ("See the ", 0, 10.0), ("T", 0, 10.0)]:
        runs.append((x, 600 + dy, text, size))
        x += stringWidth(text, "Times-Roman", size)
    runs.append((x - 1.6, 597.85, "E", 10.0))
    runs.append((x + 4.5, 600, "X book.", 10.0))
    line = next(ln for ln in lines_of(drawn([(runs, [])])) if "See the" in ln.text)
    assert line.text == "1See the TeX book."
    assert line.raised == ((0, 1),)


@pytest.mark.parametrize(
    "paths",
    [
        b"100 100 m S",  # a path of one point
        b"100 100 m 300 100 l h S 50 50 100 0.4 re f",  # closed, then a rule
        b"1e30 1 m 2e30 1 l S 100 100 m 300 100.2 l 300 0 l S",  # huge, then bent
        b"0 0 m 1 1 2 2 3 3 c 5 5 l S /Nope gs 10 10 m 200 10 l S",  # a curve, a bad state
    ],
)
def test_any_path_leaves_the_text_readable(paths: bytes) -> None:
    from tests.references.test_document_pdf import raw_pdf, text_ops

    page = paths + b"\n" + text_ops([(72, 700 - 14 * i, b"line %d" % i) for i in range(3)])
    doc = read_pdf(raw_pdf([page]), name="paths.pdf")
    assert [ln.text for ln in doc.lines] == ["line 0", "line 1", "line 2"]


def test_notes_in_the_body_size_under_a_rule_are_footnotes() -> None:
    # Turabian's manuals set notes in the body's size, "1." first, under TeX's short rule.
    runs = body_lines(720, 20, size=10.9, leading=13.6)
    runs += [
        (90, 420, "1. Kate L. Turabian, A Manual for Writers (Chicago: University of", 10.9),
        (72, 406.4, "Chicago Press, 2007), 12.", 10.9),
        (90, 392.8, "2. Turabian, A Manual, 14.", 10.9),
    ]
    lines = lines_of(drawn([(runs, [(72, 432, 150)])]))
    assert [ln.text for ln in lines if ln.footnote] == [
        "1. Kate L. Turabian, A Manual for Writers (Chicago: University of",
        "Chicago Press, 2007), 12.",
        "2. Turabian, A Manual, 14.",
    ]
    # Without the rule, numbered lines in the body's size are the body's (a numbered list).
    assert not any(ln.footnote for ln in lines_of(drawn([(runs, [])])))
