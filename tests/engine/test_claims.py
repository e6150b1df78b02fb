"""Claim splitting (design: "Grounding semantics", claims)."""

import pytest

from citeverify_core.text import split_claims


def texts(answer: str) -> list[str]:
    return [p.text for p in split_claims(answer)]


CASES = [
    pytest.param("One. Two! Three? Four", ["One.", "Two!", "Three?", "Four"], id="terminators"),
    pytest.param(
        "First line\nSecond line\r\nThird", ["First line", "Second line", "Third"], id="line-breaks"
    ),
    pytest.param(
        "Revenue grew 3.5 percent. Costs fell.",
        ["Revenue grew 3.5 percent.", "Costs fell."],
        id="decimal",
    ),
    pytest.param(
        "It cost $1,250.75 in total. Done.", ["It cost $1,250.75 in total.", "Done."], id="money"
    ),
    pytest.param(
        "As T. S. Kuhn argued, science shifts. Yes.",
        ["As T. S. Kuhn argued, science shifts.", "Yes."],
        id="initials",
    ),
    pytest.param(
        "Fruit, e.g. apples, i.e. food. Next.",
        ["Fruit, e.g. apples, i.e. food.", "Next."],
        id="eg-ie",
    ),
    pytest.param(
        "Smith et al. found it. Then more.", ["Smith et al. found it.", "Then more."], id="et-al"
    ),
    pytest.param(
        "Dr. Jones works in the U.S. Army. Ok.",
        ["Dr. Jones works in the U.S. Army.", "Ok."],
        id="dr-us",
    ),
    pytest.param(
        "See Fig. 2 and No. 5 vs. No. 6. End.",
        ["See Fig. 2 and No. 5 vs. No. 6.", "End."],
        id="fig-no-vs",
    ),
    pytest.param(
        "The answer is no. Next one.", ["The answer is no.", "Next one."], id="no-not-before-number"
    ),
    pytest.param(
        "Read https://example.org/a.b/c.html. It helps.",
        ["Read https://example.org/a.b/c.html.", "It helps."],
        id="url",
    ),
    pytest.param(
        "DOI 10.1371/journal.pone.0033693. Real.",
        ["DOI 10.1371/journal.pone.0033693.", "Real."],
        id="doi",
    ),
    pytest.param(
        "Mail jane.doe@example.com today. Thanks.",
        ["Mail jane.doe@example.com today.", "Thanks."],
        id="email",
    ),
    pytest.param(
        'He said "it opens at nine." Then left.',
        ['He said "it opens at nine."', "Then left."],
        id="closing-quote",
    ),
    pytest.param("Version 2.0.1 shipped. Good.", ["Version 2.0.1 shipped.", "Good."], id="version"),
    pytest.param("Wait... what?! Really.", ["Wait...", "what?!", "Really."], id="runs"),
    pytest.param("... ! ?\n\n", [], id="no-words"),
    pytest.param("", [], id="empty"),
    pytest.param("Node.js is fast. Yes.", ["Node.js is fast.", "Yes."], id="glued-period"),
    pytest.param("Ça coûte 3,5 €. Très bien.", ["Ça coûte 3,5 €.", "Très bien."], id="unicode"),
    pytest.param("末尾。次", ["末尾。次"], id="cjk-full-stop-not-split"),
]


@pytest.mark.parametrize(("answer", "expected"), CASES)
def test_split(answer, expected):
    assert texts(answer) == expected


def test_spans_point_into_the_answer():
    answer = "  Alpha beta.   Gamma delta!\n Epsilon  "
    pieces = split_claims(answer)
    assert [answer[p.start : p.end] for p in pieces] == [p.text for p in pieces]
    assert [p.text for p in pieces] == ["Alpha beta.", "Gamma delta!", "Epsilon"]


def test_doi_inside_url_and_upper_case_www():
    answer = "See https://doi.org/10.1000/x.y.z. Also WWW.EXAMPLE.ORG/a.b today. Done."
    assert texts(answer) == [
        "See https://doi.org/10.1000/x.y.z.",
        "Also WWW.EXAMPLE.ORG/a.b today.",
        "Done.",
    ]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        pytest.param(
            "Under 42 U.S.C. § 1983 a claim arose, see Smith v. Jones, 999 Cal. Rptr. 12 (2020). Next.",
            [
                "Under 42 U.S.C. § 1983 a claim arose, see Smith v. Jones, 999 Cal. Rptr. 12 (2020).",
                "Next.",
            ],
            id="case-and-statute",
        ),
        pytest.param(
            "See 21 C.F.R. § 314.50 and 85 Fed. Reg. 12345. Then more.",
            ["See 21 C.F.R. § 314.50 and 85 Fed. Reg. 12345.", "Then more."],
            id="regulations",
        ),
        pytest.param(
            "Brown v. Board of Education, 347 U.S. 483 (1954), and 123 F. Supp. 2d 45 (9th Cir. 2001). Done.",
            [
                "Brown v. Board of Education, 347 U.S. 483 (1954), and 123 F. Supp. 2d 45 (9th Cir. 2001).",
                "Done.",
            ],
            id="reporters",
        ),
    ],
)
def test_legal_citations_stay_in_one_claim(answer, expected):
    assert texts(answer) == expected
