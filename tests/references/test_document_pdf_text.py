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


def type3_pdf(lines: list[bytes], names: dict[int, str]) -> bytes:
    """A Type 3 font as pdfTeX writes TeX's bitmap fonts: no ToUnicode, glyphs named by code."""
    differences = b" ".join(
        b"%d /%s" % (code, name.encode()) for code, name in sorted(names.items())
    )
    widths = b" ".join(b"500" for _ in range(256))
    font = (
        b"<< /Type /Font /Subtype /Type3 /FontBBox [0 0 1000 1000] "
        b"/FontMatrix [0.001 0 0 0.001 0 0] /CharProcs << >> /Resources << >> "
        b"/Encoding << /Type /Encoding /Differences [%s] >> "
        b"/FirstChar 0 /LastChar 255 /Widths [%s] >>" % (differences, widths)
    )
    runs = [(72.0, 700.0 - 14 * i, b"(" + line + b")") for i, line in enumerate(lines)]
    return raw_pdf([text_ops([(x, y, s[1:-1]) for x, y, s in runs])], font=font)


def tex_names(lines: list[bytes]) -> dict[int, str]:
    """Every code of ``lines`` named "a" + its code (pdfTeX's names for a bitmap font's glyphs)."""
    codes = {b for line in lines for b in line if b != 0x20} | {44, 45, 46, 40}
    return {code: f"a{code}" for code in codes}


def test_a_type3_tex_font_without_unicode_is_read_from_its_glyph_names() -> None:
    # T1 codes: 252 "ü", 21 en dash, 27 "ff" ligature, 28 "fi" ligature.
    lines = [b"Einf\xfchrung", b"61:821\x15856", b"Je\x1brey", b"\x1cnal"]
    doc = read_pdf(type3_pdf(lines, tex_names(lines)), name="type3.pdf")
    assert [ln.text for ln in doc.lines] == ["Einführung", "61:821–856", "Jeffrey", "final"]
    assert not any(ln.unreliable for ln in doc.lines)


def test_a_glyph_whose_name_says_nothing_is_not_invented_and_marks_its_line() -> None:
    lines = [b"Je\x1brey and", b"plain text"]
    names = {code: f"g{code}" for code in tex_names(lines)}  # names that are not codes
    names |= dict(zip(b"plain tex", ["p", "l", "a", "i", "n", "space", "t", "e", "x"], strict=True))
    names[0x1B] = "g17"
    doc = read_pdf(type3_pdf(lines, names), name="type3.pdf")
    first, second = doc.lines
    assert first.unreliable and "\ufffd" not in first.text
    assert "ff" not in first.text
    assert second.text == "plain text" and not second.unreliable


def test_a_font_numbered_in_order_of_use_is_not_read_as_if_it_were_standard() -> None:
    from citeverify_core.errors import DocumentError

    # Ghostscript's Type 3 fonts from dvips' bitmap fonts: "a0", "a1", ... whatever the glyph.
    lines = [b"Jeffrey 1984", b"Smith"]
    with pytest.raises(DocumentError) as caught:
        read_pdf(type3_pdf(lines, {code: f"a{code}" for code in range(256)}), name="gs.pdf")
    assert caught.value.code == "no-text-layer"


def test_a_t1_bitmap_font_s_accented_capital_is_not_read_as_standard_encoding() -> None:
    # T1 197 is "Å"; Adobe's StandardEncoding, which pdfminer falls back to, has a macron there.
    lines = [b"M. \xc5strand, and Speed."]
    doc = read_pdf(type3_pdf(lines, tex_names(lines)), name="type3.pdf")
    assert [ln.text for ln in doc.lines] == ["M. Åstrand, and Speed."]


def test_spaces_in_a_typewriter_run_before_a_bracket_and_between_nested_quotes() -> None:
    courier = b"<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>"
    runs = [
        # A stretched URL's gaps (under a character) are no spaces; before "[" one is.
        (72.0, 700.0, b"[(http://x.org/) -350 (a/b.html)]"),
        (72.0, 686.0, b"[(arXiv: 1008.2849v1) -350 ([cs.DS].)]"),
    ]
    doc = read_pdf(raw_pdf([text_ops(runs)], font=courier), name="tt.pdf")
    assert [ln.text for ln in doc.lines] == ["http://x.org/a/b.html", "arXiv: 1008.2849v1 [cs.DS]."]
    # Times: a thin space (0.11 em) between an opening double and single quotation mark.
    quotes = [(72.0, 700.0, b"[(In: \\252) -110 (\\140Intention\\047 und more.)]")]
    doc = read_pdf(raw_pdf([text_ops(quotes)]), name="q.pdf")
    assert doc.lines[0].text == "In: \u201c \u2018Intention\u2019 und more."


def test_a_url_drawn_apart_at_every_character_reads_without_spaces() -> None:
    # biblatex's URL breakpoints after every character: each glyph 0.4 pt apart, the breaks
    # between "words" 1.6 pt (a Courier glyph is 6 pt at 10 pt).
    courier = b"<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>"
    spaced = b"[(url:) -600 (h) -40 (t) -40 (t) -40 (p) -160 (:) -160 (/) -160 (/) -160 "
    spaced += b"(w) -40 (w) -40 (w) -160 (.) -160 (o) -40 (r) -40 (g) -600 (\\(visited\\))]"
    doc = read_pdf(raw_pdf([text_ops([(72.0, 700.0, spaced)])], font=courier), name="u.pdf")
    assert doc.lines[0].text == "url: http://www.org (visited)"


def _turned_ops(lines: list[bytes], *, left: bool = True) -> bytes:
    """Lines turned a quarter (a landscape table): to the left, or to the right."""
    ops = [b"BT /F1 10 Tf"]
    for i, text in enumerate(lines):
        x = 100 + 14 * i
        matrix = b"0 1 -1 0 %d 100" % x if left else b"0 -1 1 0 %d 700" % (500 - 14 * i)
        ops.append(matrix + b" Tm (" + text + b") Tj")
    ops.append(b"ET")
    return b"\n".join(ops)


@pytest.mark.parametrize("left", [True, False])
def test_a_table_set_sideways_is_read_after_its_page_and_never_joins_a_list(left: bool) -> None:
    table = [b"TABLE A1", b"Sample table taken from Treu et al. (2003)"]
    table += [b"0 2 %d 1370.99 57.35 6.651120 17.131149 21.344 2 4.385" % k for k in range(6)]
    upright = text_ops([(72.0, 700.0, b"Body text of the page.")])
    doc = read_pdf(raw_pdf([upright + b"\n" + _turned_ops(table, left=left)]), name="t.pdf")
    texts = [ln.text for ln in doc.lines]
    assert texts[0] == "Body text of the page."
    assert texts[1:3] == ["TABLE A1", "Sample table taken from Treu et al. (2003)"]
    assert all(ln.footnote for ln in doc.lines[1:])
    # A y axis's label, a few turned words, is not read.
    label = upright + b"\n" + _turned_ops([b"Density of cells"], left=left)
    assert [ln.text for ln in read_pdf(raw_pdf([label]), name="a.pdf").lines] == [
        "Body text of the page."
    ]


def test_a_bitmap_font_that_set_only_words_is_read_in_its_encoding() -> None:
    # affy's title font: T1 "ff" (27) among letters, no comma or parenthesis ("Affymetrix").
    lines = [b"A\x1bymetrix Microarray Suite User Guide"]
    names = {b: f"a{b}" for b in set(lines[0]) if b != 0x20}
    doc = read_pdf(type3_pdf(lines, names), name="type3.pdf")
    assert [ln.text for ln in doc.lines] == ["Affymetrix Microarray Suite User Guide"]
    assert not doc.lines[0].unreliable
    # A math italic font's few letters and its Greek (sigma at 27) are not read as text.
    math = [b"\x1b x y"]
    doc = read_pdf(type3_pdf(math, {b: f"a{b}" for b in set(math[0]) if b != 0x20}), name="m.pdf")
    assert "ff" not in doc.lines[0].text
