"""blocked_answer: the replacement text adapters give instead of raising on block."""

from __future__ import annotations

import pytest

from citeverify_core import CitationVerifier, InputError, VerificationResult
from citeverify_core.engine import blocked_answer, check_blocked_response


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
