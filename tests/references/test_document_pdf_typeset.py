"""The PDF reader's text of typeset lines (issue 34): TeX's logos, URLs set with stretch,
letter-spaced small capitals.

Pages are drawn with reportlab glyph by glyph where TeX places glyphs apart: the logos'
letters raised, lowered and kerned into their neighbours, a typewriter URL whose characters
are moved apart by stretchable breakpoints (biblatex's ``\\url``), a heading whose letters are
tracked.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import pytest

from citeverify_core.references.document.model import DocumentLine
from citeverify_core.references.document.pdf import read_pdf

pytest.importorskip("pdfminer", reason="the documents extra is not installed")

#: x, y (baseline), text, size, font.
Run = tuple[float, float, str, float, str]

BODY = "The experiments confirm what the earlier studies of this question had suggested"


def width(text: str, font: str, size: float) -> float:
    from reportlab.pdfbase.pdfmetrics import stringWidth

    return float(stringWidth(text, font, size))


def lines_of(runs: Sequence[Run]) -> list[DocumentLine]:
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    c = canvas.Canvas(out, pagesize=(612, 792))
    for i in range(8):  # body text, so that the size of the tested lines is the body's
        c.setFont("Times-Roman", 10)
        c.drawString(72, 740 - 13 * i, f"{BODY} {i}.")
    for x, y, text, size, font in runs:
        c.setFont(font, size)
        c.drawString(x, y, text)
    c.showPage()
    c.save()
    return list(read_pdf(out.getvalue(), name="typeset.pdf").lines)


def logo_runs(x: float, y: float, latex: bool, size: float = 10) -> tuple[list[Run], float]:
    """TeX's logo (LaTeX's when ``latex``) as plain.tex and latex.ltx place its letters."""
    font = "Times-Roman"
    runs: list[Run] = []
    if latex:
        runs.append((x, y, "L", size, font))
        x += width("L", font, size) - 0.36 * size
        runs.append((x, y + 0.21 * size, "A", 0.7 * size, font))
        x += width("A", font, 0.7 * size) - 0.15 * size
    runs.append((x, y, "T", size, font))
    x += width("T", font, size) - 0.1667 * size
    runs.append((x, y - 0.22 * size, "E", size, font))
    x += width("E", font, size) - 0.125 * size
    runs.append((x, y, "X", size, font))
    return runs, x + width("X", font, size)


def test_tex_logos_read_as_a_reader_writes_them() -> None:
    runs: list[Run] = [(72, 600, "Knuth, The", 10, "Times-Roman")]
    logo, x = logo_runs(72 + width("Knuth, The ", "Times-Roman", 10), 600, latex=False)
    runs += [*logo, (x, 600, "book. Lamport,", 10, "Times-Roman")]
    logo, x = logo_runs(x + width("book. Lamport, ", "Times-Roman", 10), 600, latex=True)
    runs += [*logo, (x + 2.5, 600, "2e: A Document Preparation System.", 10, "Times-Roman")]
    runs.append((72, 586, "TEX and LATEX in capitals stay as typed.", 10, "Times-Roman"))
    texts = [ln.text for ln in lines_of(runs)]
    assert "Knuth, The TeXbook. Lamport, LaTeX 2e: A Document Preparation System." in texts
    assert "TEX and LATEX in capitals stay as typed." in texts
    line = next(ln for ln in lines_of(runs) if ln.text.startswith("Knuth"))
    assert line.raised == ()  # the logo's raised "A" is no superscript


def test_a_typewriter_url_set_with_stretch_reads_without_spaces() -> None:
    # biblatex's \url: each character after a breakpoint moved right by a stretched glue.
    pieces = ["https", ":", "/", "/", "tex", ".", "stackexchange", ".", "com", "/", "q", "-", "42"]
    runs: list[Run] = [(72, 600, "Carlisle. Dec. 5, 2017. url:", 10, "Times-Roman")]
    x = 72 + width("Carlisle. Dec. 5, 2017. url: ", "Times-Roman", 10)
    for piece in pieces:
        runs.append((x, 600, piece, 10, "Courier"))
        x += width(piece, "Courier", 10) + 1.4
    runs.append((x + 2, 600, "(visited on 07/17/2020).", 10, "Times-Roman"))
    # A typewriter line with its own spaces keeps them (a space is one whole character).
    runs.append((72, 586, "print the code here", 10, "Courier"))
    texts = [ln.text for ln in lines_of(runs)]
    assert (
        "Carlisle. Dec. 5, 2017. url: https://tex.stackexchange.com/q-42 (visited on 07/17/2020)."
        in texts
    )
    assert "print the code here" in texts


def test_proportional_words_slightly_apart_keep_their_space() -> None:
    # The typewriter rule needs one pitch over a run of words: tight justified words in a
    # proportional font are still words.
    runs: list[Run] = []
    x = 72.0
    for word in ["a", "tight", "line", "of", "words", "set", "close"]:
        runs.append((x, 600, word, 10, "Times-Roman"))
        x += width(word, "Times-Roman", 10) + 1.5
    texts = [ln.text for ln in lines_of(runs)]
    assert "a tight line of words set close" in texts


def test_a_justified_list_under_a_listing_in_columns_is_read_as_one_column() -> None:
    # An R session's package listing set in four columns above a one-column, justified
    # reference list (a Bioconductor vignette's last page). The listing leaves a white strip
    # that some of the list's word spaces (six tenths of a size) happen to fall in: a justified
    # line across it is one line, even between the short last lines of its entries.
    runs: list[Run] = []
    for i in range(12):
        for k, x in enumerate([72, 180, 290, 400]):
            runs.append((x, 620 - 12 * i, f"pkg{i}{k}_1.{i}", 9, "Courier"))
    refs = [
        ("[1] Simon Anders and Wolfgang Huber. Differential expression analysis of", "counts."),
        ("Genome Biology, 11:R106, 2010.", ""),
        ("[2] Valerie Obenchain. Counting with the summarizeOverlaps tool in R", "a vignette."),
        ("Bioconductor package, 2011.", ""),
        ("[3] Y. Benjamini and Y. Hochberg. Controlling the false discovery of", "rate: a method."),
        ("Journal of the Royal Statistical Society B, 57:289-300, 1995.", ""),
    ]
    expected = []
    for i, (left, right) in enumerate(refs):
        y = 460 - 12 * i
        x = 72.0
        words = left.split()
        # Justified: the left part's spaces stretched alike so that it ends at x 372, the
        # right part 6 points on, in the listing's strip.
        natural = sum(width(w, "Times-Roman", 10) for w in words)
        space = (372 - 72 - natural) / (len(words) - 1) if right else 2.5
        assert 2 < space < 6
        for w in words:
            runs.append((x, y, w, 10, "Times-Roman"))
            x += width(w, "Times-Roman", 10) + space
        if right:
            runs.append((378, y, right, 10, "Times-Roman"))
        expected.append(f"{left} {right}".strip())
    texts = [ln.text for ln in lines_of(runs)]
    assert texts[-len(expected) :] == expected


def test_a_logo_in_a_column_set_at_other_baselines_stays_in_its_line() -> None:
    # LaTeX News: the right column's baselines lie 4 points under the left one's, so the row
    # is opened by a left line and the logo's lowered "E" is beyond a row's reach from it.
    runs: list[Run] = []
    for i in range(12):
        runs.append((72, 640 - 12 * i, f"Left column text of line {i} here", 10, "Times-Roman"))
    for i in range(12):
        y = 636 - 12 * i
        runs.append((320, y, f"[{i + 1}]", 10, "Times-Roman"))
        logo, x = logo_runs(340, y, latex=True)
        runs += [*logo, (x + 2.5, y, f"Project Team: news {i}.", 10, "Times-Roman")]
    texts = [ln.text for ln in lines_of(runs)]
    assert [t for t in texts if t.startswith("[")] == [
        f"[{i + 1}] LaTeX Project Team: news {i}." for i in range(12)
    ]


def spaced(x: float, y: float, text: str, track: float, size: float = 10) -> list[Run]:
    """``text`` drawn letter by letter, ``track`` points apart; a space is a word space more."""
    runs: list[Run] = []
    for ch in text:
        if ch == " ":
            x += width(" ", "Times-Roman", size)
            continue
        runs.append((x, y, ch, size, "Times-Roman"))
        x += width(ch, "Times-Roman", size) + track
    return runs


def test_letter_spaced_words_are_joined_and_letters_typed_apart_are_not() -> None:
    runs = spaced(72, 600, "BIBLIOGRAPHY", 2.0) + spaced(72, 570, "WORKS CITED", 1.8)
    # Letters typed with spaces in running text: word spaces, the line's other spaces alike.
    runs.append((72, 540, "The bases A C G T pair in order.", 10, "Times-Roman"))
    texts = [ln.text for ln in lines_of(runs)]
    assert "BIBLIOGRAPHY" in texts
    assert "WORKS CITED" in texts
    assert "The bases A C G T pair in order." in texts
