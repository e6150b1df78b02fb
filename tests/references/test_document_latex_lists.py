r"""A ``thebibliography`` list read as the page prints it (issue 34).

Classes of layout met in real TeX Live and Bioconductor sources: an entry citing another entry
of a numbered list, headings inside the list, AMS documentation logos, URLs with escapes.
"""

from __future__ import annotations

import pytest

from citeverify_core.references.document.markup import latex_to_text, read_markup

LIST = rb"""\documentclass{article}
\begin{document}
See \cite{knuth}.
\begin{thebibliography}{9}
\bibitem{knuth} Donald E. Knuth. \newblock The \TeX book, 1984.
\bibitem{winter} Dean Guenther and Janene Winter. An alphabet. In Guenther \cite{proc},
  pages 149--156; see also \cite[p.~3]{knuth,proc} and \cite{elsewhere}.
\bibitem{proc} Mary Guenther, editor. \TeX\ 90 Conference Proceedings, 1991.
\bibsubhead{Online resources}
\bibitem{ctt} Online discussion group, \url{https://groups.google.com/forum/\#!forum/x\_y}.
\subsection*{Software}
\bibitem{amsl} The \latex/ Project\mdash and \tex/\ndash users.
\end{thebibliography}
\end{document}
"""


def test_numbered_list_entries_print_their_cross_citations_and_end_at_headings() -> None:
    doc = read_markup(LIST, "tex", name="doc.tex")
    assert doc.entries is not None
    assert [e.text for e in doc.entries] == [
        "Donald E. Knuth. The TeXbook, 1984.",
        "Dean Guenther and Janene Winter. An alphabet. In Guenther [3], pages 149–156; see also"
        " [1, 3, p. 3] and elsewhere.",
        "Mary Guenther, editor. TeX 90 Conference Proceedings, 1991.",
        "Online discussion group, https://groups.google.com/forum/#!forum/x_y.",
        "The LaTeX Project—and TeX–users.",  # as in TeX, a word command ends at its spaces
    ]
    assert doc.entries[2].end is None  # the heading after it is not part of the entry


def test_author_year_list_keeps_cross_citations_unnumbered() -> None:
    tex = rb"""\begin{thebibliography}{9}
\bibitem[Guenther(1991)]{proc} M. Guenther. Proceedings, 1991.
\bibitem[Winter(1991)]{w} J. Winter. In \cite{proc}, pages 1--2.
\end{thebibliography}
"""
    doc = read_markup(tex, "tex", name="doc.tex")
    assert doc.entries is not None
    assert doc.entries[1].text == "J. Winter. In proc, pages 1–2."


@pytest.mark.parametrize(
    ("latex", "text"),
    [
        (r"Th\^e\protect\llap{\raise 0.5ex\hbox{\'{\relax}}} Th\`anh", "Thê Thành"),
        (r"\textlangle CTAN\textrangle\url{/fonts/lh}", "〈CTAN〉/fonts/lh"),
        (r"\LaTeXe{} and \amslatex/", "LaTeX 2ε and AMS-LaTeX"),
        (r"\url{https://a.org/50\%_off\&x}", "https://a.org/50%_off&x"),
        # A repeated author drawn as a rule (amsplain's \bysame, "\hbox to3em{\hrulefill}").
        (r"\mbox{\rule{3em}{.4pt}}, Another title", "———, Another title"),
        (r"\hbox to3em{\hrulefill}, Another title", "———, Another title"),
        (r"a\rule{1pt}{10pt}b \rule[-2pt]{\linewidth}{1pt}c", "ab c"),
    ],
)
def test_logos_accents_and_urls(latex: str, text: str) -> None:
    assert " ".join(latex_to_text(latex).split()) == text


def test_short_verb_and_spaces_in_urls() -> None:
    tex = rb"""\documentclass{article}
\MakeShortVerb{\|}
\begin{document}
\begin{thebibliography}{9}
\bibitem{ctan} CTAN: \url{http://www.ctan.org} is shortened to |ctan:| below.
\bibitem{ext} \LyX{} crew. \url{CTAN:/macros/latex/ contrib/extsizes}.
\end{thebibliography}
\end{document}
"""
    doc = read_markup(tex, "tex", name="doc.tex")
    assert doc.entries is not None
    assert [e.text for e in doc.entries] == [
        "CTAN: http://www.ctan.org is shortened to ctan: below.",
        "LyX crew. CTAN:/macros/latex/contrib/extsizes.",
    ]
