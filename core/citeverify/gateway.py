"""The gateway shape of seed 000: verify a provider exchange as the citation-verifier control.

``verify_exchange(request, response)`` reads the answer from a Chat Completions or Responses API
response and the context documents from ``request["verdictan"]["context_documents"]``, and returns
a :class:`GatewayDecision` whose ``to_http()`` gives the status and body a gateway would send.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from citeverify._errors import InputError
from citeverify._result import VerificationResult
from citeverify._verifier import CitationVerifier, PolicyLike

__all__ = [
    "CONTROL_NAME",
    "GatewayDecision",
    "extract_answer",
    "extract_answers",
    "extract_context",
    "verify_exchange",
]

#: The control's name in a policy chain and in decisions.
CONTROL_NAME = "citation-verifier"

STREAM_NOTE = (
    "stream: true is not enforced: the seed gateway buffers streamed responses but does not run "
    "citation-verifier on them"
)


@dataclass(frozen=True)
class GatewayDecision:
    """The control's decision on one exchange.

    Attributes:
        verdict: ``allow`` or ``block``.
        reason_code: ``citation.verified``/``citation.unverified``; None when not enforced.
        details: The seed's details mapping (empty when not enforced).
        enforced: False for ``stream: true`` requests, which the seed does not check.
        result: The full verification result, when the control ran.
        response: The provider response to send on allow (the answer redacted under redact);
            empty on block, so that nothing passes on what was blocked.
        notes: Remarks for people (streams, ignored options, unchecked choices).
        report_on_block: Whether a block's body carries the full details (claim texts, missing
            words, citations). Only when the policy sets ``response.include_verification_report``
            explicitly; otherwise a block carries the verdict, reason code and counts (issue 9:
            a gateway that returns the blocked text in its 400 has not blocked it).
    """

    verdict: Literal["allow", "block"]
    reason_code: Literal["citation.verified", "citation.unverified"] | None
    details: dict[str, Any]
    enforced: bool
    result: VerificationResult | None
    response: Mapping[str, Any]
    notes: list[str] = field(default_factory=list)
    report_on_block: bool = False

    def decision_body(self) -> dict[str, Any]:
        """The ``verdictan.decision`` object."""
        details = self.details
        if self.verdict == "block" and not self.report_on_block:
            details = _counts(self.details)
        body: dict[str, Any] = {
            "control": CONTROL_NAME,
            "verdict": self.verdict.upper(),
            "reason_code": self.reason_code,
            "enforced": self.enforced,
            "details": details,
        }
        if self.notes:
            body["notes"] = list(self.notes)
        return body

    def to_http(self) -> tuple[int, dict[str, Any]]:
        """``(status, body)`` as the gateway sends it.

        A block is ``400`` with ``error.code == "content_policy_violation"`` and a
        ``verdictan.decision`` whose verdict is ``BLOCK``. An allow is ``200`` with the provider
        response and the decision nested under ``verdictan``.
        """
        if self.verdict == "block":
            reasons = "; ".join(self.result.reasons) if self.result is not None else ""
            return 400, {
                "error": {
                    "message": "The response was blocked by citation-verifier: "
                    + (reasons or "the answer is not verified against its sources"),
                    "type": "invalid_request_error",
                    "code": "content_policy_violation",
                },
                "verdictan": {"decision": self.decision_body()},
            }
        body = dict(self.response)
        body["verdictan"] = {"decision": self.decision_body()}
        return 200, body


def verify_exchange(
    request: Mapping[str, Any],
    response: Mapping[str, Any],
    policy: PolicyLike = None,
    *,
    verifier: CitationVerifier | None = None,
) -> GatewayDecision:
    """Run the citation-verifier control on one request/response exchange.

    Args:
        request: The client's request body (Chat Completions or Responses API), with the context
            in ``verdictan.context_documents[].content``.
        response: The provider's response body.
        policy: A PolicyConfig, mapping, or policy pack path (ignored when ``verifier`` is given).
        verifier: A verifier to reuse (keeps its context cache across exchanges).

    Raises:
        InputError: the request or response does not have the shape of either API.
    """
    if not isinstance(request, Mapping):
        msg = f"request must be a JSON object, got {type(request).__name__}"
        raise InputError(msg, path="request")
    if not isinstance(response, Mapping):
        msg = f"response must be a JSON object, got {type(response).__name__}"
        raise InputError(msg, path="response")
    verifier = verifier if verifier is not None else CitationVerifier(policy)
    if request.get("stream") is True:
        return GatewayDecision(
            verdict="allow",
            reason_code=None,
            details={},
            enforced=False,
            result=None,
            response=response,
            notes=[STREAM_NOTE],
        )
    answers = extract_answers(response)
    documents = extract_context(request)
    # Every choice is checked (issue 9: a client asking for n=2 must not get an unverified second
    # choice past a block). The decision is the first failing choice's, else the first choice's.
    results = [verifier.verify(answer, documents) for answer in answers]
    result = next((r for r in results if not r.verified), results[0])
    notes = [f"{len(results)} choices checked"] if len(results) > 1 else []
    out_response: Mapping[str, Any] = response
    if result.verdict == "block":
        out_response = {}
    elif any(r.action == "redact" for r in results):
        for index, r in enumerate(results):
            if r.action == "redact":
                out_response = _replace_answer(out_response, r.answer, choice=index)
    return GatewayDecision(
        verdict=result.verdict,
        reason_code=result.reason_code,
        details=result.details.to_dict(),
        enforced=True,
        result=result,
        response=out_response,
        notes=notes + result.notes,
        report_on_block=_report_asked(verifier),
    )


def _report_asked(verifier: CitationVerifier) -> bool:
    response = verifier.policy.response
    return (
        "include_verification_report" in response.model_fields_set
        and response.include_verification_report
    )


#: What a block says about the answer when the policy did not ask for the report.
WITHHELD_NOTE = (
    "claim texts, missing words and citations are withheld from a block; set "
    "response.include_verification_report: true in the policy to include them"
)


def _counts(details: Mapping[str, Any]) -> dict[str, Any]:
    """The details of a block without any text from the answer: scores and counts."""
    out: dict[str, Any] = {
        key: details[key]
        for key in ("verified", "groundedness", "claim_confidence")
        if key in details
    }
    for key in ("claims", "quotes", "citations"):
        if isinstance(details.get(key), list):
            out[f"{key[:-1]}_count"] = len(details[key])
    if "unverified_claim_count" in details:
        out["unverified_claim_count"] = details["unverified_claim_count"]
    out["withheld"] = WITHHELD_NOTE
    return out


def extract_context(request: Mapping[str, Any]) -> list[str]:
    """The ``verdictan.context_documents[].content`` strings of a request (empty when absent)."""
    ext = request.get("verdictan")
    if ext is None:
        return []
    if not isinstance(ext, Mapping):
        msg = f"request.verdictan must be an object, got {type(ext).__name__}"
        raise InputError(msg, path="request.verdictan")
    docs = ext.get("context_documents")
    if docs is None:
        return []
    if not isinstance(docs, list):
        msg = f"request.verdictan.context_documents must be a list, got {type(docs).__name__}"
        raise InputError(msg, path="request.verdictan.context_documents")
    texts = []
    for i, doc in enumerate(docs):
        path = f"request.verdictan.context_documents[{i}].content"
        content = doc.get("content") if isinstance(doc, Mapping) else None
        if not isinstance(content, str):
            got = "no object" if not isinstance(doc, Mapping) else type(content).__name__
            msg = f"{path} must be a string (got {got})"
            raise InputError(msg, path=path)
        texts.append(content)
    return texts


#: Most choices (``n``) of one response that the gateway checks; a response with more is refused.
MAX_CHOICES = 16


def extract_answers(response: Mapping[str, Any]) -> list[str]:
    """The answer text of every choice (Chat Completions), or the one answer (Responses API)."""
    if "choices" in response:
        choices = response["choices"]
        if not isinstance(choices, list) or not choices:
            msg = "response.choices must be a non-empty list"
            raise InputError(msg, path="response.choices")
        if len(choices) > MAX_CHOICES:
            msg = f"response.choices has {len(choices)} choices; at most {MAX_CHOICES} are checked"
            raise InputError(msg, path="response.choices")
        return [_choice_text(choice, i) for i, choice in enumerate(choices)]
    return [extract_answer(response)[0]]


def _choice_text(choice: Any, index: int) -> str:
    where = f"response.choices[{index}]"
    message = choice.get("message") if isinstance(choice, Mapping) else None
    if not isinstance(message, Mapping):
        msg = f"{where}.message must be an object"
        raise InputError(msg, path=f"{where}.message")
    content = message.get("content")
    if content is None:
        return ""  # e.g. a tool call: no text to verify
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_part_texts(content, f"{where}.message.content"))
    msg = f"{where}.message.content must be a string or a list of parts"
    raise InputError(msg, path=f"{where}.message.content")


def extract_answer(response: Mapping[str, Any]) -> tuple[str, list[str]]:
    """Read the answer text from a Chat Completions or Responses API response.

    Returns the answer (of the first choice) and notes (e.g. that the response has several
    choices; :func:`verify_exchange` checks them all through :func:`extract_answers`).
    """
    notes: list[str] = []
    if "choices" in response:
        choices = response["choices"]
        if not isinstance(choices, list) or not choices:
            msg = "response.choices must be a non-empty list"
            raise InputError(msg, path="response.choices")
        if len(choices) > 1:
            notes.append(f"choices[0] of {len(choices)} choices")
        return _choice_text(choices[0], 0), notes
    if "output" in response:
        output = response["output"]
        if not isinstance(output, list):
            msg = "response.output must be a list"
            raise InputError(msg, path="response.output")
        texts: list[str] = []
        for i, item in enumerate(output):
            if not isinstance(item, Mapping) or item.get("type", "message") != "message":
                continue
            content = item.get("content")
            if isinstance(content, list):
                texts.extend(
                    _part_texts(content, f"response.output[{i}].content", kinds=("output_text",))
                )
        return "".join(texts), notes
    msg = "response has neither choices (Chat Completions) nor output (Responses API)"
    raise InputError(msg, path="response")


def _part_texts(
    parts: list[Any], path: str, kinds: tuple[str, ...] = ("text", "output_text")
) -> list[str]:
    texts = []
    for j, part in enumerate(parts):
        if not isinstance(part, Mapping):
            msg = f"{path}[{j}] must be an object"
            raise InputError(msg, path=f"{path}[{j}]")
        if part.get("type") in kinds:
            text = part.get("text")
            if not isinstance(text, str):
                msg = f"{path}[{j}].text must be a string"
                raise InputError(msg, path=f"{path}[{j}].text")
            texts.append(text)
    return texts


def _replace_answer(response: Mapping[str, Any], answer: str, *, choice: int = 0) -> dict[str, Any]:
    """A copy of ``response`` whose answer text is ``answer`` (used under redact).

    Text parts are merged into the first one; other parts (images, refusals) are kept. Only the
    containers on the way to the answer are copied (no deep copy: the rest of a provider's
    response, such as logprobs, may be nested deeper than Python can recurse).
    """
    out = dict(response)
    if "choices" in out:
        choices = list(out["choices"])
        item = dict(choices[choice])
        message = dict(item["message"])
        if isinstance(message.get("content"), list):
            message["content"] = _merge_parts(message["content"], ("text", "output_text"), answer)
        else:
            message["content"] = answer
        item["message"] = message
        choices[choice] = item
        out["choices"] = choices
        return out
    first = True
    output = []
    for item in out.get("output", []):
        if isinstance(item, Mapping) and item.get("type", "message") == "message":
            content = item.get("content")
            if isinstance(content, list) and any(
                isinstance(p, Mapping) and p.get("type") == "output_text" for p in content
            ):
                parts = _merge_parts(content, ("output_text",), answer if first else None)
                item = {**item, "content": parts}  # noqa: PLW2901
                first = False
        output.append(item)
    if "output" in out:
        out["output"] = output
    if "output_text" in out:
        out["output_text"] = answer
    return out


def _merge_parts(parts: list[Any], kinds: tuple[str, ...], text: str | None) -> list[Any]:
    merged: list[Any] = []
    for part in parts:
        if isinstance(part, Mapping) and part.get("type") in kinds:
            if text is not None:
                merged.append({**part, "text": text})
                text = None
            continue
        merged.append(part)
    return merged
