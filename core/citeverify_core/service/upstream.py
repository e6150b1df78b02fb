"""The gateway's upstream: an OpenAI-compatible API over aiohttp, or canned answers from a file.

:class:`HTTPUpstream` forwards a guard request and reads the answer, decompressed a step at a
time by the lookups' core (:class:`~citeverify_core.lookups.http.Inflater`) and only up to a
limit (502 beyond), so a compression bomb costs the limit. A stream is returned unread, its
chunks decompressed the same way. :class:`FixtureUpstream` answers from a file (tests, demos).

Why aiohttp here and httpx everywhere else: a guard request is mostly its upstream call, and
httpx's connection pool scans every pooled connection on each request (~1.5 ms of CPU a request
at 50 clients, bench/bench_gateway.py); aiohttp's costs a fraction of that. The lookups make a
few calls per answer, where that cost does not show, and need httpx's per-request transport
extensions (the pinned address and SNI of the SSRF guard). What both share is the core's: the
bounded inflater and the encodings asked for. The upstream's own 429 and its Retry-After are
passed to the caller as they are: the gateway never retries a paid model call.
"""

import asyncio
import contextlib
import json
import math
import os
import zlib
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from citeverify_core.errors import InputError, PolicyError
from citeverify_core.lookups.failures import LookupFailure
from citeverify_core.lookups.http import ACCEPT_ENCODING, Inflater
from citeverify_core.policy.loading import safe_yaml

__all__ = [
    "MAX_ANSWER_BYTES",
    "UPSTREAM_KEY_ENV",
    "FixtureUpstream",
    "HTTPUpstream",
    "Reply",
    "UpstreamError",
    "bounded",
    "encode_request",
    "make_upstream",
]

#: Where the upstream key comes from when the client sends no Authorization header.
UPSTREAM_KEY_ENV = "CITEVERIFY_UPSTREAM_API_KEY"
#: An upstream answer (not a stream) longer than this, decompressed, is refused (502): the answer
#: is held in memory, parsed and verified (the verifier's own limit is 2,000,000 characters).
MAX_ANSWER_BYTES = 16 * 1024 * 1024
_ROUTES = {"chat": "chat/completions", "responses": "responses"}
#: Decompressed bytes produced at a time: a compression bomb never inflates past one step.
_STEP = 64 * 1024


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

    The calls go through aiohttp, not httpx (see the module docstring for why). aiohttp's own
    decompression is off: bodies are inflated by the core's :class:`Inflater` in bounded
    steps.

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
        headers = {"Content-Type": "application/json", "Accept-Encoding": ACCEPT_ENCODING}
        if authorization:
            headers["Authorization"] = authorization
        if content is None:
            content = encode_request(body)
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
        inflater = _inflater(str(response.headers.get("content-encoding", "")))
        async for raw in response.content.iter_chunked(_STEP):
            for piece in inflater.feed(raw):
                yield piece
        complete = True
    except zlib.error as exc:
        msg = f"the upstream answer's compression is broken ({exc})"
        raise UpstreamError(502, msg) from None
    except TimeoutError:
        raise UpstreamError(504, "the upstream model stopped sending (timeout)") from None
    except aiohttp.ClientError as exc:
        raise UpstreamError(502, f"the upstream answer broke off ({exc})") from None
    finally:
        if complete:
            response.release()
        else:
            response.close()


def _inflater(encoding: str) -> Inflater:
    """The core's step-by-step decoder for ``encoding``; 502 for one the gateway did not ask for."""
    try:
        return Inflater(encoding, step=_STEP)
    except LookupFailure:
        shown = encoding.strip().lower()[:40]
        msg = f"the upstream answer is encoded as {shown!r}; the gateway asked for "
        raise UpstreamError(502, msg + ACCEPT_ENCODING) from None


async def bounded(
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


class FixtureUpstream:
    """A built-in provider that answers from a file of canned answers (repeatable tests, demos).

    The file (JSON or YAML) is ``{"answer": "..."}``, or ``{"answers": [{"match": "text in the
    last user message", "answer": "..."}, ...], "default": "..."}``.
    """

    def __init__(self, path: str | Path) -> None:
        import yaml  # noqa: PLC0415 - PyYAML only when a fixture file is read

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


def encode_request(body: Mapping[str, Any]) -> bytes:
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
        if isinstance(key, int):
            where = f"{path}[{key}]"
        else:
            where = f"{path}.{_shown_key(key)}" if path else _shown_key(key)
        if isinstance(key, str):
            found = _unsendable(key, where)
            if found[0]:
                return found
        found = _unsendable(item, where)
        if found[0]:
            return found
    return "", ""


#: An object key is shown in an error message up to this many characters.
_SHOWN_KEY = 64


def _shown_key(key: Any) -> str:
    """An object key as an error message names it: a lone surrogate escaped, long keys cut.

    The message is sent as UTF-8 JSON: a key that is not Unicode must not make it unsendable.
    """
    text = str(key)
    cut = text[:_SHOWN_KEY] + ("..." if len(text) > _SHOWN_KEY else "")
    return cut.encode("utf-8", "backslashreplace").decode("utf-8")
