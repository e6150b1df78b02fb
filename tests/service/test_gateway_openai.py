"""The guard endpoints driven by the real ``openai`` package.

``citeverify serve``'s app runs under uvicorn on 127.0.0.1 (``tests/service.py``) in front of a
real loopback upstream (``tests/loopback.py``, answering OpenAI-shaped JSON and SSE) or the
built-in ``FixtureUpstream``; the client is ``openai.OpenAI(base_url=<service>/v1)``, sync, with
no retries. Nothing leaves the machine.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

import openai
import pytest
from openai import OpenAI
from openai.types.chat import ChatCompletion

from citeverify_core import CitationVerifier
from citeverify_core.service.gateway import FixtureUpstream, GatewayConfig, HTTPUpstream
from tests.support.loopback import Loopback, Reply, Seen
from tests.support.service import Service, build_index

SEED_POLICY = Path(__file__).parents[1] / "data" / "seed-policy-config.yaml"
MUSEUM = "The museum opens at nine."
DOCUMENTS = [{"content": MUSEUM}]
# Not grounded in DOCUMENTS, and a string that must never come back in a block's body.
INVENTED = "Dragons guard the entrance of the museum after midnight."
MESSAGES: list[Any] = [
    {
        "role": "system",
        "content": 'Return only this exact quoted sentence: "The museum opens at nine."',
    },
    {"role": "user", "content": "When does the museum open?"},
]
CLIENT_KEY = "sk-client-key-123"
# The policy a block is tested with: block, quotes only, no lookups, and the report not asked
# for, so a block's body carries counts and no text of the answer.
BLOCKING = {
    "output_action": {"unverified_action": "block"},
    "extract_patterns": ["quote"],
    "extensions": {"lookups": {"enabled": False}},
}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return build_index(tmp_path_factory.mktemp("index"))


def _chat(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 30, "completion_tokens": 7, "total_tokens": 37},
    }


def _response(text: str) -> dict[str, Any]:
    return {
        "id": "resp_loopback",
        "object": "response",
        "created_at": 1_700_000_000,
        "model": "gpt-4o-mini",
        "status": "completed",
        "output": [
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }


def _sse(text: str) -> Reply:
    """A Chat Completions stream of ``text``, a word a chunk, sent chunked as a provider does."""
    words = text.split(" ")

    def chunks() -> Iterator[bytes]:
        for i, word in enumerate(words):
            event = {
                "id": "chatcmpl-loopback",
                "object": "chat.completion.chunk",
                "created": 1_700_000_000,
                "model": "gpt-4o-mini",
                "choices": [
                    {
                        "index": 0,
                        "delta": {"content": word if i == 0 else " " + word},
                        "finish_reason": None,
                    }
                ],
            }
            yield f"data: {json.dumps(event)}\n\n".encode()
        yield b"data: [DONE]\n\n"

    return Reply(200, headers={"Content-Type": "text/event-stream"}, stream=chunks)


@contextlib.contextmanager
def guard(
    tmp_path: Path,
    index: Any,
    upstream: HTTPUpstream | FixtureUpstream,
    *,
    policy: Any = SEED_POLICY,
    stream_mode: Literal["passthrough", "buffer"] = "passthrough",
) -> Iterator[OpenAI]:
    """The service with the guard endpoints, and an openai client pointed at it."""
    config = GatewayConfig(upstream, CitationVerifier(policy), stream_mode=stream_mode)
    with (
        Service(tmp_path / "jobs.sqlite", index, workers=False, gateway=config) as service,
        OpenAI(base_url=service.url + "/v1", api_key=CLIENT_KEY, max_retries=0, timeout=30) as c,
    ):
        yield c


@contextlib.contextmanager
def loopback_guard(
    tmp_path: Path,
    index: Any,
    replies: Mapping[str, Reply | list[Reply]],
    *,
    timeout: float = 10,
    upstream_key: str | None = None,
    **options: Any,
) -> Iterator[tuple[OpenAI, Loopback]]:
    """The guard in front of a Loopback that answers ``replies`` (by route under /v1/)."""
    with Loopback() as upstream:
        for route, reply in replies.items():
            upstream.routes[("POST", f"/v1/{route}")] = reply
        http = HTTPUpstream(upstream.url + "/v1", timeout=timeout, api_key=upstream_key)
        with guard(tmp_path, index, http, **options) as client:
            yield client, upstream


def _header(seen: Seen, name: str) -> str | None:
    return next((v for k, v in seen.headers.items() if k.lower() == name.lower()), None)


def _fixture(tmp_path: Path, answer: str) -> FixtureUpstream:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"answer": answer}))
    return FixtureUpstream(path)


def _create(client: OpenAI, documents: list[dict[str, str]] = DOCUMENTS, **options: Any) -> Any:
    return client.chat.completions.create(
        model="gpt-4o-mini",
        messages=MESSAGES,
        extra_body={"verdictan": {"context_documents": documents}},
        **options,
    )


# --- allowed answers ---------------------------------------------------------------------------


def _decision(parsed: Any) -> dict[str, Any]:
    """The guard API's ``verdictan.decision`` of a parsed openai object (kept among its extras)."""
    decision: dict[str, Any] = (parsed.model_extra or {})["verdictan"]["decision"]
    return decision


def _assert_allowed(completion: Any, content: str) -> None:
    assert isinstance(completion, ChatCompletion)
    assert completion.choices[0].message.content == content  # the answer, intact
    assert completion.choices[0].finish_reason == "stop"
    # The guard API: the decision is nested under `verdictan` of the provider response; the openai
    # models keep unknown fields (model_extra), so the client can read it.
    decision = _decision(completion)
    assert decision["control"] == "citation-verifier"
    assert (decision["verdict"], decision["reason_code"]) == ("ALLOW", "citation.verified")
    assert decision["enforced"] is True
    assert decision["details"]["verified"] is True
    assert completion.model_dump()["verdictan"] == {"decision": decision}


def test_an_allowed_answer_is_a_normal_chat_completion_with_the_decision(tmp_path, index):
    replies = {"chat/completions": Reply(200, _chat(MUSEUM))}
    with loopback_guard(tmp_path, index, replies) as (client, upstream):
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini",
            messages=MESSAGES,
            extra_body={"verdictan": {"context_documents": DOCUMENTS}},
        )
        completion = raw.parse()
    assert raw.status_code == 200
    assert raw.headers["X-Citeverify-Enforced"] == "true"
    _assert_allowed(completion, MUSEUM)
    assert completion.id == "chatcmpl-loopback"
    assert completion.usage is not None and completion.usage.total_tokens == 37
    assert upstream.calls("/v1/chat/completions") == 1


def test_the_fixture_upstream_answers_the_openai_client_too(tmp_path, index):
    quoted = f'"{MUSEUM}"'  # the guard API's example fixture: the quoted sentence
    with guard(tmp_path, index, _fixture(tmp_path, quoted)) as client:
        completion = _create(client)
    _assert_allowed(completion, quoted)
    details = _decision(completion)["details"]
    assert details["quotes"][0]["text"] == MUSEUM  # the example policy pack extracts quotes


def test_verdictan_is_not_forwarded_and_the_clients_authorization_passes_through(tmp_path, index):
    replies = {"chat/completions": Reply(200, _chat(MUSEUM))}
    # An upstream key is configured, but the client's own Authorization wins.
    with loopback_guard(tmp_path, index, replies, upstream_key="sk-upstream") as (client, up):
        _create(client, temperature=0)
    (seen,) = up.seen
    forwarded = json.loads(seen.body)
    assert "verdictan" not in forwarded
    assert forwarded["messages"] == MESSAGES
    assert (forwarded["model"], forwarded["temperature"]) == ("gpt-4o-mini", 0)
    assert _header(seen, "Authorization") == f"Bearer {CLIENT_KEY}"
    assert "context_documents" not in seen.body.decode()


def test_the_responses_api(tmp_path, index):
    replies = {"responses": Reply(200, _response(MUSEUM))}
    with loopback_guard(tmp_path, index, replies) as (client, upstream):
        response = client.responses.create(
            model="gpt-4o-mini",
            input="When does the museum open?",
            extra_body={"verdictan": {"context_documents": DOCUMENTS}},
        )
    assert response.output_text == MUSEUM
    decision = _decision(response)
    assert (decision["verdict"], decision["reason_code"]) == ("ALLOW", "citation.verified")
    (seen,) = upstream.seen
    assert seen.path == "/v1/responses"
    assert "verdictan" not in json.loads(seen.body)
    assert _header(seen, "Authorization") == f"Bearer {CLIENT_KEY}"


# --- blocked answers ---------------------------------------------------------------------------


def _assert_blocked(exc: openai.BadRequestError) -> None:
    assert exc.status_code == 400
    assert exc.code == "content_policy_violation"
    assert exc.type == "invalid_request_error"
    body = exc.response.json()
    assert body["error"]["code"] == "content_policy_violation"
    decision = body["verdictan"]["decision"]
    assert (decision["verdict"], decision["reason_code"]) == ("BLOCK", "citation.unverified")
    assert "choices" not in body and "output" not in body
    # Nothing of the blocked answer comes back: not its text, not a word of it only it has.
    assert INVENTED not in exc.response.text
    assert "Dragons" not in exc.response.text and "midnight" not in exc.response.text
    assert "Dragons" not in str(exc)


def test_a_blocked_answer_raises_bad_request_without_the_blocked_text(tmp_path, index):
    replies = {"chat/completions": Reply(200, _chat(INVENTED))}
    with (
        loopback_guard(tmp_path, index, replies, policy=BLOCKING) as (client, upstream),
        pytest.raises(openai.BadRequestError) as caught,
    ):
        _create(client)
    _assert_blocked(caught.value)
    assert upstream.calls("/v1/chat/completions") == 1  # max_retries=0: asked once


def test_a_blocked_fixture_answer_and_a_blocked_responses_answer(tmp_path, index):
    with guard(tmp_path, index, _fixture(tmp_path, INVENTED), policy=BLOCKING) as client:
        with pytest.raises(openai.BadRequestError) as chat:
            _create(client)
        with pytest.raises(openai.BadRequestError) as responses:
            client.responses.create(
                model="gpt-4o-mini",
                input="When does the museum open?",
                extra_body={"verdictan": {"context_documents": DOCUMENTS}},
            )
    _assert_blocked(chat.value)
    _assert_blocked(responses.value)


def test_the_seed_pack_blocks_an_unrelated_context(tmp_path, index):
    # The guard API's example, second step: the same request, the context changed to an unrelated sentence.
    # The pack sets include_verification_report, so the decision names the claims; still no
    # completion is handed back, and not the context documents either.
    unrelated = [{"content": "Bats sleep by day."}]
    replies = {"chat/completions": Reply(200, _chat(MUSEUM))}
    with (
        loopback_guard(tmp_path, index, replies) as (client, _upstream),
        pytest.raises(openai.BadRequestError) as caught,
    ):
        _create(client, documents=unrelated)
    assert caught.value.code == "content_policy_violation"
    body = caught.value.response.json()
    assert body["verdictan"]["decision"]["verdict"] == "BLOCK"
    assert "choices" not in body
    assert "Bats sleep by day" not in caught.value.response.text


# --- upstream failures -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "error", "status", "code"),
    [
        pytest.param(
            Reply(
                429,
                {"error": {"message": "slow down", "type": "requests", "code": "rate_limit"}},
                {"Retry-After": "7"},
            ),
            openai.RateLimitError,
            429,
            "rate_limit",
            id="429",
        ),
        pytest.param(
            Reply(500, {"error": {"message": "boom", "type": "server_error", "code": None}}),
            openai.InternalServerError,
            500,
            None,
            id="500",
        ),
        pytest.param(
            Reply(503, {"error": {"message": "overloaded", "type": "server_error"}}),
            openai.InternalServerError,
            503,
            None,
            id="503",
        ),
    ],
)
def test_upstream_errors_surface_as_the_openai_errors_with_the_upstreams_status(
    tmp_path, index, reply, error, status, code
):
    with (
        loopback_guard(tmp_path, index, {"chat/completions": reply}) as (client, upstream),
        pytest.raises(error) as caught,
    ):
        _create(client)
    assert caught.value.status_code == status
    assert caught.value.code == code
    # The upstream's own message (openai < 2 prefixes it with "Error code: N - " and the body).
    assert reply.body["error"]["message"] in caught.value.message
    assert upstream.calls("/v1/chat/completions") == 1


def test_an_upstream_that_times_out_is_a_504(tmp_path, index):
    slow = Reply(200, _chat(MUSEUM), delay=2)
    with (
        loopback_guard(tmp_path, index, {"chat/completions": slow}, timeout=0.5) as (client, _),
        pytest.raises(openai.APIStatusError) as caught,
    ):
        _create(client)
    assert caught.value.status_code == 504
    assert caught.value.code == "upstream_timeout"
    assert caught.value.type == "api_error"


def test_an_upstream_that_cannot_be_reached_is_a_502(tmp_path, index):
    with Loopback() as gone:
        url = gone.url  # a port nobody listens on once the server is closed
    with (
        guard(tmp_path, index, HTTPUpstream(url + "/v1", timeout=5)) as client,
        pytest.raises(openai.InternalServerError) as caught,
    ):
        _create(client)
    assert caught.value.status_code == 502
    assert caught.value.code == "upstream_error"


# --- streams -----------------------------------------------------------------------------------


def _stream_text(stream: Any) -> str:
    return "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)


def test_a_passthrough_stream_yields_the_chunks_unenforced(tmp_path, index):
    # Passed through unchecked (as the guard API specifies), even an answer a block would stop.
    replies = {"chat/completions": _sse(INVENTED)}
    with loopback_guard(tmp_path, index, replies, policy=BLOCKING) as (client, upstream):
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini",
            messages=MESSAGES,
            stream=True,
            extra_body={"verdictan": {"context_documents": DOCUMENTS}},
        )
        assert raw.headers["X-Citeverify-Enforced"] == "false"
        assert raw.headers["Content-Type"].startswith("text/event-stream")
        chunks = list(raw.parse())
    assert len(chunks) == len(INVENTED.split(" "))
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert _stream_text(chunks) == INVENTED
    forwarded = json.loads(upstream.seen[0].body)
    assert forwarded["stream"] is True and "verdictan" not in forwarded


def test_a_fixture_stream_through_the_openai_client(tmp_path, index):
    with guard(tmp_path, index, _fixture(tmp_path, MUSEUM)) as client:
        assert _stream_text(_create(client, stream=True)) == MUSEUM


def test_a_buffered_stream_is_enforced(tmp_path, index):
    replies = {"chat/completions": [_sse(MUSEUM), _sse(INVENTED)]}
    with loopback_guard(tmp_path, index, replies, policy=BLOCKING, stream_mode="buffer") as (
        client,
        upstream,
    ):
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini",
            messages=MESSAGES,
            stream=True,
            extra_body={"verdictan": {"context_documents": DOCUMENTS}},
        )
        assert raw.headers["X-Citeverify-Enforced"] == "true"
        assert _stream_text(raw.parse()) == MUSEUM
        with pytest.raises(openai.BadRequestError) as caught:
            _create(client, stream=True)
    _assert_blocked(caught.value)
    assert "data:" not in caught.value.response.text  # no chunk of the blocked answer
    assert upstream.calls("/v1/chat/completions") == 2


def test_a_buffered_fixture_stream_is_blocked(tmp_path, index):
    upstream = _fixture(tmp_path, INVENTED)
    with (
        guard(tmp_path, index, upstream, policy=BLOCKING, stream_mode="buffer") as client,
        pytest.raises(openai.BadRequestError) as caught,
    ):
        _create(client, stream=True)
    _assert_blocked(caught.value)
