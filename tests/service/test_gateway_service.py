"""The citation-verifier gateway as a service: the guard API's example exchange over real HTTP on loopback."""

import json
from pathlib import Path

import httpx
import pytest

from citeverify_core import CitationVerifier
from citeverify_core.service.gateway import FixtureUpstream, GatewayConfig, HTTPUpstream
from tests.support.loopback import Loopback, Reply
from tests.support.service import Service, build_index

SEED_POLICY = Path(__file__).parents[1] / "data" / "seed-policy-config.yaml"
MUSEUM = "The museum opens at nine."
# The guard API's example request.json, unchanged.
REQUEST = {
    "model": "gpt-4o-mini",
    "stream": False,
    "messages": [
        {
            "role": "system",
            "content": 'Return only this exact quoted sentence: "The museum opens at nine."',
        },
        {"role": "user", "content": "When does the museum open?"},
    ],
    "verdictan": {"context_documents": [{"content": MUSEUM}]},
}
UNRELATED = {**REQUEST, "verdictan": {"context_documents": [{"content": "Bats sleep by day."}]}}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return build_index(tmp_path_factory.mktemp("index"))


def _verifier():
    return CitationVerifier(SEED_POLICY)  # the pack's path, as `serve --policy` takes it


@pytest.fixture
def fixture_file(tmp_path):
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"answer": f'"{MUSEUM}"'}))
    return path


@pytest.fixture
def gateway(tmp_path, index, fixture_file):
    config = GatewayConfig(FixtureUpstream(fixture_file), _verifier())
    with (
        Service(tmp_path / "jobs.sqlite", index, workers=False, gateway=config) as service,
        httpx.Client(base_url=service.url, timeout=30) as client,
    ):
        yield client


def test_the_seeds_request_is_allowed_and_an_unrelated_context_blocked(gateway):
    allowed = gateway.post("/v1/chat/completions", json=REQUEST)
    assert allowed.status_code == 200
    body = allowed.json()
    assert body["choices"][0]["message"]["content"] == f'"{MUSEUM}"'
    decision = body["verdictan"]["decision"]
    assert (decision["verdict"], decision["reason_code"]) == ("ALLOW", "citation.verified")
    assert allowed.headers["X-Citeverify-Enforced"] == "true"

    blocked = gateway.post("/v1/chat/completions", json=UNRELATED)
    assert blocked.status_code == 400
    error = blocked.json()
    assert error["error"]["code"] == "content_policy_violation"
    assert error["verdictan"]["decision"]["verdict"] == "BLOCK"
    assert error["verdictan"]["decision"]["reason_code"] == "citation.unverified"
    assert "choices" not in error  # the blocked answer is not handed back
    assert "Bats sleep by day" not in blocked.text  # nor the context documents


def test_the_responses_api_too(gateway):
    request = {
        "model": "m",
        "input": "When does the museum open?",
        "verdictan": REQUEST["verdictan"],
    }
    answer = gateway.post("/v1/responses", json=request)
    assert answer.status_code == 200
    assert answer.json()["verdictan"]["decision"]["reason_code"] == "citation.verified"


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        pytest.param({"model": "m"}, "messages", id="no-messages"),
        pytest.param({"model": "m", "messages": []}, "messages", id="empty-messages"),
        pytest.param({"messages": [{"role": "user", "content": 5}]}, "content", id="content-int"),
        pytest.param(
            {
                "messages": [{"role": "user", "content": "q"}],
                "verdictan": {"context_documents": "x"},
            },
            "context_documents",
            id="documents-not-a-list",
        ),
        pytest.param([1, 2], "JSON object", id="array-body"),
    ],
)
def test_bad_requests_are_400_in_openais_error_shape(gateway, body, fragment):
    response = gateway.post("/v1/chat/completions", json=body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert fragment in error["message"] and error["type"] == "invalid_request_error"


def test_malformed_and_huge_bodies(gateway):
    broken = gateway.post(
        "/v1/chat/completions", content=b"{", headers={"Content-Type": "application/json"}
    )
    assert broken.status_code == 400
    assert broken.json()["error"]["code"] == "invalid_json"
    huge = gateway.post(
        "/v1/chat/completions",
        content=b"x" * (10 * 1024 * 1024),
        headers={"Content-Type": "application/json"},
    )
    assert huge.status_code == 413


def test_streams_pass_through_unenforced_and_marked_so(gateway):
    with gateway.stream("POST", "/v1/chat/completions", json={**UNRELATED, "stream": True}) as r:
        assert r.status_code == 200
        assert r.headers["X-Citeverify-Enforced"] == "false"
        text = r.read().decode()
    assert "data: [DONE]" in text and "museum" in text


def test_buffered_streams_are_enforced(tmp_path, index, fixture_file):
    config = GatewayConfig(FixtureUpstream(fixture_file), _verifier(), stream_mode="buffer")
    with (
        Service(tmp_path / "j.sqlite", index, workers=False, gateway=config) as service,
        httpx.Client(base_url=service.url, timeout=30) as client,
    ):
        ok = client.post("/v1/chat/completions", json={**REQUEST, "stream": True})
        assert ok.status_code == 200
        assert ok.headers["X-Citeverify-Enforced"] == "true"
        assert "data: [DONE]" in ok.text
        blocked = client.post("/v1/chat/completions", json={**UNRELATED, "stream": True})
        assert blocked.status_code == 400
        assert blocked.json()["error"]["code"] == "content_policy_violation"
        # No chunk of the blocked answer was sent (the example pack asks for the report, so the
        # decision's details name the claims).
        assert "data:" not in blocked.text


def _completion(text):
    return {
        "id": "x",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
    }


def test_an_http_upstream_gets_the_request_without_verdictan_and_the_clients_key(tmp_path, index):
    with Loopback() as upstream:
        upstream.routes[("POST", "/v1/chat/completions")] = Reply(200, _completion(MUSEUM))
        config = GatewayConfig(HTTPUpstream(upstream.url + "/v1", timeout=5), _verifier())
        with (
            Service(tmp_path / "j.sqlite", index, workers=False, gateway=config) as service,
            httpx.Client(base_url=service.url, timeout=30) as client,
        ):
            answer = client.post(
                "/v1/chat/completions", json=REQUEST, headers={"Authorization": "Bearer sk-x"}
            )
        (seen,) = upstream.seen
    assert answer.status_code == 200
    assert answer.json()["verdictan"]["decision"]["verdict"] == "ALLOW"
    forwarded = json.loads(seen.body)
    assert "verdictan" not in forwarded and forwarded["messages"] == REQUEST["messages"]
    assert seen.headers.get("Authorization") == "Bearer sk-x"


@pytest.mark.parametrize(
    ("reply", "status", "code"),
    [
        pytest.param(
            Reply(429, {"error": {"message": "slow down", "code": "rate_limit_exceeded"}}),
            429,
            "rate_limit_exceeded",
            id="upstream-429-passed-through",
        ),
        pytest.param(Reply(200, "<html>oops</html>"), 502, "upstream_error", id="not-json"),
        pytest.param(Reply(200, [1, 2]), 502, "upstream_error", id="json-list"),
        pytest.param(Reply(200, {"choices": "x"}), 502, "upstream_error", id="wrong-shape"),
        pytest.param(
            Reply(200, _completion(MUSEUM), delay=3), 504, "upstream_timeout", id="timeout"
        ),
    ],
)
def test_upstream_failures_are_passed_through_or_502_504_never_500(
    tmp_path, index, reply, status, code
):
    with Loopback() as upstream:
        upstream.routes[("POST", "/v1/chat/completions")] = reply
        config = GatewayConfig(HTTPUpstream(upstream.url + "/v1", timeout=1), _verifier())
        with (
            Service(tmp_path / "j.sqlite", index, workers=False, gateway=config) as service,
            httpx.Client(base_url=service.url, timeout=30) as client,
        ):
            answer = client.post("/v1/chat/completions", json=REQUEST)
    assert answer.status_code == status
    assert answer.json()["error"]["code"] == code
