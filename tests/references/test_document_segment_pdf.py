"""Real layout classes of reference lists, built as small PDFs and read end to end (issue 34).

Each PDF reproduces a layout seen in typeset papers: a JSS-like author-date list with a page of
figures inside it and the authors' addresses after it; a numbered list whose last page carries
a plot (tick labels as text, set small) and its caption.
"""

from __future__ import annotations

import io

from citeverify_core.references.document.pdf import read_pdf
from citeverify_core.references.document.segment import find_references

Run = tuple[float, float, str, float]


def build(pages: list[list[Run]]) -> bytes:
    """A reportlab PDF drawing each page's ``(x, y, text, size)`` runs in Times."""
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    c = canvas.Canvas(out, pagesize=(612, 792))
    for runs in pages:
        for x, y, text, size in runs:
            c.setFont("Times-Roman", size)
            c.drawString(x, y, text)
        c.showPage()
    c.save()
    return out.getvalue()


def column(lines: list[tuple[float, str]], top: float = 720.0, size: float = 10.0) -> list[Run]:
    return [(72 + indent, top - n * 12.5, text, size) for n, (indent, text) in enumerate(lines)]


BODY = [
    (0.0, "This paper fits the models of Adams (2001) and Baker (2002) to the data"),
    (0.0, "and compares them with those of Cole (2003), Dunn (2004) and Evans (2005)."),
    (0.0, "The results are discussed in the last section of the paper at some length."),
]


def test_a_figure_page_inside_an_author_date_list_and_the_addresses_after_it() -> None:
    page1 = column(
        [
            *BODY,
            (0.0, ""),
            (0.0, "References"),
            (0.0, "Adams J (2001). Robust Fitting of Regression Models. Journal of"),
            (14.0, "Statistical Software, 3(2), 1-20."),
            (0.0, "Baker K (2002). Influence Measures for Linear Models. Statistics"),
            (14.0, "and Computing, 12(4), 311-330."),
        ]
    )
    figure = [(150.0, 600.0 - 40 * k, f"{k * 0.2:.1f}", 6.0) for k in range(1, 6)] + [
        (200.0, 380.0, "Residuals against fitted values", 6.0),
        (72.0, 340.0, "Figure 4: Residuals of the robust fit against the fitted values.", 10.0),
    ]
    page3 = column(
        [
            (0.0, "Cole L (2003). Diagnostics for Mixed Models. Journal of Computational"),
            (14.0, "and Graphical Statistics, 8(1), 33-48."),
            (0.0, "Dunn M (2004). Correlated Errors in Panel Data. Econometrica, 72(3),"),
            (14.0, "1-19."),
            (0.0, "Evans P (2005). Bootstrap Tests. Annals of Statistics, 33(2), 1-25."),
            (0.0, ""),
            (0.0, "Affiliation:"),
            (0.0, "Jane Adams"),
            (0.0, "Department of Statistics, Universitätsstr. 15"),
            (0.0, "CH-8001 Zürich, Switzerland"),
            (0.0, "E-mail: jane.adams@example.org"),
        ]
    )
    text = read_pdf(build([page1, figure, page3]), name="jss.pdf")
    found = find_references(text)
    assert [r.text.split(" ")[0] for r in found.references] == [
        "Adams",
        "Baker",
        "Cole",
        "Dunn",
        "Evans",
    ]
    assert (
        found.references[-1].text
        == "Evans P (2005). Bootstrap Tests. Annals of Statistics, 33(2), 1-25."
    )
    assert found.incomplete is None


def test_a_plot_after_a_numbered_list_does_not_join_its_last_entry() -> None:
    page1 = column(
        [
            *BODY,
            (0.0, ""),
            (0.0, "References"),
            (0.0, "[1] Hawkins, D.M. Robust Singular Value Decomposition. Tech Report"),
            (15.0, "122, 2001."),
            (0.0, "[2] Liu, L. Robust singular value decomposition analysis of microarray"),
            (15.0, "data. PNAS, 2003;100:13167-13172."),
        ]
    )
    plot = [(160.0, 700.0, "0.00 0.05 0.10 0.15 0.20 0.00 0.05 0.10 0.15 0.20", 6.0)]
    plot += [(190.0, 690.0, "Loading 1 SVD Loading 1 robust SVD", 6.0)]
    plot += column([(0.0, "Figure 1: Original PCA solution vs. robust PCA solution.")], 660.0)
    found = find_references(read_pdf(build([page1, plot]), name="plot.pdf"))
    assert [r.text for r in found.references] == [
        "Hawkins, D.M. Robust Singular Value Decomposition. Tech Report 122, 2001.",
        "Liu, L. Robust singular value decomposition analysis of microarray data. PNAS, "
        "2003;100:13167-13172.",
    ]
