"""Several processes on one job store: each job verified once; a killed worker's job is
taken over only after its lease expires.

Real processes (tests/support/job_worker.py) on a real SQLite file with the local index: no network.
Before leases, opening a store reset every active job to waiting, and 8 processes re-verified 24
of 629 jobs that live workers were running.
"""

import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from citeverify_core.references import LocalIndex, ReferenceVerifier
from citeverify_core.service.jobs import JobStore

DATA = Path(__file__).parents[1] / "data"
ROOT = Path(__file__).parents[2]
KUHN = "Kuhn, T. S. (1962). The Structure of Scientific Revolutions. University of Chicago Press."
HANGS = "Roe, R. (2001). A reference that hangs its worker. Journal of Nothing, 2, 3-4."

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")


@pytest.fixture
def files(tmp_path):
    index = LocalIndex(tmp_path / "index.sqlite")
    index.build(DATA / "works-crossref.jsonl")
    index.close()
    calls = tmp_path / "calls.sqlite"
    with closing(sqlite3.connect(calls)) as db:
        db.execute("CREATE TABLE calls (pid INTEGER, reference TEXT, at REAL)")
        db.commit()
    return {
        "store": tmp_path / "jobs.sqlite",
        "index": tmp_path / "index.sqlite",
        "calls": calls,
        "go": tmp_path / "go",
    }


def _submit(files, references):
    store = JobStore(files["store"], ReferenceVerifier(LocalIndex(files["index"])))
    ids = [store.submit(references[i : i + 20])["jobIds"] for i in range(0, len(references), 20)]
    store.close()
    return [job for chunk in ids for job in chunk]


@pytest.fixture
def spawn(files):
    """Start workers; each is ready (its store open) when returned. Killed at teardown."""
    procs = []

    def start(n=1, **options):
        new = [_popen(files, **options) for _ in range(n)]
        procs.extend(new)
        for proc in new:
            assert proc.stdout.readline().strip() == "ready"
        return new

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()


def _popen(files, *, lease, delay=0.0, hang_on=None):
    args = [
        sys.executable,
        "-m",
        "tests.support.job_worker",
        *(str(files[k]) for k in ("store", "index")),
    ]
    args += [str(files["calls"]), "--go", str(files["go"]), "--lease", str(lease)]
    args += ["--delay", str(delay)] + (["--hang-on", hang_on] if hang_on else [])
    return subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, text=True)


def _calls(files):
    with closing(sqlite3.connect(files["calls"], timeout=30)) as db:
        return db.execute("SELECT pid, reference, at FROM calls ORDER BY at").fetchall()


def _job(files, job_id):
    with closing(sqlite3.connect(files["store"], timeout=30)) as db:
        db.row_factory = sqlite3.Row
        return dict(db.execute("SELECT * FROM jobs WHERE id = ?", (int(job_id),)).fetchone())


def _wait_for(condition, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.02)
    pytest.fail("timed out")


def test_four_processes_verify_every_job_exactly_once(files, spawn):
    references = [
        f"Doe, J. ({1900 + i}). Quantum sponges of the deep sea, part {i}. Journal of Nothing."
        for i in range(58)
    ] + [KUHN, KUHN.replace("1962", "1963")]
    job_ids = _submit(files, references)
    workers = spawn(2, lease=2, delay=0.12)
    files["go"].touch()
    # Two more open the store while the first two are running jobs: opening takes none of them.
    _wait_for(lambda: len(_calls(files)) >= 8)
    workers += spawn(2, lease=2, delay=0.12)
    assert [w.wait(timeout=60) for w in workers] == [0, 0, 0, 0]

    calls = _calls(files)
    assert sorted(reference for _, reference, _ in calls) == sorted(references)  # once each
    assert len({pid for pid, _, _ in calls}) >= 2  # the work was shared
    states = {_job(files, j)["state"] for j in job_ids}
    assert states == {"completed"}


def test_a_killed_workers_job_is_taken_over_only_after_its_lease_expires(files, spawn):
    hanging, other = _submit(files, [HANGS, KUHN])
    (first,) = spawn(lease=1, hang_on="hangs its worker")
    files["go"].touch()
    _wait_for(lambda: any(ref == HANGS for _, ref, _ in _calls(files)))
    # A second worker starts while the first is busy on the job, and keeps polling for work.
    (second,) = spawn(lease=1)
    time.sleep(2.5)  # two and a half leases: the first worker's heartbeat keeps the job
    assert [pid for pid, ref, _ in _calls(files) if ref == HANGS] == [first.pid]
    job = _job(files, hanging)
    assert (job["state"], job["worker"].split(":")[1]) == ("active", str(first.pid))
    assert job["attempts"] == 1

    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=10)
    expires = _job(files, hanging)["lease_expires"]  # the last heartbeat's lease
    assert second.wait(timeout=30) == 0

    runs = [(pid, at) for pid, ref, at in _calls(files) if ref == HANGS]
    assert [pid for pid, _ in runs] == [first.pid, second.pid]
    taken_at = runs[1][1]
    assert taken_at >= expires  # never while the lease ran
    assert taken_at - expires < 2.0  # but soon after it expired
    job = _job(files, hanging)
    assert (job["state"], job["attempts"], job["worker"].split(":")[1]) == (
        "completed",
        2,
        str(second.pid),
    )
    assert _job(files, other)["state"] == "completed"  # the first worker finished that one
