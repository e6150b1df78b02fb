"""The service on PostgreSQL: the same API, and several instances sharing one database."""

import collections
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import ClassVar

import httpx
import pytest
import sqlalchemy as sa

from citeverify_core.references import ReferenceVerifier
from citeverify_core.service.jobs import JobStore
from citeverify_core.service.store import JOBS
from tests.support.pg import postgres_url
from tests.support.service import (
    FAKE,
    KUHN,
    LECUN_WRONG_YEAR,
    Service,
    bearer,
    build_index,
    wait_done,
)

__all__ = ["postgres_url"]


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return build_index(tmp_path_factory.mktemp("index"))


def test_submit_verify_and_tokens_on_postgresql(postgres_url, index):
    with Service(postgres_url, index) as service, httpx.Client(base_url=service.url) as client:
        key = service.key(tokens=5)
        submitted = client.post(
            "/api/verify-reference",
            json={"references": [KUHN, LECUN_WRONG_YEAR, FAKE]},
            headers=bearer(key),
        ).json()
        assert submitted["tokensAvailable"] == 2
        jobs = wait_done(client, key, submitted["jobIds"])
        assert [j["result"]["status"] for j in jobs] == [
            "verified",
            "verified-with-error",
            "unverified",
        ]
        short = client.post(
            "/api/verify-reference", json={"references": [KUHN] * 3}, headers=bearer(key)
        )
        assert short.status_code == 402
        balance = client.get("/api/verify-reference/balance", headers=bearer(key)).json()
        assert (balance["totalAvailable"], balance["pendingTokens"]) == (2, 0)
    JobStore(postgres_url, ReferenceVerifier(sources=[])).close()  # a second open: migrated


class CountingVerifier(ReferenceVerifier):
    """Counts how often each reference is verified, across every instance of the process."""

    calls: ClassVar[collections.Counter[str]] = collections.Counter()
    lock = threading.Lock()

    async def averify_or_error(self, reference, **options):
        with self.lock:
            self.calls[reference] += 1
        return await super().averify_or_error(reference, **options)


def test_two_instances_on_one_database_run_every_job_exactly_once(postgres_url, index):
    CountingVerifier.calls.clear()
    first = Service(postgres_url, index, poll_interval=0.05)
    second = Service(postgres_url, index, poll_interval=0.05)
    for service in (first, second):
        service.store.verifier = CountingVerifier(index, max_concurrency=15)
    references = [f"{KUHN} [{n}]" for n in range(200)]
    with first, second:
        key = first.key(tokens=200)

        def submit(chunk: list[str], url: str) -> list[str]:
            with httpx.Client(base_url=url, timeout=30) as client:
                response = client.post(
                    "/api/verify-reference", json={"references": chunk}, headers=bearer(key)
                )
                assert response.status_code == 200, response.text
                return response.json()["jobIds"]

        chunks = [references[i : i + 10] for i in range(0, 200, 10)]
        urls = [first.url, second.url] * 10
        with ThreadPoolExecutor(8) as pool:
            ids = [i for batch in pool.map(submit, chunks, urls) for i in batch]
        with httpx.Client(base_url=second.url, timeout=30) as client:
            jobs = []
            for start in range(0, 200, 50):
                jobs += wait_done(client, key, ids[start : start + 50], timeout=120)
            balance = client.get("/api/verify-reference/balance", headers=bearer(key)).json()
        with first.store.engine.connect() as db:
            workers = db.execute(sa.select(JOBS.c.worker).distinct()).scalars().all()
    assert len(workers) == 2  # both instances took jobs
    assert [j["state"] for j in jobs] == ["completed"] * 200
    assert sorted(CountingVerifier.calls) == sorted(references)
    assert set(CountingVerifier.calls.values()) == {1}  # exactly once, across both instances
    assert (balance["totalAvailable"], balance["pendingTokens"]) == (0, 0)


def test_the_gateway_decision_log_on_postgresql(postgres_url, index):
    """Two instances on one database log decisions that either can read, per key."""
    from citeverify_core import CitationVerifier
    from citeverify_core.service.gateway import FixtureUpstream, GatewayConfig
    from tests.service.test_gateway_log import HALF, MUSEUM, _request

    def gateway(folder):
        answers = folder / "answers.json"
        answers.write_text(json.dumps({"answer": MUSEUM}))
        return GatewayConfig(FixtureUpstream(answers), CitationVerifier())

    folder = Path(index.path).parent
    with (
        Service(postgres_url, index, workers=False, gateway=gateway(folder)) as one,
        Service(postgres_url, index, workers=False, gateway=gateway(folder)) as two,
        httpx.Client(timeout=30) as client,
    ):
        key = one.key()
        for service in (one, two):
            client.post(
                service.url + "/v1/chat/completions", json=_request(HALF), headers=bearer(key)
            )
        # Each instance writes its own rows in the background (within ~50 ms); a read flushes
        # only the instance that answers it.
        one.app.state.decisions.flush()
        logged = client.get(two.url + "/api/decisions", headers=bearer(key)).json()
        daily = client.get(one.url + "/api/decisions/daily", headers=bearer(key)).json()
        assert one.app.state.decisions.prune() == 0
    assert logged["pagination"]["total"] == 2
    assert {d["verdict"] for d in logged["decisions"]} == {"allow"}
    assert daily["days"][0]["total"] == 2


def test_cancelling_while_workers_end_jobs_of_the_same_key_never_fails(postgres_url, index):
    # A cancel settles tokens on the key's row; a worker ending a job locks that job, then the
    # key's row. Locking job by job made the two wait for each other (PostgreSQL then aborts
    # one with a deadlock error: a 503, seen once in CI). Every cancel here answers, and the
    # tokens add up. The race is narrow: this test did not reproduce it on the old code in
    # three runs here; it holds the behaviour, the lock order in JobStore.cancel is the fix.
    with Service(postgres_url, index, poll_interval=0.01) as service:
        key = service.key(tokens=400)
        with httpx.Client(base_url=service.url, timeout=30) as client:
            documents = []
            for _ in range(20):
                submitted = client.post(
                    "/api/verify-reference",
                    json={"references": [f"{KUHN} [{n}]" for n in range(20)]},
                    headers=bearer(key),
                ).json()
                cancelled = client.post(
                    "/api/verify-reference/cancel",
                    json={"documentId": submitted["documentId"]},
                    headers=bearer(key),
                )
                assert cancelled.status_code == 200, cancelled.text
                documents.append(submitted["jobIds"])
            jobs = [j for ids in documents for j in wait_done(client, key, ids, timeout=120)]
            balance = client.get("/api/verify-reference/balance", headers=bearer(key)).json()
    spent = sum(1 for j in jobs if j["state"] == "completed")
    assert balance["pendingTokens"] == 0
    assert balance["totalAvailable"] == 400 - spent
