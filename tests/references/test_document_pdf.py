"""The PDF reader (issue 26): reading order, columns, running text, labels, glyphs, locations.

Every PDF is made here: ``raw_pdf`` writes the PDF syntax itself (objects, streams, xref): the only way to get the
exact operators a case needs (a TJ array with kerning as TeX writes it, a ligature glyph, an
image without text, a lying page count, a compression bomb). ``canvas_pdf`` draws text runs
with reportlab at given positions, for layouts; one test uses fpdf2's own line breaking.
test_document_hostile.py uses the same makers.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from citeverify_core.references.document import DocumentText, read_document
from citeverify_core.references.document.pdf import read_pdf

pytest.importorskip("pdfminer", reason="the documents extra is not installed")

#: A text run: x, y (baseline, points from the bottom), text, font size, font name.
Run = tuple[float, float, str, float, str]


def raw_pdf(
    contents: Sequence[bytes],
    *,
    image: bool = False,
    declared_count: int | None = None,
    compress: bool = True,
    streams: Sequence[bytes] | None = None,
    info_title: str | None = None,
    to_unicode: bytes | None = None,
    font: bytes | None = None,
    extra: Sequence[bytes] = (),
) -> bytes:
    """A PDF with one page per content stream, Times-Roman as /F1 (Standard encoding).

    Args:
        contents: Each page's content stream (operators), compressed with FlateDecode.
        image: Give every page an 8x8 grey image /Im1 (a scan has only that).
        declared_count: The /Count the page tree declares (default: the truth).
        compress: Flate-compress the content streams.
        streams: Raw already-compressed FlateDecode streams to use instead of ``contents``.
        info_title: An Info dictionary's /Title.
        to_unicode: A ToUnicode CMap's bfchar lines for /F1 (``b"<AD> <00AD>"``).
        font: /F1's font dictionary instead of Times-Roman's (a Type 3 font, an /Encoding).
        extra: Objects the font refers to, numbered from 3 in this order (glyph procedures).
    """
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in below
    pages_id = add(b"")
    for body in extra:
        add(body)
    cmap_ref = b""
    if to_unicode is not None:
        cmap = (
            b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /T def "
            b"1 begincodespacerange <00> <FF> endcodespacerange %d beginbfchar %s endbfchar "
            b"endcmap CMapName currentdict /CMap defineresource pop end end"
            % (to_unicode.count(b"\n") + 1, to_unicode)
        )
        cmap_id = add(b"<< /Length %d >>\nstream\n" % len(cmap) + cmap + b"\nendstream")
        cmap_ref = b" /ToUnicode %d 0 R" % cmap_id
    font_id = add(
        font
        if font is not None
        else b"<< /Type /Font /Subtype /Type1 /BaseFont /Times-Roman%s >>" % cmap_ref
    )
    image_id = 0
    if image:
        pixels = bytes(range(0, 256, 4))
        image_id = add(
            b"<< /Type /XObject /Subtype /Image /Width 8 /Height 8 /ColorSpace /DeviceGray "
            b"/BitsPerComponent 8 /Length %d >>\nstream\n" % len(pixels) + pixels + b"\nendstream"
        )
    kids = []
    bodies = list(streams) if streams is not None else [None] * len(contents)
    for i, raw in enumerate(bodies):
        if raw is None:
            data = contents[i]
            body = zlib.compress(data) if compress else data
            filt = b"/Filter /FlateDecode " if compress else b""
        else:
            body, filt = raw, b"/Filter /FlateDecode "
        stream_id = add(b"<< %s/Length %d >>\nstream\n" % (filt, len(body)) + body + b"\nendstream")
        xobject = b" /XObject << /Im1 %d 0 R >>" % image_id if image else b""
        kids.append(
            add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] "
                b"/Resources << /Font << /F1 %d 0 R >>%s >> /Contents %d 0 R >>"
                % (pages_id, font_id, xobject, stream_id)
            )
        )
    count = len(kids) if declared_count is None else declared_count
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages_id
    objects[pages_id - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids),
        count,
    )
    info = 0
    if info_title is not None:
        info = add(b"<< /Title (%s) >>" % info_title.encode("latin-1"))
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    trailer = b"<< /Size %d /Root %d 0 R" % (len(objects) + 1, catalog)
    if info:
        trailer += b" /Info %d 0 R" % info
    out.write(b"trailer\n" + trailer + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref)
    return out.getvalue()


def text_ops(runs: Sequence[tuple[float, float, bytes]], size: float = 10) -> bytes:
    """Content-stream operators drawing each ``(x, y, TJ-array-or-string)`` in /F1."""
    ops = [b"BT /F1 %g Tf" % size]
    for x, y, shown in runs:
        shown_op = shown if shown.startswith(b"[") else b"(" + shown + b")"
        op = b"TJ" if shown.startswith(b"[") else b"Tj"
        ops.append(b"1 0 0 1 %g %g Tm %s %s" % (x, y, shown_op, op))
    ops.append(b"ET")
    return b"\n".join(ops)


def canvas_pdf(pages: Sequence[Sequence[Run]], *, title: str | None = None) -> bytes:
    """A reportlab PDF drawing each page's runs (drawString at x, y)."""
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    c = canvas.Canvas(out, pagesize=(612, 792))
    if title is not None:
        c.setTitle(title)
    for runs in pages:
        for x, y, text, size, font in runs:
            c.setFont(font, size)
            c.drawString(x, y, text)
        c.showPage()
    c.save()
    return out.getvalue()


@dataclass
class Column:
    """Lines to set in a column: left edge, top baseline, leading, font size."""

    x: float
    top: float
    leading: float = 12.0
    size: float = 10.0
    font: str = "Times-Roman"

    def runs(self, lines: Sequence[str | tuple[float, str]]) -> list[Run]:
        """Each line (or ``(indent, line)``) one baseline below the previous one."""
        out: list[Run] = []
        for i, line in enumerate(lines):
            indent, text = line if isinstance(line, tuple) else (0.0, line)
            out.append((self.x + indent, self.top - i * self.leading, text, self.size, self.font))
        return out


def flate_bomb(inflated: int, chunk: int = 16 << 20) -> bytes:
    """A zlib stream of about ``inflated`` bytes of spaces, made without inflating it here.

    One chunk is compressed and ended with a full flush (byte-aligned, no reference back), so
    its compressed bytes can be repeated; the checksum is computed in closed form.
    """
    piece_c = zlib.compressobj(9)
    block = b" " * chunk
    piece = piece_c.compress(block) + piece_c.flush(zlib.Z_FULL_FLUSH)
    header = piece[:2]
    body = piece[2:]
    repeats = max(1, inflated // chunk)
    # Adler-32 of n spaces in closed form (A = 1 + 32n, B = n + 32n(n+1)/2, mod 65521).
    n = repeats * chunk
    adler = ((n + 32 * n * (n + 1) // 2) % 65521) << 16 | (1 + 32 * n) % 65521
    last_block = b"\x03\x00"  # an empty final block (fixed Huffman codes, end of block)
    return header + body * repeats + last_block + adler.to_bytes(4, "big")


# --- tests ------------------------------------------------------------------------------------

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
]


def sentence(i: int, n: int = 7) -> str:
    """A distinct line of words: line ``i`` of a column."""
    return f"L{i:03d} " + " ".join(WORDS[(i + k) % len(WORDS)] for k in range(n))


def texts(doc: DocumentText, page: int | None = None) -> list[str]:
    return [ln.text for ln in doc.lines if page is None or ln.location.page == page]


def test_one_column_lines_in_order_with_locations_size_and_title() -> None:
    body = Column(72, 700)
    title = (72, 740, "A Study of Careful Reading", 18, "Times-Bold")
    pages = [
        [title, *body.runs([sentence(i) for i in range(20)])],
        body.runs([sentence(i) for i in range(20, 45)]),
    ]
    doc = read_pdf(canvas_pdf(pages), name="one.pdf")
    assert doc.format == "pdf"
    assert doc.pages == 2
    assert texts(doc) == ["A Study of Careful Reading"] + [sentence(i) for i in range(45)]
    first = doc.lines[1]
    assert (first.location.page, first.location.line) == (1, 2)
    assert first.x0 == pytest.approx(72, abs=0.5)
    assert first.size == pytest.approx(10, abs=0.1)
    second_page = [ln for ln in doc.lines if ln.location.page == 2]
    assert [ln.location.line for ln in second_page] == list(range(1, 26))
    # No metadata title: the largest text of page 1.
    assert doc.title == "A Study of Careful Reading"
    assert doc.lines[0].heading


def test_metadata_title_wins_when_it_looks_real_and_not_when_it_is_a_file_name() -> None:
    page = [(72, 700, "Body text of the page", 10, "Times-Roman")]
    named = read_pdf(canvas_pdf([page], title="Deep Reading of Papers"), name="t.pdf")
    assert named.title == "Deep Reading of Papers"
    generic = read_pdf(canvas_pdf([page], title="Microsoft Word - draft3.docx"), name="t.pdf")
    assert generic.title != "Microsoft Word - draft3.docx"


def test_two_columns_read_left_then_right_under_a_full_width_title_and_abstract() -> None:
    left, right = Column(72, 600), Column(318, 600)
    abstract = [
        (
            72,
            680 - 12 * i,
            f"Abstract line {i} " + "runs across the whole width of the page " * 2,
            10,
            "Times-Roman",
        )
        for i in range(3)
    ]
    page1 = [
        (150, 740, "Two Columns Are Read In Order", 18, "Times-Bold"),
        *abstract,
        *left.runs([sentence(i) for i in range(30)]),
        *right.runs([sentence(i) for i in range(30, 60)]),
    ]
    page2 = [
        *left.runs([sentence(i) for i in range(60, 90)]),
        *right.runs([sentence(i) for i in range(90, 100)]),
    ]
    doc = read_pdf(canvas_pdf([page1, page2]), name="two.pdf")
    got = texts(doc)
    assert got[0] == "Two Columns Are Read In Order"
    assert got[1:4] == [t[2].strip() for t in abstract]
    assert got[4:] == [sentence(i) for i in range(100)]
    right_first = doc.lines[4 + 30]
    assert right_first.x0 == pytest.approx(318, abs=0.5)
    assert right_first.location == doc.lines[4 + 30].location
    assert right_first.location.page == 1
    assert right_first.location.line == 4 + 30 + 1


def test_left_lines_running_into_the_gutter_stay_in_the_left_column() -> None:
    # Justified columns whose left lines end at x 288, a few overfull ones at 303, in the gutter
    # (fpdf2's breaks, LaTeX's overfull boxes), two of them one under the other. They are still
    # left-column lines: the page is read down the left column, then down the right one.
    from reportlab.pdfbase.pdfmetrics import stringWidth

    def justified(text: str, x0: float, x1: float, y: float) -> list[Run]:
        words = text.split()
        widths = [stringWidth(w, "Times-Roman", 10) for w in words]
        gap = (x1 - x0 - sum(widths)) / (len(words) - 1)
        runs, x = [], x0
        for word, width in zip(words, widths, strict=True):
            runs.append((x, y, word, 10.0, "Times-Roman"))
            x += width + gap
        return runs

    left = [sentence(i, 6) for i in range(60)]
    right = [sentence(i, 6) for i in range(100, 160)]
    runs: list[Run] = []
    for i in range(60):
        y = 740 - i * 11
        runs += justified(left[i], 72, 303 if i in (20, 21, 40) else 288, y)
        runs += justified(right[i], 312, 528, y)
    doc = read_pdf(canvas_pdf([runs]), name="ragged.pdf")
    assert texts(doc) == left + right


def test_a_hanging_reference_alone_in_the_right_column_keeps_its_first_word() -> None:
    # The last page of a two-column list with hanging indents: the right column holds one
    # reference, its first line at x 311 and the rest indented to 321. Its first word belongs
    # to the right column, though the right column's usual start is 321.
    left = [sentence(i, 6) for i in range(30)]
    runs = Column(72, 700).runs(left)
    right = ["Zhang, Kaichen, Yong Dai, and Yi Xiao. 2014."] + [
        sentence(i, 5) for i in range(100, 108)
    ]
    runs += Column(311, 700).runs([right[0]])
    runs += Column(321, 688).runs(right[1:])
    doc = read_pdf(canvas_pdf([runs]), name="hanging-right.pdf")
    assert texts(doc) == left + right


def test_a_section_number_in_the_right_column_stays_with_its_heading() -> None:
    # LaTeX sets "6" and a quad before "Conclusion": the widest space of that row is inside the
    # right column, but the row passes to it where the column starts, before "6". The left
    # column is justified to end at x 301, ten points short of the right one.
    from reportlab.pdfbase.pdfmetrics import stringWidth

    left = [sentence(i, 7) for i in range(30)]
    runs: list[Run] = []
    for i, line in enumerate(left):
        words = line.split()
        widths = [stringWidth(w, "Times-Roman", 10) for w in words]
        gap, x = (301 - 72 - sum(widths)) / (len(words) - 1), 72.0
        for word, width in zip(words, widths, strict=True):
            runs.append((x, 700 - 12 * i, word, 10, "Times-Roman"))
            x += width + gap
    right = [sentence(i, 5) for i in range(100, 129)]
    runs += Column(311, 700).runs(right[:10])
    runs += [(311, 580, "6", 10, "Times-Bold"), (332, 580, "Conclusion", 10, "Times-Bold")]
    runs += Column(311, 568).runs(right[10:])
    doc = read_pdf(canvas_pdf([runs]), name="section.pdf")
    assert texts(doc) == left + right[:10] + ["6 Conclusion"] + right[10:]


def test_a_white_strip_left_open_by_chance_on_a_short_page_is_no_gutter() -> None:
    # The last page of a one-column reference list: six justified lines whose word gaps happen
    # to line up between x 350 and 355. The words right of the strip start anywhere, as one
    # column's words do, so the page is one column and its lines stay whole, in order.
    runs: list[Run] = []
    lines = []
    for i in range(6):
        y = 700 - 12 * i
        left, right = (
            f"[{20 + i}] Author{i} A, Writer B. A title of the work",
            f"part{i} 19{80 + i}.",
        )
        runs += [(134, y, left, 10, "Times-Roman"), (356 + 5 * i, y, right, 10, "Times-Roman")]
        lines.append(f"{left} {right}")
    # Each left part ends before x 350 (Times-Roman, 10 points).
    from reportlab.pdfbase.pdfmetrics import stringWidth

    assert all(134 + stringWidth(t.rsplit(" part", 1)[0], "Times-Roman", 10) < 350 for t in lines)
    doc = read_pdf(canvas_pdf([runs]), name="short.pdf")
    assert texts(doc) == lines


def test_an_accent_is_combined_only_when_drawn_over_its_letter() -> None:
    # "\xc2" is a spacing acute: drawn back over the "e" (TeX) it is "é"; followed by letters
    # as text ("O´Brien", a file's mojibake "AÃ¯ssa") it stays as written.
    content = text_ops(
        [
            (72, 700, b"[(Gu)-200(\xc2)527(erin)]"),
            (72, 688, b"O\xc2Brien and Gu\xc2erin"),
        ]
    )
    doc = read_pdf(raw_pdf([content]), name="accents.pdf")
    assert texts(doc) == ["Guérin", "O´Brien and Gu´erin"]


def test_accents_as_pdflatex_draws_them_in_ot1() -> None:
    # pdfTeX's output for "Brüche", "à travers" and "Française" in Computer Modern (OT1): the
    # accent, a kern back more than half an em, the letter; the grave likewise; the cedilla
    # after its letter, drawn back over it. (Standard encoding: \xc8 dieresis, \xc1 grave,
    # \xcb cedilla.)
    content = text_ops(
        [
            (72, 700, b"[(Br)-28(\xc8)528(uc)28(he,)-329(E.)]"),
            (72, 688, b"[(\xc1)500(a)-333(tra)28(v)28(ers)]"),
            (72, 676, b"[(Langue)-350(Franc)389(\xcb)-56(aise)]"),
        ]
    )
    doc = read_pdf(raw_pdf([content]), name="ot1.pdf")
    assert texts(doc) == ["Brüche, E.", "à travers", "Langue Française"]


def test_running_headers_footers_and_page_numbers_are_removed() -> None:
    body = Column(72, 700)
    pages = []
    for p in range(6):
        header_text = "Journal of Careful Tests 12 (2024)" if p % 2 else "Smith and Jones"
        pages.append(
            [
                (72, 750, header_text, 8, "Times-Italic"),
                (500, 750, f"{100 + p}", 8, "Times-Roman"),
                *body.runs([sentence(p * 10 + i) for i in range(10)]),
                (300, 40, f"{p + 1}", 10, "Times-Roman"),
            ]
        )
    doc = read_pdf(canvas_pdf(pages), name="running.pdf")
    assert texts(doc) == [sentence(i) for i in range(60)]
    assert all(ln.location.line <= 10 for ln in doc.lines)
    assert any("running headers" in note for note in doc.notes)


def test_a_line_seen_once_at_a_page_top_is_kept() -> None:
    body = Column(72, 700)
    pages = [body.runs([sentence(p * 5 + i) for i in range(5)]) for p in range(4)]
    doc = read_pdf(canvas_pdf(pages), name="kept.pdf")
    assert texts(doc) == [sentence(i) for i in range(20)]


def test_review_copy_line_numbers_are_removed_and_labels_kept() -> None:
    body = Column(90, 700)
    refs = [f"[{i + 1}] Author {i}, A study of things, 2020." for i in range(12)]
    numbers = [(40, 700 - 12 * i, str(i + 1), 7, "Helvetica") for i in range(30)]
    page = [*numbers, *body.runs([sentence(i) for i in range(18)] + refs)]
    doc = read_pdf(canvas_pdf([page]), name="review.pdf")
    assert texts(doc) == [sentence(i) for i in range(18)] + refs
    assert any("line numbers" in note for note in doc.notes)


def test_bare_number_labels_of_a_reference_list_are_not_taken_for_line_numbers() -> None:
    col = Column(72, 700, leading=11, size=9)
    lines: list[str | tuple[float, str]] = []
    for i in range(8):
        lines += [
            f"{i + 1} Author {i}, B. A long title of a work that",
            (14, "continues on a line. J. Things 3, 1-9."),
        ]
    doc = read_pdf(canvas_pdf([col.runs(lines)]), name="bare.pdf")
    assert texts(doc)[0] == "1 Author 0, B. A long title of a work that"
    assert texts(doc)[14] == "8 Author 7, B. A long title of a work that"


def test_margin_labels_start_their_reference_line_and_hanging_indents_show_in_x0() -> None:
    size = 9
    runs = []
    y = 700.0
    for i in range(6):
        runs.append((72, y, f"[{i + 10}]", size, "Times-Roman"))
        runs.append(
            (96, y, f"Writer {i}, C. On reading labels in the margin of a", size, "Times-Roman")
        )
        runs.append((96, y - 11, "page, part two. Proc. Tests, 2021.", size, "Times-Roman"))
        y -= 25
    doc = read_pdf(canvas_pdf([runs]), name="labels.pdf")
    got = doc.lines
    assert got[0].text == "[10] Writer 0, C. On reading labels in the margin of a"
    assert got[1].text == "page, part two. Proc. Tests, 2021."
    assert got[0].x0 is not None and got[1].x0 is not None
    assert got[0].x0 < got[1].x0
    assert [ln.starts_paragraph for ln in got[:4]] == [True, False, True, False]


def test_margin_labels_in_the_right_column_stay_with_their_reference() -> None:
    left = Column(72, 700)
    runs = left.runs([sentence(i) for i in range(20)])
    y = 700.0
    for i in range(8):
        runs += [
            (318, y, f"{i + 1}.", 9, "Times-Roman"),
            (334, y, f"Person {i}, D. Some title", 9, "Times-Roman"),
        ]
        runs += [(334, y - 11, "of a work. Publisher, 2019.", 9, "Times-Roman")]
        y -= 25
    doc = read_pdf(canvas_pdf([runs]), name="labels2.pdf")
    got = texts(doc)
    assert got[:20] == [sentence(i) for i in range(20)]
    assert got[20:24] == [
        "1. Person 0, D. Some title",
        "of a work. Publisher, 2019.",
        "2. Person 1, D. Some title",
        "of a work. Publisher, 2019.",
    ]


def test_ligatures_accents_kerning_and_hyphens_as_tex_draws_them() -> None:
    # Standard encoding: \xae is the "fi" glyph, \xaf "fl", \xc8 a spacing dieresis, \xc2 an
    # acute. TeX kerns inside words and moves by ~-333/1000 em between them; it draws an accent
    # over the next letter with a negative kern.
    content = text_ops(
        [
            (72, 700, b"[(The )-10(\xaerst )(\xaeeld )(\xafow)-333(of)]"),
            (72, 688, b"[(Sch)-83(\xc8)416(olkopf)-333(and)-333(Gu)-200(\xc2)527(erin)]"),
            (72, 676, b"[(A)-80(V)-333(long-)]"),
            (72, 664, b"[(term)-333(study)]"),
        ]
    )
    doc = read_pdf(raw_pdf([content]), name="tex.pdf")
    assert texts(doc) == [
        "The first field flow of",
        "Schölkopf and Guérin",
        "AV long-",
        "term study",
    ]


def test_soft_hyphens_are_invisible_inside_a_line_and_a_break_at_its_end() -> None:
    # A ToUnicode map says code \xad is U+00AD (Word's PDFs do so for a discretionary hyphen).
    content = b"BT /F1 10 Tf 1 0 0 1 72 700 Tm (bio\xadlogy and physi\xad) Tj ET"
    doc = read_pdf(raw_pdf([content], to_unicode=b"<AD> <00AD>"), name="soft.pdf")
    assert texts(doc) == ["biology and physi-"]


def test_paragraph_starts_follow_vertical_space() -> None:
    runs = Column(72, 700).runs([sentence(i) for i in range(4)])
    runs += Column(72, 640).runs([sentence(i) for i in range(4, 8)])
    doc = read_pdf(canvas_pdf([runs]), name="para.pdf")
    assert [ln.starts_paragraph for ln in doc.lines] == [
        True,
        False,
        False,
        False,
        True,
        False,
        False,
        False,
    ]


def test_fpdf2_multi_cell_text_is_read_in_order() -> None:
    fpdf = pytest.importorskip("fpdf")
    pdf = fpdf.FPDF()
    pdf.add_page()
    pdf.set_font("Times", size=11)
    paragraphs = [f"Paragraph {i}: " + " ".join(WORDS * 3) for i in range(6)]
    for paragraph in paragraphs:
        pdf.multi_cell(0, 6, paragraph, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(4)
    pdf.set_font("Times", size=9)
    refs = [f"[{i}] Surname{i}, F. Title number {i}. Journal, {2000 + i}." for i in range(1, 9)]
    for ref in refs:
        pdf.multi_cell(0, 5, ref, new_x="LMARGIN", new_y="NEXT")
    doc = read_pdf(bytes(pdf.output()), name="fpdf.pdf")
    joined = " ".join(texts(doc))
    for paragraph in paragraphs:
        assert paragraph in joined
    assert texts(doc)[-8:] == refs
    assert sum(ln.starts_paragraph for ln in doc.lines) >= 6


def test_read_document_dispatches_a_pdf_by_name_and_by_magic_bytes() -> None:
    pdf = canvas_pdf([[(72, 700, "Hello reader", 10, "Times-Roman")]])
    assert texts(read_document(pdf, name="x.pdf")) == ["Hello reader"]
    assert texts(read_document(pdf, name="download")) == ["Hello reader"]


def test_a_40_page_paper_is_read_in_time() -> None:
    """The issue's target (2 s on one core); asserted loosely here, measured in the docs."""
    left, right = Column(72, 720, leading=11), Column(318, 720, leading=11)
    pages = []
    for p in range(40):
        pages.append(
            [
                (72, 760, "Proceedings of Tests 2024", 8, "Times-Italic"),
                *left.runs([sentence(p * 121 + i, 6) for i in range(60)]),
                *right.runs([sentence(p * 121 + 60 + i, 6) for i in range(60)]),
                (300, 30, str(p + 1), 9, "Times-Roman"),
            ]
        )
    pdf = canvas_pdf(pages)
    import time

    read_pdf(canvas_pdf([[(72, 700, "warm", 10, "Times-Roman")]]), name="warm.pdf")  # a spare
    started = time.perf_counter()
    doc = read_pdf(pdf, name="forty.pdf")
    elapsed = time.perf_counter() - started
    assert doc.pages == 40
    assert len(doc.lines) == 40 * 120
    assert texts(doc)[:2] == [sentence(0, 6), sentence(1, 6)]
    assert elapsed < 15  # a loaded CI machine; the figure on a quiet core is in the docs


def test_a_short_right_column_with_hanging_indents_is_read_after_the_left_one() -> None:
    left = Column(72, 700, leading=11, size=9)
    lines = [sentence(i) for i in range(30)]
    right: list[Run] = []
    for i, y in enumerate((700, 678)):
        right.append((318, y, f"Last{i}, A. (2001). A reference that ends", 8, "Times-Roman"))
        right.append((332, y - 10, "the list. Journal, 3, 1-2.", 8, "Times-Roman"))
    doc = read_pdf(canvas_pdf([[*left.runs(lines), *right]]), name="short.pdf")
    assert texts(doc) == [
        *lines,
        "Last0, A. (2001). A reference that ends",
        "the list. Journal, 3, 1-2.",
        "Last1, A. (2001). A reference that ends",
        "the list. Journal, 3, 1-2.",
    ]
    assert doc.lines[30].x0 is not None and doc.lines[31].x0 is not None
    assert doc.lines[30].x0 < doc.lines[31].x0


def test_bare_labels_of_a_list_set_smaller_than_the_body_are_kept() -> None:
    # The list's font is smaller than the page's body text, and its labels (same size as the
    # list's text) stand a label column apart from it: they are labels, not line numbers.
    body = Column(72, 740, leading=12, size=10)
    runs = body.runs([sentence(i) for i in range(20)])
    y = 740 - 20 * 12 - 10
    for i in range(9):
        runs.append((72, y, str(i + 1), 8, "Times-Roman"))
        runs.append((88, y, f"A. Author{i} and B. Other, J. Things 3,", 8, "Times-Roman"))
        runs.append((88, y - 9.5, f"10{i} (2001).", 8, "Times-Roman"))
        y -= 19
    doc = read_pdf(canvas_pdf([runs]), name="small-list.pdf")
    got = texts(doc)
    assert got[20] == "1 A. Author0 and B. Other, J. Things 3,"
    assert got[36] == "9 A. Author8 and B. Other, J. Things 3,"
    assert not any("line numbers" in note for note in doc.notes)
