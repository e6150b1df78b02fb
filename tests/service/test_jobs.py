"""The reference job store: submit, poll, cancel, history, limits, and restarts."""

from pathlib import Path

import pytest

import citeverify_core.service.store as _store
from citeverify_core import InputError
from citeverify_core.references import LocalIndex, ReferenceVerifier
from citeverify_core.service.jobs import JobStore

DATA = Path(__file__).parents[1] / "data"
KUHN = "Kuhn, T. S. (1962). The Structure of Scientific Revolutions. University of Chicago Press."
LECUN_WRONG_YEAR = (
    "LeCun, Y., Bengio, Y., & Hinton, G. (2013). Deep learning. Nature, 521(7553), 436–444."
)
FAKE = "Doe, J. (2020). Quantum sponges of the deep sea. Journal of Nothing, 1, 1-2."


@pytest.fixture
def verifier(tmp_path):
    index = LocalIndex(tmp_path / "index.sqlite")
    index.build(DATA / "works-crossref.jsonl")
    return ReferenceVerifier(index)


@pytest.fixture
def store(tmp_path, verifier):
    return JobStore(tmp_path / "jobs.sqlite", verifier)


def test_submit_process_poll(store):
    submission = store.submit([KUHN, LECUN_WRONG_YEAR, FAKE], title="chapter 2")
    assert len(submission["jobIds"]) == 3
    assert {j["state"] for j in store.results(submission["jobIds"])["jobs"]} == {"waiting"}
    assert store.process() == 3
    jobs = store.results([*submission["jobIds"], "999999", "nope"])["jobs"]
    assert [j["state"] for j in jobs] == [
        "completed",
        "completed",
        "completed",
        "not-found",
        "not-found",
    ]
    assert [j["result"]["status"] for j in jobs[:3]] == [
        "verified",
        "verified-with-error",
        "unverified",
    ]
    assert jobs[1]["result"]["field_results"]["year"] == "CONTRADICTION"
    assert jobs[0]["result"]["verificationGraph"]["citationId"] == "cit_1"


@pytest.mark.parametrize(
    ("references", "fragment"),
    [
        ([], "1 to 20"),
        ([KUHN] * 21, "1 to 20"),
        (["x" * 1201], "limit is 1,200"),
        ([""], "non-empty"),
        ("one", "a list"),
    ],
)
def test_submit_limits(store, references, fragment):
    with pytest.raises(InputError, match=fragment):
        store.submit(references)


def test_poll_limit(store):
    with pytest.raises(InputError, match="at most 50"):
        store.results([str(i) for i in range(51)])


def test_cancel_by_document_and_by_job(store):
    first = store.submit([KUHN, FAKE])
    outcome = store.cancel(document_id=first["documentId"])
    assert (outcome["cancelledJobs"], outcome["documentStatus"]) == (2, "FAILED")
    second = store.submit([KUHN, FAKE])
    assert store.cancel(job_ids=[second["jobIds"][1]])["cancelledJobs"] == 1
    store.process()
    jobs = store.results(second["jobIds"])["jobs"]
    assert [j["state"] for j in jobs] == ["completed", "failed"]
    assert jobs[1]["error"] == "cancelled"
    with pytest.raises(InputError, match="documentId, jobIds"):
        store.cancel()


def test_history_pagination(store):
    for i in range(3):
        store.submit([KUHN], title=f"doc {i}")
    store.process()
    page = store.history(limit=2)
    assert [d["title"] for d in page["documents"]] == ["doc 2", "doc 1"]
    assert page["pagination"] == {"total": 3, "limit": 2, "offset": 0, "hasMore": True}
    ref = page["documents"][0]["references"][0]
    assert (ref["status"], ref["parsedData"]["year"]) == ("verified", 1962)
    assert page["documents"][0]["status"] == "COMPLETED"
    assert store.history(limit=2, offset=2)["pagination"]["hasMore"] is False
    with pytest.raises(InputError):
        store.history(limit=51)


def test_jobs_survive_a_restart(tmp_path, verifier, monkeypatch):
    path = tmp_path / "jobs.sqlite"
    store = JobStore(path, verifier, lease=5)
    done = store.submit([KUHN])
    store.process()
    pending = store.submit([LECUN_WRONG_YEAR])
    # A process that died while verifying: the job is left active, under its lease.
    store._claim(10)
    assert store.results(pending["jobIds"])["jobs"][0]["state"] == "active"
    store.close()
    reopened = JobStore(path, verifier, lease=5)
    # Opening never takes a job from its worker: it may be alive, in another process.
    assert reopened.results(pending["jobIds"])["jobs"][0]["state"] == "active"
    assert reopened.process() == 0
    # Once the lease has expired, the worker is gone: the job runs again.
    later = _store.clock() + 6
    monkeypatch.setattr(_store, "clock", lambda: later)
    assert reopened.process() == 1
    assert (
        reopened.results(pending["jobIds"])["jobs"][0]["result"]["status"] == "verified-with-error"
    )
    assert (
        reopened.results(done["jobIds"])["jobs"][0]["result"]["status"] == "verified"
    )  # never lost
