"""Findings of a hostile probe of ``citeverify serve``, each over real HTTP on loopback."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from citeverify_core import CitationVerifier
from citeverify_core.client import ReferenceClient
from citeverify_core.references import LocalIndex
from citeverify_core.service.limits import VerificationSlots
from citeverify_core.service.policies import PolicyPacks
from tests.service.test_gateway_service import MUSEUM, REQUEST, SEED_POLICY
from tests.service.test_service_cli import _free_port, _wait_up
from tests.support.pg import postgres_url  # noqa: F401 (a fixture)
from tests.support.service import FAKE, KUHN, Service, bearer, build_index

ANSWER = "The museum opens at nine [1]."
DOCUMENTS = ["The museum opens at nine every day."]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> LocalIndex:
    return build_index(tmp_path_factory.mktemp("index"))


@pytest.fixture
def service(tmp_path: Path, index: LocalIndex) -> Iterator[Service]:
    with Service(tmp_path / "jobs.sqlite", index, workers=False) as running:
        yield running


# --- no documentation pages on the service's origin ------------------------------------------


def test_no_framework_doc_pages_but_the_schema_stays(service: Service) -> None:
    with httpx.Client(base_url=service.url, timeout=10) as client:
        for path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
            answer = client.get(path)
            assert answer.status_code == 404, path
            assert "cdn" not in answer.text.lower()
        schema = client.get("/openapi.json")
        assert schema.status_code == 200
        assert "/api/verify-reference" in schema.json()["paths"]


# --- ids are ASCII digits -----------------------------------------------------------------------


def test_non_ascii_digits_are_not_ids(service: Service) -> None:
    key = service.key()
    with httpx.Client(base_url=service.url, timeout=30, headers=bearer(key)) as client:
        made = []
        for _ in range(3):
            answer = client.post("/api/check", json={"answer": ANSWER, "context_documents": []})
            assert answer.status_code == 200
            made.append(answer.json()["decision_id"])
        three = made[-1]
        assert client.get(f"/api/decisions/{three}").status_code == 200
        for text in ("²", "٣", "３", "³", "\u0663", "+3", " 3", "3 ", "0x3"):
            answer = client.get(f"/api/decisions/{text}")
            assert answer.status_code == 404, text
            assert answer.json()["error"]["code"] == "not_found"

        submitted = client.post("/api/verify-reference", json={"references": [KUHN]}).json()
        job = submitted["jobIds"][0]
        arabic = "".join(chr(ord("٠") + int(d)) for d in job)
        polled = client.post("/api/verify-reference/results", json={"jobIds": [arabic, "²"]})
        assert polled.status_code == 200
        assert [j["state"] for j in polled.json()["jobs"]] == ["not-found", "not-found"]
        cancelled = client.post("/api/verify-reference/cancel", json={"jobIds": [arabic]})
        assert cancelled.status_code in {200, 404}
        assert (
            client.post("/api/verify-reference/results", json={"jobIds": [job]}).json()["jobs"][0][
                "state"
            ]
            == "waiting"
        )


# --- /api/check: a bound per key, a deadline, the event loop free --------------------------------


class _Slow(CitationVerifier):
    """A pack whose checks wait like slow lookups."""

    release = threading.Event()

    def verify(self, answer: Any, context_documents: Any = None, **kwargs: Any) -> Any:
        self.release.wait(10)
        return super().verify(answer, context_documents, **kwargs)


def test_slow_checks_of_one_key_are_refused_beyond_its_bound_and_others_are_served(
    tmp_path: Path, index: LocalIndex
) -> None:
    slots = VerificationSlots(per_instance=6, per_key=2)
    _Slow.release.clear()
    with Service(
        tmp_path / "jobs.sqlite",
        index,
        workers=False,
        policies=PolicyPacks(_Slow(SEED_POLICY)),
        slots=slots,
        check_timeout=5,
    ) as service:
        assert service.app.state.slots is slots
        greedy, other = service.key(name="greedy"), service.key(name="other")
        body = {"answer": ANSWER, "context_documents": DOCUMENTS}

        def check(_: int) -> httpx.Response:
            return httpx.post(
                service.url + "/api/check", json=body, headers=bearer(greedy), timeout=30
            )

        with ThreadPoolExecutor(12) as pool:
            futures = [pool.submit(check, i) for i in range(12)]
            time.sleep(0.5)
            started = time.perf_counter()
            balance = httpx.get(
                service.url + "/api/verify-reference/balance", headers=bearer(other), timeout=10
            )
            took = time.perf_counter() - started
            _Slow.release.set()
            answers = [f.result() for f in futures]
        assert balance.status_code == 200 and took < 1.0
        statuses = sorted(a.status_code for a in answers)
        assert statuses == [200, 200] + [429] * 10
        refused = next(a for a in answers if a.status_code == 429)
        assert int(refused.headers["retry-after"]) >= 1
        assert refused.json()["error"]["code"] == "rate_limited"


def test_a_check_past_its_deadline_is_504(tmp_path: Path, index: LocalIndex) -> None:
    _Slow.release.clear()
    with Service(
        tmp_path / "jobs.sqlite",
        index,
        workers=False,
        policies=PolicyPacks(_Slow(SEED_POLICY)),
        check_timeout=0.3,
    ) as service:
        key = service.key()
        answer = httpx.post(
            service.url + "/api/check",
            json={"answer": ANSWER, "context_documents": DOCUMENTS},
            headers=bearer(key),
            timeout=30,
        )
        _Slow.release.set()
        assert answer.status_code == 504
        assert answer.json()["error"]["code"] == "verification_timeout"


# --- Idempotency-Key ---------------------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def any_store(
    request: pytest.FixtureRequest, tmp_path: Path, index: LocalIndex
) -> Iterator[Service]:
    db = (
        str(tmp_path / "jobs.sqlite")
        if request.param == "sqlite"
        else str(request.getfixturevalue("postgres_url"))
    )
    with Service(db, index, workers=False) as running:
        yield running


def test_a_retried_submit_with_the_same_idempotency_key_is_charged_once(any_store: Service) -> None:
    service = any_store
    key, rival = service.key(tokens=10), service.key(tokens=10, name="rival")
    url = service.url + "/api/verify-reference"
    body = {"references": [KUHN, FAKE], "title": "paper"}
    same = {**bearer(key), "Idempotency-Key": "submit-1"}
    first = httpx.post(url, json=body, headers=same, timeout=30)
    again = httpx.post(url, json=body, headers=same, timeout=30)
    assert first.status_code == again.status_code == 200
    assert again.json()["jobIds"] == first.json()["jobIds"]
    assert again.json()["documentId"] == first.json()["documentId"]
    assert again.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers

    other_body = httpx.post(url, json={"references": [KUHN]}, headers=same, timeout=30)
    assert other_body.status_code == 422
    assert other_body.json()["error"]["code"] == "idempotency_key_reused"

    # Another key's same Idempotency-Key is its own.
    theirs = httpx.post(
        url, json=body, headers={**bearer(rival), "Idempotency-Key": "submit-1"}, timeout=30
    )
    assert theirs.status_code == 200 and theirs.json()["jobIds"] != first.json()["jobIds"]

    # Concurrent retries of one submission: one charge, one answer.
    concurrent = {**bearer(key), "Idempotency-Key": "submit-2"}
    with ThreadPoolExecutor(8) as pool:
        answers = list(
            pool.map(lambda _: httpx.post(url, json=body, headers=concurrent, timeout=30), range(8))
        )
    assert {a.status_code for a in answers} == {200}
    assert len({tuple(a.json()["jobIds"]) for a in answers}) == 1

    balance = httpx.get(url + "/balance", headers=bearer(key), timeout=10).json()
    # Two submissions of two references: four tokens, however many retries.
    assert balance["totalAvailable"] == 10 - 4

    bad = httpx.post(url, json=body, headers={**bearer(key), "Idempotency-Key": ""}, timeout=30)
    assert bad.status_code == 400


def test_the_client_sends_the_idempotency_key(service: Service) -> None:
    key = service.key(tokens=5)
    with ReferenceClient(service.url, api_key=key) as client:
        first = client.submit([KUHN], idempotency_key="retry-me")
        second = client.submit([KUHN], idempotency_key="retry-me")
        assert second.job_ids == first.job_ids
        assert client.balance()["totalAvailable"] == 4


# --- the decision log survives kill -9 ---------------------------------------------------------


def test_every_acknowledged_decision_survives_kill_9(tmp_path: Path) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"answer": f'"{MUSEUM}"'}))
    db = tmp_path / "service.sqlite"
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [sys.executable, "-m", "citeverify_core", "serve", "--port", str(port), "--db", str(db),
         "--index", str(tmp_path / "none"), "--upstream", f"fixture:{answers}",
         "--policy", str(SEED_POLICY), "--workers", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ},
    )  # fmt: skip
    acknowledged = 0
    lock = threading.Lock()
    stop = threading.Event()

    def client() -> None:
        nonlocal acknowledged
        with httpx.Client(timeout=30) as http:
            while not stop.is_set():
                try:
                    answer = http.post(url + "/v1/chat/completions", json=REQUEST)
                except httpx.TransportError:
                    return
                if answer.status_code == 200:
                    with lock:
                        acknowledged += 1

    try:
        _wait_up(url, process, timeout=120)
        threads = [threading.Thread(target=client) for _ in range(8)]
        for thread in threads:
            thread.start()
        while acknowledged < 200:
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        assert process.stderr is not None
        process.stderr.close()
    with sqlite3.connect(db) as conn:
        logged = conn.execute("SELECT count(*) FROM decisions WHERE status = 200").fetchone()[0]
    assert acknowledged >= 200
    assert logged >= acknowledged


def test_an_idempotency_key_is_forgotten_after_24_hours(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    import citeverify_core.service.idempotency as _idempotency
    import citeverify_core.service.store as _store

    key = service.key(tokens=10)
    url = service.url + "/api/verify-reference"
    headers = {**bearer(key), "Idempotency-Key": "daily"}
    first = httpx.post(url, json={"references": [KUHN]}, headers=headers, timeout=30).json()
    now = time.time()
    monkeypatch.setattr(_store, "clock", lambda: now + _idempotency.IDEMPOTENCY_SECONDS + 60)
    later = httpx.post(url, json={"references": [KUHN]}, headers=headers, timeout=30)
    assert later.status_code == 200
    assert "idempotent-replayed" not in later.headers
    assert later.json()["jobIds"] != first["jobIds"]  # a new submission, charged again
    assert later.json()["tokensAvailable"] == 8
