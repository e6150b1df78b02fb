"""The gateway shape: verify a provider exchange as the citation-verifier control.

``verify_exchange(request, response)`` reads the answer from a Chat Completions or Responses API
response and the context documents from ``request["verdictan"]["context_documents"]``, and returns
a :class:`GatewayDecision` whose ``to_http()`` gives the status and body a gateway would send.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from citeverify_core.engine.blocked import public_reason
from citeverify_core.engine.results import VerificationResult
from citeverify_core.engine.verifier import CitationVerifier, PolicyLike
from citeverify_core.errors import InputError

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

#: The gateway control's documented behaviour: with ``stream: true`` the gateway buffers the
#: response but does not run this control.
STREAM_NOTE = (
    "stream: true is not enforced: the gateway buffers streamed responses but does not run "
    "citation-verifier on them"
)


@dataclass(frozen=True)
class GatewayDecision:
    """The control's decision on one exchange.

    Attributes:
        verdict: ``allow`` or ``block``.
        reason_code: ``citation.verified``/``citation.unverified``; None when not enforced.
        details: The details mapping of the policy-pack format (empty when not enforced).
        enforced: False for ``stream: true`` requests, which the reference gateway does not check.
        result: The full verification result, when the control ran.
        response: The provider response to send on allow: as it came under flag; under a
            redact or block policy rebuilt from the known fields with the verified texts
            (redacted under redact); empty on block, so that nothing passes on what was blocked.
        notes: Remarks for people (streams, ignored options, unchecked choices).
        report_on_block: Whether a block's body carries the full details (claim texts, missing
            words, citations). Only when the policy sets ``response.include_verification_report``
            explicitly; otherwise a block carries the verdict, reason code and counts (a
            gateway that returns the blocked text in its 400 has not blocked it).
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
        ``verdictan.decision`` whose verdict is ``BLOCK``; its message names the failed rules
        and spans (:func:`~citeverify_core.engine.blocked.public_reason`), never text of the
        answer. An allow is ``200`` with the provider response and the decision nested under
        ``verdictan``.
        """
        if self.verdict == "block":
            reasons = "; ".join(
                public_reason(r) for r in (self.result.reasons if self.result is not None else [])
            )
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

    The answer of every choice is verified, and so is every other text the model wrote that a
    client reads: refusals, tool-call arguments (each string value of their JSON), custom tool
    input. Under a ``redact`` or ``block`` policy the response that passes is rebuilt from the
    fields the gateway knows, with the verified texts (redacted under redact); reasoning,
    logprobs, annotations, audio, other output items and unknown fields are left out (the table
    is in docs/service.md). Under ``flag`` the response passes unchanged.

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
    others = _other_texts(response)
    documents = extract_context(request)
    # Every choice is checked (a client asking for n=2 must not get an unverified second choice
    # past a block), and every other text the model wrote. The decision is the first failing
    # check's, else the first choice's.
    results = [verifier.verify(answer, documents) for answer in answers]
    other_results = [verifier.verify(text, documents) for _, text in others]
    failing = next(
        (
            (where, r)
            for where, r in [
                *((f"the answer of choice {i}", r) for i, r in enumerate(results)),
                *((_field_name(key), r) for (key, _), r in zip(others, other_results, strict=True)),
            ]
            if not r.verified
        ),
        None,
    )
    result = failing[1] if failing is not None else results[0]
    notes = [f"{len(results)} choices checked"] if len(results) > 1 else []
    if others:
        notes.append(f"{len(others)} text(s) besides the answer checked")
    if failing is not None and other_results and any(failing[1] is r for r in other_results):
        notes.append(f"the decision is on {failing[0]}; its spans count in that text")
    out_response: Mapping[str, Any] = response
    if result.verdict == "block":
        out_response = {}
    elif verifier.policy.output_action.unverified_action in ("redact", "block"):
        texts = {key: r.answer for (key, _), r in zip(others, other_results, strict=True)}
        out_response = _rebuild(response, [r.answer for r in results], texts)
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
    return verifier.policy.response.report_on_block


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


#: Most texts besides the answers (refusals, argument values) one response may hold.
MAX_OTHER_TEXTS = 512
#: Most string values of one tool call's arguments checked one by one; past it (or past
#: ``MAX_ARGUMENT_DEPTH`` levels of nesting) the arguments are checked as one text.
MAX_ARGUMENT_VALUES = 64
MAX_ARGUMENT_DEPTH = 32
#: An object key in tool-call arguments that names a parameter, not text to check.
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,63}")


def _other_texts(response: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every text the model wrote besides the answers, as ``(key, text)`` in document order.

    A key is the field's path (``choices[0].message.refusal``), with ``#n`` for the n-th string
    of a tool call's JSON arguments. :func:`_rebuild` puts the checked texts back by these keys.
    Shapes the answer's extraction accepted are assumed; anything else here is skipped (it is
    left out of a rebuilt response).
    """
    out: list[tuple[str, str]] = []
    if "choices" in response:
        for i, choice in enumerate(response["choices"]):
            message = choice["message"]
            where = f"choices[{i}].message"
            content = message.get("content")
            if isinstance(content, list):
                for j, part in enumerate(content):
                    if part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
                        out.append((f"{where}.content[{j}].refusal", part["refusal"]))
            if isinstance(message.get("refusal"), str):
                out.append((f"{where}.refusal", message["refusal"]))
            calls = message.get("tool_calls")
            for k, call in enumerate(calls if isinstance(calls, list) else []):
                function = call.get("function") if isinstance(call, Mapping) else None
                if isinstance(function, Mapping):
                    out += _argument_texts(
                        f"{where}.tool_calls[{k}].function.arguments", function.get("arguments")
                    )
            legacy = message.get("function_call")
            if isinstance(legacy, Mapping):
                out += _argument_texts(f"{where}.function_call.arguments", legacy.get("arguments"))
    else:
        for i, item in enumerate(response.get("output", [])):
            if not isinstance(item, Mapping):
                continue
            kind = item.get("type", "message")
            if kind == "message" and isinstance(item.get("content"), list):
                for j, part in enumerate(item["content"]):
                    if part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
                        out.append((f"output[{i}].content[{j}].refusal", part["refusal"]))
            elif kind == "function_call":
                out += _argument_texts(f"output[{i}].arguments", item.get("arguments"))
            elif kind == "custom_tool_call" and isinstance(item.get("input"), str):
                out.append((f"output[{i}].input", item["input"]))
    if len(out) > MAX_OTHER_TEXTS:
        msg = f"the response holds more than {MAX_OTHER_TEXTS} texts besides the answer to check"
        raise InputError(msg, path="response")
    return out


def _field_name(key: str) -> str:
    """A text's field without the position inside tool-call arguments (keys hold no content)."""
    return key.partition("#")[0]


def _argument_texts(where: str, arguments: Any) -> list[tuple[str, str]]:
    """The texts of one tool call's ``arguments``: its JSON's strings, or the whole string.

    Arguments given as an object instead of a JSON string (some OpenAI-compatible servers do)
    are read the same way; when they are too large to check string by string, as one JSON text.
    """
    if not isinstance(arguments, str | dict | list):
        return []
    strings = _json_strings(arguments)
    if strings is None:
        whole = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return [(where, whole)]
    return [(f"{where}#{n}", text) for n, text in enumerate(strings)]


#: What :func:`_parse_arguments` gives for arguments that are not JSON (``null`` is JSON).
_NOT_JSON = object()


def _parse_arguments(arguments: Any) -> Any:
    """The arguments' JSON, or ``_NOT_JSON`` (a cut-off call, plain text)."""
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments)
    except (ValueError, RecursionError):
        return _NOT_JSON


def _json_strings(arguments: Any) -> list[str] | None:
    """The strings of the arguments' JSON in order (values, and keys that are not identifiers).

    None when the arguments are checked as one text instead: not JSON, too deep, too many strings.
    """
    value = _parse_arguments(arguments)
    if value is _NOT_JSON:
        return None
    found: list[str] = []

    def walk(node: Any, depth: int) -> bool:
        if depth > MAX_ARGUMENT_DEPTH or len(found) > MAX_ARGUMENT_VALUES:
            return False
        if isinstance(node, str):
            found.append(node)
        elif isinstance(node, list):
            return all(walk(v, depth + 1) for v in node)
        elif isinstance(node, dict):
            for key, v in node.items():
                if not _IDENTIFIER.fullmatch(key):
                    found.append(key)
                if not walk(v, depth + 1):
                    return False
        return True

    if not walk(value, 0) or len(found) > MAX_ARGUMENT_VALUES:
        return None
    return found


def _rebuilt_arguments(where: str, arguments: Any, texts: Mapping[str, str]) -> Any:
    """The arguments with each checked string replaced by its checked text (redacted or not).

    A JSON string stays a JSON string and an object an object; anything else becomes ``"{}"``.
    """
    if not isinstance(arguments, str | dict | list):
        return "{}"
    if where in texts:  # checked as one text
        return texts[where]
    value = _parse_arguments(arguments)
    counter = itertools.count()

    def put(node: Any) -> Any:
        if isinstance(node, str):
            return texts[f"{where}#{next(counter)}"]
        if isinstance(node, list):
            return [put(v) for v in node]
        if isinstance(node, dict):
            out = {}
            for key, v in node.items():
                new_key = key if _IDENTIFIER.fullmatch(key) else texts[f"{where}#{next(counter)}"]
                out[new_key] = put(v)
            return out
        return node

    rebuilt = put(value)
    return json.dumps(rebuilt, ensure_ascii=False) if isinstance(arguments, str) else rebuilt


#: Top-level fields of a Chat Completions response kept as they are in a rebuilt response:
#: identifiers and counts the provider sets, no text the model wrote.
CHAT_KEPT = ("id", "object", "created", "model", "system_fingerprint", "service_tier", "usage")
#: The same for the Responses API: identifiers, counts, and the request's settings echoed back.
RESPONSES_KEPT = (
    "id",
    "object",
    "created_at",
    "completed_at",
    "status",
    "model",
    "usage",
    "error",
    "incomplete_details",
    "instructions",
    "metadata",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "temperature",
    "top_p",
    "top_logprobs",
    "max_output_tokens",
    "max_tool_calls",
    "previous_response_id",
    "conversation",
    "prompt",
    "prompt_cache_key",
    "safety_identifier",
    "text",
    "truncation",
    "user",
    "store",
    "background",
    "service_tier",
)
#: The values ``reasoning.effort`` and ``reasoning.summary`` (settings, not reasoning) may take.
_REASONING_SETTINGS = {
    "effort": (None, "none", "minimal", "low", "medium", "high", "xhigh"),
    "summary": (None, "auto", "concise", "detailed"),
}


#: Kept fields that hold an identifier or a setting's name: kept only as such (one token, no
#: white space), so that they cannot carry a sentence.
IDENTIFIER_FIELDS = frozenset(
    {
        "id", "object", "model", "system_fingerprint", "service_tier", "status",
        "previous_response_id", "prompt_cache_key", "safety_identifier", "user", "truncation",
    }
)  # fmt: skip
#: An identifier or a tag as kept: one token, no white space (the buffered streams' assembler
#: holds the fields of events to it too).
ONE_TOKEN = re.compile(r"\S{1,200}")


def _one_token(value: Any) -> bool:
    """Whether ``value`` may stand as an identifier: None, or a string of one token."""
    return value is None or (isinstance(value, str) and ONE_TOKEN.fullmatch(value) is not None)


def _kept(response: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The fields ``keys`` of ``response`` that a rebuilt response keeps as they are."""
    return {
        key: response[key]
        for key in keys
        if key in response and (key not in IDENTIFIER_FIELDS or _one_token(response[key]))
    }


def _identifiers(item: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The identifiers ``keys`` of an output item or a tool call, each while it is one token.

    One holding white space is text the model or the provider wrote: left out.
    """
    return {key: item[key] for key in keys if key in item and _one_token(item[key])}


def _rebuild(
    response: Mapping[str, Any], answers: list[str], texts: Mapping[str, str]
) -> dict[str, Any]:
    """The response a redact or block policy lets pass: only known fields, checked texts.

    ``answers`` are the checked answers (one a choice, or the Responses answer) and ``texts``
    the other checked texts by :func:`_other_texts` key. What the gateway does not check, or
    does not know, is left out: a string of unknown origin does not pass a policy that removes
    or blocks what it cannot verify. Only the containers on the way are copied (no deep copy).
    """
    if "choices" in response:
        out = _kept(response, CHAT_KEPT)
        out["choices"] = [
            _rebuild_choice(choice, i, answer, texts)
            for i, (choice, answer) in enumerate(zip(response["choices"], answers, strict=True))
        ]
        return out
    out = _kept(response, RESPONSES_KEPT)
    settings = response.get("reasoning")
    if isinstance(settings, Mapping):
        out["reasoning"] = {
            key: settings[key]
            for key, allowed in _REASONING_SETTINGS.items()
            if key in settings and settings[key] in allowed
        }
    elif "reasoning" in response:
        out["reasoning"] = None
    answer: str | None = answers[0]
    output: list[Any] = []
    for i, item in enumerate(response.get("output", [])):
        kind = item.get("type", "message") if isinstance(item, Mapping) else None
        where = f"output[{i}]"
        if kind == "message":
            parts: list[Any] = []
            content = item.get("content")
            for j, part in enumerate(content if isinstance(content, list) else []):
                if not isinstance(part, Mapping):
                    continue
                if part.get("type") == "output_text" and answer is not None:
                    # The answer is one text: it goes into the first output_text part.
                    parts.append({"type": "output_text", "text": answer, "annotations": []})
                    answer = None
                elif part.get("type") == "refusal" and f"{where}.content[{j}].refusal" in texts:
                    parts.append(
                        {"type": "refusal", "refusal": texts[f"{where}.content[{j}].refusal"]}
                    )
            kept = _identifiers(item, ("id",)) | _status(item)
            output.append({"type": "message", **kept, "role": "assistant", "content": parts})
        elif kind == "function_call":
            kept = _identifiers(item, ("id", "call_id")) | _status(item)
            kept["name"] = _name(item.get("name"))
            arguments = _rebuilt_arguments(f"{where}.arguments", item.get("arguments"), texts)
            output.append({"type": kind, **kept, "arguments": arguments})
        elif kind == "custom_tool_call" and f"{where}.input" in texts:
            kept = _identifiers(item, ("id", "call_id")) | _status(item)
            kept["name"] = _name(item.get("name"))
            output.append({"type": kind, **kept, "input": texts[f"{where}.input"]})
        # Reasoning, web search, code interpreter and other items: left out.
    out["output"] = output
    if "output_text" in response:
        out["output_text"] = answers[0]
    return out


#: The values of Chat ``finish_reason`` and of a Responses item's ``status``.
FINISH_REASONS = ("stop", "length", "tool_calls", "content_filter", "function_call")
ITEM_STATUSES = ("completed", "incomplete", "in_progress")


def _status(item: Mapping[str, Any]) -> dict[str, Any]:
    """A Responses item's ``status`` when it is one of the known values (else left out)."""
    return {"status": item["status"]} if item.get("status") in ITEM_STATUSES else {}


def _name(name: Any) -> str | None:
    """A tool's name as the model gave it when it is an identifier (else it is text: dropped)."""
    return name if isinstance(name, str) and _IDENTIFIER.fullmatch(name) else None


def _rebuild_choice(
    choice: Mapping[str, Any], index: int, answer: str, texts: Mapping[str, str]
) -> dict[str, Any]:
    """One Chat Completions choice rebuilt from its known fields (see :func:`_rebuild`)."""
    where = f"choices[{index}].message"
    message = choice["message"]
    new: dict[str, Any] = {"role": "assistant"}
    content = message.get("content")
    if isinstance(content, list):
        parts: list[Any] = []
        text: str | None = answer
        for j, part in enumerate(content):
            if part.get("type") == "text" and text is not None:
                parts.append({"type": "text", "text": text})
                text = None
            elif part.get("type") == "refusal" and f"{where}.content[{j}].refusal" in texts:
                parts.append({"type": "refusal", "refusal": texts[f"{where}.content[{j}].refusal"]})
        new["content"] = parts
    else:
        new["content"] = None if content is None else answer
    if "refusal" in message:
        new["refusal"] = texts.get(f"{where}.refusal")
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        new["tool_calls"] = [
            {
                **_identifiers(call, ("id", "type")),
                "function": {
                    "name": _name(call["function"].get("name")),
                    "arguments": _rebuilt_arguments(
                        f"{where}.tool_calls[{k}].function.arguments",
                        call["function"].get("arguments"),
                        texts,
                    ),
                },
            }
            for k, call in enumerate(calls)
            if isinstance(call, Mapping) and isinstance(call.get("function"), Mapping)
        ]
    legacy = message.get("function_call")
    if isinstance(legacy, Mapping):
        new["function_call"] = {
            "name": _name(legacy.get("name")),
            "arguments": _rebuilt_arguments(
                f"{where}.function_call.arguments", legacy.get("arguments"), texts
            ),
        }
    out: dict[str, Any] = {"index": choice.get("index", index), "message": new}
    reason = choice.get("finish_reason")
    out["finish_reason"] = reason if reason in FINISH_REASONS else None
    if "logprobs" in choice:
        out["logprobs"] = None  # they spell the original text, redacted parts included
    return out
