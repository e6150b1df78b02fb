"""``citeverify keys`` and ``citeverify serve`` as a user runs them: real processes, real HTTP."""

import os
import signal
import subprocess
import sys
import time

import httpx
import pytest
from typer.testing import CliRunner

from citeverify_core.cli.app import app
from tests.support.service import (
    KUHN,
    bearer,
    build_index,
    free_port,
    serve_refusal,
    wait_done,
    wait_up,
)

runner = CliRunner()

# Shared with the other tests that start `serve` (tests/support/service.py).
_free_port, _wait_up = free_port, wait_up


def test_keys_create_prints_the_key_once_and_stores_only_its_hash(tmp_path):
    db = str(tmp_path / "service.sqlite")
    created = runner.invoke(app, ["keys", "create", "--name", "alice", "--tokens", "5", "--db", db])
    assert created.exit_code == 0, created.output
    key = created.stdout.strip().splitlines()[0]
    assert key.startswith("cvk_") and len(key) > 40
    assert key not in (tmp_path / "service.sqlite").read_bytes().decode("latin-1")
    listed = runner.invoke(app, ["keys", "list", "--db", db])
    assert "alice" in listed.stdout and key not in listed.stdout and key[:12] in listed.stdout
    added = runner.invoke(app, ["keys", "add-tokens", "alice", "7", "--db", db])
    assert "12 tokens" in added.stdout
    revoked = runner.invoke(app, ["keys", "revoke", key[:12], "--db", db])
    assert "revoked" in revoked.stdout
    unknown = runner.invoke(app, ["keys", "revoke", "nobody", "--db", db])
    assert unknown.exit_code == 2 and "no API key 'nobody'" in unknown.output
    negative = runner.invoke(app, ["keys", "create", "--name", "x", "--tokens", "-1", "--db", db])
    assert negative.exit_code == 2 and "tokens" in negative.output


def _serve(db, index, port, *extra):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "citeverify_core", "serve", "--port", str(port), "--db", db,
         "--index", str(index), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip


def _wait_down(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx.get(url + "/healthz", timeout=1)
        except httpx.ConnectError:
            return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError("the killed citeverify serve's processes still listen")


@pytest.fixture
def index_file(tmp_path):
    index = build_index(tmp_path)
    index.close()
    return tmp_path / "index.sqlite"


def test_serve_answers_the_seeds_calls_and_survives_kill_9(tmp_path, index_file):
    db = str(tmp_path / "service.sqlite")
    key = runner.invoke(app, ["keys", "create", "--name", "t", "--tokens", "100", "--db", db])
    key = key.stdout.strip().splitlines()[0]
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    first = _serve(db, index_file, port, "--no-workers")  # jobs wait: the kill finds them queued
    try:
        _wait_up(url, first)
        submitted = httpx.post(
            url + "/api/verify-reference", json={"references": [KUHN] * 20}, headers=bearer(key)
        ).json()
        assert len(submitted["jobIds"]) == 20
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        first.stdout.close()
        first.stderr.close()
    # The killed command's worker processes end on their own (they are told when it dies), and
    # may answer for a moment more: the second command is started once nothing listens.
    _wait_down(url)
    second = _serve(db, index_file, port)
    try:
        _wait_up(url, second)
        with httpx.Client(base_url=url, timeout=30) as client:
            jobs = wait_done(client, key, submitted["jobIds"])
            assert [j["state"] for j in jobs] == ["completed"] * 20
            balance = client.get("/api/verify-reference/balance", headers=bearer(key)).json()
            assert (balance["totalAvailable"], balance["pendingTokens"]) == (80, 0)
    finally:
        second.send_signal(signal.SIGTERM)  # a graceful stop
        # uvicorn shuts down, then re-raises the signal: a -SIGTERM status is its clean exit.
        assert second.wait(timeout=30) in {0, -signal.SIGTERM}
        log = second.stderr.read().decode()
        second.stdout.close()
        second.stderr.close()
    assert "Finished server process" in log
    assert key not in log  # keys are never logged


def test_serve_without_an_index_is_one_clear_error(tmp_path):
    result = runner.invoke(
        app, ["serve", "--db", str(tmp_path / "s.sqlite"), "--index", str(tmp_path / "none")]
    )
    assert result.exit_code == 2
    assert "no index at" in result.output


def test_serve_upstream_fixture_runs_the_seeds_gateway_example(tmp_path):
    # The guard API's example against `citeverify serve --upstream fixture:...`, as the README shows.
    from tests.service.test_gateway_service import REQUEST, SEED_POLICY

    answers = tmp_path / "answers.json"
    answers.write_text('{"answer": "\\"The museum opens at nine.\\""}')
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "citeverify_core", "serve", "--port", str(port),
         "--db", str(tmp_path / "s.sqlite"), "--index", str(tmp_path / "none"),
         "--upstream", f"fixture:{answers}", "--policy", str(SEED_POLICY)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    try:
        _wait_up(url, process)
        answer = httpx.post(url + "/v1/chat/completions", json=REQUEST, timeout=30)
        assert answer.status_code == 200
        assert answer.json()["verdictan"]["decision"]["reason_code"] == "citation.verified"
        unrelated = {**REQUEST, "verdictan": {"context_documents": [{"content": "Bats fly."}]}}
        blocked = httpx.post(url + "/v1/chat/completions", json=unrelated, timeout=30)
        assert blocked.status_code == 400
        assert blocked.json()["error"]["code"] == "content_policy_violation"
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        process.stdout.close()
        process.stderr.close()


@pytest.mark.parametrize("size", ["0", "-1", "51", "nan"])
def test_serve_refuses_a_document_limit_it_cannot_keep(tmp_path, size):
    result = serve_refusal(tmp_path, "--max-document-mb", size)
    assert result.exit_code == 2
    assert "--max-document-mb" in result.output


def test_serve_s_document_limit_reaches_the_route_and_its_limits(tmp_path):
    # What `serve --max-document-mb 0.5` builds: the limits the page shows, and 413 above them.
    from citeverify_core.service.serve import ServeOptions, build_app
    from tests.support.service import Service

    options = ServeOptions(
        db=str(tmp_path / "jobs.sqlite"),
        index=str(tmp_path / "none"),
        sources=[],
        jobs=False,
        upstream="http://127.0.0.1:9/v1",
        max_document_bytes=512 * 1024,
    )
    assert build_app(options).state.documents.max_bytes == 512 * 1024
    with Service(tmp_path / "served.sqlite", build_index(tmp_path), workers=False,
                 max_document_bytes=512 * 1024) as service:  # fmt: skip
        key = service.key(tokens=5)
        with httpx.Client(base_url=service.url, timeout=30) as client:
            limits = client.get("/api/verify-document/limits", headers=bearer(key)).json()
            assert limits["maxBytes"] == 512 * 1024
            big = b"References\n" + b"x" * (600 * 1024)
            response = client.post(
                "/api/verify-document",
                files={"file": ("paper.md", big, "text/markdown")},
                headers=bearer(key),
            )
            assert response.status_code == 413
