"""What a blocked answer is replaced with, when a caller asks for a replacement instead of a raise.

Inside an agent, a tool call or a chat loop an exception ends the run; the adapters take
``blocked_response=`` (a string, or a callable given the :class:`VerificationResult`) and put its
text where the answer was. This module is the one place that reads that option.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, TypeAlias

from citeverify_core.errors import InputError

if TYPE_CHECKING:
    from citeverify_core.engine.results import VerificationResult

__all__ = [
    "DEFAULT_BLOCKED_RESPONSE",
    "WITHHELD_TEXT",
    "BlockedResponse",
    "blocked_answer",
    "check_blocked_response",
    "public_reason",
    "shown_result",
]

#: A replacement text, or a function of the result that returns one.
BlockedResponse: TypeAlias = "str | Callable[[VerificationResult], str]"

#: The replacement when ``blocked_response=True`` is given: says why, promises nothing.
DEFAULT_BLOCKED_RESPONSE = "I can't give that answer: the sources I was given do not support it."

#: What stands in for the text of a blocked answer's claims, quotes and citations in the result
#: an adapter hands back (their spans, scores and statuses stay).
WITHHELD_TEXT = "[withheld]"


def check_blocked_response(value: object, *, where: str = "blocked_response") -> None:
    """Refuse a ``blocked_response`` that is neither ``None``, a string nor a callable.

    Called when an adapter is made, so that a wrong option fails at once, not at the first block.

    Raises:
        InputError: ``value`` is of another type.
    """
    if value is None or isinstance(value, str) or callable(value):
        return
    msg = f"{where} must be a string or a callable of the result, got {type(value).__name__}"
    raise InputError(msg, path=where)


def blocked_answer(
    result: VerificationResult,
    blocked_response: BlockedResponse,
    *,
    where: str = "blocked_response",
) -> str:
    """The text that stands in for a blocked answer.

    Args:
        result: The verification that blocked the answer.
        blocked_response: The replacement text, or a callable given ``result`` that returns it.
        where: The option's name, for the error message.

    Raises:
        InputError: the callable returned something other than a string, or the option is of
            another type. (What the callable itself raises propagates unchanged.)
    """
    if isinstance(blocked_response, str):
        return blocked_response
    if callable(blocked_response):
        text = blocked_response(result)
        if not isinstance(text, str):
            msg = f"{where} returned {type(text).__name__}, expected the replacement text (str)"
            raise InputError(msg, path=where)
        return text
    check_blocked_response(blocked_response, where=where)  # raises: the type is wrong
    raise AssertionError  # pragma: no cover - check_blocked_response raised


def shown_result(
    result: VerificationResult,
    *,
    replacement: str | None = None,
    include_original: bool = False,
) -> VerificationResult:
    """The result as an adapter may return, store, stream or serialise it.

    The one rule every adapter applies, as the gateway does on the wire:

    - under ``block``, nothing of the blocked answer: ``answer`` is ``replacement`` (empty when
      there is none), ``original_answer`` is empty, every claim, quote and citation keeps its
      span, scores and status but its text becomes :data:`WITHHELD_TEXT`, missing words and
      per-claim problems are dropped, the lookups of its citations are dropped, and the reasons
      are reduced to rules, thresholds, counts and spans (:func:`public_reason`);
    - under ``redact``, the verifier has already withheld what it removed (unless it was made
      with ``include_original=True``); the reasons are reduced the same way;
    - otherwise (allow, flag) the result is what the user is shown anyway: unchanged.

    With ``include_original=True`` (an application that wants the original for its own audit
    log, and asks for it) nothing is withheld: the result "sends the original along", with
    ``answer`` set to ``replacement`` when one is given and the model's text in
    ``original_answer``.

    What an application needs to explain the decision stays: verdict, action, reason code,
    scores, counts, spans and statuses.
    """
    if include_original:
        if replacement is None or result.action != "block":
            return result
        original = result.original_answer or result.answer
        return dataclasses.replace(result, answer=replacement, original_answer=original)
    if result.action == "redact":
        reasons = [public_reason(r) for r in result.reasons]
        return result if reasons == result.reasons else dataclasses.replace(result, reasons=reasons)
    if result.action != "block":
        return result
    from citeverify_core.engine.decide import withhold  # noqa: PLC0415 - start-up time

    d = result.details
    text = result.original_answer or result.answer
    details = d
    if d.claims is not None:
        claims, unverified, quotes, citations, lookups = withhold(
            len(text),
            WITHHELD_TEXT,
            d.claims,
            d.unverified_claims or [],
            d.quotes or [],
            d.citations or [],
            d.external_lookup or [],
            whole=True,
        )
        details = dataclasses.replace(
            d,
            claims=claims,
            quotes=quotes if d.quotes is not None else None,
            citations=citations if d.citations is not None else None,
            external_lookup=lookups if d.external_lookup is not None else None,
            unverified_claims=unverified if d.unverified_claims is not None else None,
        )
    return dataclasses.replace(
        result,
        answer=replacement or "",
        original_answer="",
        details=details,
        reasons=[public_reason(r) for r in result.reasons],
    )


@cache
def _public_patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The reasons that hold no text of the answer (compiled on first use: start-up time)."""
    public = re.compile(
        r"answer overlap [0-9.]+( \([0-9.]+ with the claims the semantic tier supports\))? is "
        r"below min_context_overlap [0-9.]+"
        r"|claim confidence [0-9.]+ is below min_confidence [0-9.]+ \([0-9]+ of [0-9]+ claims "
        r"pass\)"
        r"|((context checks are off \(verify_against_context: false\)|no context documents were "
        r"given) and )?the answer has no source evidence \(require_sources\)"
        r"|strict_quotes: the quote at [0-9]+-[0-9]+ is not in the context"
        r"|strict_statistics: the [a-z ]+ at [0-9]+-[0-9]+ is not in the context"
        r"|strict_quotes: more than [0-9,]+ quotes; the rest were not checked"
        r"|strict_statistics: too many statistics; the rest were not checked"
        r"|strict_attribution: the claim at [0-9]+-[0-9]+ cites documents? [0-9]+(, [0-9]+)*; "
        r"document [0-9]+ supports it"
        r"|strict_retractions: the citation at [0-9]+-[0-9]+ is of a retracted work"
        r"( \(retracted [0-9-]+\))?"
    )
    # The one reason that names a number of the answer: said by where it is instead.
    number = re.compile(
        r"(strict_statistics): the number .* (in the claim at [0-9]+-[0-9]+) is not in the context"
    )
    rule = re.compile(r"[a-z_]{1,40}")
    return public, number, rule


def public_reason(reason: str) -> str:
    """A verifier reason as a block (or a redaction) may carry it: no text of the answer.

    Reasons made of thresholds, counts, rules and spans pass as they are; the strict_statistics
    reason that quotes a number becomes the rule and the claim's span; any other reason is
    reduced to its rule name (the words before its first colon, when they are a rule name), so
    that a reason added later cannot carry the answer's words past a block.
    """
    public, number, rule = _public_patterns()
    if public.fullmatch(reason):
        return reason
    if found := number.fullmatch(reason):
        return f"{found[1]}: a number {found[2]} is not in the context"
    name = reason.partition(":")[0]
    return f"{name}: failed" if rule.fullmatch(name) else "a check failed"
