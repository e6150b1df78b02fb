"""extract_document on real text files: LaTeX with and without its .bbl or .bib, Markdown, HTML,
text and BibTeX, and the errors a user sees (issue 26)."""

from __future__ import annotations

from pathlib import Path

import pytest

from citeverify_core.errors import DocumentError
from citeverify_core.references.document import extract_document

TEX_WITH_BIB = rb"""\documentclass{article}
\title{Thesis}
\begin{document}
\section{Intro}
Text \cite{a} and \citep{b}.
\bibliography{refs}
\end{document}
"""
BIB = rb"""@article{a, author={Smith, John}, title={Title A}, journal={J}, year=2020}
@book{b, author={Doe, Jane}, title={Book B}, publisher={P}, year=2019}
@misc{c, title={Never cited}, year=2001}
"""
BBL = rb"""\begin{thebibliography}{2}
\bibitem{a} J.~Smith. Title A. \emph{J}, 2020.
\bibitem{b} J.~Doe. \emph{Book B}. P, 2019.
\end{thebibliography}
"""


def test_tex_with_its_bbl_beside_it(tmp_path: Path) -> None:
    (tmp_path / "thesis.tex").write_bytes(TEX_WITH_BIB)
    (tmp_path / "thesis.bbl").write_bytes(BBL)
    (tmp_path / "refs.bib").write_bytes(BIB)
    doc = extract_document(tmp_path / "thesis.tex")
    assert [(r.key, r.text) for r in doc.references] == [
        ("a", "J. Smith. Title A. J, 2020."),
        ("b", "J. Doe. Book B. P, 2019."),
    ]
    assert doc.title == "Thesis"
    assert any("thesis.bbl" in note for note in doc.notes)


def test_tex_with_a_bib_beside_it_lists_the_cited_entries(tmp_path: Path) -> None:
    (tmp_path / "thesis.tex").write_bytes(TEX_WITH_BIB)
    (tmp_path / "refs.bib").write_bytes(BIB)
    doc = extract_document(str(tmp_path / "thesis.tex"))
    assert [r.key for r in doc.references] == ["a", "b"]
    assert doc.references[0].text.startswith("@article{a,")
    assert doc.heading == "BibTeX entries"


def test_tex_alone_without_its_bibliography_says_what_is_missing() -> None:
    with pytest.raises(DocumentError) as caught:
        extract_document(TEX_WITH_BIB, name="thesis.tex")
    assert caught.value.code == "no-reference-list"


def test_bbl_and_bib_on_their_own(tmp_path: Path) -> None:
    (tmp_path / "paper.bbl").write_bytes(BBL)
    assert len(extract_document(tmp_path / "paper.bbl").references) == 2
    doc = extract_document(BIB, name="refs.bib")
    assert [r.key for r in doc.references] == ["a", "b", "c"]


def test_markdown_paper(tmp_path: Path) -> None:
    path = tmp_path / "paper.md"
    path.write_text(
        "# A Paper\n\nAs [1] and [2] show.\n\n## References\n\n"
        "1. Smith, J. (2020). Title A. *J*, 1, 2–3.\n"
        "2. Doe, J. (2019). Book\n   B. P.\n\n## Appendix\n\nMore [1].\n",
        encoding="utf-8",
    )
    doc = extract_document(path)
    assert doc.title == "A Paper"
    assert [(r.label, r.text) for r in doc.references] == [
        ("1", "Smith, J. (2020). Title A. J, 1, 2–3."),
        ("2", "Doe, J. (2019). Book B. P."),
    ]
    assert doc.references[1].location.line == 8


def test_html_paper() -> None:
    html = (
        b"<html><head><title>Paper</title></head><body><p>As [1] shows.</p>"
        b"<h2>Bibliography</h2><ol><li>Smith, J. (2020). Title A. J.</li>"
        b"<li>Doe, J. (2019). Book B. P.</li></ol><h2>Acknowledgements</h2><p>Thanks.</p>"
        b"</body></html>"
    )
    doc = extract_document(html, name="paper.html")
    assert [(r.label, r.text) for r in doc.references] == [
        ("1", "Smith, J. (2020). Title A. J."),
        ("2", "Doe, J. (2019). Book B. P."),
    ]
    assert doc.heading == "Bibliography"


def test_text_paper_with_hyphenation_and_an_appendix() -> None:
    text = (
        "Intro [1].\n\nReferences\n\n"
        "[1] A. Smith and B. Jones-\nMiller, “Bio-\nlogy of self-\nassessment,” 2020.\n"
        "[2] C. Doe, “COVID-\n19,” 2021.\n\nAppendix A: Proofs\nMore [2] here, 2022.\n"
    ).encode()
    doc = extract_document(text, name="paper.txt")
    assert [r.text for r in doc.references] == [
        "A. Smith and B. Jones-Miller, “Biology of self-assessment,” 2020.",
        "C. Doe, “COVID-19,” 2021.",
    ]
    assert doc.references[0].location.line == 5


def test_no_reference_list_is_a_clear_error() -> None:
    with pytest.raises(DocumentError) as caught:
        extract_document(b"A letter with no references at all.\n", name="letter.txt")
    assert caught.value.code == "no-reference-list"
    assert "no reference list found" in str(caught.value)


def test_binary_text_file_is_corrupt() -> None:
    with pytest.raises(DocumentError) as caught:
        extract_document(b"References\n\x00\x01\x02", name="paper.txt")
    assert caught.value.code == "corrupt"
