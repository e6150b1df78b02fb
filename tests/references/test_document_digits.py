"""Digit-like characters anywhere in a document never crash the reader (issue 34).

``"²".isdigit()`` is true and ``int("²")`` raises: every number the reader converts is tested
with ``str.isdecimal`` (Arabic-Indic "٣" converts, superscripts and circled digits do not).
"""

from __future__ import annotations

import pytest

from citeverify_core.errors import DocumentError
from citeverify_core.references.document import extract_document

_ODD = ["²", "³", "¹⁰", "①", "٣", "３", "Ⅻ", "߃"]


def _read(data: str, name: str) -> object:
    try:
        return extract_document(data.encode(), name=name)
    except DocumentError as exc:  # a clear refusal is allowed; a crash is not
        return exc.code


@pytest.mark.parametrize("odd", _ODD)
def test_odd_digits_in_labels_of_a_text_list(odd: str) -> None:
    text = "Intro [1] and [2].\n\nReferences\n\n" + "".join(
        f"[{label}] Smith, J. A title number {n}. Journal 3, 1-2 (2001).\n"
        for n, label in enumerate(["1", odd, "2"])
    )
    for name in ("paper.md", "paper.txt"):
        result = _read(text, name)
        assert not isinstance(result, str) or result == "no-reference-list"


@pytest.mark.parametrize("odd", _ODD)
def test_odd_digits_in_latex_arguments_and_labels(odd: str) -> None:
    src = (
        f"\\newcommand{{\\x}}[{odd}]{{#1}}\n\\begin{{document}}\nText \\cite{{a}} \\x{{y}}.\n"
        f"\\begin{{thebibliography}}{{9}}\n\\bibitem[{odd}]{{a}} A. Author. A title. 2001.\n"
        "\\end{thebibliography}\n\\end{document}\n"
    )
    doc = extract_document(src.encode(), name="paper.tex")
    assert [r.key for r in doc.references] == ["a"]


@pytest.mark.parametrize("odd", _ODD)
def test_odd_digits_in_html_list_numbers(odd: str) -> None:
    html = (
        "<html><body><p>As shown [1].</p><h2>References</h2>"
        f'<ol start="{odd}"><li value="{odd}">Smith, J. A title. Journal 3, 1-2 (2001).</li>'
        "<li>Lee, K. Another title. Journal 4, 5-6 (2002).</li></ol></body></html>"
    )
    doc = extract_document(html.encode(), name="paper.html")  # read, not refused as corrupt
    assert len(doc.references) == 2
