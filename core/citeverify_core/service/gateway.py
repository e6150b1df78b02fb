"""The citation-verifier gateway (seed 000) as a service: an OpenAI-compatible guard endpoint.

``POST /v1/chat/completions`` and ``POST /v1/responses`` forward the request (without its
``verdictan`` field) to an upstream OpenAI-compatible base URL, or answer from a fixture file,
verify the answer against the request's ``verdictan.context_documents`` with the policy, and send
the upstream response with the decision attached, or HTTP 400 ``content_policy_violation``. The
decision itself is :func:`citeverify_core.engine.exchange.verify_exchange`; this module only moves
bytes.

Streams (``stream: true``): by default passed through unchecked, as the seed's gateway does, and
marked so (``X-Citeverify-Enforced: false``). With ``stream_mode="buffer"`` the chunks are held
until the stream ends, assembled into the response they stand for
(:mod:`citeverify_core.service.streams`) and decided as that JSON answer would be; the stream is
replayed when the decision leaves it as it is, else the JSON decision (or the 400) is sent.

Neither clients nor upstreams are trusted. Verification (and its lookups) runs on
:class:`~citeverify_core.service.limits.VerificationSlots`' threads, never on the event loop, within
per-process and per-caller bounds (429 beyond). One deadline covers a request's upstream call,
lookups and verification (504 past it). Upstream bodies are decompressed here, a step at a time,
and read only up to a limit (502 beyond), so a compression bomb costs the limit. An upstream
fault is a 502 or 504, never a 400. A client that goes away, or the service's shutdown, cancels
the upstream request and closes its connection.
"""

import asyncio
import contextlib
import json
import math
import os
import time
import zlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

import aiohttp
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from citeverify_core.engine.exchange import GatewayDecision, extract_context, verify_exchange
from citeverify_core.engine.results import VerificationResult
from citeverify_core.engine.verifier import CitationVerifier
from citeverify_core.errors import AuthenticationError, InputError, RateLimitError, ServiceError
from citeverify_core.service.decisions import DecisionLog, decision_row
from citeverify_core.service.limits import VerificationSlots
from citeverify_core.service.policies import PolicyPacks
from citeverify_core.service.store import KEY_PREFIX, JobStore
from citeverify_core.service.streams import assemble_stream, replayable

__all__ = ["FixtureUpstream", "GatewayConfig", "HTTPUpstream", "gateway_router", "make_upstream"]

#: A request body larger than this is refused (413) by the app's body limit.
GATEWAY_MAX_BODY = 4 * 1024 * 1024
#: Where the upstream key comes from when the client sends no Authorization header.
UPSTREAM_KEY_ENV = "CITEVERIFY_UPSTREAM_API_KEY"
ENFORCED_HEADER = "X-Citeverify-Enforced"
#: A stream longer than this (decompressed) is cut (passthrough) or not verified (buffer): 502.
MAX_STREAM_BYTES = 32 * 1024 * 1024
#: An upstream answer (not a stream) longer than this, decompressed, is refused (502): the answer
#: is held in memory, parsed and verified (the verifier's own limit is 2,000,000 characters).
MAX_ANSWER_BYTES = 16 * 1024 * 1024
#: Seconds one guard request may take in all: the upstream's answer, lookups and verification.
DEFAULT_DEADLINE = 120.0
_ROUTES = {"chat": "chat/completions", "responses": "responses"}
#: Decompressed bytes produced at a time: a compression bomb never inflates past one step.
_STEP = 64 * 1024
# Only what _Decoder can inflate step by step: an HTTP client would also offer zstd (and br when
# installed) and decode a whole network chunk at once (~1000x for deflate, far more for zstd).
_ACCEPT_ENCODING = "gzip, deflate"
_WBITS: dict[str, int | None] = {
    "": None,
    "identity": None,
    "gzip": zlib.MAX_WBITS | 16,
    "x-gzip": zlib.MAX_WBITS | 16,
    "deflate": zlib.MAX_WBITS | 32,  # zlib-wrapped or gzip; raw deflate: see _Decoder.feed
}

T = TypeVar("T")


def openai_error(
    status: int,
    message: str,
    *,
    code: str,
    kind: str = "invalid_request_error",
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """An OpenAI-style error response (what the ``openai`` package parses)."""
    body = {"error": {"message": message, "type": kind, "code": code}}
    return JSONResponse(body, status, headers=dict(headers) if headers else None)


def _upstream_error(exc: "UpstreamError") -> JSONResponse:
    code = "upstream_timeout" if exc.status == 504 else "upstream_error"
    return openai_error(exc.status, str(exc), code=code, kind="api_error")


@dataclass
class Reply:
    """What an upstream answered: a status and a JSON body, or a stream of SSE bytes."""

    status: int
    body: Any = None
    chunks: AsyncGenerator[bytes, None] | None = None
    headers: Mapping[str, str] | None = None


class UpstreamError(Exception):
    """The upstream failed: timed out (504) or answered something that is not its API (502)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class HTTPUpstream:
    """An OpenAI-compatible base URL (``https://api.openai.com/v1``, a vLLM server, ...).

    The calls go through aiohttp, not httpx (the library's lookups use httpx): a guard request
    is mostly its upstream call, and httpx's connection pool scans every pooled connection on
    each request (~1.5 ms of CPU a request at 50 clients, bench/bench_gateway.py), aiohttp's
    costs a fraction of that. aiohttp's own decompression is off: bodies are inflated here in
    bounded steps (:class:`_Decoder`).

    Args:
        base_url: The API's base URL.
        timeout: Seconds to connect, and between two reads (the guard's deadline bounds the
            whole exchange).
        api_key: The upstream key for callers that present a key of this service (default:
            ``CITEVERIFY_UPSTREAM_API_KEY``).
    """

    def __init__(self, base_url: str, *, timeout: float = 60.0, api_key: str | None = None):
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get(UPSTREAM_KEY_ENV)
        self.timeout = timeout
        # A session belongs to the event loop it was made in: made on first use, in the
        # service's loop (the object itself is built before uvicorn starts its loop).
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _client(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            self._session = aiohttp.ClientSession(
                auto_decompress=False,
                timeout=aiohttp.ClientTimeout(
                    total=None, sock_connect=self.timeout, sock_read=self.timeout
                ),
                # As httpx did: HTTP(S)_PROXY and NO_PROXY from the environment are honoured.
                trust_env=True,
            )
            self._loop = loop
        return self._session

    async def send(
        self,
        kind: str,
        body: dict[str, Any],
        authorization: str | None,
        *,
        content: bytes | None = None,
        max_bytes: int = MAX_ANSWER_BYTES,
    ) -> Reply:
        """Forward ``body`` (already encoded as ``content``, when given) with ``authorization``.

        The router decides whose key ``authorization`` is. An answer is read, decompressed, up
        to ``max_bytes``; a stream is returned unread (its chunks decompressed).

        Raises:
            UpstreamError: no answer (502), a timeout (504), an answer over ``max_bytes`` or not
                JSON (502).
        """
        headers = {"Content-Type": "application/json", "Accept-Encoding": _ACCEPT_ENCODING}
        if authorization:
            headers["Authorization"] = authorization
        if content is None:
            content = _encode_request(body)
        url = f"{self.base_url}/{_ROUTES[kind]}"
        try:
            response = await self._client().request(
                "POST", url, data=content, headers=headers, allow_redirects=False
            )
        except TimeoutError:  # aiohttp's ServerTimeoutError is one too
            raise UpstreamError(504, "the upstream model did not answer in time") from None
        except (aiohttp.ClientError, ValueError) as exc:
            raise UpstreamError(502, f"the upstream model cannot be reached ({exc})") from None
        if body.get("stream") is True and response.status == 200:
            return Reply(200, chunks=_decoded(response), headers=response.headers)
        raw = await _read(response, max_bytes)
        try:
            parsed = json.loads(raw, parse_constant=_no_constant)
        except (ValueError, RecursionError):
            if response.status >= 400:
                raise UpstreamError(502, f"the upstream answered {response.status}") from None
            raise UpstreamError(502, "the upstream answer is not JSON") from None
        return Reply(response.status, parsed)

    async def aclose(self) -> None:
        """Close the connection pool."""
        if self._session is not None:
            await self._session.close()
            self._session = None


def _no_constant(name: str) -> Any:
    """``NaN`` and ``Infinity`` are not JSON: an answer holding one cannot be sent on."""
    msg = f"{name} is not JSON"
    raise ValueError(msg)


async def _read(response: aiohttp.ClientResponse, limit: int) -> bytearray:
    """The whole answer, decompressed; 502 past ``limit`` bytes (the connection is dropped)."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        response.close()
        raise _too_long(limit)
    # One growing buffer, not a list of pieces: when it is dropped, the memory goes back to the
    # system (a large block is its own mapping), instead of fragmenting the heap.
    body = bytearray()
    async with contextlib.aclosing(_decoded(response)) as pieces:
        async for piece in pieces:
            if len(body) + len(piece) > limit:
                # Not kept in a local before: the frame would hold the exception and the
                # exception the frame (a cycle), keeping the buffer until a garbage collection.
                raise _too_long(limit)
            body += piece
    return body


def _too_long(limit: int) -> UpstreamError:
    return UpstreamError(502, f"the upstream answer is longer than {limit:,} bytes")


async def _decoded(response: aiohttp.ClientResponse) -> AsyncGenerator[bytes, None]:
    """The body's bytes, decompressed a step at a time; the response is closed at the end.

    Closing the generator early (a limit, a deadline, a client that left) closes the
    connection; one read to the end goes back to the pool.
    """
    complete = False
    try:
        decoder = _Decoder(str(response.headers.get("content-encoding", "")))
        async for raw in response.content.iter_chunked(_STEP):
            for piece in decoder.feed(raw):
                yield piece
        complete = True
    except TimeoutError:
        raise UpstreamError(504, "the upstream model stopped sending (timeout)") from None
    except aiohttp.ClientError as exc:
        raise UpstreamError(502, f"the upstream answer broke off ({exc})") from None
    finally:
        if complete:
            response.release()
        else:
            response.close()


class _Decoder:
    """Content-Encoding undone in steps of at most ``_STEP`` bytes (a bomb never inflates)."""

    def __init__(self, encoding: str) -> None:
        encoding = encoding.strip().lower()
        if encoding not in _WBITS:
            msg = f"the upstream answer is encoded as {encoding[:40]!r}; the gateway asked for "
            raise UpstreamError(502, msg + _ACCEPT_ENCODING)
        wbits = _WBITS[encoding]
        self._zlib = None if wbits is None else zlib.decompressobj(wbits)
        self._started = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decompressed bytes of ``data``, in pieces of at most ``_STEP``."""
        if self._zlib is None:
            if data:
                yield data
            return
        while not self._zlib.eof:
            try:
                out = self._zlib.decompress(data, _STEP)
            except zlib.error as exc:
                if self._started:
                    msg = f"the upstream answer's compression is broken ({exc})"
                    raise UpstreamError(502, msg) from None
                # Raw deflate (no zlib header), sent by some servers as "deflate": as httpx does.
                self._started = True
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                continue
            self._started = True
            data = self._zlib.unconsumed_tail
            if out:
                yield out
            if not data and len(out) < _STEP:  # all consumed, nothing held back
                return


async def _bounded(
    chunks: AsyncGenerator[bytes, None], deadline: float, limit: int
) -> AsyncGenerator[bytes, None]:
    """``chunks`` until the deadline (loop time) or ``limit`` bytes; closes ``chunks`` at the end.

    Raises:
        UpstreamError: 504 past the deadline, 502 past the limit.
    """
    size = 0
    async with contextlib.aclosing(chunks):
        while True:
            try:
                async with asyncio.timeout_at(deadline):
                    chunk = await anext(chunks)
            except StopAsyncIteration:
                return
            except TimeoutError:
                msg = "the upstream stream did not end within the gateway's deadline"
                raise UpstreamError(504, msg) from None
            size += len(chunk)
            if size > limit:
                raise UpstreamError(502, f"the upstream stream is longer than {limit:,} bytes")
            yield chunk


async def _passthrough(chunks: AsyncGenerator[bytes, None]) -> AsyncGenerator[bytes, None]:
    """Relay ``chunks``; a failure after the 200 went out ends the stream with an error event.

    The ``openai`` package raises an ``APIError`` for a ``data:`` event holding ``error``.
    """
    async with contextlib.aclosing(chunks):
        try:
            async for chunk in chunks:
                yield chunk
        except UpstreamError as exc:
            code = "upstream_timeout" if exc.status == 504 else "upstream_error"
            error = {"error": {"message": str(exc), "type": "api_error", "code": code}}
            yield f"\n\ndata: {json.dumps(error)}\n\n".encode()


class _ClosingStream(StreamingResponse):
    """A StreamingResponse that closes its generator however it ends.

    The client left, or a shutdown cancelled it: the upstream response under the generator is
    closed at once, not when the generator is garbage-collected.
    """

    def __init__(self, content: AsyncGenerator[bytes, None], **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        self._source = content

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self._source.aclose()


class FixtureUpstream:
    """A built-in provider that answers from a file of canned answers (repeatable tests, demos).

    The file (JSON or YAML) is ``{"answer": "..."}``, or ``{"answers": [{"match": "text in the
    last user message", "answer": "..."}, ...], "default": "..."}``.
    """

    def __init__(self, path: str | Path) -> None:
        import yaml  # noqa: PLC0415

        from citeverify_core.errors import PolicyError  # noqa: PLC0415
        from citeverify_core.policy.loading import safe_yaml  # noqa: PLC0415

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

    async def send(
        self, kind: str, body: dict[str, Any], authorization: str | None, **_limits: Any
    ) -> Reply:
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


async def _fixture_stream(kind: str, model: str, text: str) -> AsyncGenerator[bytes, None]:
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
        deadline: Seconds one request may take in all (the upstream's answer, lookups and
            verification); past it, 504. A stream passed through is cut at the deadline.
        max_answer_bytes: An upstream answer longer than this, decompressed, is a 502.
        max_stream_bytes: A stream longer than this, decompressed, is a 502 (buffer) or cut
            with an error event (passthrough).
        slots: The bound on verifications running at once, per process and per caller (429
            beyond); share it with ``POST /api/check``.
    """

    upstream: HTTPUpstream | FixtureUpstream
    verifier: CitationVerifier | PolicyPacks
    stream_mode: Literal["passthrough", "buffer"] = "passthrough"
    deadline: float = DEFAULT_DEADLINE
    max_answer_bytes: int = MAX_ANSWER_BYTES
    max_stream_bytes: int = MAX_STREAM_BYTES
    slots: VerificationSlots = field(default_factory=VerificationSlots)
    _inflight: set["asyncio.Task[Any]"] = field(default_factory=set, init=False, repr=False)

    def __post_init__(self) -> None:
        if not 0 < self.deadline < 86_400:
            msg = f"deadline must be a positive number of seconds, got {self.deadline!r}"
            raise InputError(msg, path="deadline")
        for name in ("max_answer_bytes", "max_stream_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{name} must be a positive integer, got {value!r}", path=name)

    @property
    def policies(self) -> PolicyPacks:
        """The packs (one verifier is the pack ``default``)."""
        if isinstance(self.verifier, CitationVerifier):
            self.verifier = PolicyPacks(self.verifier)
        return self.verifier

    async def aclose(self) -> None:
        """Cancel the requests in flight, close the upstream's connections, stop the threads.

        The service's shutdown calls it after its grace period.
        """
        for task in list(self._inflight):
            task.cancel()
        if self._inflight:
            await asyncio.wait(list(self._inflight), timeout=5)
        await self.upstream.aclose()
        self.slots.close()


def gateway_router(
    config: GatewayConfig,
    *,
    store: JobStore | None = None,
    log: DecisionLog | None = None,
    limiter: Callable[[str], float] | None = None,
) -> APIRouter:
    """The routes ``/v1/chat/completions`` and ``/v1/responses``.

    Args:
        config: The upstream, the policy packs, the stream mode and the limits.
        store: Where the service's API keys are. A request that presents one (``Authorization:
            Bearer cvk_...``, or ``X-Citeverify-Key``) is logged under that key; with the key in
            ``Authorization``, the upstream is called with the upstream key from the environment
            (``CITEVERIFY_UPSTREAM_API_KEY``). That key is never used for a request without one
            of ours: the client's own ``Authorization`` passes through instead. A key of ours is
            never sent upstream.
        log: Where each decision is logged.
        limiter: Counts a failed authentication for a client address; returns 0, or the seconds
            that address must wait (then the answer is 429). The REST API's window, so key
            guessing is limited on both.
    """
    router = APIRouter()

    async def guard(kind: str, request: Request) -> Response:
        started = time.perf_counter()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + config.deadline
        try:
            body = json.loads(await request.body())
        except (ValueError, RecursionError):
            return openai_error(400, "the request body is not valid JSON", code="invalid_json")
        if not isinstance(body, dict):
            msg = "the request body must be a JSON object"
            return openai_error(400, msg, code="invalid_request")
        address = request.client.host if request.client else "unknown"
        try:
            if store is not None and (
                "x-citeverify-key" in request.headers
                or KEY_PREFIX in request.headers.get("authorization", "")
            ):
                # A key of ours is looked up in the database: off the event loop, so a slow
                # database delays only the requests that wait on it.
                found = await asyncio.to_thread(_caller, request, store, config.upstream.api_key)
            else:
                found = _caller(request, store, config.upstream.api_key)
            tenant, authorization = found
        except ServiceError as exc:
            # The count is a database write: off the event loop.
            if exc.status == 401 and limiter is not None:
                wait = await asyncio.to_thread(limiter, address)
            else:
                wait = 0.0
            if wait:
                return _rate_limited(RateLimitError(_GUESSING, retry_after=wait))
            kind_ = "authentication_error" if exc.status in {401, 403} else "invalid_request_error"
            headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
            return openai_error(exc.status, str(exc), code=exc.code, kind=kind_, headers=headers)
        problem = _check_request(kind, body)
        if problem:
            return openai_error(400, problem, code="invalid_request")
        try:
            policy, verifier = config.policies.get(_requested_policy(body))
        except InputError:
            return openai_error(400, _unknown_policy(body), code="unknown_policy")
        forwarded = {k: v for k, v in body.items() if k != "verdictan"}
        try:
            content = _encode_request(forwarded)
        except InputError as exc:
            return openai_error(400, str(exc), code="invalid_request")
        # The caller of the bound: the key's id, else the client's address.
        caller: int | str = tenant if tenant is not None else address
        try:
            # Refused before the upstream is paid for an answer that could not be verified.
            config.slots.check(caller)
        except RateLimitError as exc:
            return _rate_limited(exc)

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

        phase = ["upstream"]  # where the time went, for the 504's message

        async def verified(fn: Callable[[], T]) -> T:
            phase[0] = "verification"
            return await config.slots.run(caller, fn, timeout=max(deadline - loop.time(), 0.001))

        async def exchange() -> Response:
            try:
                reply = await config.upstream.send(
                    kind, forwarded, authorization, content=content,
                    max_bytes=config.max_answer_bytes,
                )  # fmt: skip
                if reply.chunks is not None:
                    chunks = _bounded(reply.chunks, deadline, config.max_stream_bytes)
                    if config.stream_mode == "passthrough":
                        logged(None, 200, enforced=False, stream=True)
                        return _ClosingStream(
                            _passthrough(chunks),
                            media_type="text/event-stream",
                            headers={ENFORCED_HEADER: "false"},
                        )
                    response, result = await _buffered(kind, body, chunks, verifier, verified)
                    logged(result, response.status_code, stream=True)
                    return response
                if reply.status >= 400 or not isinstance(reply.body, dict):
                    if reply.status < 400:
                        msg = "the upstream answer is not a JSON object"
                        return openai_error(502, msg, code="upstream_error", kind="api_error")
                    return _json(reply.body, reply.status)  # the upstream's own error, as it is
                answer = reply.body
                decision = await verified(lambda: verify_exchange(body, answer, verifier=verifier))
            except UpstreamError as exc:
                return _upstream_error(exc)
            except RateLimitError as exc:
                return _rate_limited(exc)
            except TimeoutError:
                return _timeout(phase[0])
            except InputError as exc:
                # What the request holds was checked above: anything else the control cannot
                # read is in the upstream's answer (its shape, an answer over the verifier's
                # length limit), so the upstream's fault (502), not the client's.
                if (exc.path or "").startswith(("request", "context_documents")):
                    return openai_error(400, str(exc), code="invalid_request")
                return openai_error(502, str(exc), code="upstream_error", kind="api_error")
            status, out = decision.to_http()
            logged(decision.result, status, enforced=decision.enforced)
            return _json(out, status, headers={ENFORCED_HEADER: "true"})

        work = asyncio.ensure_future(exchange())
        config._inflight.add(work)
        gone = asyncio.ensure_future(_disconnected(request))
        done: set[asyncio.Future[Any]] = set()
        shutting_down = False
        try:
            done, _ = await asyncio.wait(
                {work, gone}, timeout=deadline - loop.time(), return_when=asyncio.FIRST_COMPLETED
            )
        except asyncio.CancelledError:
            # The service's shutdown cancels what its grace period left running: the client is
            # told so (503, which the openai package retries), not sent a 500 and a traceback.
            shutting_down = True
        finally:
            gone.cancel()
            if not work.done():
                # The deadline passed, the client left, or the service is shutting down: the
                # upstream request is cancelled and its connection closed.
                work.cancel()
                await asyncio.wait({work})
            config._inflight.discard(work)
        if work in done:
            return work.result()
        if gone in done:
            return Response(status_code=499)  # nobody is there to read it
        # Told apart by what ended the wait, not by comparing the clock with the deadline: the
        # wait's timer may fire a little before loop.time() reaches it (uvloop's clock counts
        # milliseconds).
        if shutting_down:
            msg = "the service is shutting down; retry"
            return openai_error(503, msg, code="shutting_down", kind="api_error")
        return _timeout(phase[0])

    @router.post("/v1/chat/completions", include_in_schema=True)
    async def chat_completions(request: Request) -> Response:
        """OpenAI Chat Completions through the citation-verifier control."""
        return await guard("chat", request)

    @router.post("/v1/responses")
    async def responses(request: Request) -> Response:
        """OpenAI Responses through the citation-verifier control."""
        return await guard("responses", request)

    return router


_GUESSING = "too many requests with an invalid key of this service from this address"


async def _disconnected(request: Request) -> None:
    """Return when the client has gone (its body was read: the next message is that)."""
    try:
        while (await request.receive())["type"] != "http.disconnect":
            pass
    except Exception:
        # A server whose receive fails here tells nothing about the client: only the deadline
        # ends the request then.
        await asyncio.Event().wait()


def _rate_limited(exc: RateLimitError) -> JSONResponse:
    retry = str(int(exc.retry_after + 0.999))
    return openai_error(
        429, str(exc), code="rate_limited", kind="rate_limit_error", headers={"Retry-After": retry}
    )


def _timeout(phase: str) -> JSONResponse:
    if phase == "upstream":
        msg = "the upstream model did not answer within the gateway's deadline"
        return openai_error(504, msg, code="upstream_timeout", kind="api_error")
    msg = "the answer could not be verified within the gateway's deadline (slow lookups)"
    return openai_error(504, msg, code="verification_timeout", kind="api_error")


def _json(content: Any, status: int, headers: Mapping[str, str] | None = None) -> Response:
    """``content`` as JSON, or a 502 when the upstream's answer in it cannot be JSON.

    A lone surrogate (parsed from a JSON escape of U+D800 to U+DFFF) is not Unicode.
    """
    try:
        data = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        raw = data.encode("utf-8")
    except (ValueError, RecursionError):
        msg = "the upstream answer holds text that is not Unicode (a lone surrogate)"
        return openai_error(502, msg, code="upstream_error", kind="api_error")
    return Response(
        raw, status, headers=dict(headers) if headers else None, media_type="application/json"
    )


def _encode_request(body: Mapping[str, Any]) -> bytes:
    """The forwarded request as UTF-8 JSON.

    Raises:
        InputError: a value JSON cannot carry (NaN, Infinity) or text that is not Unicode (a
            lone surrogate), naming the field.
    """
    try:
        text = json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return text.encode("utf-8")
    except (ValueError, RecursionError):
        path, what = _unsendable(body, "")
        msg = f"{path or 'the request'} holds {what}, which cannot be sent on as JSON"
        raise InputError(msg, path=f"request.{path}" if path else "request") from None


def _unsendable(value: Any, path: str) -> tuple[str, str]:
    """The first field holding NaN, Infinity or a lone surrogate, and which."""
    if isinstance(value, float) and math.isnan(value):
        return path, "NaN"
    if isinstance(value, float) and math.isinf(value):
        return path, "Infinity"
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path, "a lone surrogate (not Unicode)"
        return "", ""
    items: list[tuple[Any, Any]] = []
    if isinstance(value, Mapping):
        items = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))
    for key, item in items:
        where = f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}" if path else key
        if isinstance(key, str):
            found = _unsendable(key, where)
            if found[0]:
                return found
        found = _unsendable(item, where)
        if found[0]:
            return found
    return "", ""


def _unknown_policy(body: Mapping[str, Any]) -> str:
    """Which pack was asked for, not which packs exist.

    An anonymous caller learns nothing of the service's packs (``GET /api/policies`` lists them
    for a key).
    """
    name = _requested_policy(body) or ""
    shown = name[:64].encode("unicode_escape").decode("ascii")
    return f"no policy pack named {shown!r} (GET /api/policies lists the packs, with a key)"


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

    A key of ours is never sent upstream, wherever it is: ``Authorization`` holding one is
    replaced by the upstream key (or dropped).

    Raises:
        AuthenticationError: a key of ours that is not valid (401).
        PermissionDeniedError: a revoked key (403).
        ServiceError: two different keys of ours (400).
    """
    authorization = request.headers.get("authorization")
    own = request.headers.get("x-citeverify-key")
    ours = authorization is not None and any(
        part.startswith(KEY_PREFIX) for part in authorization.split()
    )
    if store is None:  # no keys here; still, nothing shaped like one leaves
        return None, None if ours else authorization
    tenant = int(store.authenticate(own.strip())["id"]) if own is not None else None
    if not ours:
        return tenant, authorization
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer":
        msg = "a key of this service goes in Authorization: Bearer cvk_... or X-Citeverify-Key"
        raise AuthenticationError(msg)
    holder = int(store.authenticate(token.strip())["id"])
    if tenant is not None and holder != tenant:
        msg = "X-Citeverify-Key and Authorization hold two different keys of this service"
        raise ServiceError(msg, status=400, code="conflicting_keys")
    return holder, f"Bearer {upstream_key}" if upstream_key else None


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
    chunks: AsyncGenerator[bytes, None],
    verifier: CitationVerifier,
    verified: Callable[
        [Callable[[], tuple[GatewayDecision, str]]], Awaitable[tuple[GatewayDecision, str]]
    ],
) -> tuple[Response, VerificationResult | None]:
    """Hold the stream, decide on the response it assembles into, then replay it or answer JSON.

    The decision is :func:`verify_exchange` on that response, as for a JSON answer. The held
    bytes are replayed under a flag policy (when allowed), and under redact or block only when
    the stream carries the answer alone and the decision left it as it is; otherwise the client
    gets the JSON decision (200 with the rebuilt response, or the 400 block).

    Raises:
        UpstreamError: the stream broke off, outlived the deadline or is too long (``chunks``
            is bounded).
    """
    held: list[bytes] = []
    async with contextlib.aclosing(chunks):
        async for chunk in chunks:
            held.append(chunk)
    raw = b"".join(held)
    checked = {**request, "stream": False}
    flag = verifier.policy.output_action.unverified_action == "flag"

    def verify() -> tuple[GatewayDecision, str]:
        # Assembling the response is CPU work on up to max_stream_bytes: in the thread too.
        assembled = assemble_stream(kind, raw, str(request.get("model", "")))
        decision = verify_exchange(checked, assembled.response, verifier=verifier)
        # Under flag nothing is removed: the stream passes as it came, as a JSON answer does.
        # Under redact and block the bytes pass only when they show nothing the JSON decision
        # would not: else the client gets that decision.
        replay = decision.to_http()[0] == 200 and (flag or replayable(assembled, decision))
        return decision, "replay" if replay else "decision"

    decision, how = await verified(verify)
    headers = {ENFORCED_HEADER: "true"}
    if how != "replay":
        status, out = decision.to_http()
        return _json(out, status, headers=headers), decision.result

    async def replay() -> AsyncGenerator[bytes, None]:
        for chunk in held:
            yield chunk

    return _ClosingStream(replay(), media_type="text/event-stream", headers=headers), (
        decision.result
    )
