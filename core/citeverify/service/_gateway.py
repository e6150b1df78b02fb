"""The citation-verifier gateway (seed 000) as a service: an OpenAI-compatible guard endpoint.

``POST /v1/chat/completions`` and ``POST /v1/responses`` forward the request (without its
``verdictan`` field) to an upstream OpenAI-compatible base URL, or answer from a fixture file,
verify the answer against the request's ``verdictan.context_documents`` with the policy, and send
the upstream response with the decision attached, or HTTP 400 ``content_policy_violation``. The
decision itself is :func:`citeverify.gateway.verify_exchange`; this module only moves bytes.

Streams (``stream: true``): by default passed through unchecked, as the seed's gateway does, and
marked so (``X-Citeverify-Enforced: false``). With ``stream_mode="buffer"`` the chunks are held
until the answer is complete and verified, then sent, or the 400 is sent instead.
"""

import json
import os
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from citeverify._errors import InputError, ServiceError
from citeverify._result import VerificationResult
from citeverify._verifier import CitationVerifier
from citeverify.gateway import extract_context, verify_exchange
from citeverify.references._jobs import KEY_PREFIX, JobStore
from citeverify.service._decisions import DecisionLog, decision_row
from citeverify.service._policies import PolicyPacks

__all__ = ["FixtureUpstream", "GatewayConfig", "HTTPUpstream", "gateway_router", "make_upstream"]

#: A request body larger than this is refused (413) by the app's body limit.
GATEWAY_MAX_BODY = 4 * 1024 * 1024
#: Where the upstream key comes from when the client sends no Authorization header.
UPSTREAM_KEY_ENV = "CITEVERIFY_UPSTREAM_API_KEY"
ENFORCED_HEADER = "X-Citeverify-Enforced"
#: A buffered stream longer than this is not verified (502): the answer is held in memory.
MAX_STREAM_BYTES = 32 * 1024 * 1024
_ROUTES = {"chat": "chat/completions", "responses": "responses"}


def openai_error(
    status: int, message: str, *, code: str, kind: str = "invalid_request_error"
) -> JSONResponse:
    """An OpenAI-style error response (what the ``openai`` package parses)."""
    return JSONResponse({"error": {"message": message, "type": kind, "code": code}}, status)


@dataclass
class Reply:
    """What an upstream answered: a status and a JSON body, or a stream of SSE bytes."""

    status: int
    body: Any = None
    chunks: AsyncIterator[bytes] | None = None
    headers: Mapping[str, str] | None = None


class UpstreamError(Exception):
    """The upstream failed: timed out (504) or answered something that is not its API (502)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class HTTPUpstream:
    """An OpenAI-compatible base URL (``https://api.openai.com/v1``, a vLLM server, ...)."""

    def __init__(self, base_url: str, *, timeout: float = 60.0, api_key: str | None = None):
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get(UPSTREAM_KEY_ENV)
        self.client = httpx.AsyncClient(timeout=timeout, follow_redirects=False)

    async def send(self, kind: str, body: dict[str, Any], authorization: str | None) -> Reply:
        """Forward ``body`` with ``authorization`` (the router decides whose key it is)."""
        headers = {"Content-Type": "application/json"}
        if authorization:
            headers["Authorization"] = authorization
        url = f"{self.base_url}/{_ROUTES[kind]}"
        request = self.client.build_request("POST", url, json=body, headers=headers)
        try:
            response = await self.client.send(request, stream=True)
        except httpx.TimeoutException:
            raise UpstreamError(504, "the upstream model did not answer in time") from None
        except httpx.HTTPError as exc:
            raise UpstreamError(502, f"the upstream model cannot be reached ({exc})") from None
        if body.get("stream") is True and response.status_code == 200:
            return Reply(200, chunks=_relay(response), headers=response.headers)
        try:
            raw = await response.aread()
        except httpx.TimeoutException:
            raise UpstreamError(504, "the upstream model did not answer in time") from None
        except httpx.HTTPError as exc:
            raise UpstreamError(502, f"the upstream answer broke off ({exc})") from None
        finally:
            await response.aclose()
        try:
            parsed = json.loads(raw)
        except (ValueError, RecursionError):
            if response.status_code >= 400:
                raise UpstreamError(502, f"the upstream answered {response.status_code}") from None
            raise UpstreamError(502, "the upstream answer is not JSON") from None
        return Reply(response.status_code, parsed)

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self.client.aclose()


async def _relay(response: httpx.Response) -> AsyncIterator[bytes]:
    try:
        async for chunk in response.aiter_raw():
            yield chunk
    finally:
        await response.aclose()


class FixtureUpstream:
    """A built-in provider that answers from a file of canned answers (repeatable tests, demos).

    The file (JSON or YAML) is ``{"answer": "..."}``, or ``{"answers": [{"match": "text in the
    last user message", "answer": "..."}, ...], "default": "..."}``.
    """

    def __init__(self, path: str | Path) -> None:
        import yaml  # noqa: PLC0415

        from citeverify._errors import PolicyError  # noqa: PLC0415
        from citeverify._policy import safe_yaml  # noqa: PLC0415

        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
            data = safe_yaml(text)  # JSON is YAML
        except (OSError, UnicodeDecodeError, yaml.YAMLError, PolicyError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise InputError(f"cannot read the fixture {file}: {reason}", path=str(file)) from None
        if isinstance(data, str):
            data = {"answer": data}
        if not isinstance(data, Mapping):
            raise InputError(f"the fixture {file} must be a mapping", path=str(file))
        self.default = data.get("answer", data.get("default"))
        self.rules = [
            (str(rule.get("match", "")), str(rule.get("answer", "")))
            for rule in data.get("answers") or []
            if isinstance(rule, Mapping)
        ]
        if not isinstance(self.default, str) and not self.rules:
            raise InputError(f"the fixture {file} holds no answer", path=str(file))

    def answer_for(self, body: Mapping[str, Any]) -> str:
        """The canned answer for this request."""
        last = _last_user_text(body)
        for match, answer in self.rules:
            if match in last:
                return answer
        return self.default if isinstance(self.default, str) else self.rules[0][1]

    async def send(self, kind: str, body: dict[str, Any], authorization: str | None) -> Reply:
        """Answer as the provider would."""
        text = self.answer_for(body)
        model = str(body.get("model", "fixture"))
        if body.get("stream") is True:
            return Reply(200, chunks=_fixture_stream(kind, model, text))
        return Reply(200, _completion(kind, model, text))

    api_key: str | None = None  # a fixture needs no key

    async def aclose(self) -> None:
        """Nothing to close."""


def _last_user_text(body: Mapping[str, Any]) -> str:
    messages = body.get("messages", body.get("input"))
    if isinstance(messages, str):
        return messages
    if isinstance(messages, list):
        for message in reversed(messages):
            if isinstance(message, Mapping) and message.get("role") == "user":
                content = message.get("content")
                return content if isinstance(content, str) else json.dumps(content)
    return ""


def _completion(kind: str, model: str, text: str) -> dict[str, Any]:
    if kind == "responses":
        return {
            "id": "resp_fixture",
            "object": "response",
            "model": model,
            "status": "completed",
            "output": [
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text}],
                }
            ],
        }
    return {
        "id": "chatcmpl-fixture",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


async def _fixture_stream(kind: str, model: str, text: str) -> AsyncIterator[bytes]:
    words = text.split(" ")
    for i, word in enumerate(words):
        delta = word if i == 0 else " " + word
        event: dict[str, Any]
        if kind == "responses":
            event = {"type": "response.output_text.delta", "delta": delta}
        else:
            event = {
                "id": "chatcmpl-fixture",
                "object": "chat.completion.chunk",
                "model": model,
                "choices": [{"index": 0, "delta": {"content": delta}, "finish_reason": None}],
            }
        yield f"data: {json.dumps(event)}\n\n".encode()
    yield b"data: [DONE]\n\n"


def make_upstream(spec: str, *, timeout: float = 60.0) -> HTTPUpstream | FixtureUpstream:
    """``fixture:FILE`` or an http(s) base URL."""
    if spec.startswith("fixture:"):
        return FixtureUpstream(spec.removeprefix("fixture:"))
    if not spec.startswith(("http://", "https://")):
        raise InputError("--upstream is an http(s) base URL or fixture:FILE", path="upstream")
    return HTTPUpstream(spec, timeout=timeout)


@dataclass
class GatewayConfig:
    """The guard endpoint's settings.

    Attributes:
        upstream: Where requests go: an OpenAI-compatible base URL or a fixture file.
        verifier: The policy: one verifier, or named packs (``--policy-dir``) that a request
            picks with ``verdictan.policy``.
        stream_mode: ``stream: true`` requests are passed through unchecked (marked so), or
            buffered, checked, then sent.
    """

    upstream: HTTPUpstream | FixtureUpstream
    verifier: CitationVerifier | PolicyPacks
    stream_mode: Literal["passthrough", "buffer"] = "passthrough"

    @property
    def policies(self) -> PolicyPacks:
        """The packs (one verifier is the pack ``default``)."""
        if isinstance(self.verifier, CitationVerifier):
            self.verifier = PolicyPacks(self.verifier)
        return self.verifier


def gateway_router(
    config: GatewayConfig, *, store: JobStore | None = None, log: DecisionLog | None = None
) -> APIRouter:
    """The routes ``/v1/chat/completions`` and ``/v1/responses``.

    Args:
        config: The upstream, the policy packs and the stream mode.
        store: Where the service's API keys are. A request that presents one (``Authorization:
            Bearer cvk_...``, or ``X-Citeverify-Key``) is logged under that key; with the key in
            ``Authorization``, the upstream is called with the upstream key from the environment
            (``CITEVERIFY_UPSTREAM_API_KEY``). That key is never used for a request without one
            of ours: the client's own ``Authorization`` passes through instead.
        log: Where each decision is logged.
    """
    router = APIRouter()

    async def guard(kind: str, request: Request) -> Response:
        started = time.perf_counter()
        try:
            body = json.loads(await request.body())
        except (ValueError, RecursionError):
            return openai_error(400, "the request body is not valid JSON", code="invalid_json")
        if not isinstance(body, dict):
            msg = "the request body must be a JSON object"
            return openai_error(400, msg, code="invalid_request")
        problem = _check_request(kind, body)
        if problem:
            return openai_error(400, problem, code="invalid_request")
        try:
            policy, verifier = config.policies.get(_requested_policy(body))
        except InputError as exc:
            return openai_error(400, str(exc), code="unknown_policy")
        try:
            tenant, authorization = _caller(request, store, config.upstream.api_key)
        except ServiceError as exc:
            return openai_error(exc.status, str(exc), code=exc.code, kind="authentication_error")
        forwarded = {k: v for k, v in body.items() if k != "verdictan"}
        try:
            reply = await config.upstream.send(kind, forwarded, authorization)
        except UpstreamError as exc:
            code = "upstream_timeout" if exc.status == 504 else "upstream_error"
            return openai_error(exc.status, str(exc), code=code, kind="api_error")

        def logged(result: VerificationResult | None, status: int, **flags: bool) -> None:
            if log is None:
                return
            row = decision_row(
                result,
                source=kind,
                policy=policy,
                status=status,
                latency_ms=(time.perf_counter() - started) * 1000,
                **flags,
            )
            if log.log_content and result is not None:
                answer, documents = result.original_answer, extract_context(body)
                log.record(row, tenant=tenant, answer=answer, documents=documents, result=result)
            else:
                log.record(row, tenant=tenant)

        if reply.chunks is not None:
            if config.stream_mode == "passthrough":
                logged(None, 200, enforced=False, stream=True)
                return StreamingResponse(
                    reply.chunks,
                    media_type="text/event-stream",
                    headers={ENFORCED_HEADER: "false"},
                )
            response, result = await _buffered(kind, body, reply.chunks, verifier)
            if result is not None:  # else the stream was too long to verify (502)
                logged(result, response.status_code, stream=True)
            return response
        if reply.status >= 400 or not isinstance(reply.body, dict):
            if reply.status < 400:
                msg = "the upstream answer is not a JSON object"
                return openai_error(502, msg, code="upstream_error", kind="api_error")
            return JSONResponse(reply.body, reply.status)  # the upstream's own error, as it is
        try:
            decision = verify_exchange(body, reply.body, verifier=verifier)
        except InputError as exc:
            # A response the control cannot read is the upstream's fault (502), a request the
            # client's (400).
            if (exc.path or "").startswith("response"):
                return openai_error(502, str(exc), code="upstream_error", kind="api_error")
            return openai_error(400, str(exc), code="invalid_request")
        status, out = decision.to_http()
        logged(decision.result, status, enforced=decision.enforced)
        return JSONResponse(out, status, headers={ENFORCED_HEADER: "true"})

    @router.post("/v1/chat/completions", include_in_schema=True)
    async def chat_completions(request: Request) -> Response:
        """OpenAI Chat Completions through the citation-verifier control."""
        return await guard("chat", request)

    @router.post("/v1/responses")
    async def responses(request: Request) -> Response:
        """OpenAI Responses through the citation-verifier control."""
        return await guard("responses", request)

    return router


def _requested_policy(body: Mapping[str, Any]) -> str | None:
    """``verdictan.policy``, when the request names a pack."""
    extension = body.get("verdictan")
    name = extension.get("policy") if isinstance(extension, Mapping) else None
    if name is None or isinstance(name, str):
        return name
    return repr(name)  # not a name: PolicyPacks.get says so


def _caller(
    request: Request, store: JobStore | None, upstream_key: str | None
) -> tuple[int | None, str | None]:
    """The caller's key id (None: no key of ours) and the Authorization to send upstream.

    Raises:
        AuthenticationError: a key of ours that is not valid (401).
        PermissionDeniedError: a revoked key (403).
    """
    authorization = request.headers.get("authorization")
    own = request.headers.get("x-citeverify-key")
    scheme, _, token = (authorization or "").partition(" ")
    bearer = token.strip() if scheme.lower() == "bearer" else ""
    if store is None:
        return None, authorization
    if own is not None:
        return int(store.authenticate(own.strip())["id"]), authorization
    if bearer.startswith(KEY_PREFIX):
        tenant = int(store.authenticate(bearer)["id"])
        return tenant, f"Bearer {upstream_key}" if upstream_key else None
    return None, authorization


def _check_request(kind: str, body: Mapping[str, Any]) -> str | None:
    """What is wrong with the request's shape, or None."""
    if kind == "chat":
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return "messages must be a non-empty list"
        for i, message in enumerate(messages):
            if not isinstance(message, Mapping):
                return f"messages[{i}] must be an object"
            content = message.get("content")
            if content is not None and not isinstance(content, str | list):
                return f"messages[{i}].content must be a string or a list of parts"
    elif "input" not in body:
        return "input is required"
    try:
        extract_context(body)
    except InputError as exc:
        return str(exc)
    return None


async def _buffered(
    kind: str,
    request: Mapping[str, Any],
    chunks: AsyncIterator[bytes],
    verifier: CitationVerifier,
) -> tuple[Response, VerificationResult | None]:
    """Hold the stream, verify the assembled answer, then replay it or send the 400."""
    held: list[bytes] = []
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > MAX_STREAM_BYTES:
            msg = "the upstream stream is too long to verify"
            return openai_error(502, msg, code="upstream_error", kind="api_error"), None
        held.append(chunk)
    text = _stream_text(kind, b"".join(held))
    response = _completion(kind, str(request.get("model", "")), text)
    checked = {**request, "stream": False}
    decision = verify_exchange(checked, response, verifier=verifier)
    status, out = decision.to_http()
    if status != 200 or decision.result is None or decision.result.answer != text:
        # Blocked, or redacted (the stream holds the original text): the JSON decision instead.
        return JSONResponse(out, status, headers={ENFORCED_HEADER: "true"}), decision.result

    async def replay() -> AsyncIterator[bytes]:
        for chunk in held:
            yield chunk

    headers = {ENFORCED_HEADER: "true"}
    return StreamingResponse(replay(), media_type="text/event-stream", headers=headers), (
        decision.result
    )


#: Keys of stream events that hold opaque data or the client's own request echoed back: not
#: text the model wrote, so not verified.
_STREAM_NOT_TEXT = frozenset(
    {
        "obfuscation", "encrypted_content", "instructions", "metadata", "tools", "tool_choice",
        "prompt", "usage", "conversation", "incomplete_details", "error",
    }
)  # fmt: skip
#: Keys of stream events that hold identifiers and names: not verified while they are one token
#: (no white space); a sentence there is verified like any text.
_STREAM_IDENTIFIERS = frozenset(
    {
        "id", "object", "model", "system_fingerprint", "service_tier", "role", "finish_reason",
        "type", "name", "call_id", "item_id", "status", "user", "previous_response_id",
        "safety_identifier", "prompt_cache_key", "truncation",
    }
)  # fmt: skip
#: Keys that are settings when they hold an object (Responses ``text``/``reasoning``) and the
#: model's text when they hold a string (a done event's ``text``, Chat ``reasoning``).
_STREAM_SETTINGS = frozenset({"text", "reasoning"})
#: Most separate texts of a stream compared with each other to drop repeats.
_STREAM_MAX_COMPARED = 256


def _stream_text(kind: str, raw: bytes) -> str:
    """The text of an SSE stream to verify: the answer, then every other text the events carry.

    The answer is choice 0's content deltas (Chat Completions) or the ``output_text`` deltas
    (Responses). Every other string an event carries is verified too: refusal, tool-call
    argument and reasoning deltas, other choices, logprobs tokens, the full texts of done and
    completed events, annotations. The strings of one field are joined across events, and each
    joined text that the answer or an earlier text does not already hold follows the answer in a
    paragraph of its own, so that a stream whose events carry nothing else gives its answer
    alone. The stream is replayed only when verification leaves this whole text as it is; a
    redaction or a block of any part of it answers with the JSON decision instead.
    """
    answer: list[str] = []
    fields: dict[tuple[Any, ...], list[str]] = {}
    for line in raw.decode("utf-8", errors="replace").splitlines():
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if not data or data == "[DONE]":
            continue
        try:
            event = json.loads(data)
        except (ValueError, RecursionError):
            continue
        if not isinstance(event, dict):
            continue
        scope: tuple[Any, ...] = ()
        if kind == "responses":
            if event.get("type") == "response.output_text.delta" and isinstance(
                event.get("delta"), str
            ):
                answer.append(event.pop("delta"))
            scope = tuple(
                event.get(k) for k in ("type", "output_index", "content_index", "summary_index")
            )
        # Iteratively (an event may nest deeper than Python recurses). A list's element that
        # carries its own integer ``index`` (a choice, a tool call) is placed by it, so that the
        # deltas of one field join up across events.
        stack: list[tuple[tuple[Any, ...], Any]] = [(scope, event)]
        while stack:
            path, node = stack.pop()
            if isinstance(node, str):
                if kind == "chat" and path == ("choices", 0, "delta", "content"):
                    answer.append(node)
                else:
                    fields.setdefault(path, []).append(node)
            elif isinstance(node, dict):
                for key, value in reversed(node.items()):
                    if (
                        key in _STREAM_NOT_TEXT
                        or (key in _STREAM_SETTINGS and not isinstance(value, str))
                        or (
                            key in _STREAM_IDENTIFIERS
                            and isinstance(value, str)
                            and len(value) <= 200
                            and not any(c.isspace() for c in value)
                        )
                    ):
                        continue
                    stack.append(((*path, key), value))
            elif isinstance(node, list):
                for position in range(len(node) - 1, -1, -1):
                    value = node[position]
                    index = value.get("index") if isinstance(value, dict) else None
                    place = index if isinstance(index, int) else position
                    stack.append(((*path, place), value))
    text = "".join(answer)
    held = [text]
    for parts in fields.values():
        other = "".join(parts).strip()
        if not other:
            continue
        if len(fields) <= _STREAM_MAX_COMPARED and any(other in known for known in held):
            continue
        held.append(other)
    return "\n\n".join(held) if len(held) > 1 else text
