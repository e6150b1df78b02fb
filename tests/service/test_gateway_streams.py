"""A buffered stream is decided as the JSON answer it stands for, over real HTTP.

Each stream carries the grounded answer and one planted field (``PLANT``, a sentence with a
unique word and number that the context does not support). Under redact and block the client
reads the plant nowhere (raw bytes and decoded JSON) unless the field table verifies and keeps
that field; a stream that carries more than its answer comes back as the JSON decision, with its
tool calls as ``tool_calls`` structure. A stream of the answer alone passes byte for byte, and
under flag every stream does.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.service import test_gateway_fields
from tests.service.test_gateway_fields import (
    MUSEUM,
    NUMBER,
    PLANT,
    REDACTED,
    WORD,
    _answer_chunks,
    _assert_everywhere,
    _assert_nowhere,
    _chunk,
    _event,
    _message,
    _output_text,
    _responses,
    _send,
    _texts,
    _token,
)
from tests.support.loopback import Reply

#: The same service and packs as the field table's tests (one instance per module).
gateway = test_gateway_fields.gateway
TOOL_ARGUMENTS = json.dumps({"topic": "museum"})


def _raw(data: bytes) -> Reply:
    return Reply(200, data, headers={"Content-Type": "text/event-stream"})


def _data(*events: dict[str, Any]) -> bytes:
    return b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events)


def _tool_call_chunks(arguments: str) -> list[dict[str, Any]]:
    half = len(arguments) // 2
    first = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "note", "arguments": arguments[:half]},
    }
    rest = {"index": 0, "function": {"arguments": arguments[half:]}}
    return [_chunk({"tool_calls": [first]}), _chunk({"tool_calls": [rest]})]


# --- Chat Completions: (id, SSE body, how the field table treats the planted field) --------------

CHAT = [
    ("reasoning-content-delta", _data(*_answer_chunks(), _chunk({"reasoning_content": PLANT}))),
    ("reasoning-delta", _data(*_answer_chunks(), _chunk({"reasoning": PLANT}))),
    (
        "logprobs-token",
        _data(
            *_answer_chunks(),
            _chunk({}, logprobs={"content": [_token(" " + PLANT)], "refusal": None}),
        ),
    ),
    ("annotations-delta", _data(*_answer_chunks(), _chunk({"annotations": [{"title": PLANT}]}))),
    ("unknown-delta-field", _data(*_answer_chunks(), _chunk({"x_note": PLANT}))),
    ("unknown-chunk-field", _data(*_answer_chunks(), {**_chunk({}), "x_note": PLANT})),
    ("unknown-choice-field", _data(*_answer_chunks(), _chunk({}, x_note=PLANT))),
    ("role", _data(*_answer_chunks(), _chunk({"role": PLANT}))),
    ("chunk-id", _data(*_answer_chunks(), {**_chunk({}), "id": PLANT})),
    ("unknown-event", _data(*_answer_chunks(), {"x_event": {"text": PLANT}})),
    ("not-json-event", _data(*_answer_chunks()) + f"data: {PLANT}\n\n".encode()),
    ("event-name", _data(*_answer_chunks()) + f"event: {PLANT}\ndata: {{}}\n\n".encode()),
    ("sse-comment", f": {PLANT}\n\n".encode() + _data(*_answer_chunks())),
    ("sse-id", _data(*_answer_chunks()) + f"id: {PLANT}\ndata: {{}}\n\n".encode()),
    (
        "deep-event",
        _data(*_answer_chunks())
        + b'data: {"x": '
        + b"[" * 100_000
        + json.dumps(PLANT).encode()
        + b"]" * 100_000
        + b"}\n\n",
    ),
]
CHAT_VERIFIED = [
    ("refusal-delta", _data(*_answer_chunks(), _chunk({"refusal": PLANT}))),
    (
        "tool-call-arguments-delta",
        _data(*_answer_chunks(), *_tool_call_chunks(json.dumps({"note": PLANT}))),
    ),
    (
        "function-call-delta",
        _data(
            *_answer_chunks(),
            _chunk({"function_call": {"name": "note", "arguments": json.dumps({"note": PLANT})}}),
        ),
    ),
    ("second-choice", _data(*_answer_chunks(), _chunk({"content": PLANT}, index=1))),
    # The client's SSE parser joins the data lines of one event, and ends a line only at CR or
    # LF: the plant is in the answer both times.
    (
        "data-split-over-lines",
        _data(*_answer_chunks())
        + b"data: "
        + json.dumps(_chunk({"content": " " + PLANT})).replace(", ", ",\ndata: ").encode()
        + b"\n\n",
    ),
    ("line-separator-in-content", _data(*_answer_chunks(), _chunk({"content": "\u2028" + PLANT}))),
]

# --- Responses ------------------------------------------------------------------------------------


def _answer_events(text: str = MUSEUM, *, annotations: list[Any] | None = None) -> list[Any]:
    """A Responses stream of ``text`` with the events and fields OpenAI sends."""
    part = _output_text(text, annotations=annotations or [], logprobs=[])
    item = {**_message(part)}
    place = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    return [
        _event(
            "response.created",
            sequence_number=0,
            response=_responses(status="in_progress", output=[]),
        ),
        _event(
            "response.in_progress",
            sequence_number=1,
            response=_responses(status="in_progress", output=[]),
        ),
        _event(
            "response.output_item.added",
            sequence_number=2,
            output_index=0,
            item={**item, "status": "in_progress", "content": []},
        ),
        _event(
            "response.content_part.added",
            sequence_number=3,
            **place,
            part=_output_text("", logprobs=[]),
        ),
        _event(
            "response.output_text.delta",
            sequence_number=4,
            **place,
            delta=text[:10],
            logprobs=[],
            obfuscation="aB3dE",
        ),
        _event(
            "response.output_text.delta",
            sequence_number=5,
            **place,
            delta=text[10:],
            logprobs=[],
            obfuscation="xY9",
        ),
        _event("response.output_text.done", sequence_number=6, **place, text=text, logprobs=[]),
        _event("response.content_part.done", sequence_number=7, **place, part=part),
        _event("response.output_item.done", sequence_number=8, output_index=0, item=item),
        _event("response.completed", sequence_number=9, response=_responses(item)),
    ]


def _with_final(events: list[Any], *items: dict[str, Any]) -> list[Any]:
    """``events`` whose completed response holds ``items`` after the message."""
    final = events[-1]["response"]
    return [*events[:-1], _event("response.completed", response={**final, "output": [*final["output"], *items]})]  # fmt: skip


def _without_final(events: list[Any]) -> list[Any]:
    return events[:-1]


_REASONING = {
    "id": "rs_1",
    "type": "reasoning",
    "summary": [{"type": "summary_text", "text": PLANT}],
}
_FUNCTION_CALL = {
    "id": "fc_1",
    "type": "function_call",
    "call_id": "call_1",
    "name": "note",
    "arguments": json.dumps({"note": PLANT}),
    "status": "completed",
}
_ANNOTATION = {"type": "url_citation", "url": f"https://{WORD}.example/{NUMBER}", "title": PLANT}

RESPONSES = [
    (
        "reasoning-summary-delta",
        _data(
            *_without_final(_answer_events()),
            _event(
                "response.reasoning_summary_text.delta",
                item_id="rs_1",
                output_index=1,
                summary_index=0,
                delta=PLANT,
            ),
        ),
    ),
    ("reasoning-item-in-completed", _data(*_with_final(_answer_events(), _REASONING))),
    ("annotation-in-done-events", _data(*_answer_events(annotations=[_ANNOTATION]))),
    (
        "annotation-added-without-final",
        _data(
            *_without_final(_answer_events()),
            _event(
                "response.output_text.annotation.added",
                item_id="msg_1",
                output_index=0,
                content_index=0,
                annotation_index=0,
                annotation=_ANNOTATION,
            ),
        ),
    ),
    (
        "logprobs-token",
        _data(
            *_answer_events()[:4],
            {**_answer_events()[4], "logprobs": [_token(PLANT)]},
            *_answer_events()[5:],
        ),
    ),
    (
        "unknown-event-field",
        _data(*_answer_events()[:4], {**_answer_events()[4], "x": PLANT}, *_answer_events()[5:]),
    ),
    ("unknown-event-type", _data(*_answer_events(), _event("response.x_note", text=PLANT))),
    (
        "deltas-differ-from-completed",
        _data(
            *(
                {**e, "delta": " " + PLANT} if e["type"] == "response.output_text.delta" else e
                for e in _answer_events()
            )
        ),
    ),
    (
        "created-output",
        _data(_event("response.created", response=_responses(_message(_output_text(PLANT)))))
        + _data(*_answer_events()[1:]),
    ),
]
RESPONSES_VERIFIED = [
    (
        "function-call-arguments-delta",
        _data(
            *_without_final(_answer_events()),
            _event(
                "response.function_call_arguments.delta",
                item_id="fc_1",
                output_index=1,
                delta=json.dumps({"note": PLANT}),
            ),
        ),
    ),
    ("function-call-in-completed", _data(*_with_final(_answer_events(), _FUNCTION_CALL))),
    (
        "refusal-delta",
        _data(
            *_without_final(_answer_events()),
            _event(
                "response.refusal.delta",
                item_id="msg_1",
                output_index=0,
                content_index=1,
                delta=PLANT,
            ),
        ),
    ),
    ("answer-deltas-without-final", _data(*_without_final(_answer_events(f"{MUSEUM} {PLANT}")))),
]

CASES = [
    *(pytest.param("chat", body, "removed", id=f"chat-{name}") for name, body in CHAT),
    *(pytest.param("chat", body, "verified", id=f"chat-{name}") for name, body in CHAT_VERIFIED),
    *(pytest.param("responses", b, "removed", id=f"responses-{n}") for n, b in RESPONSES),
    *(pytest.param("responses", b, "verified", id=f"responses-{n}") for n, b in RESPONSES_VERIFIED),
]


def _answer(kind: str, body: dict[str, Any]) -> Any:
    if kind == "chat":
        return body["choices"][0]["message"]["content"]
    return [part["text"] for part in body["output"][0]["content"] if part["type"] == "output_text"]


@pytest.mark.parametrize(("kind", "raw", "how"), CASES)
@pytest.mark.parametrize("policy", ["redact", "block"])
def test_a_planted_field_is_decided_as_in_a_json_answer(gateway, kind, raw, how, policy):
    response = _send(gateway, kind, policy, _raw(raw), stream=True)
    _assert_nowhere(response)
    # Not the stream: its bytes hold the plant. The JSON decision instead.
    assert response.headers["content-type"].startswith("application/json"), response.text
    if how == "verified" and policy == "block":
        assert response.status_code == 400, response.text
        assert response.json()["error"]["code"] == "content_policy_violation"
        return
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["verdictan"]["decision"]["verdict"] == "ALLOW"
    if how == "verified":  # cut out where it was
        assert REDACTED in json.dumps(body, ensure_ascii=False)
    else:  # left out; the verified answer passes as it was
        assert _answer(kind, body) in (MUSEUM, [MUSEUM])


@pytest.mark.parametrize(("kind", "raw", "how"), CASES)
def test_flag_replays_every_planted_stream_byte_for_byte(gateway, kind, raw, how):
    response = _send(gateway, kind, "flag", _raw(raw), stream=True)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.content == raw
    if b"[[[[" not in raw:  # each case does plant its text
        _assert_everywhere(response)


ANSWER_ONLY = [
    pytest.param(
        "chat",
        _data(*_answer_chunks()).replace(b"\n", b"\r\n") + b"data: [DONE]\r\n\r\n",
        id="chat-crlf",
    ),
    pytest.param(
        "chat",
        b": keep-alive\n\n" + _data(*_answer_chunks()).replace(b"\n", b"\r"),
        id="chat-cr-and-comment",
    ),
    pytest.param("chat", _data(*_answer_chunks()) + b"data: [DONE]\n\n", id="chat"),
    pytest.param(
        "chat",
        _data(
            {**_chunk({"role": "assistant", "content": ""}), "obfuscation": "q1"},
            *_answer_chunks(),
            _chunk({}, finish_reason="stop", logprobs=None),
            {**_chunk({}), "choices": [], "usage": {"prompt_tokens": 3, "total_tokens": 9}},
        )
        + b"data: [DONE]\n\n",
        id="chat-with-finish-and-usage",
    ),
    pytest.param("responses", _data(*_answer_events()), id="responses"),
    pytest.param("responses", _data(*_without_final(_answer_events())), id="responses-no-final"),
]


@pytest.mark.parametrize(("kind", "raw"), ANSWER_ONLY)
@pytest.mark.parametrize("policy", ["flag", "redact", "block"])
def test_a_stream_of_the_grounded_answer_alone_is_replayed_byte_for_byte(
    gateway, kind, raw, policy
):
    response = _send(gateway, kind, policy, _raw(raw), stream=True)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-citeverify-enforced"] == "true"
    assert response.content == raw


@pytest.mark.parametrize("policy", ["redact", "block"])
def test_a_supported_chat_tool_call_comes_back_as_a_tool_call(gateway, policy):
    raw = _data(*_tool_call_chunks(TOOL_ARGUMENTS), _chunk({}, finish_reason="tool_calls"))
    response = _send(gateway, "chat", policy, _raw(raw), stream=True)
    assert response.status_code == 200, response.text
    choice = response.json()["choices"][0]
    assert choice["message"]["content"] is None
    assert choice["message"]["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "note", "arguments": TOOL_ARGUMENTS},
        }
    ]
    assert choice["finish_reason"] == "tool_calls"


def test_redact_cuts_the_unsupported_argument_and_keeps_the_call(gateway):
    arguments = json.dumps({"note": PLANT, "topic": "museum"})
    raw = _data(*_answer_chunks(), *_tool_call_chunks(arguments))
    response = _send(gateway, "chat", "redact", _raw(raw), stream=True)
    message = response.json()["choices"][0]["message"]
    assert message["content"] == MUSEUM
    (call,) = message["tool_calls"]
    assert call["id"] == "call_1" and call["function"]["name"] == "note"
    assert json.loads(call["function"]["arguments"]) == {"note": REDACTED, "topic": "museum"}


@pytest.mark.parametrize("policy", ["redact", "block"])
def test_a_supported_responses_function_call_comes_back_as_an_item(gateway, policy):
    call = {**_FUNCTION_CALL, "arguments": TOOL_ARGUMENTS}
    raw = _data(
        _event("response.output_item.added", output_index=0, item={**call, "arguments": ""}),
        _event(
            "response.function_call_arguments.delta",
            item_id="fc_1",
            output_index=0,
            delta=TOOL_ARGUMENTS,
        ),
        _event("response.output_item.done", output_index=0, item=call),
        _event("response.completed", response=_responses(call)),
    )
    response = _send(gateway, "responses", policy, _raw(raw), stream=True)
    assert response.status_code == 200, response.text
    assert response.json()["output"] == [
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "status": "completed",
            "name": "note",
            "arguments": TOOL_ARGUMENTS,
        }
    ]


def test_a_reasoning_delta_is_not_moved_into_the_answer(gateway):
    raw = _data(*_answer_chunks(), _chunk({"reasoning_content": "Thinking about " + PLANT}))
    response = _send(gateway, "chat", "redact", _raw(raw), stream=True)
    message = response.json()["choices"][0]["message"]
    assert message == {"role": "assistant", "content": MUSEUM}
    assert not any(WORD in text for text in _texts(response))


def _duplicated(event: dict[str, Any], key: str, first: str) -> bytes:
    """``event`` as one SSE event whose innermost ``key`` appears twice: ``first``, then its own
    value (JSON readers keep the last; the bytes show both)."""
    data = json.dumps(event)
    last = f'"{key}": '
    at = data.rindex(last)
    return f"data: {data[:at]}{last}{json.dumps(first)}, {data[at:]}\n\n".encode()


DUPLICATE_KEYS = [
    # The probe's chunk: the plant, then an empty content in the same delta.
    pytest.param(
        "chat",
        _data(*_answer_chunks()) + _duplicated(_chunk({"content": ""}), "content", " " + PLANT),
        id="chat-delta-content",
    ),
    pytest.param(
        "chat",
        _data(_answer_chunks()[0])
        + _duplicated(_answer_chunks()[1], "content", " " + PLANT)
        + b"data: [DONE]\n\n",
        id="chat-answer-chunk",
    ),
    pytest.param(
        "chat",
        _data(*_answer_chunks())
        + f'data: {{"choices": [{{"index": 0, "delta": {{"content": " {PLANT}"}}}}], '
        f'"choices": []}}\n\n'.encode(),
        id="chat-choices",
    ),
    pytest.param(
        "responses",
        b"".join(
            _duplicated(e, "delta", PLANT) if e.get("sequence_number") == 5 else _data(e)
            for e in _answer_events()
        ),
        id="responses-delta",
    ),
]


@pytest.mark.parametrize(("kind", "raw"), DUPLICATE_KEYS)
@pytest.mark.parametrize("policy", ["redact", "block"])
def test_a_chunk_with_a_duplicate_key_is_decided_as_read_and_not_replayed(
    gateway, kind, raw, policy
):
    # A JSON reader keeps the last value: the check sees that. The bytes hold the first value
    # too: they are not replayed, the JSON decision is sent instead.
    assert WORD.encode() in raw
    response = _send(gateway, kind, policy, _raw(raw), stream=True)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json"), response.text
    _assert_nowhere(response)
    assert _answer(kind, response.json()) in (MUSEUM, [MUSEUM])


@pytest.mark.parametrize(("kind", "raw"), DUPLICATE_KEYS)
def test_flag_replays_a_chunk_with_a_duplicate_key_as_it_came(gateway, kind, raw):
    response = _send(gateway, kind, "flag", _raw(raw), stream=True)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.content == raw


def test_a_stream_past_the_choices_checked_is_a_502(gateway):
    raw = _data(*_answer_chunks(), _chunk({"content": MUSEUM}, index=99))
    response = _send(gateway, "chat", "redact", _raw(raw), stream=True)
    assert response.status_code == 502
    assert response.json()["error"]["code"] == "upstream_error"
