"""``citeverify serve``: the reference-verification API's wire format over real HTTP on loopback, SQLite store."""

import json

import httpx
import pytest

from tests.support.service import (
    FAKE,
    KUHN,
    LECUN_WRONG_YEAR,
    Service,
    bearer,
    build_index,
    wait_done,
)


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return build_index(tmp_path_factory.mktemp("index"))


@pytest.fixture
def service(tmp_path, index):
    with Service(tmp_path / "jobs.sqlite", index) as running:
        yield running


@pytest.fixture
def client(service):
    with httpx.Client(base_url=service.url, timeout=30) as http:
        yield http


def test_the_seeds_two_calls_verify_references_and_spend_one_token_each(service, client):
    key = service.key(tokens=10)
    # The reference-verification API's "Complete Example", unchanged but for the base URL.
    submitted = client.post(
        "/api/verify-reference",
        headers={"Content-Type": "application/json", **bearer(key)},
        content=json.dumps({"references": [KUHN, LECUN_WRONG_YEAR, FAKE]}),
    )
    assert submitted.status_code == 200
    body = submitted.json()
    assert set(body) == {"jobIds", "documentId", "message", "tokensAvailable"}
    assert body["tokensAvailable"] == 7
    assert (
        client.get("/api/verify-reference/balance", headers=bearer(key)).json()["pendingTokens"]
        == 3
    )
    jobs = wait_done(client, key, body["jobIds"])
    assert [j["state"] for j in jobs] == ["completed"] * 3
    assert [j["result"]["status"] for j in jobs] == [
        "verified",
        "verified-with-error",
        "unverified",
    ]
    assert jobs[1]["result"]["field_results"]["year"] == "CONTRADICTION"
    assert jobs[0]["result"]["verificationGraph"]["citationId"] == "cit_1"
    balance = client.get("/api/verify-reference/balance", headers=bearer(key)).json()
    assert (balance["totalAvailable"], balance["pendingTokens"]) == (7, 0)
    assert set(balance) == {
        "totalAvailable",
        "subscriptionTokens",
        "purchasedTokens",
        "pendingTokens",
        "plan",
        "context",
        "name",
        "email",
    }
    history = client.get("/api/verify-reference/history?limit=5", headers=bearer(key)).json()
    assert history["pagination"] == {"total": 1, "limit": 5, "offset": 0, "hasMore": False}
    (document,) = history["documents"]
    assert document["id"] == body["documentId"]
    assert document["status"] == "COMPLETED"
    assert [r["status"] for r in document["references"]] == [
        "verified",
        "verified-with-error",
        "unverified",
    ]


def test_unknown_job_ids_are_not_found(service, client):
    key = service.key()
    jobs = client.post(
        "/api/verify-reference/results",
        json={"jobIds": ["999999", "nope", "²"]},
        headers=bearer(key),
    ).json()["jobs"]
    assert [j["state"] for j in jobs] == ["not-found"] * 3


@pytest.mark.parametrize(
    ("path", "body"),
    [
        pytest.param("/api/verify-reference", {"references": []}, id="zero-references"),
        pytest.param("/api/verify-reference", {"references": [KUHN] * 21}, id="21-references"),
        pytest.param("/api/verify-reference", {"references": ["x" * 1201]}, id="1201-chars"),
        pytest.param("/api/verify-reference", {"references": "one"}, id="not-a-list"),
        pytest.param("/api/verify-reference", {"references": [1, 2]}, id="not-strings"),
        pytest.param("/api/verify-reference", {"references": [" "]}, id="blank"),
        pytest.param("/api/verify-reference", {"refs": [KUHN]}, id="no-references-key"),
        pytest.param("/api/verify-reference", [KUHN], id="array-body"),
        pytest.param("/api/verify-reference/results", {"jobIds": ["1"] * 51}, id="51-ids"),
        pytest.param("/api/verify-reference/results", {"jobIds": [{"a": 1}]}, id="object-id"),
        pytest.param("/api/verify-reference/cancel", {}, id="cancel-nothing"),
    ],
)
def test_bad_requests_are_400_with_a_json_error_and_cost_nothing(service, client, path, body):
    key = service.key(tokens=5)
    response = client.post(path, json=body, headers=bearer(key))
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    assert error["message"] and "Traceback" not in error["message"]
    assert (
        client.get("/api/verify-reference/balance", headers=bearer(key)).json()["totalAvailable"]
        == 5
    )


@pytest.mark.parametrize(
    "content",
    [b"{", b"\xff\xfe", b'{"references": [', b"null", b"", b'{"references": ["\\ud800"]}'],
)
def test_malformed_bodies_are_400(service, client, content):
    key = service.key()
    response = client.post(
        "/api/verify-reference",
        content=content,
        headers={"Content-Type": "application/json", **bearer(key)},
    )
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "invalid_request"


def test_an_oversize_body_is_413_before_it_is_read(service, client):
    key = service.key()
    big = json.dumps({"references": ["x" * 1000] * 400})
    response = client.post(
        "/api/verify-reference",
        content=big,
        headers={"Content-Type": "application/json", **bearer(key)},
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "body_too_large"

    def chunks():  # no Content-Length: the limit holds while the body streams
        for _ in range(400):
            yield b"x" * 1000

    streamed = client.post(
        "/api/verify-reference",
        content=chunks(),
        headers={"Content-Type": "application/json", **bearer(key)},
    )
    assert streamed.status_code == 413


def test_keys_missing_invalid_revoked_and_short_of_tokens(service, client):
    ask = "/api/verify-reference/balance"
    assert client.get(ask).status_code == 401
    assert client.get(ask).json()["error"]["code"] == "invalid_api_key"
    assert client.get(ask, headers=bearer("cvk_" + "a" * 43)).status_code == 401
    assert client.get(ask, headers={"Authorization": "Basic abc"}).status_code == 401
    key = service.key(tokens=2)
    assert client.get(ask, headers=bearer(key)).status_code == 200
    short = client.post(
        "/api/verify-reference", json={"references": [KUHN] * 3}, headers=bearer(key)
    )
    assert short.status_code == 402
    assert short.json()["error"]["code"] == "insufficient_tokens"
    service.store.revoke_key(service.store.authenticate(key)["id"])
    revoked = client.get(ask, headers=bearer(key))
    assert revoked.status_code == 403
    assert revoked.json()["error"]["code"] == "revoked_api_key"


def test_unauthenticated_requests_are_limited_to_10_a_minute_authenticated_ones_are_not(
    service, client
):
    key = service.key()
    for _ in range(30):
        assert client.get("/api/verify-reference/balance", headers=bearer(key)).status_code == 200
    codes = [client.get("/api/verify-reference/balance").status_code for _ in range(11)]
    assert codes == [401] * 10 + [429]
    limited = client.get("/api/verify-reference/balance", headers=bearer("cvk_wrong"))
    assert limited.status_code == 429
    assert 1 <= int(limited.headers["Retry-After"]) <= 60
    assert client.get("/api/verify-reference/balance", headers=bearer(key)).status_code == 200


def test_one_tenant_never_sees_another_tenants_jobs(service, client):
    alice, bob = service.key(name="alice"), service.key(name="bob")
    submitted = client.post(
        "/api/verify-reference", json={"references": [KUHN]}, headers=bearer(alice)
    ).json()
    jobs = client.post(
        "/api/verify-reference/results", json={"jobIds": submitted["jobIds"]}, headers=bearer(bob)
    ).json()["jobs"]
    assert [j["state"] for j in jobs] == ["not-found"]
    assert "result" not in jobs[0]
    history = client.get("/api/verify-reference/history", headers=bearer(bob)).json()
    assert history["documents"] == [] and history["pagination"]["total"] == 0
    cancel = client.post(
        "/api/verify-reference/cancel",
        json={"documentId": submitted["documentId"], "jobIds": submitted["jobIds"]},
        headers=bearer(bob),
    ).json()
    assert cancel["cancelledJobs"] == 0 and cancel["refundedTokens"] == 0
    assert [j["state"] for j in wait_done(client, alice, submitted["jobIds"])] == ["completed"]


def test_cancel_refunds_the_tokens_of_jobs_not_yet_done(tmp_path, index):
    with (
        Service(tmp_path / "jobs.sqlite", index, workers=False) as service,
        httpx.Client(base_url=service.url) as client,
    ):
        key = service.key(tokens=10)
        submitted = client.post(
            "/api/verify-reference", json={"references": [KUHN, FAKE]}, headers=bearer(key)
        ).json()
        assert submitted["tokensAvailable"] == 8
        cancel = client.post(
            "/api/verify-reference/cancel",
            json={"documentId": submitted["documentId"]},
            headers=bearer(key),
        ).json()
        assert cancel == {
            "success": True,
            "cancelledJobs": 2,
            "refundedTokens": 2,
            "documentId": submitted["documentId"],
            "documentStatus": "FAILED",
        }
        balance = client.get("/api/verify-reference/balance", headers=bearer(key)).json()
        assert (balance["totalAvailable"], balance["pendingTokens"]) == (10, 0)
        jobs = client.post(
            "/api/verify-reference/results",
            json={"jobIds": submitted["jobIds"]},
            headers=bearer(key),
        ).json()["jobs"]
        assert [(j["state"], j["error"]) for j in jobs] == [("failed", "cancelled")] * 2


def test_a_restart_loses_nothing(tmp_path, index):
    db = tmp_path / "jobs.sqlite"
    with Service(db, index, workers=False) as first, httpx.Client(base_url=first.url) as client:
        key = first.key(tokens=5)
        submitted = client.post(
            "/api/verify-reference",
            json={"references": [KUHN, LECUN_WRONG_YEAR]},
            headers=bearer(key),
        ).json()
    with Service(db, index) as second, httpx.Client(base_url=second.url) as client:
        jobs = wait_done(client, key, submitted["jobIds"])
        assert [j["state"] for j in jobs] == ["completed", "completed"]
        balance = client.get("/api/verify-reference/balance", headers=bearer(key)).json()
        assert (balance["totalAvailable"], balance["pendingTokens"]) == (3, 0)


def test_health_metrics_and_openapi(service, client):
    assert client.get("/healthz").json() == {"status": "ok"}
    key = service.key()
    ids = client.post(
        "/api/verify-reference", json={"references": [KUHN]}, headers=bearer(key)
    ).json()["jobIds"]
    wait_done(client, key, ids)
    metrics = client.get("/metrics").text
    assert 'citeverify_jobs{state="completed"} 1.0' in metrics
    assert 'citeverify_verification_seconds_count{state="completed"} 1.0' in metrics
    schema = client.get("/openapi.json").json()
    assert {
        "/api/verify-reference",
        "/api/verify-reference/results",
        "/api/verify-reference/balance",
        "/api/verify-reference/history",
        "/api/verify-reference/cancel",
    } <= set(schema["paths"])
    missing = client.get("/nowhere")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
