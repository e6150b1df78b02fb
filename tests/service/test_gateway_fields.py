"""Nothing redact or block removes comes back in any field of the gateway's answer.

One unsupported sentence with a unique word and number (``PLANT``) is planted in one field of an
upstream answer at a time; the exchange goes through the real service (uvicorn on 127.0.0.1) in
front of a real loopback upstream, and the client's raw bytes are searched for the plant, also
after JSON decoding (a ``\\u``-escaped plant is still the plant). Under ``flag`` the same answers
pass unchanged, which shows that every case does carry its plant.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import Any, Literal

import httpx
import pytest

from citeverify_core import CitationVerifier
from citeverify_core.engine.blocked import public_reason
from citeverify_core.engine.exchange import verify_exchange
from citeverify_core.service.gateway import GatewayConfig, HTTPUpstream
from citeverify_core.service.policies import PolicyPacks
from tests.support.loopback import Loopback, Reply
from tests.support.service import Service, build_index

MUSEUM = "The museum opens at nine."
DOCUMENTS = [{"content": MUSEUM}]
# The unique word and number that must not come back once removed.
WORD, NUMBER = "zorblax", "4217"
PLANT = f"The {WORD} tower holds {NUMBER} lanterns."
REDACTED = "[unverified claim removed]"
QUOTES_ONLY = {"extract_patterns": ["quote"], "extensions": {"lookups": {"enabled": False}}}
POLICIES = {
    action: {**QUOTES_ONLY, "output_action": {"unverified_action": action}}
    for action in ("flag", "redact", "block")
}
# strict_statistics with numbers compared by value: the one rule whose reason quotes a number.
POLICIES["stats"] = {
    "output_action": {"unverified_action": "block"},
    "extract_patterns": ["quote"],
    "extensions": {
        "lookups": {"enabled": False},
        "strict_statistics": True,
        "numbers": "value",
    },
}

Kind = Literal["chat", "responses"]


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, Loopback]]:
    """One service (buffered streams) with the packs above, in front of one loopback upstream."""
    folder = tmp_path_factory.mktemp("fields")
    packs = folder / "packs"
    packs.mkdir()
    for name, policy in POLICIES.items():
        pack = {
            "pack": {"name": name, "version": "1.0.0", "enabled": True},
            "policies": {"chain": ["citation-verifier"]},
            "policy": {"citation-verifier": policy},
        }
        (packs / f"{name}.json").write_text(json.dumps(pack))
    index = build_index(folder)
    with Loopback() as upstream:
        config = GatewayConfig(
            HTTPUpstream(upstream.url + "/v1", timeout=10),
            PolicyPacks(folder=packs),
            stream_mode="buffer",
        )
        with (
            Service(folder / "jobs.sqlite", index, workers=False, gateway=config) as service,
            httpx.Client(base_url=service.url, timeout=30) as client,
        ):
            yield client, upstream


def _send(
    gateway: tuple[httpx.Client, Loopback],
    kind: Kind,
    policy: str,
    reply: Reply,
    *,
    stream: bool = False,
) -> httpx.Response:
    """The client's raw answer to one exchange whose upstream answers ``reply``."""
    client, upstream = gateway
    route = "chat/completions" if kind == "chat" else "responses"
    upstream.routes[("POST", f"/v1/{route}")] = reply
    body: dict[str, Any] = {"model": "gpt-4o-mini", "stream": stream}
    if kind == "chat":
        body["messages"] = [{"role": "user", "content": "When does the museum open?"}]
    else:
        body["input"] = "When does the museum open?"
    body["verdictan"] = {"context_documents": DOCUMENTS, "policy": policy}
    return client.post(f"/v1/{route}", json=body)


def _texts(response: httpx.Response) -> list[str]:
    """What the client can read: the raw bytes, and every JSON document in them decoded."""
    raw = response.content.decode("utf-8", errors="replace")
    texts = [raw]
    documents = [raw]
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        documents = [
            line[5:].strip()
            for line in raw.splitlines()
            if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]")
        ]
    while documents:
        with contextlib.suppress(ValueError):
            decoded = json.loads(documents.pop())
            texts.append(json.dumps(decoded, ensure_ascii=False))
            # JSON inside a string (tool-call arguments) is decoded too.
            documents += [s for s in _strings(decoded) if s.lstrip()[:1] in ("{", "[")]
    return [t.casefold() for t in texts]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _assert_nowhere(response: httpx.Response) -> None:
    for text in _texts(response):
        assert WORD not in text
        assert NUMBER not in text


def _assert_everywhere(response: httpx.Response) -> None:
    assert any(WORD in t and NUMBER in t for t in _texts(response))


# --- Chat Completions ----------------------------------------------------------------------------


def _chat(**message: Any) -> dict[str, Any]:
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": MUSEUM, **message},
        "finish_reason": "stop",
    }
    return {
        "id": "chatcmpl-fields",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "gpt-4o-mini",
        "choices": [choice],
        "usage": {"prompt_tokens": 9, "completion_tokens": 7, "total_tokens": 16},
    }


def _chat_with(change: Callable[[dict[str, Any]], None], **message: Any) -> dict[str, Any]:
    body = _chat(**message)
    change(body)
    return body


def _tool_call(arguments: Any) -> list[dict[str, Any]]:
    return [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "note", "arguments": arguments},
        }
    ]


def _token(text: str) -> dict[str, Any]:
    return {"token": text, "logprob": -0.1, "bytes": list(text.encode()), "top_logprobs": []}


def _second_choice(body: dict[str, Any]) -> None:
    second = json.loads(json.dumps(body["choices"][0]))
    second["index"] = 1
    second["message"]["content"] = PLANT
    body["choices"].append(second)


def _logprobs(body: dict[str, Any]) -> None:
    body["choices"][0]["logprobs"] = {
        "content": [_token(MUSEUM), _token(" " + PLANT)],
        "refusal": None,
    }


def _top_logprobs(body: dict[str, Any]) -> None:
    token = _token(MUSEUM)
    token["top_logprobs"] = [_token(PLANT)]
    body["choices"][0]["logprobs"] = {"content": [token], "refusal": None}


# (id, upstream answer, how the field is handled: "verified" fields fail the check, so block
# refuses the exchange; "removed" fields are left out of what passes a redact or block policy.)
CHAT_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("content", _chat(content=f"{MUSEUM} {PLANT}"), "verified"),
    (
        "content-parts",
        _chat(content=[{"type": "text", "text": MUSEUM}, {"type": "text", "text": " " + PLANT}]),
        "verified",
    ),
    (
        "content-unknown-part",
        _chat(content=[{"type": "text", "text": MUSEUM}, {"type": "x_part", "text": PLANT}]),
        "removed",
    ),
    (
        "content-text-part-extra-field",
        _chat(content=[{"type": "text", "text": MUSEUM, "x_note": PLANT}]),
        "removed",
    ),
    ("refusal", _chat(refusal=PLANT), "verified"),
    (
        "content-refusal-part",
        _chat(content=[{"type": "text", "text": MUSEUM}, {"type": "refusal", "refusal": PLANT}]),
        "verified",
    ),
    ("second-choice", _chat_with(_second_choice), "verified"),
    ("tool-call-arguments", _chat(tool_calls=_tool_call(json.dumps({"note": PLANT}))), "verified"),
    (
        "tool-call-arguments-nested",
        _chat(tool_calls=_tool_call(json.dumps({"notes": [{"text": PLANT}]}))),
        "verified",
    ),
    ("tool-call-arguments-key", _chat(tool_calls=_tool_call(json.dumps({PLANT: 1}))), "verified"),
    ("tool-call-arguments-not-json", _chat(tool_calls=_tool_call(PLANT)), "verified"),
    (
        "tool-call-arguments-escaped",
        _chat(
            tool_calls=_tool_call(
                json.dumps({"note": PLANT}, ensure_ascii=True).replace(
                    WORD, "".join(f"\\u{ord(c):04x}" for c in WORD)
                )
            )
        ),
        "verified",
    ),
    ("tool-call-arguments-object", _chat(tool_calls=_tool_call({"note": PLANT})), "verified"),
    (
        "function-call",
        _chat(function_call={"name": "note", "arguments": json.dumps({"note": PLANT})}),
        "verified",
    ),
    (
        "tool-name",
        _chat(tool_calls=[{"id": "c", "type": "function", "function": {"name": PLANT}}]),
        "removed",
    ),
    ("reasoning-content", _chat(reasoning_content=PLANT), "removed"),
    ("reasoning", _chat(reasoning=PLANT), "removed"),
    ("reasoning-details", _chat(reasoning_details=[{"type": "text", "text": PLANT}]), "removed"),
    ("logprobs", _chat_with(_logprobs), "removed"),
    ("top-logprobs", _chat_with(_top_logprobs), "removed"),
    (
        "annotations",
        _chat(
            annotations=[
                {
                    "type": "url_citation",
                    "url_citation": {
                        "url": f"https://{WORD}.example/{NUMBER}",
                        "title": PLANT,
                        "start_index": 0,
                        "end_index": 10,
                    },
                }
            ]
        ),
        "removed",
    ),
    (
        "audio",
        _chat(audio={"id": "audio_1", "data": "", "transcript": PLANT, "expires_at": 1}),
        "removed",
    ),
    ("unknown-message-field", _chat(x_note=PLANT), "removed"),
    ("role", _chat(role=PLANT), "removed"),
    ("finish-reason", _chat_with(lambda b: b["choices"][0].update(finish_reason=PLANT)), "removed"),
    ("unknown-choice-field", _chat_with(lambda b: b["choices"][0].update(x=PLANT)), "removed"),
    ("unknown-top-level-field", _chat_with(lambda b: b.update(citations=[PLANT])), "removed"),
    ("model", _chat_with(lambda b: b.update(model=PLANT)), "removed"),
    (
        "tool-call-id-and-type",
        _chat(
            tool_calls=[
                {"id": PLANT, "type": PLANT, "function": {"name": "note", "arguments": "{}"}}
            ]
        ),
        "removed",
    ),
    ("system-fingerprint", _chat_with(lambda b: b.update(system_fingerprint=PLANT)), "removed"),
]


# --- Responses API -------------------------------------------------------------------------------


def _output_text(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], **extra}


def _message(*parts: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": list(parts) or [_output_text(MUSEUM)],
    }


def _responses(*items: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {
        "id": "resp_fields",
        "object": "response",
        "created_at": 1_700_000_000,
        "status": "completed",
        "model": "gpt-4o-mini",
        "output": list(items) if items else [_message()],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        **top,
    }


RESPONSES_CASES: list[tuple[str, dict[str, Any], str]] = [
    (
        "output-text",
        _responses(_message(_output_text(MUSEUM), _output_text(" " + PLANT))),
        "verified",
    ),
    (
        "refusal-part",
        _responses(_message(_output_text(MUSEUM), {"type": "refusal", "refusal": PLANT})),
        "verified",
    ),
    (
        "function-call-arguments",
        _responses(
            _message(),
            {
                "id": "fc_1",
                "type": "function_call",
                "call_id": "call_1",
                "name": "note",
                "arguments": json.dumps({"note": PLANT}),
                "status": "completed",
            },
        ),
        "verified",
    ),
    (
        "custom-tool-call-input",
        _responses(
            _message(),
            {"id": "ct_1", "type": "custom_tool_call", "call_id": "c", "name": "n", "input": PLANT},
        ),
        "verified",
    ),
    (
        "reasoning-summary",
        _responses(
            {
                "id": "rs_1",
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": PLANT}],
            },
            _message(),
        ),
        "removed",
    ),
    (
        "reasoning-content",
        _responses(
            {
                "id": "rs_1",
                "type": "reasoning",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": PLANT}],
            },
            _message(),
        ),
        "removed",
    ),
    (
        "annotation",
        _responses(
            _message(
                _output_text(
                    MUSEUM,
                    annotations=[
                        {
                            "type": "url_citation",
                            "url": f"https://{WORD}.example/{NUMBER}",
                            "title": PLANT,
                            "start_index": 0,
                            "end_index": 10,
                        }
                    ],
                )
            )
        ),
        "removed",
    ),
    (
        "output-text-logprobs",
        _responses(_message(_output_text(MUSEUM, logprobs=[_token(PLANT)]))),
        "removed",
    ),
    (
        "web-search-call",
        _responses(
            {
                "id": "ws_1",
                "type": "web_search_call",
                "status": "completed",
                "action": {"type": "search", "query": PLANT},
            },
            _message(),
        ),
        "removed",
    ),
    (
        "file-search-results",
        _responses(
            {
                "id": "fs_1",
                "type": "file_search_call",
                "status": "completed",
                "queries": ["museum"],
                "results": [{"file_id": "f", "filename": "a.txt", "text": PLANT}],
            },
            _message(),
        ),
        "removed",
    ),
    ("unknown-item-type", _responses(_message(), {"type": "x_note", "text": PLANT}), "removed"),
    (
        "unknown-part-type",
        _responses(_message(_output_text(MUSEUM), {"type": "x_part", "text": PLANT})),
        "removed",
    ),
    ("unknown-message-field", _responses({**_message(), "x_note": PLANT}), "removed"),
    ("message-id", _responses({**_message(), "id": PLANT}), "removed"),
    (
        "function-call-ids",
        _responses(
            _message(),
            {
                "id": PLANT,
                "type": "function_call",
                "call_id": PLANT,
                "name": "note",
                "arguments": "{}",
                "status": "completed",
            },
        ),
        "removed",
    ),
    (
        "custom-tool-call-ids",
        _responses(
            _message(),
            {"id": PLANT, "type": "custom_tool_call", "call_id": PLANT, "name": "n", "input": ""},
        ),
        "removed",
    ),
    (
        "message-role-and-status",
        _responses({**_message(), "role": PLANT, "status": PLANT}),
        "removed",
    ),
    ("top-level-output-text", _responses(output_text=f"{MUSEUM} {PLANT}"), "removed"),
    ("top-level-reasoning", _responses(reasoning={"effort": "low", "summary": PLANT}), "removed"),
    ("unknown-top-level-field", _responses(x_note=PLANT), "removed"),
    ("top-level-status", _responses(status=PLANT), "removed"),
]

CASES = [pytest.param("chat", body, how, id=f"chat-{name}") for name, body, how in CHAT_CASES] + [
    pytest.param("responses", body, how, id=f"responses-{name}")
    for name, body, how in RESPONSES_CASES
]


@pytest.mark.parametrize(("kind", "upstream_body", "how"), CASES)
def test_redact_leaves_the_plant_in_no_byte_of_the_answer(gateway, kind, upstream_body, how):
    response = _send(gateway, kind, "redact", Reply(200, upstream_body))
    assert response.status_code == 200, response.text
    _assert_nowhere(response)
    body = response.json()
    assert body["verdictan"]["decision"]["verdict"] == "ALLOW"
    if how == "verified":  # the claim is cut out where it was, the rest of the field stays
        assert REDACTED in json.dumps(body, ensure_ascii=False)
    if kind == "chat":  # the verified answer itself passes as it was
        assert body["choices"][0]["message"]["content"] in (
            MUSEUM,
            f"{MUSEUM} {REDACTED}",
            [{"type": "text", "text": f"{MUSEUM} {REDACTED}"}],
            [{"type": "text", "text": MUSEUM}],
            [{"type": "text", "text": MUSEUM}, {"type": "refusal", "refusal": REDACTED}],
        )


@pytest.mark.parametrize(("kind", "upstream_body", "how"), CASES)
def test_block_leaves_the_plant_in_no_byte_of_the_answer(gateway, kind, upstream_body, how):
    response = _send(gateway, kind, "block", Reply(200, upstream_body))
    _assert_nowhere(response)
    decision = response.json()["verdictan"]["decision"]
    if how == "verified":  # unsupported text the model wrote: the exchange is blocked
        assert response.status_code == 400, response.text
        assert response.json()["error"]["code"] == "content_policy_violation"
        assert decision["verdict"] == "BLOCK"
    else:  # text the gateway does not verify is left out of a verified answer
        assert response.status_code == 200, response.text
        assert decision["verdict"] == "ALLOW"


@pytest.mark.parametrize(("kind", "upstream_body", "how"), CASES)
def test_flag_passes_every_field_unchanged(gateway, kind, upstream_body, how):
    response = _send(gateway, kind, "flag", Reply(200, upstream_body))
    assert response.status_code == 200, response.text
    _assert_everywhere(response)  # each case does plant its text
    body = response.json()
    decision = body.pop("verdictan")["decision"]
    assert body == upstream_body
    assert decision["verdict"] == "ALLOW"
    assert decision["details"]["verified"] is (how != "verified")


@pytest.mark.parametrize(
    "arguments",
    [
        json.dumps({"topic": "museum", "limit": 3, "when": "nine"}),
        json.dumps({"topic": "museum", "when": {"hours": ["nine"], "open": True}}),
        {"topic": "museum"},
        "{}",
        "null",
        "",
    ],
    ids=["json", "nested", "object", "empty", "null", "no-arguments"],
)
@pytest.mark.parametrize("policy", ["redact", "block"])
def test_a_supported_tool_call_passes_with_its_arguments(gateway, policy, arguments):
    upstream_body = _chat(content=None, tool_calls=_tool_call(arguments))
    response = _send(gateway, "chat", policy, Reply(200, upstream_body))
    assert response.status_code == 200, response.text
    call = response.json()["choices"][0]["message"]["tool_calls"][0]
    assert call == {
        "id": "call_1",
        "type": "function",
        "function": {"name": "note", "arguments": arguments},
    }


def test_redact_cuts_only_the_unsupported_sentence_of_an_argument(gateway):
    arguments = json.dumps({"text": f"{MUSEUM} {PLANT}", "count": 2})
    upstream_body = _chat(tool_calls=_tool_call(arguments))
    response = _send(gateway, "chat", "redact", Reply(200, upstream_body))
    call = response.json()["choices"][0]["message"]["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {"text": f"{MUSEUM} {REDACTED}", "count": 2}


def test_a_block_names_the_rule_and_the_span_never_the_number(gateway):
    answer = f"{MUSEUM} The museum opens at {NUMBER}."
    response = _send(gateway, "chat", "stats", Reply(200, _chat(content=answer)))
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    start = len(MUSEUM) + 1
    assert f"strict_statistics: a number in the claim at {start}-{len(answer)} " in message
    _assert_nowhere(response)


# --- buffered streams ----------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["redact", "block"])
def test_an_output_item_id_is_kept_only_while_it_is_one_token(gateway, policy):
    upstream_body = _responses({**_message(), "id": "msg 1 with text"}, _message())
    response = _send(gateway, "responses", policy, Reply(200, upstream_body))
    assert response.status_code == 200, response.text
    assert "msg 1 with text" not in response.text
    first, second = response.json()["output"]
    assert "id" not in first
    assert second["id"] == "msg_1"


def _sse(events: list[dict[str, Any]], *, done: bool = True) -> Reply:
    data = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events)
    if done:
        data += b"data: [DONE]\n\n"
    return Reply(200, data, headers={"Content-Type": "text/event-stream"})


def _chunk(delta: dict[str, Any], index: int = 0, **choice: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fields",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "gpt-4o-mini",
        "choices": [{"index": index, "delta": delta, "finish_reason": None, **choice}],
    }


def _answer_chunks() -> list[dict[str, Any]]:
    return [
        _chunk({"role": "assistant", "content": "The museum "}),
        _chunk({"content": "opens at nine."}),
    ]


def _arguments_delta(text: str) -> dict[str, Any]:
    return {"tool_calls": [{"index": 0, "function": {"arguments": text}}]}


half = len(PLANT) // 2
CHAT_STREAMS = [
    pytest.param(
        [
            *_answer_chunks(),
            _chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "c",
                            "type": "function",
                            "function": {"name": "n", "arguments": ""},
                        }
                    ]
                }
            ),
            _chunk(_arguments_delta('{"note": "' + PLANT[:half])),
            _chunk(_arguments_delta(PLANT[half:] + '"}')),
        ],
        "verified",
        id="tool-call-argument-deltas",
    ),
    pytest.param([*_answer_chunks(), _chunk({"refusal": PLANT})], "verified", id="refusal-delta"),
    pytest.param([*_answer_chunks(), {**_chunk({}), "model": PLANT}], "removed", id="model"),
    pytest.param(
        [*_answer_chunks(), _chunk({}, finish_reason=PLANT)], "removed", id="finish-reason"
    ),
    pytest.param(
        [*_answer_chunks(), _chunk({"reasoning_content": PLANT})], "removed", id="reasoning-delta"
    ),
    pytest.param(
        [*_answer_chunks(), _chunk({"content": PLANT}, index=1)], "verified", id="second-choice"
    ),
    pytest.param(
        [
            *_answer_chunks(),
            _chunk({}, logprobs={"content": [{**_token("x"), "top_logprobs": [_token(PLANT)]}]}),
        ],
        "removed",
        id="top-logprobs",
    ),
]


def _event(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **fields}


def _response_events(*extra: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        _event(
            "response.created", response=_responses(status="in_progress", instructions="Be brief.")
        ),
        _event(
            "response.output_text.delta",
            output_index=0,
            content_index=0,
            item_id="msg_1",
            delta="The museum ",
        ),
        _event(
            "response.output_text.delta",
            output_index=0,
            content_index=0,
            item_id="msg_1",
            delta="opens at nine.",
        ),
        *extra,
    ]


RESPONSES_STREAMS = [
    pytest.param(
        _response_events(
            _event(
                "response.function_call_arguments.delta",
                output_index=1,
                item_id="fc_1",
                delta=PLANT,
            )
        ),
        "verified",
        id="function-call-argument-delta",
    ),
    pytest.param(
        _response_events(
            _event(
                "response.reasoning_summary_text.delta",
                output_index=1,
                summary_index=0,
                item_id="rs",
                delta=PLANT,
            )
        ),
        "removed",
        id="reasoning-summary-delta",
    ),
    pytest.param(
        _response_events(
            _event("response.completed", response=_responses(_message(_output_text(PLANT))))
        ),
        "verified",
        id="completed-differs-from-deltas",
    ),
    pytest.param(
        _response_events(
            _event(
                "response.output_text.annotation.added",
                output_index=0,
                content_index=0,
                annotation_index=0,
                annotation={"type": "url_citation", "title": PLANT, "url": "https://x.example"},
            )
        ),
        "removed",
        id="annotation-added",
    ),
]
STREAMS = [pytest.param("chat", *p.values, id=f"chat-{p.id}") for p in CHAT_STREAMS] + [
    pytest.param("responses", *p.values, id=f"responses-{p.id}") for p in RESPONSES_STREAMS
]


@pytest.mark.parametrize(("kind", "events", "how"), STREAMS)
@pytest.mark.parametrize("policy", ["redact", "block"])
def test_a_buffered_stream_leaves_the_plant_in_no_byte(gateway, kind, events, how, policy):
    # The stream is decided as the JSON answer it stands for: a verified field that fails
    # blocks; a removed field is left out of the JSON decision the client gets instead.
    response = _send(gateway, kind, policy, _sse(events), stream=True)
    blocked = policy == "block" and how == "verified"
    assert response.status_code == (400 if blocked else 200), response.text
    assert not response.headers["content-type"].startswith("text/event-stream")
    _assert_nowhere(response)


@pytest.mark.parametrize(("kind", "events", "how"), STREAMS)
def test_a_buffered_stream_under_flag_is_replayed_unchanged(gateway, kind, events, how):
    reply = _sse(events)
    response = _send(gateway, kind, "flag", reply, stream=True)
    assert response.status_code == 200
    assert response.content == reply.payload()


@pytest.mark.parametrize("policy", ["redact", "block"])
def test_a_buffered_stream_of_the_answer_alone_is_replayed(gateway, policy):
    reply = _sse(_answer_chunks())
    response = _send(gateway, "chat", policy, reply, stream=True)
    assert response.status_code == 200
    assert response.content == reply.payload()


@pytest.mark.parametrize("content", [5, "text", {"type": "output_text"}, None], ids=repr)
def test_a_message_item_without_a_list_of_parts_passes_redact_empty(gateway, content):
    item = {**_message(), "content": content}
    response = _send(gateway, "responses", "redact", Reply(200, _responses(item)))
    assert response.status_code == 200, response.text
    assert response.json()["output"] == [
        {
            "type": "message",
            "id": "msg_1",
            "status": "completed",
            "role": "assistant",
            "content": [],
        }
    ]


# --- a block's reasons --------------------------------------------------------------------------

OFFLINE = {"extensions": {"lookups": {"enabled": False}}}
FIGURES = ["Revenue rose 12 percent to $3,500,000 in 2023."]


def _with(**extensions: Any) -> dict[str, Any]:
    return {"require_sources": False, "extensions": {"lookups": {"enabled": False}, **extensions}}


@pytest.mark.parametrize(
    ("policy", "answer", "documents"),
    [
        pytest.param(OFFLINE, PLANT, [MUSEUM], id="overlap-confidence-no-evidence"),
        pytest.param(OFFLINE, PLANT, [], id="no-documents"),
        pytest.param(
            {**OFFLINE, "rag_context": {"verify_against_context": False}},
            PLANT,
            [MUSEUM],
            id="context-checks-off",
        ),
        pytest.param(
            _with(strict_quotes=True),
            f'The audit says "the {WORD} tower is the cause".',
            ["The audit says the tower is the main cause."],
            id="strict-quotes",
        ),
        pytest.param(
            _with(strict_statistics=True),
            f"Revenue rose {NUMBER} percent to $3,500,000 in 2023.",
            FIGURES,
            id="strict-statistics-percent",
        ),
        pytest.param(
            _with(strict_statistics=True, numbers="value"),
            f"Revenue rose 12 percent to $3,500,000 in {NUMBER}.",
            FIGURES,
            id="strict-statistics-number",
        ),
    ],
)
def test_a_blocks_message_holds_the_rules_and_spans_of_the_verifiers_reasons(
    policy, answer, documents
):
    result = CitationVerifier(policy).verify(answer, documents)
    assert not result.verified and result.reasons
    # Each reason survives as its rule: the reasons made of rules, thresholds and spans as the
    # verifier wrote them, the number reason with the claim's span instead of the number.
    public = [public_reason(r) for r in result.reasons]
    for reason, shown in zip(result.reasons, public, strict=True):
        assert shown == reason or (
            shown.startswith("strict_statistics: a number in the claim at ") and NUMBER in reason
        )
    block = {**policy, "output_action": {"unverified_action": "block"}}
    status, body = verify_exchange(
        {"messages": [], "verdictan": {"context_documents": [{"content": d} for d in documents]}},
        _chat(content=answer),
        block,
    ).to_http()
    assert status == 400
    assert body["error"]["message"].endswith("; ".join(public))
    assert WORD not in json.dumps(body) and NUMBER not in json.dumps(body)


def test_a_reason_of_unknown_form_is_reduced_to_its_rule():
    assert public_reason(f"strict_units: {PLANT}") == "strict_units: failed"
    assert public_reason(PLANT) == "a check failed"
