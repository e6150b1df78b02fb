"""blocked_answer: the replacement text adapters give instead of raising on block."""

from __future__ import annotations

import json

import pytest

from citeverify_core import CitationVerifier, InputError, VerificationResult
from citeverify_core.engine import (
    WITHHELD_TEXT,
    blocked_answer,
    check_blocked_response,
    shown_result,
)


@pytest.fixture(scope="module")
def blocked() -> VerificationResult:
    verifier = CitationVerifier({"output_action": {"unverified_action": "block"}})
    result = verifier.verify(
        "The museum opens at midnight on Mondays.", ["The museum opens at nine."]
    )
    assert result.verdict == "block"
    return result


def test_a_string_is_the_replacement(blocked: VerificationResult) -> None:
    assert blocked_answer(blocked, "Not supported.") == "Not supported."


def test_a_callable_is_given_the_result(blocked: VerificationResult) -> None:
    text = blocked_answer(blocked, lambda r: f"blocked: {r.reason_code}")
    assert text == "blocked: citation.unverified"


def test_a_callable_that_returns_no_text_is_an_input_error(blocked: VerificationResult) -> None:
    with pytest.raises(InputError, match="returned dict, expected the replacement text"):
        blocked_answer(blocked, lambda r: r.to_dict())  # type: ignore[arg-type,return-value]


@pytest.mark.parametrize("value", [3, ["no"], b"bytes"])
def test_other_types_are_refused_when_the_adapter_is_made(value: object) -> None:
    with pytest.raises(InputError, match="blocked_response must be a string or a callable"):
        check_blocked_response(value)


@pytest.mark.parametrize("value", [None, "text", len])
def test_none_strings_and_callables_pass_the_check(value: object) -> None:
    check_blocked_response(value)


# --- shown_result: what an adapter may hand back once it has acted ------------------------------

SENTINEL = "Purple dragons guard the vault"
ANSWER = f'The museum opens at nine. {SENTINEL} "by order" (doi 10.1234/dragon.77, 42%).'
DOCS = ["The museum opens at nine. Entry is free on Sundays."]
OFFLINE = {"extensions": {"lookups": {"enabled": False}, "strict_statistics": True}}


def _verify(action: str, **options: object) -> VerificationResult:
    policy = {**OFFLINE, "output_action": {"unverified_action": action}}
    return CitationVerifier(policy, **options).verify(ANSWER, DOCS)  # type: ignore[arg-type]


@pytest.mark.parametrize("replacement", [None, "Not supported."])
def test_a_blocked_result_as_shown_holds_nothing_of_the_answer(replacement: str | None) -> None:
    result = _verify("block")
    assert SENTINEL in json.dumps(result.to_dict())  # the verifier's own result keeps it

    shown = shown_result(result, replacement=replacement)
    text = json.dumps(shown.to_dict()) + str(shown) + repr(shown) + shown._repr_html_()
    for part in (SENTINEL, "dragon", "by order", "42"):
        assert part not in text
    assert shown.answer == (replacement or "")
    assert shown.original_answer == ""
    # What explains the decision stays: verdict, reason code, scores, counts, spans, statuses.
    assert (shown.verdict, shown.action, shown.reason_code) == result_head(result)
    d, before = shown.details, result.details
    assert d.groundedness == before.groundedness
    assert d.unverified_claim_count == before.unverified_claim_count == 1
    assert [c.span for c in d.claims or []] == [c.span for c in before.claims or []]
    assert [c.verified for c in d.claims or []] == [c.verified for c in before.claims or []]
    assert [c.status for c in d.citations or []] == [c.status for c in before.citations or []]
    assert {c.text for c in d.claims or []} == {WITHHELD_TEXT}
    assert len(shown.reasons) == len(result.reasons)
    # Still a result: it round-trips as adapters store it (graph state, metadata).
    assert VerificationResult.from_dict(shown.to_dict()) == shown


def result_head(result: VerificationResult) -> tuple[str, str, str]:
    return result.verdict, result.action, result.reason_code


def test_include_original_sends_the_original_along() -> None:
    result = _verify("block")
    shown = shown_result(result, replacement="Not supported.", include_original=True)
    assert shown.answer == "Not supported."
    assert shown.original_answer == ANSWER
    assert SENTINEL in shown.details.unverified_claims[0].text  # type: ignore[index]


def test_redact_is_withheld_by_the_verifier_and_its_reasons_hold_no_number() -> None:
    shown = shown_result(_verify("redact"))
    text = json.dumps(shown.to_dict())
    assert SENTINEL not in text
    assert "42" not in " ".join(shown.reasons)
    assert shown.answer.startswith("The museum opens at nine.")


@pytest.mark.parametrize("action", ["flag", "allow"])
def test_flag_and_allow_are_shown_as_they_are(action: str) -> None:
    if action == "allow":
        result = CitationVerifier(OFFLINE).verify(DOCS[0], DOCS)
    else:
        result = _verify("flag")
    assert shown_result(result) is result


def test_a_strict_attribution_reason_is_public_as_it_is() -> None:
    docs = ["The museum opens at nine.", "Tickets cost ten euros."]
    policy = {**OFFLINE, "output_action": {"unverified_action": "block"}}
    verifier = CitationVerifier(policy, strict_attribution=True)  # type: ignore[arg-type]
    result = verifier.verify("The museum opens at nine [2].", docs)
    reason = next(r for r in result.reasons if r.startswith("strict_attribution"))
    assert (
        reason == "strict_attribution: the claim at 0-29 cites document 2; document 1 supports it"
    )
    assert reason in shown_result(result).reasons
