"""``citeverify serve --workers 2``: two processes on one port, sharing one database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from citeverify_core.cli.app import app
from tests.service.test_gateway_service import SEED_POLICY
from tests.service.test_service_cli import _free_port, _wait_up
from tests.support.pg import postgres_url  # noqa: F401 (a fixture)
from tests.support.service import build_index

runner = CliRunner()


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "service.sqlite")
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def served(tmp_path: Path, db: str) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    index = build_index(tmp_path)
    index.close()
    policies = tmp_path / "policies"
    policies.mkdir()
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "CITEVERIFY_TEST_PROCESS_HEADER": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "citeverify_core", "serve", "--port", str(port), "--db", db,
         "--index", str(tmp_path / "index.sqlite"), "--workers", "2",
         "--policy-dir", str(policies), "--shutdown-timeout", "5"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    try:
        _wait_up(url, process, timeout=120)  # two processes importing on a busy machine
        yield url, process, policies
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()
        process.stderr.close()


def _many(url: str, path: str, n: int, **kwargs: object) -> list[httpx.Response]:
    """``n`` concurrent requests, each on its own connection (spread over the processes)."""

    def one(_: int) -> httpx.Response:
        with httpx.Client(timeout=30) as client:
            return client.get(url + path, **kwargs)  # type: ignore[arg-type]

    with ThreadPoolExecutor(16) as pool:
        return list(pool.map(one, range(n)))


def _pids_answering(url: str, key: str, until: float = 30) -> set[str]:
    deadline = time.monotonic() + until
    pids: set[str] = set()
    while len(pids) < 2 and time.monotonic() < deadline:
        for answer in _many(url, "/api/policies", 64, headers={"Authorization": f"Bearer {key}"}):
            assert answer.status_code == 200
            pids.add(answer.headers["x-citeverify-process"])
    return pids


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone as far as the service goes.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def test_two_processes_share_the_port_the_rate_limit_and_the_policy_packs(served, db):
    url, process, policies = served
    created = runner.invoke(app, ["keys", "create", "--name", "t", "--tokens", "5", "--db", db])
    key = created.stdout.strip().splitlines()[0]

    pids = _pids_answering(url, key)
    assert len(pids) == 2 and str(process.pid) not in pids

    # The unauthenticated limit (10 a minute per address) is one count for both processes.
    statuses = []
    for _ in range(11):
        with httpx.Client(timeout=30) as client:  # a new connection: either process
            statuses.append(client.get(url + "/api/verify-reference/balance").status_code)
    assert statuses == [401] * 10 + [429]

    # A policy pack added to the folder is seen by every process.
    (policies / "strict.yaml").write_text(SEED_POLICY.read_text())
    deadline = time.monotonic() + 30
    seen: dict[str, bool] = {}
    while time.monotonic() < deadline:
        for answer in _many(url, "/api/policies", 32, headers={"Authorization": f"Bearer {key}"}):
            names = [p["name"] for p in answer.json()["policies"]]
            seen[answer.headers["x-citeverify-process"]] = "strict" in names
        if len(seen) == 2 and all(seen.values()):
            break
        time.sleep(0.2)
    assert seen == dict.fromkeys(pids, True)

    # SIGTERM to the command ends every process.
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) in {0, -signal.SIGTERM}
    deadline = time.monotonic() + 10
    while any(_alive(int(pid)) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(int(pid)) for pid in pids)


def test_no_workers_is_still_accepted_as_no_jobs(tmp_path):
    result = runner.invoke(
        app,
        ["serve", "--no-workers", "--db", str(tmp_path / "s.sqlite"), "--index", "/nonexistent"],
    )
    # Parsed (not "no such option"); the missing index is the error.
    assert result.exit_code == 2
    assert "no index at" in result.output
    assert "No such option" not in result.output
