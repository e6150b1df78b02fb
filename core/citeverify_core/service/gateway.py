"""The citation-verifier gateway as a service: an OpenAI-compatible guard endpoint.

``POST /v1/chat/completions`` and ``POST /v1/responses`` forward the request (without its
``verdictan`` field) to an upstream OpenAI-compatible base URL, or answer from a fixture file,
verify the answer against the request's ``verdictan.context_documents`` with the policy, and send
the upstream response with the decision attached, or HTTP 400 ``content_policy_violation``. The
decision itself is :func:`citeverify_core.engine.exchange.verify_exchange`; this module only moves
bytes.

Streams (``stream: true``): by default passed through unchecked, as the citation-verifier
control specifies, and marked so (``X-Citeverify-Enforced: false``). With
``stream_mode="buffer"`` the chunks are held until the stream ends, assembled into the response
they stand for
(:mod:`citeverify_core.service.streams`) and decided as that JSON answer would be; the stream is
replayed when the decision leaves it as it is, else the JSON decision (or the 400) is sent.

Neither clients nor upstreams are trusted. Verification (and its lookups) runs on
:class:`~citeverify_core.service.limits.VerificationSlots`' threads, never on the event loop, within
per-process and per-caller bounds (429 beyond). One deadline covers a request's upstream call,
lookups and verification (504 past it). Upstream bodies are decompressed a step at a time
and read only up to a limit (502 beyond), so a compression bomb costs the limit. An upstream
fault is a 502 or 504, never a 400. A client that goes away, or the service's shutdown, cancels
the upstream request and closes its connection.
"""

import asyncio
import contextlib
import json
import re
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from citeverify_core.engine.exchange import GatewayDecision, extract_context, verify_exchange
from citeverify_core.engine.results import VerificationResult
from citeverify_core.engine.verifier import CitationVerifier
from citeverify_core.errors import AuthenticationError, InputError, RateLimitError, ServiceError
from citeverify_core.service.decisions import DecisionLog, decision_row
from citeverify_core.service.jobs import JobStore
from citeverify_core.service.limits import VerificationSlots
from citeverify_core.service.policies import PolicyPacks
from citeverify_core.service.responses import sendable
from citeverify_core.service.streams import assemble_stream, replayable
from citeverify_core.service.tenants import KEY_PREFIX
from citeverify_core.service.upstream import (
    MAX_ANSWER_BYTES,
    UPSTREAM_KEY_ENV,
    FixtureUpstream,
    HTTPUpstream,
    UpstreamError,
    bounded,
    encode_request,
    make_upstream,
)

# The upstream's names are re-exported: a GatewayConfig is built with them.
__all__ = [
    "UPSTREAM_KEY_ENV",
    "FixtureUpstream",
    "GatewayConfig",
    "HTTPUpstream",
    "gateway_router",
    "make_upstream",
]

#: A request body larger than this is refused (413) by the app's body limit.
GATEWAY_MAX_BODY = 4 * 1024 * 1024
#: Whether a response was verified: ``false`` on a stream passed through unchecked.
ENFORCED_HEADER = "X-Citeverify-Enforced"
#: A stream longer than this (decompressed) is cut (passthrough) or not verified (buffer): 502.
MAX_STREAM_BYTES = 32 * 1024 * 1024
#: Seconds one guard request may take in all: the upstream's answer, lookups and verification.
DEFAULT_DEADLINE = 120.0

T = TypeVar("T")


def openai_error(
    status: int,
    message: str,
    *,
    code: str,
    kind: str = "invalid_request_error",
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """An OpenAI-style error response (what the ``openai`` package parses).

    A lone surrogate in ``message`` (a request's text named in it) is escaped: the response is
    UTF-8 JSON.
    """
    body = {"error": {"message": sendable(message), "type": kind, "code": code}}
    return JSONResponse(body, status, headers=dict(headers) if headers else None)


def _upstream_error(exc: "UpstreamError") -> JSONResponse:
    code = "upstream_timeout" if exc.status == 504 else "upstream_error"
    return openai_error(exc.status, str(exc), code=code, kind="api_error")


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
                or any(_holds_our_key(v) for v in request.headers.getlist("authorization"))
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
            content = encode_request(forwarded)
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
                    chunks = bounded(reply.chunks, deadline, config.max_stream_bytes)
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


#: The one form of Authorization that presents a key of ours: the scheme (any case), one space,
#: the key (a token68, RFC 9110).
_BEARER = re.compile(r"(?i:bearer) (" + re.escape(KEY_PREFIX) + r"[A-Za-z0-9\-._~+/]+=*)")


def _holds_our_key(authorization: str) -> bool:
    """Whether ``authorization`` holds our key's prefix anywhere, in any case."""
    return KEY_PREFIX in authorization.lower()


def _caller(
    request: Request, store: JobStore | None, upstream_key: str | None
) -> tuple[int | None, str | None]:
    """The caller's key id (None: no key of ours) and the Authorization to send upstream.

    A key of ours is never sent upstream, wherever it is and however it is wrapped: an
    ``Authorization`` holding our prefix anywhere (in any case) is ours. It is read only as
    ``Bearer cvk_...`` (one header); any other form is a 401. A key of ours is replaced by the
    upstream key (or dropped).

    Raises:
        AuthenticationError: a key of ours that is not valid (401).
        PermissionDeniedError: a revoked key (403).
        ServiceError: two different keys of ours (400).
    """
    values = request.headers.getlist("authorization")
    authorization = values[0] if values else None
    own = request.headers.get("x-citeverify-key")
    ours = any(_holds_our_key(value) for value in values)
    if store is None:  # no keys here; still, nothing shaped like one leaves
        return None, None if ours else authorization
    tenant = int(store.authenticate(own.strip())["id"]) if own is not None else None
    if not ours:
        return tenant, authorization
    # Ours in any form: only "Bearer <key>" is read; any other wrapping is a wrong key (401),
    # never a client's key to pass on.
    bearer = _BEARER.fullmatch(values[0]) if len(values) == 1 else None
    if bearer is None:
        msg = "a key of this service goes in Authorization: Bearer cvk_... or X-Citeverify-Key"
        raise AuthenticationError(msg)
    holder = int(store.authenticate(bearer[1])["id"])
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
