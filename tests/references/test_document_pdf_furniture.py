"""The PDF reader's furniture (issue 34): running heads over pages of figures, with and without
their page number, are removed; a page whose only text was its head is not called scanned."""

from __future__ import annotations

import pytest

from citeverify_core.references.document.pdf import read_pdf
from tests.references.test_document_pdf import canvas_pdf, sentence

pytest.importorskip("pdfminer", reason="the documents extra is not installed")


def test_a_running_head_alone_on_a_page_of_figures_is_removed() -> None:
    pages = []
    for number in range(1, 9):
        runs = []
        # A recto's head prints its page number at the right, a verso's does not.
        runs.append((220, 760, "Collapsed Cores in Globular Clusters", 10, "Times-Roman"))
        if number % 2:
            runs.append((540, 760, str(number), 10, "Times-Roman"))
        if number != 5:  # page 5: a page of figures (no text but its head)
            runs += [
                (72, 720 - 14 * i, sentence(i + 40 * number), 10, "Times-Roman") for i in range(30)
            ]
        pages.append(runs)
    doc = read_pdf(canvas_pdf(pages), name="heads.pdf")
    assert not any("Collapsed" in ln.text for ln in doc.lines)
    assert not any("no text" in note for note in doc.notes)
    assert len(doc.lines) == 7 * 30


def test_a_figure_of_megabytes_of_drawing_is_not_parsed_for_its_labels() -> None:
    import io

    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    c = canvas.Canvas(out, pagesize=(612, 792))
    c.beginForm("plot")
    c.setFont("Times-Roman", 8)
    c.drawString(100, 300, "axis label")
    path = c.beginPath()
    path.moveTo(100, 100)
    for i in range(150_000):  # a vector plot: about 2 MB of operators
        path.lineTo(100 + (i % 400), 100 + (i * 7919) % 200)
    c.drawPath(path)
    c.endForm()
    c.doForm("plot")
    c.setFont("Times-Roman", 10)
    for i in range(5):
        c.drawString(72, 700 - 14 * i, sentence(i))
    c.showPage()
    c.save()
    doc = read_pdf(out.getvalue(), name="plot.pdf")
    assert [ln.text for ln in doc.lines] == [sentence(i) for i in range(5)]
    assert any(n.startswith("1 figure not read for text (more than 1 MB") for n in doc.notes)


def test_a_page_whose_only_text_is_its_number_is_read() -> None:
    pages = [
        [(72, 720 - 14 * i, sentence(i), 10, "Times-Roman") for i in range(20)]
        + [(300, 40, str(n), 10, "Times-Roman")]
        for n in (1, 2)
    ]
    pages.append([(300, 40, "3", 10, "Times-Roman")])  # a page of figures: only its number
    doc = read_pdf(canvas_pdf(pages), name="numbers.pdf")
    assert len(doc.lines) == 40
    assert not any(ln.text in {"1", "2", "3"} for ln in doc.lines)


def test_forms_that_draw_forms_exponentially_are_cut_off_and_the_text_kept() -> None:
    """A form drawing another 8 times, 6 deep: 262,144 draws from a file of a few KB. The
    document's drawing budget stops it; the page's own text is read (it used to time out)."""
    import io

    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    c = canvas.Canvas(out, pagesize=(612, 792))
    c.beginForm("X6")
    c.setFont("Times-Roman", 8)
    c.drawString(10, 10, "leaf")
    c.endForm()
    for depth in range(5, -1, -1):
        c.beginForm(f"X{depth}")
        for j in range(8):
            c.saveState()
            c.translate(j, 0)
            c.doForm(f"X{depth + 1}")
            c.restoreState()
        c.endForm()
    c.doForm("X0")
    c.setFont("Times-Roman", 10)
    for i in range(5):
        c.drawString(72, 700 - 14 * i, sentence(i))
    c.showPage()
    c.save()
    assert len(out.getvalue()) < 20_000
    doc = read_pdf(out.getvalue(), name="fanout.pdf")
    assert [ln.text for ln in doc.lines if "leaf" not in ln.text] == [sentence(i) for i in range(5)]
    assert any("past the document's budget of nested drawings" in n for n in doc.notes)
