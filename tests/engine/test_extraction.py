"""Extraction of every extract_patterns type, on real citation forms and on ordinary prose."""

import pytest

from citeverify_core.engine.extract import extract, find_markers

ALL = ["academic", "url", "case_law", "regulatory", "statistic"]


def found(text, patterns=ALL):
    return [
        (f.type, f.kind, f.text, f.normalized) for f in extract(text, patterns, current_year=2026)
    ]


POSITIVE = [
    # academic
    pytest.param(
        "See 10.1371/journal.pone.0033693.",
        ("academic", "doi", "10.1371/journal.pone.0033693", "10.1371/journal.pone.0033693"),
        id="bare-doi",
    ),
    pytest.param(
        "doi:10.1371/JOURNAL.PONE.0033693;",
        ("academic", "doi", "doi:10.1371/JOURNAL.PONE.0033693", "10.1371/journal.pone.0033693"),
        id="doi-prefix-lowercased",
    ),
    pytest.param(
        "(https://doi.org/10.1000/xyz(1)).",
        ("academic", "doi", "https://doi.org/10.1000/xyz(1)", "10.1000/xyz(1)"),
        id="doi-url-balanced",
    ),
    pytest.param(
        "at http://dx.doi.org/10.1109/ICDCSW.2003.1203662, see",
        (
            "academic",
            "doi",
            "http://dx.doi.org/10.1109/ICDCSW.2003.1203662",
            "10.1109/icdcsw.2003.1203662",
        ),
        id="dx-doi",
    ),
    pytest.param("PMID: 27933103", ("academic", "pmid", "PMID: 27933103", "27933103"), id="pmid"),
    pytest.param(
        "https://pubmed.ncbi.nlm.nih.gov/27933103/",
        ("academic", "pmid", "https://pubmed.ncbi.nlm.nih.gov/27933103/", "27933103"),
        id="pubmed-url",
    ),
    pytest.param(
        "full text at PMC5122160.", ("academic", "pmcid", "PMC5122160", "PMC5122160"), id="pmcid"
    ),
    pytest.param(
        "arXiv:1706.03762v7",
        ("academic", "arxiv", "arXiv:1706.03762v7", "arXiv:1706.03762v7"),
        id="arxiv-new",
    ),
    pytest.param(
        "https://arxiv.org/abs/hep-th/9711200",
        ("academic", "arxiv", "https://arxiv.org/abs/hep-th/9711200", "arXiv:hep-th/9711200"),
        id="arxiv-old-url",
    ),
    # urls
    pytest.param(
        "(see https://en.wikipedia.org/wiki/Python_(programming_language)).",
        (
            "url",
            "url",
            "https://en.wikipedia.org/wiki/Python_(programming_language)",
            "https://en.wikipedia.org/wiki/Python_(programming_language)",
        ),
        id="url-balanced-parens",
    ),
    pytest.param(
        "Read HTTPS://Example.ORG/Path?q=1.",
        ("url", "url", "HTTPS://Example.ORG/Path?q=1", "https://example.org/Path?q=1"),
        id="url-trailing-dot",
    ),
    # regulatory
    pytest.param(
        "under 42 U.S.C. § 1983,",
        ("regulatory", "usc", "42 U.S.C. § 1983", "42 U.S.C. § 1983"),
        id="usc",
    ),
    pytest.param(
        "42 USC 1983", ("regulatory", "usc", "42 USC 1983", "42 U.S.C. § 1983"), id="usc-plain"
    ),
    pytest.param(
        "21 C.F.R. § 314.50(d)",
        ("regulatory", "cfr", "21 C.F.R. § 314.50(d)", "21 C.F.R. § 314.50(d)"),
        id="cfr",
    ),
    pytest.param(
        "40 CFR Part 60", ("regulatory", "cfr", "40 CFR Part 60", "40 C.F.R. § 60"), id="cfr-part"
    ),
    pytest.param(
        "85 Fed. Reg. 12345",
        ("regulatory", "federal_register", "85 Fed. Reg. 12345", "85 Fed. Reg. 12345"),
        id="fed-reg",
    ),
    pytest.param(
        "Pub. L. No. 111-148",
        ("regulatory", "public_law", "Pub. L. No. 111-148", "Pub. L. No. 111-148"),
        id="public-law",
    ),
    pytest.param(
        "Regulation (EU) 2016/679",
        ("regulatory", "eu_act", "Regulation (EU) 2016/679", "Regulation (EU) 2016/679"),
        id="gdpr",
    ),
    pytest.param(
        "Directive 95/46/EC",
        ("regulatory", "eu_act", "Directive 95/46/EC", "Directive (EC) 95/46"),
        id="eu-directive",
    ),
    # statistics
    pytest.param("grew 12.0% last year", ("statistic", "percent", "12.0%", "12%"), id="percent"),
    pytest.param(
        "about 45 percent of", ("statistic", "percent", "45 percent", "45%"), id="percent-word"
    ),
    pytest.param(
        "cost $3.5 million", ("statistic", "currency", "$3.5 million", "3.5"), id="currency-scaled"
    ),
    pytest.param(
        "paid €1,250 in fees", ("statistic", "currency", "€1,250", "1250"), id="currency-thousands"
    ),
    pytest.param("(p < 0.05)", ("statistic", "p_value", "p < 0.05", "0.05"), id="p-value"),
    pytest.param(
        "(n = 1,024)", ("statistic", "sample_size", "n = 1,024", "1024"), id="sample-size"
    ),
    pytest.param("a 3:1 ratio", ("statistic", "ratio", "3:1", "3:1"), id="ratio"),
    pytest.param("1 in 5 adults", ("statistic", "ratio", "1 in 5", "1:5"), id="one-in-five"),
    pytest.param("OR = 1.52", ("statistic", "ratio", "OR = 1.52", "1.52"), id="odds-ratio"),
    pytest.param("took 20 mg daily", ("statistic", "amount", "20 mg", "20"), id="amount-unit"),
]


@pytest.mark.parametrize(("text", "expected"), POSITIVE)
def test_positive(text, expected):
    assert expected in found(text)


def test_case_law_with_eyecite():
    text = (
        "In Marbury v. Madison, 5 U.S. 137 (1803), the Court held it. Id. at 138. "
        "Brown v. Board of Education, 347 U.S. 483 (1954). Marbury, 5 U.S. at 178. "
        "Smith v. Jones, 999 Fake Rptr. 12 (2020). Roe v. Wade, 410 U.S. 113 (2099)."
    )
    items = extract(text, ["case_law"], current_year=2026)
    by_text = {f.normalized: f for f in items}
    assert by_text["5 U.S. 137"].format_ok is True
    assert by_text["347 U.S. 483"].format_ok is True
    assert by_text["5 U.S. at 178"].kind == "short_case"
    assert any(f.kind == "id" for f in items)
    fake = by_text["999 Fake Rptr. 12"]
    assert fake.format_ok is False
    assert "unknown reporter" in fake.note
    future = by_text["410 U.S. 113"]
    assert future.format_ok is False
    assert "future" in future.note
    for f in items:
        assert text[f.start : f.end] == f.text


def test_identifier_link_is_one_academic_citation_not_also_a_url():
    items = found(
        "https://doi.org/10.1371/journal.pone.0033693 and https://pubmed.ncbi.nlm.nih.gov/27933103/"
    )
    assert [t for t, *_ in items] == ["academic", "academic"]
    only_urls = found("https://doi.org/10.1371/journal.pone.0033693", ["url"])
    assert only_urls == []


def test_only_selected_types_are_extracted():
    text = "doi:10.1371/journal.pone.0033693 grew 12% under 42 U.S.C. § 1983"
    assert {t for t, *_ in found(text, ["statistic"])} == {"statistic"}
    assert found(text, []) == []


NEGATIVE = [
    pytest.param("Version 2.0.1 was released; upgrade to Python 3.11 or v1.2.3.", id="versions"),
    pytest.param(
        "It happened on 12 May 2020, on 2020-05-12 and on May 12, 2020 at 10:30.", id="dates-times"
    ),
    pytest.param(
        "See section 3.2 and chapter 4, § 4.1 of the handbook, step 5 of 7.", id="sections"
    ),
    pytest.param("Write to jane.doe@example.com or support@example.org.", id="emails"),
    pytest.param("Fruit, e.g. apples, i.e. food, etc. are fine.", id="eg-ie"),
    pytest.param("In 2019 the team grew to 40 and moved to 3 offices.", id="plain-numbers"),
    pytest.param("Decision 3/4 of the board was postponed; 10.5 is a number.", id="eu-lookalike"),
    pytest.param(
        "The score was 3:1 at half time and the meeting is at 9:30.", id="scores-not-ratios"
    ),
    pytest.param("Chapter 11 and Title IX apply, as does rule 10b-5.", id="legal-words"),
    pytest.param("He lives at 221B Baker Street, London NW1 6XE.", id="address"),
    pytest.param(
        "Route 66 and Apollo 11 are famous, as is the Boeing 747.", id="names-with-numbers"
    ),
    pytest.param("[1] First item [2] second item", id="brackets"),
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_no_false_positives_on_ordinary_prose(text):
    assert found(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Sales rose [1].", [[1]]),
        ("Sales rose [2, 3] and fell [Source 4].", [[2, 3], [4]]),
        ("Sales rose [1-3].", [[1, 2, 3]]),
        ("Sales rose 【5†source】.", [[5]]),
        ("Array [x] and [2020-01] and [a1].", []),
    ],
)
def test_markers(text, expected):
    assert [nums for _, _, nums in find_markers(text)] == expected
