"""The guard gateway's transport against hostile clients and upstreams, over real HTTP on loopback.

The service runs under uvicorn (``Service``, or ``citeverify serve`` as a process); the upstream
model and the Crossref API the lookups call are ``Loopback`` servers that misbehave on request:
the upstream's answer is chosen by the last user message (``drip``, ``bomb``, ...), else it echoes
that message as the assistant's answer. Timings are small and bounds generous: these tests say
what a client sees (a 502, a 504, a 429, an answer that is not held up), not how fast it is
(``bench/bench_gateway_hostile.py`` measures that).
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from citeverify_core import CitationVerifier
from citeverify_core.service.gateway import GatewayConfig, openai_error
from citeverify_core.service.limits import VerificationSlots
from citeverify_core.service.policies import PolicyPacks
from citeverify_core.service.responses import error_response
from citeverify_core.service.upstream import HTTPUpstream
from tests.support.loopback import Loopback, Reply, Seen, open_connections
from tests.support.service import Service, build_index, free_port, serve_refusal

MB = 1024 * 1024
MUSEUM = "The museum opens at nine."
CHAT = "/v1/chat/completions"
SLOW_DOIS = [f"10.5555/slow.{i}" for i in range(10)]


# --- the upstream model and the lookups' Crossref -------------------------------------------------


def completion(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
        **extra,
    }


def sse(text: str) -> bytes:
    chunk = {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": text}}],
    }
    return f"data: {json.dumps(chunk)}\n\n".encode()


def bomb(total: int, piece: bytes = b" ") -> Iterator[bytes]:
    """``total`` bytes of ``piece`` repeated, gzip-compressed while sent (64 MB: ~64 KB)."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = piece * (MB // len(piece))
    for _ in range(total // len(block)):
        if out := c.compress(block):
            yield out
    yield c.flush()


class Drip:
    """A body sent a few bytes at a time and never finished; ``ended`` is set when the peer
    (the gateway) has dropped the connection, i.e. when a write failed."""

    def __init__(self, piece: bytes = b" ", every: float = 0.05, limit: float = 30.0) -> None:
        self.piece, self.every, self.limit = piece, every, limit
        self.ended: list[float] = []

    def __call__(self) -> Iterator[bytes]:
        stop = time.monotonic() + self.limit
        try:
            while time.monotonic() < stop:
                yield self.piece
                time.sleep(self.every)
        finally:
            self.ended.append(time.monotonic())


class Upstream(Loopback):
    """An OpenAI-compatible upstream whose answer the request's last user message picks."""

    def __init__(self) -> None:
        super().__init__()
        self.drip = Drip()
        self.gate = threading.Event()  # "hang": held until set
        self.routes[("POST", CHAT)] = self.answer
        self.routes[("POST", "/v1/responses")] = self.answer

    def answer(self, seen: Seen) -> Reply:
        body = json.loads(seen.body)
        text = last_user_text(body)
        stream = body.get("stream") is True
        json_type = {"Content-Type": "application/json"}
        sse_type = {"Content-Type": "text/event-stream"}
        gzip = {"Content-Encoding": "gzip"}
        replies: dict[str, Callable[[], Reply]] = {
            "hang": lambda: (self.gate.wait(60), Reply(200, completion(MUSEUM)))[1],
            "drip": lambda: Reply(
                200, stream=self.drip, length=None, headers=sse_type if stream else json_type
            ),
            "bomb": lambda: Reply(
                200,
                stream=lambda: bomb(64 * MB, sse(" ") if stream else b" "),
                headers={**gzip, **(sse_type if stream else json_type)},
            ),
            "huge": lambda: Reply(200, completion("x" * MB)),
            "overlong": lambda: Reply(200, completion("word " * 420_000)),  # 2.1M characters
            "zstd": lambda: Reply(
                200, b"(\xb5/\xfd\x00\x00", {**json_type, "Content-Encoding": "zstd"}
            ),
            "nan": lambda: Reply(200, b'{"choices": [], "temperature": NaN}', json_type),
            # A lone surrogate in a field that is not verified: the answer itself is allowed.
            "surrogate": lambda: Reply(
                200, json.dumps(completion(MUSEUM)).replace('"chatcmpl-1"', '"\\ud800"'), json_type
            ),
        }
        for word, reply in replies.items():
            if text.startswith(word):
                return reply()
        if stream:
            return Reply(200, sse(text) + b"data: [DONE]\n\n", sse_type)
        return Reply(200, completion(text))


def last_user_text(body: dict[str, Any]) -> str:
    if isinstance(body.get("input"), str):
        return str(body["input"])
    return str(body["messages"][-1]["content"])


def chat(text: str, **extra: Any) -> dict[str, Any]:
    """A request whose answer (the upstream echoes it) is ``text``, with MUSEUM as context."""
    return {
        "model": "m",
        "messages": [{"role": "user", "content": text}],
        "verdictan": {"context_documents": [{"content": MUSEUM}]},
        **extra,
    }


def slow_answer(i: int) -> str:
    """An answer citing a DOI whose Crossref lookup is slow."""
    return f"The museum opens at nine (doi:{SLOW_DOIS[i]})."


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return build_index(tmp_path_factory.mktemp("index"))


@pytest.fixture
def upstream():
    with Upstream() as server:
        yield server
        server.gate.set()


@pytest.fixture
def crossref():
    """Crossref for the lookups: every /works/{doi} of SLOW_DOIS answers 404 after 1.5 s."""
    with Loopback() as server:
        for doi in SLOW_DOIS:
            server.routes[("GET", f"/works/{doi}")] = Reply(404, "no such work", delay=1.5)
        yield server


def verifier(crossref: Loopback) -> CitationVerifier:
    lookups = {"crossref_base_url": crossref.url, "timeout": 10.0, "retries": 0}
    return CitationVerifier({"require_sources": False, "extensions": {"lookups": lookups}})


def gateway(tmp_path, index, upstream, crossref, **options: Any) -> Service:
    service_options = {k: options.pop(k) for k in ("unauthenticated_per_minute",) if k in options}
    config = GatewayConfig(
        HTTPUpstream(upstream.url + "/v1", timeout=10, api_key=options.pop("api_key", None)),
        verifier(crossref),
        **options,
    )
    return Service(
        tmp_path / "jobs.sqlite", index, workers=False, gateway=config, **service_options
    )


def in_background(fn: Callable[[], Any], n: int) -> tuple[ThreadPoolExecutor, list[Any]]:
    pool = ThreadPoolExecutor(n)
    return pool, [pool.submit(fn) for _ in range(n)]


def wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def error_of(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert set(body["error"]) >= {"message", "type", "code"}, body
    return dict(body["error"])


# --- verification never runs on the event loop --------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["answer", "buffered-stream"])
def test_answers_with_slow_lookups_do_not_hold_up_other_requests(
    tmp_path, index, upstream, crossref, stream
):
    with gateway(tmp_path, index, upstream, crossref, stream_mode="buffer") as service:
        answers = iter(range(5))

        def slow() -> httpx.Response:
            request = chat(slow_answer(next(answers)), stream=stream)
            return httpx.post(service.url + CHAT, json=request, timeout=30)

        pool, slow_requests = in_background(slow, 5)
        with pool, httpx.Client(base_url=service.url, timeout=30) as client:
            wait_for(lambda: len(crossref.seen) == 5)  # all five are in their lookups
            start = time.monotonic()
            health = client.get("/healthz")
            health_took = time.monotonic() - start
            start = time.monotonic()
            grounded = client.post(CHAT, json=chat(MUSEUM, stream=stream))
            grounded_took = time.monotonic() - start
            slow_done = [r.result() for r in slow_requests]
    assert health.status_code == 200 and health_took < 0.5, health_took
    assert grounded.status_code == 200 and grounded_took < 0.5, grounded_took
    assert MUSEUM in (
        grounded.text if stream else grounded.json()["choices"][0]["message"]["content"]
    )
    # Flagged (the DOI is not found), not failed; verified, not passed through.
    assert [r.status_code for r in slow_done] == [200] * 5
    assert {r.headers["X-Citeverify-Enforced"] for r in slow_done} == {"true"}


def test_a_caller_over_its_bound_is_refused_before_the_upstream_is_called(
    tmp_path, index, upstream, crossref
):
    slots = VerificationSlots(per_instance=4, per_key=1)
    with gateway(tmp_path, index, upstream, crossref, slots=slots) as service:
        pool, first = in_background(
            lambda: httpx.post(service.url + CHAT, json=chat(slow_answer(0)), timeout=30), 1
        )
        with pool:
            wait_for(lambda: len(crossref.seen) == 1)
            second = httpx.post(service.url + CHAT, json=chat(MUSEUM), timeout=30)
            assert first[0].result().status_code == 200
        after = httpx.post(service.url + CHAT, json=chat(MUSEUM), timeout=30)
    assert second.status_code == 429
    assert int(second.headers["Retry-After"]) >= 1
    assert error_of(second)["code"] == "rate_limited"
    assert upstream.calls(CHAT) == 2  # the first request and the one after: not the refused one
    assert after.status_code == 200


# --- one deadline per request ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code"),
    [
        pytest.param("drip", "upstream_timeout", id="upstream-drips"),
        pytest.param(slow_answer(1), "verification_timeout", id="lookup-slower-than-deadline"),
    ],
)
def test_a_request_past_its_deadline_is_a_504(tmp_path, index, upstream, crossref, text, code):
    with gateway(tmp_path, index, upstream, crossref, deadline=0.8) as service:
        start = time.monotonic()
        late = httpx.post(service.url + CHAT, json=chat(text), timeout=30)
        took = time.monotonic() - start
        healthy = httpx.get(service.url + "/healthz", timeout=5)
    assert late.status_code == 504
    assert error_of(late) | {"message": ""} == {"message": "", "type": "api_error", "code": code}
    assert took < 2.5, took
    assert healthy.status_code == 200


def test_a_passed_through_stream_ends_at_the_deadline_with_an_error_event(
    tmp_path, index, upstream, crossref
):
    with gateway(tmp_path, index, upstream, crossref, deadline=0.8) as service:
        start = time.monotonic()
        with httpx.stream(
            "POST", service.url + CHAT, json=chat("drip", stream=True), timeout=30
        ) as response:
            body = response.read()
        took = time.monotonic() - start
    assert response.status_code == 200
    assert took < 2.5, took
    last = body.decode().strip().splitlines()[-1]
    assert json.loads(last.removeprefix("data: "))["error"]["code"] == "upstream_timeout"


# --- the upstream's answer is bounded -------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("huge", id="longer-than-the-limit"),
        pytest.param("bomb", id="gzip-bomb"),
        pytest.param("overlong", id="over-the-verifiers-answer-limit"),
        pytest.param("zstd", id="encoding-not-asked-for"),
        pytest.param("nan", id="nan-in-the-answer"),
        pytest.param("surrogate", id="lone-surrogate-in-the-answer"),
    ],
)
def test_an_upstream_answer_that_cannot_be_used_is_a_502_not_the_clients_fault(
    tmp_path, index, upstream, crossref, text
):
    limit = 4 * MB if text == "overlong" else 256 * 1024  # "overlong" is 2.1 MB
    with gateway(tmp_path, index, upstream, crossref, max_answer_bytes=limit) as service:
        start = time.monotonic()
        answer = httpx.post(service.url + CHAT, json=chat(text), timeout=30)
        took = time.monotonic() - start
        healthy = httpx.get(service.url + "/healthz", timeout=5)
    assert answer.status_code == 502, answer.text[:300]
    assert error_of(answer)["code"] == "upstream_error"
    assert error_of(answer)["type"] == "api_error"
    assert took < 5, took
    assert healthy.status_code == 200


@pytest.mark.parametrize("mode", ["buffer", "passthrough"])
def test_a_stream_bomb_stops_at_the_stream_limit(tmp_path, index, upstream, crossref, mode):
    options = {"stream_mode": mode, "max_stream_bytes": MB}
    with (
        gateway(tmp_path, index, upstream, crossref, **options) as service,
        httpx.stream(
            "POST", service.url + CHAT, json=chat("bomb", stream=True), timeout=30
        ) as response,
    ):
        body = response.read()
    if mode == "buffer":
        assert response.status_code == 502
        assert error_of(response)["code"] == "upstream_error"
    else:  # the 200 went out before the limit was reached: the stream ends with an error event
        assert response.status_code == 200
        assert len(body) < 2 * MB
        last = body.decode().strip().splitlines()[-1]
        assert json.loads(last.removeprefix("data: "))["error"]["code"] == "upstream_error"


# --- a client that leaves takes its upstream request with it --------------------------------------


@pytest.mark.parametrize(
    ("stream_mode", "stream"),
    [("passthrough", False), ("buffer", True), ("passthrough", True)],
    ids=["answer", "buffered-stream", "passed-through-stream"],
)
def test_clients_that_give_up_leave_no_upstream_connection_open(
    tmp_path, index, upstream, crossref, stream_mode, stream
):
    with gateway(tmp_path, index, upstream, crossref, stream_mode=stream_mode) as service:

        def give_up() -> None:
            request = chat("drip", stream=True) if stream else chat("drip")
            if stream_mode == "passthrough" and stream:
                with httpx.stream("POST", service.url + CHAT, json=request, timeout=5) as r:
                    next(r.iter_raw())  # the stream has begun: leave
                return
            with pytest.raises(httpx.ReadTimeout):
                httpx.post(service.url + CHAT, json=request, timeout=1.0)

        pool, clients = in_background(give_up, 10)
        with pool:
            for client in clients:
                client.result()
        # A client that left before its request was forwarded cost no upstream call at all.
        assert upstream.calls(CHAT) >= 1
        wait_for(lambda: open_connections(upstream.port) == 0, timeout=3)
        # The upstream's writes fail: the gateway closed each connection.
        wait_for(lambda: len(upstream.drip.ended) == upstream.calls(CHAT), timeout=3)


# --- shutdown -------------------------------------------------------------------------------------


def test_sigterm_with_requests_hung_in_the_upstream_exits_within_the_shutdown_timeout(
    tmp_path, upstream
):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    # A file, not a pipe: a full pipe nobody reads would block the process's logging.
    log = (tmp_path / "serve.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "citeverify_core", "serve", "--port", str(port),
         "--db", str(tmp_path / "jobs.sqlite"), "--index", str(tmp_path / "no-index.sqlite"),
         "--upstream", upstream.url + "/v1", "--shutdown-timeout", "2"],
        stdout=subprocess.DEVNULL, stderr=log, env=env,
    )  # fmt: skip
    try:
        wait_for(lambda: _up(url, process), timeout=30)

        def hung() -> int | str:
            try:
                return httpx.post(url + CHAT, json=chat("hang"), timeout=30).status_code
            except httpx.TransportError as exc:
                return type(exc).__name__

        pool, clients = in_background(hung, 50)
        with pool:
            wait_for(lambda: upstream.calls(CHAT) == 50, timeout=20)
            start = time.monotonic()
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=20)
            took = time.monotonic() - start
            answered = [c.result() for c in clients]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        log.close()
    assert took < 2 + 3, took
    # Each client is told the service is going away (or finds its connection closed).
    assert set(answered) <= {503, "RemoteProtocolError", "ReadError"}, answered
    assert "Traceback" not in (tmp_path / "serve.log").read_text()


def _up(url: str, process: subprocess.Popen[bytes]) -> bool:
    assert process.poll() is None, "citeverify serve exited"
    try:
        return httpx.get(url + "/healthz", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


# --- what the request forwards -------------------------------------------------------------------

_MESSAGES = '[{"role": "user", "content": "hi"}]'


@pytest.mark.parametrize(
    ("path", "raw", "field"),
    [
        (CHAT, '{"model": "\\ud800", "messages": ' + _MESSAGES + '}', "model"),
        (CHAT, '{"model": "m", "temperature": NaN, "messages": ' + _MESSAGES + '}', "temperature"),
        (CHAT, '{"model": "m", "temperature": Infinity, "messages": ' + _MESSAGES + '}', "temperature"),
        ("/v1/responses", '{"model": "m", "input": "a \\udfff b"}', "input"),
        ("/v1/responses", '{"model": "m", "input": "hi", "max_output_tokens": -Infinity}',
         "max_output_tokens"),
    ],
    ids=["chat-model-surrogate", "chat-temperature-nan", "chat-temperature-infinity",
         "responses-input-surrogate", "responses-max-output-tokens-infinity"],
)  # fmt: skip
def test_forwarded_fields_that_json_cannot_carry_are_a_400_naming_the_field(
    tmp_path, index, upstream, crossref, path, raw, field
):
    with gateway(tmp_path, index, upstream, crossref) as service:
        answer = httpx.post(
            service.url + path,
            content=raw.encode(),
            headers={"Content-Type": "application/json"},
            timeout=30,
        )
    assert answer.status_code == 400
    assert error_of(answer)["code"] == "invalid_request"
    assert field in error_of(answer)["message"]
    assert upstream.seen == []


# A lone surrogate as an object key, wherever the forwarded request holds one: named in the
# error (escaped), never a 500.
_KEY_SURROGATES = {
    "chat-metadata": (CHAT, {"metadata": {"\udc00": 1}}),
    "chat-top-level": (CHAT, {"\udc00": 1}),
    "chat-message": (CHAT, {"messages": [{"role": "user", "content": "hi", "\udc00": 1}]}),
    "chat-tool-parameters": (
        CHAT,
        {
            "tools": [
                {
                    "type": "function",
                    "function": {"name": "f", "parameters": {"properties": {"\ud800x": {}}}},
                }
            ]
        },
    ),
    "responses-input-item": (
        "/v1/responses",
        {"input": [{"role": "user", "content": "hi", "\udc00": 1}]},
    ),
    "responses-metadata": ("/v1/responses", {"input": "hi", "metadata": {"\udfff": "x"}}),
}


@pytest.mark.parametrize("stream", [False, True], ids=["answer", "stream"])
def test_a_lone_surrogate_in_a_forwarded_key_is_a_400_never_a_500(
    tmp_path, index, upstream, crossref, stream
):
    with gateway(tmp_path, index, upstream, crossref, stream_mode="buffer") as service:
        answers = {}
        for name, (path, fields) in _KEY_SURROGATES.items():
            body: dict[str, Any] = {"model": "m", "stream": stream}
            if path == CHAT:
                body["messages"] = [{"role": "user", "content": "hi"}]
            body |= fields
            raw = json.dumps(body)  # ensure_ascii: the surrogate goes as an escape
            answers[name] = httpx.post(
                service.url + path,
                content=raw.encode(),
                headers={"Content-Type": "application/json"},
                timeout=30,
            )
    statuses = {name: answer.status_code for name, answer in answers.items()}
    assert statuses == dict.fromkeys(_KEY_SURROGATES, 400)
    for answer in answers.values():
        assert error_of(answer)["code"] == "invalid_request"
        assert "lone surrogate" in error_of(answer)["message"]
        assert "\\ud" in error_of(answer)["message"]  # the key, escaped
    assert upstream.seen == []


def test_error_answers_escape_text_that_utf8_cannot_carry():
    """The second guard: a message naming a lone surrogate still makes a UTF-8 JSON answer."""
    for response in (
        openai_error(400, "field \udc00 is wrong", code="invalid_request"),
        error_response(400, "invalid_request", "field \udc00 is wrong"),
    ):
        assert json.loads(response.body)["error"]["message"] == "field \\udc00 is wrong"


def test_guessing_keys_at_the_gateway_is_rate_limited_like_the_rest_api(
    tmp_path, index, upstream, crossref
):
    with gateway(tmp_path, index, upstream, crossref, unauthenticated_per_minute=10) as service:
        statuses = []
        for i in range(30):
            guess = "cvk_" + secrets.token_urlsafe(24)
            headers = {"Authorization": f"Bearer {guess}"} if i % 2 else {"X-Citeverify-Key": guess}
            answer = httpx.post(service.url + CHAT, json=chat(MUSEUM), headers=headers, timeout=30)
            statuses.append(answer.status_code)
        assert int(answer.headers["Retry-After"]) >= 1
        assert error_of(answer)["code"] == "rate_limited"
        rest = httpx.get(service.url + "/api/verify-reference/balance", timeout=30)
    assert statuses == [401] * 10 + [429] * 20
    assert rest.status_code == 429  # one window for the address, whichever API it guesses on
    assert upstream.seen == []


def test_an_unknown_policy_pack_is_a_400_that_does_not_list_the_packs(
    tmp_path, index, upstream, crossref
):
    folder = tmp_path / "packs"
    folder.mkdir()
    (folder / "internal-strict.yaml").write_text(
        "policy:\n  citation-verifier:\n    require_sources: false\n"
    )
    packs = PolicyPacks(verifier(crossref), folder)
    config = GatewayConfig(HTTPUpstream(upstream.url + "/v1", timeout=10), packs)
    with Service(tmp_path / "jobs.sqlite", index, workers=False, gateway=config) as service:
        request = chat(MUSEUM)
        request["verdictan"]["policy"] = "nope"
        answer = httpx.post(service.url + CHAT, json=request, timeout=30)
    assert answer.status_code == 400
    assert error_of(answer)["code"] == "unknown_policy"
    assert "nope" in error_of(answer)["message"]
    assert "internal-strict" not in answer.text and "default" not in answer.text


def test_keys_of_this_service_never_reach_the_upstream(tmp_path, index, upstream, crossref):
    with gateway(tmp_path, index, upstream, crossref, api_key="sk-upstream") as service:
        a, b = service.key(name="a"), service.key(name="b")
        answers = {
            name: httpx.post(service.url + CHAT, json=chat(MUSEUM), headers=headers, timeout=30)
            for name, headers in {
                "own-and-bearer-other": {"X-Citeverify-Key": a, "Authorization": f"Bearer {b}"},
                "own-and-bearer-same": {"X-Citeverify-Key": a, "Authorization": f"Bearer {a}"},
                "own-and-client-key": {"X-Citeverify-Key": a, "Authorization": "Bearer sk-client"},
                "bearer": {"Authorization": f"Bearer {b}"},
                "no-scheme": {"Authorization": b},
                "other-scheme": {"Authorization": f"Basic {a}"},
            }.items()
        }
    statuses = {name: answer.status_code for name, answer in answers.items()}
    assert statuses == {
        "own-and-bearer-other": 400,
        "own-and-bearer-same": 200,
        "own-and-client-key": 200,
        "bearer": 200,
        "no-scheme": 401,
        "other-scheme": 401,
    }
    sent = [seen.headers for seen in upstream.seen]
    assert len(sent) == 3
    assert not any("cvk_" in f"{k}: {v}" for headers in sent for k, v in headers.items())
    authorizations = sorted(h.get("Authorization", "") for h in sent)
    assert authorizations == ["Bearer sk-client", "Bearer sk-upstream", "Bearer sk-upstream"]


# Authorization values that hold a key of ours in some other form than ``Bearer <key>``: each is
# ours (a 401), never a client's key to pass on. ``{key}`` is a valid key of the service.
_WRAPPED_KEYS = {
    "quoted": 'Bearer "{key}"',
    "after-a-comma": "Bearer sk-x,{key}",
    "after-a-colon": "Bearer:{key}",
    "in-angle-brackets": "Bearer <{key}>",
    "as-a-parameter": "Bearer key={key}",
    "after-a-tab": "bearer\t{key}",
    "upper-case": "Bearer {upper}",
    "followed-by-another": "Bearer {key} sk-x",
    "inside-another": "Bearer sk-x{key}",
}


def test_a_key_of_this_service_in_any_wrapping_is_a_401_and_never_reaches_the_upstream(
    tmp_path, index, upstream, crossref
):
    options = {"api_key": "sk-upstream", "unauthenticated_per_minute": 1000}
    with gateway(tmp_path, index, upstream, crossref, **options) as service:
        key = service.key()
        answers = {
            name: httpx.post(
                service.url + CHAT,
                json=chat(MUSEUM),
                headers={"Authorization": form.format(key=key, upper=key.upper())},
                timeout=30,
            )
            for name, form in _WRAPPED_KEYS.items()
        }
        # Two Authorization headers, one of them ours: which one counts is not guessed.
        answers["two-headers"] = httpx.post(
            service.url + CHAT,
            json=chat(MUSEUM),
            headers=[("Authorization", "Bearer sk-client"), ("Authorization", f"Bearer {key}")],
            timeout=30,
        )
        plain = httpx.post(
            service.url + CHAT, json=chat(MUSEUM), headers={"Authorization": f"bearer {key}"}
        )
    statuses = {name: answer.status_code for name, answer in answers.items()}
    assert statuses == dict.fromkeys([*_WRAPPED_KEYS, "two-headers"], 401)
    for answer in answers.values():
        assert error_of(answer)["type"] == "authentication_error"
        assert answer.headers["WWW-Authenticate"] == "Bearer"
    assert plain.status_code == 200  # the scheme's case does not matter (RFC 9110)
    assert len(upstream.seen) == 1
    assert upstream.seen[0].headers["Authorization"] == "Bearer sk-upstream"
    for seen in upstream.seen:
        shown = f"{seen.headers} {seen.body!r}".lower()
        assert "cvk_" not in shown


def test_serve_refuses_a_negative_shutdown_timeout(tmp_path):
    result = serve_refusal(tmp_path, "--shutdown-timeout", "-1")
    assert result.exit_code == 2
    assert "--shutdown-timeout" in result.output


@pytest.mark.parametrize(
    ("total", "per_caller"), [("2", "3"), ("0", "0"), ("64", "0"), ("20000", "8")]
)
def test_serve_refuses_verification_bounds_that_cannot_hold(tmp_path, total, per_caller):
    result = serve_refusal(
        tmp_path, "--max-verifications", total, "--max-verifications-per-caller", per_caller
    )
    assert result.exit_code == 2
    assert "--max-verifications-per-caller" in result.output


def test_the_serve_options_bound_the_guard_and_the_checks_with_one_pool(tmp_path):
    from citeverify_core.service.serve import ServeOptions, build_app

    options = ServeOptions(
        db=str(tmp_path / "jobs.sqlite"),
        index=str(tmp_path / "none"),
        sources=[],
        jobs=False,
        upstream="http://127.0.0.1:9/v1",
        max_verifications=5,
        max_verifications_per_caller=2,
    )
    built = build_app(options)
    assert (built.state.slots.per_instance, built.state.slots.per_key) == (5, 2)


def test_the_guard_and_the_checks_share_one_bound(tmp_path, index):
    # A caller cannot double its share by sending some answers to /v1 and others to /api/check.
    slots = VerificationSlots(per_instance=5, per_key=2)
    config = GatewayConfig(HTTPUpstream("http://127.0.0.1:9/v1"), CitationVerifier())
    with Service(tmp_path / "jobs.sqlite", index, workers=False, gateway=config, slots=slots) as s:
        assert s.app.state.slots is slots
        assert config.slots is slots
