"""Seed 000 step 7 (the verdict), steps 8-9 (actions), and the details shapes."""

import json

import pytest

from citeverify_core import CitationVerifier, PolicyConfig

GROUNDED = "The museum opens at nine."
CONTEXT = ["The museum opens at nine."]
UNRELATED = ["Penguins live in the southern hemisphere."]


def run(answer, docs, **policy):
    return CitationVerifier(policy).verify(answer, docs)


# Each row: policy, answer, documents, expected verified. Ids name the rule of step 7.
STEP_7 = [
    # An empty answer passes.
    pytest.param({}, "", CONTEXT, True, id="empty-answer"),
    pytest.param({}, "  ... !? \n", [], True, id="answer-without-words-is-empty"),
    # Without context documents: passes when require_sources is false, when source evidence
    # exists, or when require_source_match is false.
    pytest.param({}, GROUNDED, [], False, id="no-context-defaults-fail"),
    pytest.param(
        {"require_sources": False}, GROUNDED, [], True, id="no-context-require-sources-false"
    ),
    pytest.param(
        {"require_source_match": False}, GROUNDED, [], True, id="no-context-source-match-false"
    ),
    # Without context checks: the same rule, even though documents are given.
    pytest.param(
        {"rag_context": {"verify_against_context": False}},
        GROUNDED,
        UNRELATED,
        False,
        id="context-checks-off-defaults-fail",
    ),
    pytest.param(
        {"rag_context": {"verify_against_context": False}, "require_sources": False},
        GROUNDED,
        UNRELATED,
        True,
        id="context-checks-off-require-sources-false",
    ),
    # With context documents: overlap, claim confidence and the source rule.
    pytest.param({}, GROUNDED, CONTEXT, True, id="grounded"),
    pytest.param({}, GROUNDED, UNRELATED, False, id="ungrounded"),
    pytest.param(
        {"require_sources": False}, GROUNDED, UNRELATED, False, id="ungrounded-even-without-sources"
    ),
    pytest.param(
        {
            "min_confidence": 0.0,
            "rag_context": {"min_context_overlap": 0.0},
            "require_sources": False,
        },
        GROUNDED,
        UNRELATED,
        True,
        id="zero-thresholds-pass",
    ),
    pytest.param(
        # Overlap 1.0 passes, but only 1 of 2 claims passes min_groundedness 1.0.
        {"min_groundedness": 1.0, "rag_context": {"min_context_overlap": 0.5}},
        "The museum opens. The museum opens at ten.",
        ["The museum opens at nine. Ten."],
        True,
        id="claim-confidence-boundary",
    ),
    pytest.param(
        {"min_groundedness": 1.0, "rag_context": {"min_context_overlap": 0.5}},
        "The museum opens. The museum closes at ten.",
        ["The museum opens at nine. Ten."],
        False,
        id="claim-confidence-below",
    ),
]


@pytest.mark.parametrize(("policy", "answer", "docs", "verified"), STEP_7)
def test_step_7(policy, answer, docs, verified):
    result = run(answer, docs, **policy)
    assert result.details.verified is verified
    assert result.reason_code == ("citation.verified" if verified else "citation.unverified")


def test_a_matching_quote_is_source_evidence_without_context_checks():
    # verify_against_context false: no overlap is computed, but quotes are still matched
    # against the documents (step 4), and a matching quote is source evidence (step 7).
    off = {"rag_context": {"verify_against_context": False}}
    answer = 'The report says "the museum opens at nine". Tickets are sold online.'
    result = run(answer, CONTEXT, **off)
    assert result.details.quotes[0].matched is True
    assert result.details.groundedness is None
    assert result.verified
    assert not run('The report says "the museum opens at ten".', CONTEXT, **off).verified


def test_an_unverified_quote_alone_is_not_evidence_under_source_match():
    answer = '"Opens at nine."'
    assert not run(answer, [], rag_context={"verify_against_context": False}).verified
    assert run(
        answer, [], rag_context={"verify_against_context": False}, require_source_match=False
    ).verified


def test_min_context_overlap_defaults_to_0_7():
    assert PolicyConfig().effective_min_context_overlap == 0.7


def test_min_context_overlap_falls_back_to_min_groundedness():
    assert PolicyConfig(min_groundedness=0.4).effective_min_context_overlap == 0.4
    explicit = PolicyConfig(min_groundedness=0.4, rag_context={"min_context_overlap": 0.9})
    assert explicit.effective_min_context_overlap == 0.9


def test_fallback_changes_the_verdict():
    # 3 of 5 unique words grounded: 0.6. Fails the 0.7 default, passes when min_groundedness
    # (and so the overlap fallback) is lowered to 0.6.
    answer, docs = "one two three four five", ["one two three"]
    assert not run(answer, docs, min_confidence=0.0).verified
    assert run(answer, docs, min_confidence=0.0, min_groundedness=0.6).verified


@pytest.mark.parametrize(
    ("action", "verdict", "changes_answer"),
    [("flag", "allow", False), ("redact", "allow", True), ("block", "block", False)],
)
def test_output_actions(action, verdict, changes_answer):
    answer = "The museum opens at nine. Dragons guard the entrance."
    result = run(answer, CONTEXT, output_action={"unverified_action": action})
    assert result.verdict == verdict
    assert result.reason_code == "citation.unverified"
    assert result.action == action
    assert (result.answer != answer) is changes_answer


def test_verified_answer_is_allowed_whatever_the_action():
    result = run(GROUNDED, CONTEXT, output_action={"unverified_action": "block"})
    assert (result.verdict, result.reason_code, result.action) == (
        "allow",
        "citation.verified",
        "allow",
    )
    assert result.answer == GROUNDED


def test_redact_replaces_each_unverified_claim_with_the_marker():
    answer = "The museum opens at nine. Dragons guard the entrance. The museum opens."
    result = run(
        answer,
        CONTEXT,
        output_action={"unverified_action": "redact"},
        extensions={"redaction_marker": "[removed]"},
    )
    assert result.answer == "The museum opens at nine. [removed] The museum opens."
    # What was removed is not handed back: spans and scores only (issue 9).
    (removed,) = result.details.unverified_claims
    assert (removed.text, removed.missing_words, removed.span) == ("[removed]", [], (26, 53))
    assert removed.groundedness == 0.25  # "the" is in the context
    assert result.original_answer == ""
    assert "Dragons" not in json.dumps(result.details.to_dict())
    assert "Dragons" not in str(result)


def test_redact_keeps_the_removed_text_only_when_asked():
    answer = "The museum opens at nine. Dragons guard the entrance. The museum opens."
    policy = {"output_action": {"unverified_action": "redact"}}
    result = CitationVerifier(policy, include_original=True).verify(answer, CONTEXT)
    assert [c.text for c in result.details.unverified_claims] == ["Dragons guard the entrance."]
    assert result.original_answer == answer


def test_redact_without_claim_scores_replaces_the_whole_answer():
    result = run(GROUNDED, [], output_action={"unverified_action": "redact"})
    assert result.answer == "[unverified claim removed]"


def test_details_keys_of_a_verified_answer():
    details = run(GROUNDED, CONTEXT).details.to_dict()
    assert list(details) == [
        "verified", "groundedness", "claim_confidence", "claims", "quotes", "citations",
        "external_lookup", "verification_report",
    ]  # fmt: skip


def test_details_keys_of_an_unverified_answer():
    details = run(GROUNDED, UNRELATED).details.to_dict()
    assert list(details) == [
        "verified", "groundedness", "claim_confidence", "claims", "quotes", "citations",
        "external_lookup", "unverified_claims", "unverified_claim_count",
    ]  # fmt: skip
    assert details["unverified_claim_count"] == 1


@pytest.mark.parametrize("docs", [CONTEXT, UNRELATED])
def test_report_less_details_hold_only_verified_and_groundedness(docs):
    result = run(GROUNDED, docs, response={"include_verification_report": False})
    assert set(result.details.to_dict()) == {"verified", "groundedness"}


def test_reasons_say_which_rule_failed():
    result = run(GROUNDED, UNRELATED)
    assert any("min_context_overlap" in r for r in result.reasons)
    assert any("min_confidence" in r for r in result.reasons)
    assert run(GROUNDED, []).reasons == [
        "no context documents were given and the answer has no source evidence (require_sources)"
    ]


def test_ignored_options_are_reported():
    result = run(
        GROUNDED,
        CONTEXT,
        external_resolver={"url": "x"},
        output_action={"hallucination_action": "block"},
    )
    assert result.notes == [
        "external_resolver is accepted but ignored at runtime",
        "output_action.hallucination_action is accepted but ignored at runtime",
    ]


def test_result_serialises_to_json():
    import json

    result = run('The museum "opens at nine".', CONTEXT)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["details"]["quotes"][0]["document_span"] == [11, 24]
    assert data["details"]["citations"][0]["type"] == "quote"


async def _averify(answer, docs):
    return await CitationVerifier().averify(answer, docs)


def test_async_gives_the_same_result():
    import asyncio

    for answer, docs in [(GROUNDED, CONTEXT), (GROUNDED, UNRELATED), ("", [])]:
        assert asyncio.run(_averify(answer, docs)) == CitationVerifier().verify(answer, docs)


def test_redact_withholds_a_citation_that_straddles_a_removed_claim():
    answer = "The museum opens at nine. Zqxsecret v. Museum, 5 Ab. 137. The museum opens."
    result = run(answer, CONTEXT, output_action={"unverified_action": "redact"})
    assert "zqxsecret" not in json.dumps(result.to_dict()).casefold()
    assert result.answer.startswith("The museum opens at nine. [unverified claim removed]")


@pytest.mark.parametrize(
    "answer",
    ["The museum opens at nine.\n[1]", "[1]\nThe museum opens at nine.", "[1] [2]\n[3]"],
    ids=["marker-line-after", "marker-line-first", "markers-only"],
)
def test_a_line_of_markers_alone_is_not_a_claim(answer):
    result = run(answer, CONTEXT)
    claims = result.details.claims or []
    assert all(c.word_count > 0 for c in claims)
    assert result.verified is True
    if answer.startswith("The museum"):
        assert claims[0].cited_documents == [0]  # the marker cites for the claim before it
