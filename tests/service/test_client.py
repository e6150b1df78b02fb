"""citeverify_core.client against the real service over loopback, and against servers that misbehave.

Choice documented in citeverify_core.client: more than 20 references in one ``submit`` are refused by
the client (InputError, nothing sent); ``verify`` splits them into submissions of 20.
"""

import json
import socket

import httpx
import pytest
from typer.testing import CliRunner

from citeverify_core import (
    AuthenticationError,
    InputError,
    InsufficientTokensError,
    PermissionDeniedError,
    RateLimitError,
    ServiceError,
    ServiceUnavailableError,
)
from citeverify_core.cli.app import app
from citeverify_core.client import (
    AsyncReferenceClient,
    Job,
    ReferenceClient,
    Submission,
    WaitTimeoutError,
)
from citeverify_core.references import ReferenceResult
from tests.support.loopback import Loopback, Reply
from tests.support.service import FAKE, KUHN, LECUN_WRONG_YEAR, Service, build_index

STATUSES = ["verified", "verified-with-error", "unverified"]


@pytest.fixture(scope="module")
def index_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("index")
    build_index(folder).close()
    return folder


@pytest.fixture
def index(index_folder):
    local = build_index(index_folder)
    yield local
    local.close()


@pytest.fixture
def service(tmp_path, index):
    with Service(tmp_path / "jobs.sqlite", index) as running:
        yield running


@pytest.fixture
def idle(tmp_path, index):
    """A service without workers: jobs stay waiting."""
    with Service(tmp_path / "idle.sqlite", index, workers=False) as running:
        yield running


@pytest.fixture(autouse=True)
def _no_key_in_env(monkeypatch):
    monkeypatch.delenv("CITEVERIFY_API_KEY", raising=False)


def closed_port_url():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # never listened: connections are refused
    return f"http://127.0.0.1:{port}"


# --- the service's calls, typed ----------------------------------------------------------------


def test_sync_submit_wait_balance_history(service):
    key = service.key(tokens=10)
    with ReferenceClient(service.url, api_key=key) as client:
        submission = client.submit([KUHN, LECUN_WRONG_YEAR, FAKE], title="paper")
        assert isinstance(submission, Submission)
        assert len(submission.job_ids) == 3 and submission.tokens_available == 7
        assert client.balance()["pendingTokens"] == 3
        seen = []
        jobs = client.wait(
            submission.job_ids, timeout=60, poll=0.05, progress=lambda d, t: seen.append((d, t))
        )
        assert all(isinstance(job, Job) and job.done for job in jobs)
        assert [job.id for job in jobs] == list(submission.job_ids)
        assert [job.state for job in jobs] == ["completed"] * 3
        assert all(isinstance(job.result, ReferenceResult) for job in jobs)
        assert [job.result.status for job in jobs] == STATUSES
        assert jobs[1].result.field_results["year"] == "CONTRADICTION"
        assert jobs[0].result.verificationGraph["citationId"] == "cit_1"
        assert seen[-1] == (3, 3)
        balance = client.balance()
        assert (balance["totalAvailable"], balance["pendingTokens"]) == (7, 0)
        history = client.history(limit=5)
        assert history["pagination"]["total"] == 1
        (document,) = history["documents"]
        assert document["id"] == submission.document_id and document["title"] == "paper"
        assert client.history(limit=5, offset=1)["documents"] == []


def test_verify_splits_more_than_20_references_and_keeps_their_order(service):
    key = service.key(tokens=30)
    references = [KUHN] * 20 + [LECUN_WRONG_YEAR, FAKE]
    with ReferenceClient(service.url, api_key=key) as client:
        results = client.verify(references, timeout=60)
        assert [r.status for r in results] == ["verified"] * 20 + STATUSES[1:]
        assert client.history()["pagination"]["total"] == 2
        assert client.balance()["totalAvailable"] == 8


@pytest.mark.asyncio
async def test_async_submit_wait_verify_balance_history(service):
    key = service.key(tokens=10)
    async with AsyncReferenceClient(service.url, api_key=key) as client:
        submission = await client.submit([KUHN, LECUN_WRONG_YEAR, FAKE])
        assert submission.tokens_available == 7
        jobs = await client.wait(submission.job_ids, timeout=60, poll=0.05)
        assert [job.result.status for job in jobs] == STATUSES
        assert all(isinstance(job.result, ReferenceResult) for job in jobs)
        results = await client.verify([FAKE, KUHN], timeout=60)
        assert [r.status for r in results] == ["unverified", "verified"]
        assert (await client.balance())["totalAvailable"] == 5
        assert (await client.history())["pagination"]["total"] == 2


def test_results_of_more_than_50_ids_are_polled_50_at_a_time(service):
    key = service.key()
    ids = [str(900_000 + i) for i in range(60)]
    with ReferenceClient(service.url, api_key=key) as client:
        jobs = client.results(ids)
    assert [job.id for job in jobs] == ids
    assert {job.state for job in jobs} == {"not-found"}
    assert all(job.result is None and job.done for job in jobs)


def test_cancel_refunds_and_the_cancelled_jobs_are_failed(idle):
    key = idle.key(tokens=10)
    with ReferenceClient(idle.url, api_key=key) as client:
        submission = client.submit([KUHN, FAKE])
        assert submission.tokens_available == 8
        cancel = client.cancel(document_id=submission.document_id)
        assert (cancel["cancelledJobs"], cancel["refundedTokens"]) == (2, 2)
        assert client.balance()["totalAvailable"] == 10
        jobs = client.wait(submission.job_ids, timeout=5)
        assert [(job.state, job.error, job.result) for job in jobs] == [
            ("failed", "cancelled", None)
        ] * 2
        again = client.submit([KUHN])
        assert client.cancel(job_ids=again.job_ids)["refundedTokens"] == 1
        with pytest.raises(InputError):
            client.cancel()


@pytest.mark.asyncio
async def test_async_cancel(idle):
    key = idle.key(tokens=3)
    async with AsyncReferenceClient(idle.url, api_key=key) as client:
        submission = await client.submit([KUHN, FAKE, LECUN_WRONG_YEAR])
        cancel = await client.cancel(document_id=submission.document_id)
        assert cancel["refundedTokens"] == 3
        assert (await client.balance())["totalAvailable"] == 3


def test_wait_times_out_with_the_last_states(idle):
    key = idle.key(tokens=2)
    with ReferenceClient(idle.url, api_key=key) as client:
        submission = client.submit([KUHN])
        with pytest.raises(WaitTimeoutError) as caught:
            client.wait(submission.job_ids, timeout=0.3, poll=0.05)
        assert isinstance(caught.value, TimeoutError) and isinstance(caught.value, ServiceError)
        assert [job.state for job in caught.value.jobs] == ["waiting"]
        with pytest.raises(WaitTimeoutError):
            client.verify([FAKE], timeout=0.2)


@pytest.mark.asyncio
async def test_async_wait_times_out(idle):
    key = idle.key(tokens=1)
    async with AsyncReferenceClient(idle.url, api_key=key) as client:
        submission = await client.submit([KUHN])
        with pytest.raises(TimeoutError):
            await client.wait(submission.job_ids, timeout=0.2, poll=0.05)


def test_the_api_key_comes_from_the_environment(service, monkeypatch):
    key = service.key(tokens=4)
    monkeypatch.setenv("CITEVERIFY_API_KEY", key)
    with ReferenceClient(service.url) as client:
        assert client.balance()["totalAvailable"] == 4
        assert key not in repr(client)


# --- errors from the real service ---------------------------------------------------------------


def test_401_without_a_key_and_with_a_wrong_one(service):
    with ReferenceClient(service.url) as client, pytest.raises(AuthenticationError) as caught:
        client.balance()
    assert (caught.value.status, caught.value.code) == (401, "invalid_api_key")
    wrong = "cvk_" + "a" * 43
    with ReferenceClient(service.url, api_key=wrong) as client:
        with pytest.raises(AuthenticationError) as caught:
            client.submit([KUHN])
        assert wrong not in str(caught.value) and wrong not in repr(client)


def test_403_for_a_revoked_key(service):
    key = service.key()
    service.store.revoke_key(service.store.authenticate(key)["id"])
    with (
        ReferenceClient(service.url, api_key=key) as client,
        pytest.raises(PermissionDeniedError) as caught,
    ):
        client.submit([KUHN])
    assert (caught.value.status, caught.value.code) == (403, "revoked_api_key")
    assert key not in str(caught.value)


def test_402_when_short_of_tokens(service):
    key = service.key(tokens=2)
    with ReferenceClient(service.url, api_key=key) as client:
        with pytest.raises(InsufficientTokensError) as caught:
            client.submit([KUHN, FAKE, LECUN_WRONG_YEAR])
        assert (caught.value.needed, caught.value.available) == (3, 2)
        assert caught.value.status == 402
        # verify() cancels (refunds) the submissions it made before the one refused.
        with pytest.raises(InsufficientTokensError):
            client.verify([KUHN] * 21)
        assert client.balance()["totalAvailable"] == 2


def test_400_21_references_are_refused_before_sending_and_bad_ones_by_the_service(service):
    key = service.key(tokens=30)
    with ReferenceClient(service.url, api_key=key) as client:
        with pytest.raises(InputError, match="1 to 20"):
            client.submit([KUHN] * 21)
        with pytest.raises(InputError, match="single string"):
            client.submit(KUHN)
        with pytest.raises(InputError):
            client.submit([])
        with pytest.raises(InputError, match="surrogate"):
            client.submit(["\ud800"])
        with pytest.raises(InputError) as caught:  # the service's 400, its message
            client.submit(["x" * 1201])
        assert "references" in str(caught.value)
        with pytest.raises(InputError):
            client.history(limit=51)
        assert client.balance()["totalAvailable"] == 30


def test_429_after_10_unauthenticated_calls_carries_retry_after(service):
    with ReferenceClient(service.url) as client:
        for _ in range(10):
            with pytest.raises(AuthenticationError):
                client.balance()
        with pytest.raises(RateLimitError) as caught:
            client.balance()
    assert caught.value.status == 429 and caught.value.code == "rate_limited"
    assert 1 <= caught.value.retry_after <= 60


@pytest.mark.asyncio
async def test_async_errors_map_the_same(service):
    key = service.key(tokens=1)
    async with AsyncReferenceClient(service.url, api_key=key) as client:
        with pytest.raises(InsufficientTokensError):
            await client.submit([KUHN, FAKE])
        with pytest.raises(InputError):
            await client.submit([KUHN] * 21)
    async with AsyncReferenceClient(service.url) as client:
        with pytest.raises(AuthenticationError):
            await client.balance()


# --- a service that is not there, or not the API -----------------------------------------------


def test_a_closed_port_is_service_unavailable():
    url = closed_port_url()
    with (
        ReferenceClient(url, api_key="cvk_secret") as client,
        pytest.raises(ServiceUnavailableError) as caught,
    ):
        client.submit([KUHN])
    assert caught.value.status == 0 and url in str(caught.value)
    assert "cvk_secret" not in str(caught.value)


@pytest.mark.asyncio
async def test_a_closed_port_is_service_unavailable_async():
    async with AsyncReferenceClient(closed_port_url(), api_key="cvk_x") as client:
        with pytest.raises(ServiceUnavailableError):
            await client.balance()


GARBAGE = {
    "text": Reply(200, "hello", {"Content-Type": "text/plain"}),
    "html": Reply(200, "<html><body>Welcome</body></html>", {"Content-Type": "text/html"}),
    "json-list": Reply(200, [1, 2, 3]),
    "json-null": Reply(200, b"null", {"Content-Type": "application/json"}),
    "empty": Reply(200, b""),
    "truncated-json": Reply(200, b'{"jobIds": [', {"Content-Type": "application/json"}),
    "not-utf8": Reply(200, b"\xff\xfe{", {"Content-Type": "application/json"}),
    "deep-json": Reply(200, b"[" * 100_000 + b"]" * 100_000),
    "wrong-object": Reply(200, {"hello": "world"}),
    "ids-not-a-list": Reply(200, {"jobIds": "1", "documentId": "d", "message": "m"}),
    "too-few-ids": Reply(200, {"jobIds": [], "documentId": "d", "message": "m"}),
    "redirect": Reply(307, b"", {"Location": "https://elsewhere.example/api"}),
    "html-502": Reply(502, "<html>Bad Gateway</html>", {"Content-Type": "text/html"}),
}


@pytest.mark.parametrize("reply", GARBAGE.values(), ids=GARBAGE.keys())
def test_garbage_answers_are_service_unavailable(reply):
    with Loopback() as server, ReferenceClient(server.url, api_key="cvk_k") as client:
        server.routes[("*", "/api/verify-reference")] = reply
        with pytest.raises(ServiceUnavailableError) as caught:
            client.submit([KUHN])
    assert "Traceback" not in str(caught.value)


JOB_GARBAGE = {
    "jobs-not-a-list": {"jobs": {"id": "1"}},
    "job-not-an-object": {"jobs": ["1"]},
    "unknown-state": {"jobs": [{"id": "1", "state": "exploded"}]},
    "missing-job": {"jobs": [{"id": "2", "state": "waiting"}]},
    "error-not-a-string": {"jobs": [{"id": "1", "state": "failed", "error": 5}]},
    "bad-result": {"jobs": [{"id": "1", "state": "completed", "result": {"status": "great"}}]},
    "result-a-list": {"jobs": [{"id": "1", "state": "completed", "result": []}]},
}


@pytest.mark.parametrize("body", JOB_GARBAGE.values(), ids=JOB_GARBAGE.keys())
def test_wrong_shaped_results_are_service_unavailable(body):
    with Loopback() as server, ReferenceClient(server.url) as client:
        server.routes[("POST", "/api/verify-reference/results")] = Reply(200, body)
        with pytest.raises(ServiceUnavailableError, match="not the API"):
            client.results(["1"])


@pytest.mark.asyncio
@pytest.mark.parametrize("reply", [GARBAGE["html"], GARBAGE["json-list"], GARBAGE["text"]])
async def test_garbage_answers_are_service_unavailable_async(reply):
    with Loopback() as server:
        server.routes[("*", "/api/verify-reference/balance")] = reply
        async with AsyncReferenceClient(server.url, api_key="cvk_k") as client:
            with pytest.raises(ServiceUnavailableError):
                await client.balance()


def test_other_statuses_keep_their_status_and_code():
    with Loopback() as server, ReferenceClient(server.url, api_key="cvk_k") as client:
        server.routes[("GET", "/api/verify-reference/balance")] = Reply(
            500, {"error": {"code": "internal_error", "message": "boom"}}
        )
        with pytest.raises(ServiceError) as caught:
            client.balance()
        assert (caught.value.status, caught.value.code, str(caught.value)) == (
            500,
            "internal_error",
            "boom",
        )
        assert not isinstance(caught.value, ServiceUnavailableError)
        server.routes[("GET", "/api/verify-reference/balance")] = Reply(
            503, {"error": {"code": "store_unavailable", "message": "db down"}}
        )
        with pytest.raises(ServiceUnavailableError) as caught:
            client.balance()
        assert (caught.value.status, caught.value.code) == (503, "store_unavailable")
        with pytest.raises(ServiceError) as caught:  # a wrong base URL: 404 of another server
            client.history()
        assert caught.value.status == 404
        server.routes[("POST", "/api/verify-reference")] = Reply(
            429, {"error": {"code": "rate_limited", "message": "slow down"}}, {"Retry-After": "7"}
        )
        with pytest.raises(RateLimitError) as caught:
            client.submit([KUHN])
        assert caught.value.retry_after == 7.0
        server.routes[("POST", "/api/verify-reference")] = Reply(
            413, {"error": {"code": "body_too_large", "message": "too big"}}
        )
        with pytest.raises(ServiceError) as caught:
            client.submit([KUHN])
        assert (caught.value.status, caught.value.code) == (413, "body_too_large")
        server.routes[("POST", "/api/verify-reference")] = Reply(400, "<html>no</html>")
        with pytest.raises(InputError, match="HTTP 400"):
            client.submit([KUHN])


def test_a_slow_service_times_out_as_unavailable():
    with Loopback() as server, ReferenceClient(server.url, timeout=0.2) as client:
        server.routes[("GET", "/api/verify-reference/balance")] = Reply(200, {}, delay=1.0)
        with pytest.raises(ServiceUnavailableError, match="timed out"):
            client.balance()


def test_the_key_never_shows_even_when_a_server_echoes_it():
    key = "cvk_" + "s" * 43

    def echo(seen):
        return Reply(200, f"your header was {seen.headers.get('Authorization')}")

    with Loopback() as server, ReferenceClient(server.url, api_key=key) as client:
        server.routes[("*", "/api/verify-reference/balance")] = echo
        with pytest.raises(ServiceUnavailableError) as caught:
            client.balance()
        assert server.seen[-1].headers["Authorization"] == f"Bearer {key}"
    assert key not in str(caught.value) and "***" in str(caught.value)
    assert key not in repr(client)


def test_bad_arguments_are_input_errors():
    with pytest.raises(InputError):
        ReferenceClient("ftp://example.org")
    with pytest.raises(InputError):
        ReferenceClient("not a url")
    with pytest.raises(InputError):
        ReferenceClient("http://127.0.0.1:1", timeout=0)
    with pytest.raises(InputError):
        ReferenceClient("http://127.0.0.1:1", api_key="cvk_\nx")
    with ReferenceClient("http://127.0.0.1:1") as client:
        with pytest.raises(InputError):
            client.wait(["1"], timeout=-1)
        with pytest.raises(InputError):
            client.verify([])


def test_an_injected_httpx_client_is_used_and_left_open(service):
    key = service.key(tokens=3)
    with httpx.Client() as http:
        with ReferenceClient(service.url + "/", api_key=key, client=http) as client:
            assert client.balance()["totalAvailable"] == 3
        assert not http.is_closed
        assert "Authorization" not in http.headers


# --- the command line: refs --server ------------------------------------------------------------

runner = CliRunner()


def test_cli_refs_server_prints_what_local_mode_prints(service, index_folder, tmp_path):
    key = service.key(tokens=20)
    refs = tmp_path / "refs.txt"
    refs.write_text(f"References\n{KUHN}\n{LECUN_WRONG_YEAR}\n\n{FAKE}\n")
    local = runner.invoke(app, ["refs", str(refs), "--index", str(index_folder / "index.sqlite")])
    remote = runner.invoke(app, ["refs", str(refs), "--server", service.url, "--api-key", key])
    assert local.exit_code == remote.exit_code == 1, remote.output
    assert remote.stdout == local.stdout
    assert "VERIFIED-WITH-ERROR" in remote.stdout and "fields that differ: year" in remote.stdout
    local_json = runner.invoke(
        app, ["refs", str(refs), "--index", str(index_folder / "index.sqlite"), "--json"]
    )
    remote_json = runner.invoke(
        app,
        ["refs", str(refs), "--server", service.url, "--json"],
        env={"CITEVERIFY_API_KEY": key},
    )
    assert remote_json.exit_code == 1, remote_json.output
    mine, theirs = json.loads(remote_json.stdout), json.loads(local_json.stdout)
    assert [r["status"] for r in mine] == STATUSES
    for left, right in zip(mine, theirs, strict=True):
        assert {k: v for k, v in left.items() if k != "verificationGraph"} == {
            k: v for k, v in right.items() if k != "verificationGraph"
        }
    assert service.store.balance(service.store.authenticate(key)["id"])["totalAvailable"] == 14


def test_cli_refs_server_all_verified_exits_0(service, tmp_path):
    key = service.key(tokens=5)
    refs = tmp_path / "refs.txt"
    refs.write_text(KUHN + "\n")
    r = runner.invoke(app, ["refs", str(refs), "--server", service.url, "--api-key", key])
    assert r.exit_code == 0, r.output
    assert r.stdout.split()[:2] == ["1.", "VERIFIED"]


def test_cli_refs_server_errors_are_one_line_and_never_show_the_key(service, tmp_path):
    refs = tmp_path / "refs.txt"
    refs.write_text(KUHN + "\n")
    wrong = "cvk_" + "w" * 43
    r = runner.invoke(app, ["refs", str(refs), "--server", service.url, "--api-key", wrong])
    assert r.exit_code == 2
    assert "invalid API key" in r.output and wrong not in r.output
    short = runner.invoke(
        app, ["refs", str(refs), "--server", service.url, "--api-key", service.key(tokens=0)]
    )
    assert short.exit_code == 2 and "token" in short.output
    down = runner.invoke(app, ["refs", str(refs), "--server", closed_port_url(), "--api-key", "k"])
    assert down.exit_code == 2 and "cannot be reached" in down.output
    both = runner.invoke(app, ["refs", str(refs), "--server", service.url, "--source", "openalex"])
    assert both.exit_code == 2 and "--source" in both.output


def test_cli_refs_server_shows_failed_jobs_as_needs_human(tmp_path):
    refs = tmp_path / "refs.txt"
    refs.write_text(KUHN + "\n")
    with Loopback() as server:
        server.routes[("POST", "/api/verify-reference")] = Reply(
            200, {"jobIds": ["7"], "documentId": "d", "message": "queued", "tokensAvailable": 1}
        )
        server.routes[("POST", "/api/verify-reference/results")] = Reply(
            200,
            {"jobs": [{"id": "7", "state": "failed", "error": "worker lost", "progress": None}]},
        )
        r = runner.invoke(app, ["refs", str(refs), "--server", server.url, "--api-key", "cvk_k"])
    assert r.exit_code == 1, r.output
    assert "NEEDS-HUMAN" in r.stdout and "worker lost" in r.stdout


# --- the core's body reader and Retry-After rule ---------------------------------------------------


BALANCE = "/api/verify-reference/balance"


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_compressed_answers_are_read_and_bombs_are_bounded(asynchronous):
    import asyncio
    import gzip

    def balance(server_url):
        if not asynchronous:
            with ReferenceClient(server_url, api_key="cvk_k") as client:
                return client.balance()

        async def run():
            async with AsyncReferenceClient(server_url, api_key="cvk_k") as client:
                return await client.balance()

        return asyncio.run(run())

    zipped = {"Content-Encoding": "gzip", "Content-Type": "application/json"}
    with Loopback() as server:
        server.routes[("GET", BALANCE)] = Reply(
            200, gzip.compress(json.dumps({"totalAvailable": 3}).encode()), zipped
        )
        assert balance(server.url) == {"totalAvailable": 3}
        assert "gzip" in server.seen[-1].headers["Accept-Encoding"]
        bomb = gzip.compress(b" " * (33 * 1024 * 1024))  # 33 MB of spaces in 33 KB
        server.routes[("GET", BALANCE)] = Reply(200, bomb, zipped)
        with pytest.raises(ServiceUnavailableError, match="more than"):
            balance(server.url)
        server.routes[("GET", BALANCE)] = Reply(200, b"{}", {"Content-Encoding": "br"})
        with pytest.raises(ServiceUnavailableError, match="cannot be read"):
            balance(server.url)
        server.routes[("GET", BALANCE)] = Reply(200, b"not gzip", zipped)
        with pytest.raises(ServiceUnavailableError, match="corrupt compression"):
            balance(server.url)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("7", 7.0), ("1.5", 60.0), ("soon", 60.0), ("9" * 400, 86400.0), ("", 60.0)],
    ids=["seconds", "fraction", "words", "huge", "empty"],
)
def test_retry_after_follows_the_cores_rule(value, seconds):
    limited = {"error": {"code": "rate_limited", "message": "slow down"}}
    with Loopback() as server, ReferenceClient(server.url, api_key="cvk_k") as client:
        server.routes[("GET", BALANCE)] = Reply(429, limited, {"Retry-After": value})
        with pytest.raises(RateLimitError) as caught:
            client.balance()
    assert caught.value.retry_after == seconds
