"""Citations checked against the context: statistics, inline markers, strict options, formats."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citeverify_core import CitationVerifier

OFFLINE = {"require_sources": False, "extensions": {"lookups": {"enabled": False}}}


def run(answer, docs, **ext):
    policy = {**OFFLINE, "extensions": {**OFFLINE["extensions"], **ext}}
    return CitationVerifier(policy).verify(answer, docs)


def stats(result):
    return {
        c.text: (c.verified, c.status) for c in result.details.citations if c.type == "statistic"
    }


DOCS = ["Revenue rose 12 percent to $3,500,000 in 2023 (p = .04, n = 1,024), with 3 : 1 odds."]


def test_statistics_supported_after_normalization():
    result = run("Revenue rose 12.0% to $3.5 million (p = 0.04, n=1,024).", DOCS)
    assert stats(result) == {
        "12.0%": (True, "supported"),
        "$3.5 million": (True, "supported"),
        "p = 0.04": (True, "supported"),
        "n=1,024": (True, "supported"),
    }


def test_changed_numbers_are_unsupported_even_when_words_overlap():
    answer = "Revenue rose 21 percent to $3,500,000 in 2023."
    result = run(answer, DOCS)
    assert stats(result) == {
        "21 percent": (False, "unsupported"),
        "$3,500,000": (True, "supported"),
    }
    assert result.verified  # word overlap is high: the changed number is what it misses
    strict = run(answer, DOCS, strict_statistics=True)
    assert not strict.verified
    assert strict.details.claims[0].verified is False
    start = answer.index("21 percent")
    assert f"strict_statistics: the percent at {start}-{start + 10} is not in the context" in (
        strict.reasons
    )
    assert not any("21" in r for r in strict.reasons)  # reasons name spans, never the text


def test_strict_quotes():
    docs = ["The audit states that deferred maintenance is the main cause of deterioration."]
    answer = 'The audit says "deferred maintenance is the only cause of deterioration".'
    assert run(answer, docs).verified  # plain policy: the altered quote still overlaps well
    result = run(answer, docs, strict_quotes=True)
    assert not result.verified
    start, end = answer.index('"'), answer.rindex('"') + 1
    assert result.details.claims[0].problems == [
        f"strict_quotes: the quote at {start}-{end} is not in the context"
    ]
    fixed = run(
        'The audit says "deferred maintenance is the main cause of deterioration".',
        docs,
        strict_quotes=True,
    )
    assert fixed.verified


def test_redact_removes_the_claim_with_a_failing_number():
    policy = {
        **OFFLINE,
        "output_action": {"unverified_action": "redact"},
        "extensions": {"lookups": {"enabled": False}, "strict_statistics": True},
    }
    answer = "Revenue rose 12 percent in 2023. Revenue rose 40 percent in 2024."
    result = CitationVerifier(policy).verify(answer, DOCS)
    assert result.answer == "Revenue rose 12 percent in 2023. [unverified claim removed]"


DOCS_3 = [
    "The museum opens at nine and closes at five.",
    "Tickets cost ten euros for adults and are free for children.",
    "The museum was founded in 1890 by the city council.",
]


def test_inline_markers_check_the_cited_document():
    answer = (
        "The museum opens at nine [1]. Tickets cost ten euros for adults [3]. "
        "It was founded in 1890 by the city council. [3] Children are free [Source 2]."
    )
    claims = run(answer, DOCS_3).details.claims
    assert [(c.cited_documents, c.misattributed) for c in claims] == [
        ([0], False),
        ([2], True),  # supported by the context, but not by the source it cites
        ([2], False),  # the marker after the period belongs to this claim
        ([1], False),
    ]
    assert claims[1].verified is True
    assert claims[1].cited_groundedness < 0.5


def test_marker_beyond_the_documents_is_misattributed():
    (claim,) = run("The museum opens at nine [7].", DOCS_3).details.claims
    assert claim.cited_documents == [6]
    assert claim.misattributed is True


def test_no_markers_no_attribution():
    (claim,) = run("The museum opens at nine.", DOCS_3).details.claims
    assert (claim.cited_documents, claim.misattributed) == ([], None)


# --- strict_attribution (issue 32) ------------------------------------------------------------

MISCITED = "The museum opens at nine [1]. Tickets cost ten euros for adults [3]."


def test_a_misattributed_claim_is_reported_but_does_not_fail_by_default():
    result = run(MISCITED, DOCS_3)
    assert [c.misattributed for c in result.details.claims] == [False, True]
    assert result.verified
    assert result.reasons == []


def test_strict_attribution_fails_a_claim_whose_marker_cites_the_wrong_document():
    result = run(MISCITED, DOCS_3, strict_attribution=True)
    assert not result.verified
    start = MISCITED.index("Tickets")
    end = len(MISCITED)
    why = f"strict_attribution: the claim at {start}-{end} cites document 3; document 2 supports it"
    assert result.reasons == [
        "claim confidence 0.50 is below min_confidence 0.80 (1 of 2 claims pass)",  # it failed
        why,
    ]
    opens, tickets = result.details.claims
    assert (opens.verified, opens.problems) == (True, [])
    assert (tickets.verified, tickets.problems) == (False, [why])
    assert not any(word in why for word in ("Tickets", "euros", "adults"))  # no answer text
    # The keyword option of CitationVerifier and the adapters, and redact removes the claim.
    redacted = CitationVerifier(
        OFFLINE, strict_attribution=True, unverified_action="redact"
    ).verify(MISCITED, DOCS_3)
    assert redacted.answer == "The museum opens at nine [1]. [unverified claim removed]"
    # Cited right, it passes.
    assert run(MISCITED.replace("[3]", "[2]"), DOCS_3, strict_attribution=True).verified


def test_strict_attribution_names_only_the_markers_beyond_the_documents_given():
    answer = "The museum opens at nine [1][7]."
    result = run(answer, DOCS_3, strict_attribution=True)
    assert result.reasons[-1] == (
        f"strict_attribution: the claim at 0-{len(answer)} cites document 7; document 1 supports it"
    )
    several = run("Tickets cost ten euros for adults [1, 3].", DOCS_3, strict_attribution=True)
    assert several.reasons[-1].endswith("cites documents 1, 3; document 2 supports it")


def test_strict_attribution_leaves_claims_no_document_supports_to_the_word_rules():
    # Unsupported by every document: it fails on its words already, with no attribution reason.
    result = run("Dragons guard the museum at night [2].", DOCS_3, strict_attribution=True)
    (claim,) = result.details.claims
    assert claim.misattributed and claim.verified is False
    assert not any(r.startswith("strict_attribution") for r in result.reasons)
    assert claim.problems == []


def test_regulatory_and_case_citations_found_in_the_context():
    docs = ["Claims arise under 42 U.S.C. § 1983, as in Monroe v. Pape, 365 U.S. 167 (1961)."]
    answer = "Claims arise under 42 USC 1983 (Monroe v. Pape, 365 U.S. 167 (1961)); see also 21 C.F.R. § 314.50."
    cites = {c.normalized: (c.verified, c.status) for c in run(answer, docs).details.citations}
    assert cites["42 U.S.C. § 1983"] == (True, "in_context")
    assert cites["365 U.S. 167"] == (True, "in_context")
    assert cites["21 C.F.R. § 314.50"] == (None, "format_valid")


def test_fabricated_reporter_fails_the_format_check():
    result = run("See Smith v. Jones, 999 Fake Rptr. 12 (2020).", [])
    (c,) = [c for c in result.details.citations if c.type == "case_law"]
    assert (c.verified, c.status) == (False, "format_invalid")
    assert "unknown reporter" in c.reason


@pytest.mark.parametrize("pattern", ["academic", "url", "case_law", "regulatory", "statistic"])
def test_extract_patterns_select_the_types(pattern):
    answer = "doi:10.1371/journal.pone.0033693 https://example.org 12% Roe v. Wade, 410 U.S. 113 (1973) 42 U.S.C. § 1983"
    policy = {**OFFLINE, "extract_patterns": [pattern]}
    types = {c.type for c in CitationVerifier(policy).verify(answer, []).details.citations}
    assert types == {pattern}


def test_require_source_match_false_counts_any_citation():
    answer = "Revenue rose 12 percent."
    policy = {"require_source_match": True, "extensions": {"lookups": {"enabled": False}}}
    assert not CitationVerifier(policy).verify(answer, []).verified
    loose = {**policy, "require_source_match": False}
    assert CitationVerifier(loose).verify(answer, []).verified


@pytest.mark.parametrize(
    ("text", "value", "percent", "expected"),
    [
        ("grew 12.0 points", "12", False, True),
        ("grew 112 points", "12", False, False),
        ("grew 12.05 points", "12", False, False),
        ("version 1.12 shipped", "12", False, False),
        ("paid 1,250 euros", "1250", False, True),
        ("paid 11,250 euros", "1250", False, False),
        ("p = .05 overall", "0.05", False, True),
        ("rose 9 million", "9", True, False),
        ("rose 9 percent", "9", True, True),
        ("rose 9% a year", "9", True, True),
        ("rose 9.0 % a year", "9", True, True),
        ("code A12 is", "12", False, False),
        ("in 2012, 12 cases", "12", False, True),
    ],
)
def test_number_index(text, value, percent, expected):
    from citeverify_core.engine.extract import NumberIndex

    assert NumberIndex([text]).contains(value, percent=percent) is expected


@given(n=st.integers(0, 10**9), pad=st.sampled_from(["", " ", "(", "$"]))
def test_number_index_finds_any_written_integer(n, pad):
    from citeverify_core.engine.extract import NumberIndex

    assert NumberIndex([f"about {pad}{n:,} units"]).contains(str(n))
    assert NumberIndex([f"about {pad}{n} units"]).contains(str(n))
