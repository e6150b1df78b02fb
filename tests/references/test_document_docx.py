"""The Word reader (issue 26): paragraphs in order, headings, Word's automatic numbering as labels.

Every .docx is made here with python-docx; numbering definitions, content controls, fields and
tracked changes are written as the WordprocessingML Word itself writes.
"""

from __future__ import annotations

import io
from typing import Any

import pytest

from citeverify_core.references.document import DocumentText, extract_document, read_document
from citeverify_core.references.document.docx import read_docx

docx = pytest.importorskip("docx", reason="the documents extra is not installed")
from docx.oxml import parse_xml  # noqa: E402 - after the skip

W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def save(document: Any) -> bytes:
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def add_list(
    document: Any,
    levels: list[tuple[str, str, int]],
    *,
    abstract: int | None = None,
    restart_at: int | None = None,
) -> int:
    """A numbering definition (levels: lvlText, numFmt, start); its new numId."""
    numbering = document.part.numbering_part.element
    nums = numbering.findall("{http://schemas.openxmlformats.org/wordprocessingml/2006/main}num")
    num_id = 100 + len(nums)
    if abstract is None:
        abstract = 200 + len(nums)
        lvls = "".join(
            f'<w:lvl w:ilvl="{i}"><w:start w:val="{start}"/><w:numFmt w:val="{fmt}"/>'
            f'<w:lvlText w:val="{text}"/></w:lvl>'
            for i, (text, fmt, start) in enumerate(levels)
        )
        numbering.insert(
            0, parse_xml(f'<w:abstractNum {W} w:abstractNumId="{abstract}">{lvls}</w:abstractNum>')
        )
    override = (
        f'<w:lvlOverride w:ilvl="0"><w:startOverride w:val="{restart_at}"/></w:lvlOverride>'
        if restart_at is not None
        else ""
    )
    numbering.append(
        parse_xml(
            f'<w:num {W} w:numId="{num_id}"><w:abstractNumId w:val="{abstract}"/>{override}</w:num>'
        )
    )
    return num_id


def numbered(paragraph: Any, num_id: int, ilvl: int = 0) -> Any:
    paragraph._p.get_or_add_pPr().append(
        parse_xml(f'<w:numPr {W}><w:ilvl w:val="{ilvl}"/><w:numId w:val="{num_id}"/></w:numPr>')
    )
    return paragraph


def lines(doc: DocumentText) -> list[tuple[str | None, str]]:
    return [(ln.label, ln.text) for ln in doc.lines]


def test_paragraphs_in_order_with_headings_title_and_locations() -> None:
    document = docx.Document()
    document.core_properties.title = "Reading Word Files"
    document.add_heading("Introduction", 1)
    document.add_paragraph("First paragraph [1].")
    document.add_paragraph("")
    document.add_paragraph("Second paragraph.")
    document.add_heading("References", 1)
    doc = read_docx(save(document), name="paper.docx")
    assert doc.format == "docx"
    assert doc.title == "Reading Word Files"
    assert [ln.text for ln in doc.lines] == [
        "Introduction",
        "First paragraph [1].",
        "Second paragraph.",
        "References",
    ]
    assert [ln.heading for ln in doc.lines] == [True, False, False, True]
    # The paragraph number counts every paragraph, the empty one too; Word has no pages.
    assert [ln.location.line for ln in doc.lines] == [1, 2, 4, 5]
    assert all(ln.location.page is None and ln.starts_paragraph for ln in doc.lines)


def test_title_from_the_title_style_without_core_properties() -> None:
    document = docx.Document()
    document.core_properties.title = ""
    document.add_paragraph("A Paper About Lists", style="Title")
    document.add_paragraph("Body.")
    doc = read_docx(save(document), name="t.docx")
    assert doc.title == "A Paper About Lists"
    assert doc.lines[0].heading


def test_bracketed_automatic_numbering_is_the_label_and_the_text_is_untouched() -> None:
    document = docx.Document()
    document.add_paragraph("References", style="Heading 1")
    num = add_list(document, [("[%1]", "decimal", 1)])
    for i in range(12):
        numbered(document.add_paragraph(f"Author {i}. Title {i}. 2020."), num)
    doc = read_docx(save(document), name="refs.docx")
    assert lines(doc)[1:] == [(f"[{i + 1}]", f"Author {i}. Title {i}. 2020.") for i in range(12)]


def test_numbering_start_restart_continuation_and_levels() -> None:
    document = docx.Document()
    first = add_list(document, [("%1.", "decimal", 3), ("%1.%2", "lowerLetter", 1)])
    numbered(document.add_paragraph("three"), first)
    numbered(document.add_paragraph("three a"), first, ilvl=1)
    numbered(document.add_paragraph("three b"), first, ilvl=1)
    document.add_paragraph("an unnumbered paragraph between")
    numbered(document.add_paragraph("four"), first)
    numbered(document.add_paragraph("four a"), first, ilvl=1)
    # A second list on the same definition continues it; one with a startOverride restarts.
    continued = add_list(document, [], abstract=_abstract_of(document, first))
    numbered(document.add_paragraph("five"), continued)
    restarted = add_list(document, [], abstract=_abstract_of(document, first), restart_at=1)
    numbered(document.add_paragraph("one again"), restarted)
    roman = add_list(document, [("(%1)", "upperRoman", 1)])
    numbered(document.add_paragraph("roman one"), roman)
    numbered(document.add_paragraph("roman two"), roman)
    bullets = add_list(document, [("\u2022", "bullet", 1)])
    numbered(document.add_paragraph("a bullet"), bullets)
    doc = read_docx(save(document), name="lists.docx")
    assert lines(doc) == [
        ("3.", "three"),
        ("3.a", "three a"),
        ("3.b", "three b"),
        (None, "an unnumbered paragraph between"),
        ("4.", "four"),
        ("4.a", "four a"),
        ("5.", "five"),
        ("1.", "one again"),
        ("(I)", "roman one"),
        ("(II)", "roman two"),
        (None, "a bullet"),
    ]


def _abstract_of(document: Any, num_id: int) -> int:
    numbering = document.part.numbering_part.element
    ns = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
    for num in numbering.iter(f"{ns}num"):
        if num.get(f"{ns}numId") == str(num_id):
            return int(num.find(f"{ns}abstractNumId").get(f"{ns}val"))
    raise AssertionError(num_id)


def test_numbering_carried_by_a_paragraph_style() -> None:
    document = docx.Document()
    for i in range(3):
        document.add_paragraph(f"Entry {i}", style="List Number")
    doc = read_docx(save(document), name="style.docx")
    assert lines(doc) == [("1.", "Entry 0"), ("2.", "Entry 1"), ("3.", "Entry 2")]


def test_a_bibliography_in_a_table_gives_one_line_per_row() -> None:
    document = docx.Document()
    document.add_paragraph("References", style="Heading 1")
    table = document.add_table(rows=3, cols=2)
    for i in range(3):
        table.cell(i, 0).text = f"[{i + 1}]"
        table.cell(i, 1).text = f"Writer {i}. A tabled reference. 2019."
    document.add_paragraph("After the table.")
    doc = read_docx(save(document), name="table.docx")
    assert [ln.text for ln in doc.lines] == [
        "References",
        "[1] Writer 0. A tabled reference. 2019.",
        "[2] Writer 1. A tabled reference. 2019.",
        "[3] Writer 2. A tabled reference. 2019.",
        "After the table.",
    ]


def test_content_controls_fields_tracked_changes_and_hidden_text() -> None:
    document = docx.Document()
    document.add_paragraph("Body text.")
    body = document.element.body
    # Mendeley-style: the bibliography inside a block content control.
    sdt = parse_xml(
        f"<w:sdt {W}><w:sdtPr><w:tag w:val='MENDELEY_BIBLIOGRAPHY'/></w:sdtPr><w:sdtContent>"
        "<w:p><w:r><w:t>Smith, J. (2020). Controlled content. Journal.</w:t></w:r></w:p>"
        "<w:p><w:r><w:t>Jones, K. (2021). More content. Journal.</w:t></w:r></w:p>"
        "</w:sdtContent></w:sdt>"
    )
    # Zotero-style: a field whose code (instrText) is not shown, only its result.
    field = parse_xml(
        f"<w:p {W}><w:r><w:fldChar w:fldCharType='begin'/></w:r>"
        "<w:r><w:instrText> ADDIN ZOTERO_BIBL {&quot;uncited&quot;:[]} CSL_BIBLIOGRAPHY </w:instrText></w:r>"
        "<w:r><w:fldChar w:fldCharType='separate'/></w:r>"
        "<w:r><w:t xml:space='preserve'>Brown, L. (2019). A field\u2019s </w:t></w:r>"
        "<w:r><w:t>re</w:t></w:r><w:r><w:softHyphen/><w:t>sult</w:t></w:r>"
        "<w:r><w:t>. Pages 1</w:t></w:r><w:r><w:noBreakHyphen/><w:t>9.</w:t></w:r>"
        "<w:del w:id='1' w:author='x'><w:r><w:delText> deleted words</w:delText></w:r></w:del>"
        "<w:r><w:rPr><w:vanish/></w:rPr><w:t> hidden words</w:t></w:r>"
        "<w:r><w:fldChar w:fldCharType='end'/></w:r></w:p>"
    )
    sect = body[-1]  # sectPr stays last
    sect.addprevious(sdt)
    sect.addprevious(field)
    doc = read_docx(save(document), name="fields.docx")
    assert [ln.text for ln in doc.lines] == [
        "Body text.",
        "Smith, J. (2020). Controlled content. Journal.",
        "Jones, K. (2021). More content. Journal.",
        "Brown, L. (2019). A field\u2019s result. Pages 1-9.",
    ]


def test_extract_document_gets_word_numbered_references_with_labels() -> None:
    document = docx.Document()
    document.add_paragraph("As shown before [1] and [2].")
    document.add_paragraph("References", style="Heading 1")
    num = add_list(document, [("[%1]", "decimal", 1)])
    numbered(
        document.add_paragraph("Kuhn, T. S. (1962). The Structure of Scientific Revolutions."), num
    )
    numbered(document.add_paragraph("Popper, K. (1959). The Logic of Scientific Discovery."), num)
    data = save(document)
    assert [ln.label for ln in read_document(data, name="paper.docx").lines][-2:] == ["[1]", "[2]"]
    found = extract_document(data, name="paper.docx")
    assert len(found.references) == 2
    assert found.references[0].text.startswith("Kuhn")
