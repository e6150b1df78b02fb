"""``citeverify batch --engine ray`` as users start it: ``uv run``, the venv's script, ``python -m``.

Each run is a separate process with its output captured, as a CI job or a script would run it:

- It finishes (under ``uv run``, Ray's uv hook would otherwise start every worker in a new
  environment without Ray, and the job would wait at ``ray::IDLE`` for ever), and writes the
  local engine's bytes.
- Nothing of the Ray instance it started is left once it has returned: no process of its
  session (Ray's processes stay in the session of the command that started them), and no
  watchdog.
- Stopped mid-run by SIGTERM (sent to ``uv run``, which passes it on) or by a Ctrl-C (SIGINT to
  the whole process group), it ends, its output is closed, and no process of the instance is
  left a few seconds later (the watchdog stops what Ray's shutdown leaves). Mid-run by
  construction, not by timing: a record's lookup waits on a loopback Crossref that answers only
  once the test says so, so the run cannot end before it is stopped, however busy the machine.

One Ray start per test: slow (seconds each), so the input is small and there are five. The
watchdog itself is tested without Ray: it stops what is below the processes it was told of,
orphans included, and kills what ignores SIGTERM.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import citeverify_core.batch.ray_watchdog as _ray_watchdog
from citeverify_core.batch import run_batch
from tests.batch.test_batch import (  # noqa: F401 - _unix_sockets: an autouse fixture
    _unix_sockets,
    make_records,
    write_jsonl,
)
from tests.support.loopback import Loopback, Reply, Seen

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="the ray extra")

ROOT = Path(__file__).resolve().parents[2]
UV = os.environ.get("UV") or shutil.which("uv")  # `uv run` names itself in $UV


def _launch(how: str) -> list[str]:
    if how == "uv run":
        if UV is None:
            pytest.skip("uv is not installed")
        return [UV, "run", "--frozen", "citeverify"]
    if how == "venv script":
        script = Path(sys.executable).parent / "citeverify"
        if not script.exists():
            pytest.skip(f"no citeverify script next to {sys.executable}")
        return [str(script)]
    return [sys.executable, "-m", "citeverify_core"]


def _environment() -> dict[str, str]:
    """This environment without what would steer Ray away from what a user gets by default."""
    drop = {"RAY_ADDRESS", "RAY_ENABLE_UV_RUN_RUNTIME_ENV"}
    return {k: v for k, v in os.environ.items() if k not in drop}


def _stat(pid: int) -> list[bytes] | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return stat[stat.rindex(b")") + 2 :].split()


def _processes() -> Iterator[tuple[int, list[bytes]]]:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None and fields[0] != b"Z":  # a zombie has ended
                yield int(entry.name), fields


def _watchdogs() -> set[int]:
    """The Ray engine's watchdog processes (they run in a session of their own)."""
    found = set()
    for pid, _ in _processes():
        try:
            if b"_ray_watchdog.py" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.add(pid)
        except OSError:
            continue
    return found


def _left(session: int, watchdogs_before: set[int]) -> dict[int, str]:
    """Processes still running from the run whose session is ``session`` (Ray's included: they
    stay in it), and its watchdog."""
    pids = {pid for pid, fields in _processes() if int(fields[3]) == session}
    pids |= _watchdogs() - watchdogs_before
    left = {}
    for pid in pids:
        try:
            left[pid] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
    return left


def _wait_for_none_left(session: int, watchdogs_before: set[int], seconds: float) -> dict[int, str]:
    deadline = time.monotonic() + seconds
    left = _left(session, watchdogs_before)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = _left(session, watchdogs_before)
    return left


@pytest.fixture(scope="module")
def small_input(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """60 records and the local engine's OUTPUT for them."""
    folder = tmp_path_factory.mktemp("launch")
    source = write_jsonl(folder / "in.jsonl", make_records(60, seed=3))
    run_batch(source, folder / "local.jsonl", workers=1, batch_size=20)
    return source, (folder / "local.jsonl").read_bytes()


@needs_ray
@pytest.mark.parametrize("how", ["uv run", "venv script", "python -m"])
def test_ray_engine_finishes_however_launched_and_leaves_no_process(
    tmp_path: Path, small_input: tuple[Path, bytes], how: str
) -> None:
    source, expected = small_input
    out = tmp_path / "ray.jsonl"
    command = [*_launch(how), "batch", str(source), "-o", str(out), "--engine", "ray"]
    command += ["--workers", "2", "--batch-size", "20"]
    watchdogs_before = _watchdogs()
    run = subprocess.Popen(
        command,
        cwd=ROOT,  # `uv run` finds the project here
        env=_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its session: every process it starts, Ray's included
    )
    try:
        stdout, stderr = run.communicate(timeout=300)  # returns once both pipes are closed
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    assert run.returncode == 0, stderr
    assert "60 rows, 0 errors" in stdout
    assert out.read_bytes() == expected
    assert _left(run.pid, watchdogs_before) == {}  # at once: the command waited for them


#: The DOI whose lookup the loopback Crossref holds until the test releases it.
HELD_DOI = "10.5555/held.until.released"


@needs_ray
@pytest.mark.parametrize(
    ("how", "stop"),
    [
        ("uv run", "SIGTERM to the command"),
        pytest.param(
            "python -m",
            "Ctrl-C (SIGINT to the group)",
            marks=pytest.mark.xfail(
                strict=False,
                reason=(
                    "known bug, not fixed (2026-12-08): in the full CI suite (twice; it passes "
                    "alone and with the batch tests) the Ctrl-C was not acted on, and Ray Data "
                    "ran the dataset to its end when the held lookup timed out (127 s); the main "
                    "thread is likely blocked in a call that does not see signals (Ray's "
                    "ray.get and Ctrl-C, ray-project/ray#6923)"
                ),
            ),
        ),
    ],
)
def test_ray_engine_stopped_mid_run_leaves_no_process(tmp_path: Path, how: str, stop: str) -> None:
    # 400 plain records, then one whose DOI lookup is held: rows come back for the first
    # batches, and the run cannot finish while that lookup waits (120 s per call, far beyond
    # the test's window), so it is provably in progress when it is stopped.
    records = make_records(400, seed=4, docs=6)
    records.append(
        {"id": "held", "answer": f"Shown in doi:{HELD_DOI} here.", "context_documents": ["x"]}
    )
    records += make_records(100, seed=5, docs=6)
    source = write_jsonl(tmp_path / "in.jsonl", records)
    out = tmp_path / "ray.jsonl"
    release = threading.Event()

    def held(seen: Seen) -> Reply:
        release.wait(300)
        return Reply(404, "released")

    with Loopback() as crossref:
        crossref.routes[("GET", f"/works/{HELD_DOI}")] = held
        policy = tmp_path / "policy.yaml"
        policy.write_text(
            "policy:\n  citation-verifier:\n    extensions:\n      lookups:\n"
            f"        crossref_base_url: {crossref.url}\n"
            "        timeout: 120\n        deadline: 600\n        retries: 0\n",
            encoding="utf-8",
        )
        command = [*_launch(how), "batch", str(source), "-o", str(out), "--engine", "ray"]
        command += ["--workers", "2", "--batch-size", "50", "--lookups", "--policy", str(policy)]
        watchdogs_before = _watchdogs()
        run = subprocess.Popen(
            command,
            cwd=ROOT,
            env=_environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            # Mid-run: the held lookup has been asked for, so the run cannot end until it is
            # released (or its 120 s call timeout passes). Stopped at once then: waiting for
            # rows to come back too left the held call time out first on a loaded machine
            # (the lowest-versions run), and the run ended by itself.
            deadline = time.monotonic() + 240
            while run.poll() is None and time.monotonic() < deadline:
                if crossref.calls(f"/works/{HELD_DOI}"):
                    break
                time.sleep(0.05)
            assert crossref.calls(f"/works/{HELD_DOI}"), "the held lookup was never asked for"
            assert run.poll() is None, "the run ended while a lookup was held"
            if stop.startswith("SIGTERM"):
                run.send_signal(signal.SIGTERM)
            else:
                os.killpg(run.pid, signal.SIGINT)
            _stdout, stderr = run.communicate(timeout=120)  # it ends, and its output is closed
        finally:
            release.set()
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
            run.communicate()  # its pipes closed whatever happened (no leaked files)
    assert run.returncode != 0, stderr
    assert not out.exists()
    # Within seconds: when the driver dies inside ray.shutdown, the watchdog stops the rest.
    assert _wait_for_none_left(run.pid, watchdogs_before, 30) == {}


def test_the_watchdog_stops_what_is_below_the_named_processes_orphans_included() -> None:
    # A stand-in for the raylet, which starts an "agent" and is then killed: the agent is
    # orphaned (re-parented), as Ray's agents are when ray.shutdown kills the raylet.
    sleeper = "import time; time.sleep(600)"
    raylet = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {sleeper!r}]);"
            " time.sleep(600)",
        ]
    )
    watchdog = subprocess.Popen(
        [sys.executable, "-I", _ray_watchdog.__file__],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        agents: list[tuple[int, int]] = []
        while not agents and time.monotonic() < deadline:
            table = _ray_watchdog.processes()
            agents = [p for p, parent in table.items() if parent == raylet.pid]
            time.sleep(0.05)
        assert agents, "the stand-in raylet started nothing"
        started = next(p for p in _ray_watchdog.processes() if p[0] == raylet.pid)
        assert watchdog.stdin is not None
        watchdog.stdin.write(b"%d %d\n" % started)
        watchdog.stdin.flush()
        time.sleep(10 * _ray_watchdog.TICK)  # it has looked below the raylet
        raylet.kill()
        raylet.wait()
        assert set(agents) <= set(_ray_watchdog.processes())  # orphaned, running
        watchdog.stdin.close()  # the driver is done
        assert watchdog.wait(timeout=30) == 0
        assert not set(agents) & set(_ray_watchdog.processes())
    finally:
        for pid, _ in agents:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if raylet.poll() is None:
            raylet.kill()
            raylet.wait()
        if watchdog.poll() is None:
            watchdog.kill()
            watchdog.wait()


def test_the_watchdog_kills_what_ignores_sigterm() -> None:
    stubborn = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print(1, flush=True);"
            " time.sleep(600)",
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert stubborn.stdout is not None and stubborn.stdout.readline() == b"1\n"  # ignoring
        process = next(p for p in _ray_watchdog.processes() if p[0] == stubborn.pid)
        started = time.monotonic()
        assert _ray_watchdog.stop({process}, grace=0.5) == {process}
        assert stubborn.wait(timeout=10) == -signal.SIGKILL
        assert time.monotonic() - started < 5
        assert _ray_watchdog.stop({process}, grace=0.5) == set()  # nothing left to stop
    finally:
        if stubborn.poll() is None:
            stubborn.kill()
            stubborn.wait()
        assert stubborn.stdout is not None
        stubborn.stdout.close()
