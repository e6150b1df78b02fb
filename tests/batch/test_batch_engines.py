"""The engines of ``citeverify batch`` agree (issue 15).

- A local Ray instance (one per module: Ray starts slowly) writes byte for byte the OUTPUT of the
  single-process run, for JSONL shards (plain and gzip, with blank and broken lines), CSV and
  Parquet.
- A worker process killed mid-run loses nothing: the run stops with one error line, and the same
  command again resumes and writes every row once, in order. On Ray, a killed actor is restarted
  by Ray and its batch retried: the run goes on and writes the same bytes.
- The Ray engine resumes by input file: the files verified before are not read again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from citeverify_core.batch import run_batch
from citeverify_core.batch.read import find_shards, signature
from tests.batch.test_batch import (  # noqa: F401 - _unix_sockets: an autouse fixture
    _unix_sockets,
    make_records,
    rows_of,
    write_csv,
    write_jsonl,
    write_parquet,
)

RECORDS = make_records(90, seed=11)
# Ray 2.50 (the floor) leaves its daemons' /dev/null handles and Popen objects to the garbage
# collector: warnings from Ray's start, not from citeverify_core.
pytestmark = [
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[Any]:
    # Under `uv run`, Ray would package the working folder and rebuild the project's environment
    # for its workers; the local instance uses this interpreter as it is. Set before the import.
    # Ray 2.50 (the floor) warns at init about GPU variables unless told the future default.
    names = ("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO")
    saved = {k: os.environ.get(k) for k in names}
    os.environ.update(dict.fromkeys(names, "0"))
    ray = pytest.importorskip("ray")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        log_to_driver=False,
        configure_logging=False,
    )
    try:
        yield ray
    finally:
        ray.shutdown()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def both_engines(source: Path, folder: Path, ray: Any, **options: Any) -> tuple[Path, Path]:
    local = folder / "local.jsonl"
    on_ray = folder / "ray.jsonl"
    run_batch(source, local, workers=1, batch_size=20, **options)
    summary = run_batch(source, on_ray, engine="ray", workers=2, batch_size=20, **options)
    assert ray.is_initialized()  # it used the running instance, and left it running
    assert summary.rows + summary.errors > 0
    return local, on_ray


def test_ray_writes_the_same_bytes_for_jsonl_shards(tmp_path: Path, ray_instance: Any) -> None:
    shards = tmp_path / "in"
    shards.mkdir()
    write_jsonl(shards / "a.jsonl", [*RECORDS[:40], "{broken", {"answer": "No id."}], extra="\n")
    write_jsonl(shards / "b.jsonl.gz", RECORDS[40:])
    local, on_ray = both_engines(shards, tmp_path, ray_instance, details=True)
    assert on_ray.read_bytes() == local.read_bytes()
    errors = Path(f"{on_ray}.errors.jsonl")
    assert errors.read_bytes() == Path(f"{local}.errors.jsonl").read_bytes()
    assert [e["source"] for e in rows_of(errors)] == ["a.jsonl:41"]
    assert rows_of(on_ray)[40]["id"] == "a.jsonl:42"  # no id: its place
    assert len(rows_of(on_ray)) == 91


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_ray_writes_the_same_bytes_for_csv_and_parquet(
    tmp_path: Path, ray_instance: Any, fmt: str
) -> None:
    source = tmp_path / f"in.{fmt}"
    (write_csv if fmt == "csv" else write_parquet)(source, RECORDS)
    local, on_ray = both_engines(source, tmp_path, ray_instance)
    assert on_ray.read_bytes() == local.read_bytes()
    assert [r["id"] for r in rows_of(on_ray)] == [r["id"] for r in RECORDS]


def test_ray_address_joins_that_cluster_and_leaves_it_running(
    tmp_path: Path, ray_instance: Any
) -> None:
    # The module's instance stands for a cluster: the command joins it through RAY_ADDRESS,
    # runs there, and at the end disconnects without stopping it.
    if tuple(int(part) for part in ray_instance.__version__.split(".")[:2]) < (2, 60):
        # Seen with Ray 2.50 (the floor): a driver joining a loopback instance still looks for
        # its GCS at the machine's own address, which the instance does not listen on, and
        # waits there until the timeout. Joining works from 2.60 (the locked version) on.
        pytest.skip("Ray before 2.60 joins a loopback instance at the machine's own address")
    source = write_jsonl(tmp_path / "in.jsonl", RECORDS[:30])
    local = tmp_path / "local.jsonl"
    run_batch(source, local, workers=1, batch_size=10)
    out = tmp_path / "ray.jsonl"
    # The instance listens on loopback; some Ray versions (2.50) report the machine's own
    # address here, which nothing in a test may connect to.
    port = ray_instance.get_runtime_context().gcs_address.rsplit(":", 1)[1]
    address = f"127.0.0.1:{port}"
    command = [sys.executable, "-m", "citeverify_core", "batch", str(source), "-o", str(out)]
    command += ["--engine", "ray", "--workers", "1", "--batch-size", "10"]
    environment = {**os.environ, "RAY_ADDRESS": address}
    done = subprocess.run(
        command, env=environment, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == local.read_bytes()
    assert [node["Alive"] for node in ray_instance.nodes()] == [True]
    assert ray_instance.get(ray_instance.put("still running")) == "still running"


def test_ray_parquet_output(tmp_path: Path, ray_instance: Any) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", RECORDS[:30])
    run_batch(source, tmp_path / "local.parquet", workers=1)
    run_batch(source, tmp_path / "ray.parquet", engine="ray", workers=2)
    assert rows_of(tmp_path / "ray.parquet") == rows_of(tmp_path / "local.parquet")


def test_ray_resumes_by_input_file(tmp_path: Path, ray_instance: Any) -> None:
    shards = tmp_path / "in"
    shards.mkdir()
    write_jsonl(shards / "a.jsonl", RECORDS[:30])
    write_jsonl(shards / "b.jsonl", [*RECORDS[30:60], {"answer": "No id."}])
    write_jsonl(shards / "c.jsonl.gz", RECORDS[60:])
    local = tmp_path / "local.jsonl"
    run_batch(shards, local, workers=1, batch_size=20)
    expected = rows_of(local)
    # A first run stopped after a.jsonl: its part is kept (forged here, to show it is reused).
    parts = tmp_path / "ray.jsonl.parts"
    parts.mkdir()
    options = {
        "policy": {"extensions": {"lookups": {"enabled": False}}},
        "fields": ["answer", "context_documents", "id"],
        "details": False,
        "batch_size": 20,
        "format": "jsonl",
    }
    manifest = {
        "version": 1,
        "engine": "ray",
        "input": signature(find_shards(shards)),
        "options": options,
    }
    (parts / "manifest.json").write_text(json.dumps(manifest))
    forged = [{**row, "verdict": "forged", "_n": n} for n, row in enumerate(expected[:30], 1)]
    (parts / "000000.jsonl").write_text("".join(json.dumps(r) + "\n" for r in forged))
    (parts / "000001.jsonl.tmp-99").write_text("half a file")
    notes: list[str] = []
    out = tmp_path / "ray.jsonl"
    summary = run_batch(shards, out, engine="ray", workers=2, batch_size=20, note=notes.append)
    assert notes == [f"resuming: 1 input files of {out} were verified before"]
    assert summary.skipped_parts == 1 and not parts.exists()
    rows = rows_of(out)
    assert [r["verdict"] for r in rows[:30]] == ["forged"] * 30
    assert rows[30:] == expected[30:]
    assert rows[60]["id"] == "b.jsonl:31"
    # Options changed: nothing is reused, and the bytes are the local engine's.
    parts.mkdir()
    (parts / "manifest.json").write_text(json.dumps({**manifest, "options": {}}))
    (parts / "000000.jsonl").write_text("".join(json.dumps(r) + "\n" for r in forged))
    run_batch(shards, out, engine="ray", workers=2, batch_size=20, note=notes.append)
    assert "starting afresh" in notes[-1]
    assert out.read_bytes() == local.read_bytes()


def _actors_of(name: bytes) -> list[int]:
    """Ray worker processes running an actor of class ``name`` (Ray titles them ``ray::...``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
                if cmdline.startswith(b"ray::") and name in cmdline:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc (Linux)")
def test_ray_a_killed_actor_loses_and_duplicates_no_row(
    tmp_path: Path, ray_instance: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citeverify_core.batch import ray_engine

    records = make_records(2000, seed=5, docs=6)
    source = write_jsonl(tmp_path / "in.jsonl", records)
    local = tmp_path / "local.jsonl"
    run_batch(source, local, workers=2, batch_size=50)
    out = tmp_path / "ray.jsonl"
    killed: list[int] = []
    first_row, done = threading.Event(), threading.Event()
    add = ray_engine._ShardParts.add

    def add_after_the_kill(self: Any, text: str, name: str, number: int | None) -> None:
        # The driver holds its first row until an actor is killed: the run cannot end
        # before (an event, not a race with a fast machine). Ray's streaming executor stops
        # at its output queue's limit meanwhile, so its actors are still running.
        if not first_row.is_set():
            first_row.set()
            done.wait(timeout=600)
        add(self, text, name, number)

    def kill_an_actor() -> None:
        first_row.wait(timeout=600)
        # Up to ten minutes for the pool's process to show in /proc: seconds on an idle machine,
        # over a minute once on a loaded one (a CI run beside a 20M-work index build).
        for _ in range(30_000):
            pids = _actors_of(b"RayVerifier")
            if pids:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])
                break
            time.sleep(0.02)
        done.set()

    monkeypatch.setattr(ray_engine._ShardParts, "add", add_after_the_kill)
    killer = threading.Thread(target=kill_an_actor)
    killer.start()
    try:
        summary = run_batch(source, out, engine="ray", workers=2, batch_size=50)
    finally:
        first_row.set()
        killer.join()
    assert killed, "no RayVerifier actor was running while the driver held its first row"
    assert summary.rows == len(records)
    assert out.read_bytes() == local.read_bytes()  # every row once, in order


# --- a worker killed mid-run ---------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    try:
        return [
            int(child)
            for task in Path(f"/proc/{pid}/task").iterdir()
            for child in (task / "children").read_text().split()
        ]
    except OSError:
        return []


def _workers_of(pid: int) -> list[int]:
    """The pool's worker processes: the children of the run's fork server."""
    found = []
    for child in _children(pid):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"forkserver" in cmdline:
            found += _children(child)
    return found


def kill_a_worker_mid_run(command: list[str], parts: Path) -> tuple[int, str]:
    """Run ``command`` (a batch run with 2 workers), SIGKILL one worker once the first part is
    written, and return the run's exit code and stderr."""
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and time.monotonic() < deadline and run.poll() is None:
        workers = _workers_of(run.pid)
        if len(workers) == 2 and parts.is_dir() and any(parts.glob("*.jsonl")):
            killed = workers[0]
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.01)
    _stdout, stderr = run.communicate(timeout=120)
    assert killed is not None, f"the run ended before a worker could be killed: {stderr}"
    return run.returncode, stderr


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc (Linux)")
def test_a_killed_worker_loses_and_duplicates_no_row_on_the_rerun(tmp_path: Path) -> None:
    records = make_records(3000, seed=5, docs=6)
    source = write_jsonl(tmp_path / "in.jsonl", records)
    reference = tmp_path / "reference.jsonl"
    run_batch(source, reference, workers=1, batch_size=50)

    out = tmp_path / "out.jsonl"
    command = [sys.executable, "-m", "citeverify_core", "batch", str(source), "-o", str(out)]
    command += ["--workers", "2", "--batch-size", "50"]
    parts = tmp_path / "out.jsonl.parts"
    returncode, stderr = kill_a_worker_mid_run(command, parts)
    assert returncode == 2, stderr
    assert "a worker process died" in stderr and "run the same command again" in stderr
    assert len(stderr.strip().splitlines()) == 1
    written = len(list(parts.glob("*.jsonl")))
    assert 0 < written < 60  # some parts, not all
    assert not out.exists()

    again = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert again.returncode == 0, again.stderr
    assert f"resuming: {written:,} parts" in again.stderr
    assert out.read_bytes() == reference.read_bytes()
    ids = [r["id"] for r in rows_of(out)]
    assert ids == [r["id"] for r in records]  # every row once, in order
    assert not parts.exists()
