"""Text formats as document lines: LaTeX, .bbl, BibTeX, Markdown, HTML, text (issue 26)."""

from __future__ import annotations

import time

import pytest

from citeverify_core.errors import DocumentError
from citeverify_core.references.document.markup import latex_to_text, read_markup

TEX = rb"""\documentclass{article}
\usepackage{natbib} % a comment with \cite{commented}
\title{A Study of M{\"u}ller's \emph{Things}}
\begin{document}
\maketitle
\section{Introduction}\label{sec:intro}
As shown by \citet[p.~5]{smith2020} and others \citep{doe2019,roe2018}, 50\% of it.
Also \parencite[see][]{kuhn} and \textcite{kuhn} work.

\begin{thebibliography}{9}
\bibitem[Smith et~al.(2020)]{smith2020}
J.~Smith and A.~G\'omez.
\newblock \emph{Bio-logy of {DNA}}.
\newblock In \textit{Proc. X}, pp. 1--10, 2020. \url{https://x.org/a_b}
\bibitem{doe2019} C.~Doe and {\O}.~{\AA}se. \textit{Nature}, 3:4, 2019. \doi{10.1000/xyz}
\end{thebibliography}
\end{document}
"""


def test_latex_body_keeps_citations_and_headings() -> None:
    doc = read_markup(TEX, "tex", name="paper.tex")
    assert doc.title == "A Study of Müller’s Things"  # TeX prints ' as ’
    texts = [line.text for line in doc.lines]
    assert texts[0] == "Introduction" and doc.lines[0].heading
    assert (
        "As shown by \\citet[p.~5]{smith2020} and others \\citep{doe2019,roe2018}, 50% of it."
        in texts
    )
    assert "Also \\parencite[see][]{kuhn} and \\textcite{kuhn} work." in texts
    assert not any("commented" in t or "Smith and" in t for t in texts)


def test_latex_bibitems_are_the_entries() -> None:
    doc = read_markup(TEX, "tex", name="paper.tex")
    assert doc.entries is not None
    assert [(e.key, e.label, e.text) for e in doc.entries] == [
        (
            "smith2020",
            "Smith et al.(2020)",
            "J. Smith and A. Gómez. Bio-logy of DNA. In Proc. X, pp. 1–10, 2020. https://x.org/a_b",
        ),
        ("doe2019", "2", "C. Doe and Ø. Åse. Nature, 3:4, 2019. https://doi.org/10.1000/xyz"),
    ]
    assert doc.entries[0].location.line == 11
    assert doc.entries[0].end is not None and doc.entries[0].end.line == 14


@pytest.mark.parametrize(
    ("latex", "text"),
    [
        (r"{\"u}ber \"Uber \'{E}mile \`a \^o \~n \c{c} \v{s} \H{o} \'\i", "über Über Émile à ô ñ ç š ő í"),
        (r"\ss{} \o{} \ae \aa\ \L", "ß ø æå Ł"),
        (r"a~b --- c -- d ``q'' \& \% \$ \#", "a b — c – d “q” & % $ #"),
        (r"\emph{x} \textbf{y} \textsc{z} \href{http://a}{link} \label{l}", "x y z link"),
        (r"1\bibrangedash 10 J\bibinitperiod\bibinitdelim A\bibinitperiod", "1–10 J. A."),
    ],
)  # fmt: skip
def test_latex_to_text(latex: str, text: str) -> None:
    assert " ".join(latex_to_text(latex).split()) == text


BIBLATEX_BBL = rb"""\refsection{0}
  \entry{smith2020}{article}{}
    \name{author}{2}{}{%
      {{hash=abc}{%
         family={M{\"u}ller},
         familyi={M\bibinitperiod},
         given={John\bibnamedelima Adam},
         giveni={J\bibinitperiod\bibinitdelim A\bibinitperiod},
      }}%
      {{hash=def}{%
         family={Doe},
         given={Jane},
      }}%
    }
    \field{title}{A great title}
    \field{journaltitle}{Nature}
    \field{volume}{12}
    \field{number}{3}
    \field{pages}{1\bibrangedash 10}
    \field{year}{2020}
    \verb{doi}
    \verb 10.1000/xyz
    \endverb
  \endentry
\endrefsection
"""


def test_biblatex_bbl_entries_become_reference_strings() -> None:
    doc = read_markup(BIBLATEX_BBL, "bbl", name="paper.bbl")
    assert doc.entries is not None
    [entry] = doc.entries
    assert entry.key == "smith2020"
    assert entry.text == (
        "Müller, J. A., & Doe, J. (2020). A great title. Nature, 12(3), 1–10. "
        "https://doi.org/10.1000/xyz"
    )


def test_bibtex_file_entries_keep_their_keys_and_lines() -> None:
    bib = (
        b"% my library\n@article{a, author={Smith, John}, title={Title A}, journal={J},"
        b" year=2020}\n\n@book{b,\n  author={Doe, Jane},\n  title={Book B},\n  year=2019\n}\n"
    )
    doc = read_markup(bib, "bib", name="refs.bib")
    assert doc.entries is not None
    assert [(e.key, e.location.line) for e in doc.entries] == [("a", 2), ("b", 4)]
    assert doc.entries[1].text.startswith("@book{b, author = {Doe, Jane}")


def test_markdown_headings_and_list_items() -> None:
    md = (
        b"# My Paper\n\nText [1].\n\n## References\n\n"
        b"1. Smith, J. (2020). A *great* title. [Nature](https://doi.org/10.1/x).\n"
        b"2. Doe, J. (2019). Another\n   title continued.\n"
    )
    doc = read_markup(md, "md", name="x.md")
    assert doc.title == "My Paper"
    heading = next(line for line in doc.lines if line.text == "References")
    assert heading.heading
    items = [(line.label, line.text, line.starts_paragraph) for line in doc.lines[-3:]]
    assert items == [
        ("1", "Smith, J. (2020). A great title. Nature https://doi.org/10.1/x.", True),
        ("2", "Doe, J. (2019). Another", True),
        (None, "title continued.", False),
    ]


def test_html_lists_headings_and_no_scripts() -> None:
    html = (
        b"<html><head><title>The &amp; Title</title><style>p{color:red}</style>"
        b'<script>var x = "<p>References</p>";</script></head><body><h1>Paper</h1>'
        b'<p>Text [3].</p>\n<h2>References</h2>\n<ol start="3"><li><p>Smith, J. (2020). '
        b"Title &eacute;.</p></li>\n<li>Doe, J. (2019). Other.</li></ol></body></html>"
    )
    doc = read_markup(html, "html", name="x.html")
    assert doc.title == "The & Title"
    rows = [(line.text, line.label, line.heading) for line in doc.lines]
    assert rows == [
        ("Paper", None, True),
        ("Text [3].", None, False),
        ("References", None, True),
        ("Smith, J. (2020). Title é.", "3", False),
        ("Doe, J. (2019). Other.", "4", False),
    ]


def test_text_lines_and_paragraphs() -> None:
    doc = read_markup(b"One\ntwo\n\nThree\n", "txt", name="x.txt")
    assert [(ln.text, ln.location.line, ln.starts_paragraph) for ln in doc.lines] == [
        ("One", 1, True),
        ("two", 2, False),
        ("Three", 4, True),
    ]


@pytest.mark.parametrize("data", [b"abc\x00def", b"\xff\xfe\x81\x8d\x8f\x90\x9d" * 10])
def test_binary_input_is_corrupt(data: bytes) -> None:
    with pytest.raises(DocumentError) as caught:
        read_markup(data, "txt", name="x.txt")
    assert caught.value.code == "corrupt"


def test_cp1252_text_is_read() -> None:
    doc = read_markup("Müller, J. (2020). Café.".encode("cp1252"), "txt", name="x.txt")
    assert doc.lines[0].text == "Müller, J. (2020). Café."


@pytest.mark.parametrize(
    ("fmt", "data"),
    [
        ("tex", b"\\begin{document}" + b"{" * 5_000_000),
        ("tex", b"\\begin{document}" + b"\\cite{" * 800_000),
        ("tex", b"\\begin{thebibliography}" + b"\\bibitem[" * 500_000),
        ("bbl", b"\\entry{a}{article}{}" + b"\\field{title}{" * 300_000 + b"\\endentry"),
        ("md", b"*a_[" * 1_250_000),
        ("html", b"<" * 5_000_000),
        ("html", b"<div><ol><li>" * 50_000),
        ("html", b"<a <b <!-- > " * 400_000),
        ("html", b"<!--" * 1_250_000),
    ],
    ids=[
        "braces",
        "cites",
        "bibitems",
        "bbl-fields",
        "md",
        "lt",
        "nesting",
        "unclosed",
        "comments",
    ],
)
def test_hostile_markup_is_read_in_bounded_time(fmt: str, data: bytes) -> None:
    start = time.monotonic()
    doc = read_markup(data, fmt, name=f"x.{fmt}")  # type: ignore[arg-type]
    assert time.monotonic() - start < 30
    assert doc.format == fmt
