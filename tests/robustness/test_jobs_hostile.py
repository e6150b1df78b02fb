"""The job store takes input from the network: ids, limits, text, files, and leases.

Whatever a caller sends, the store answers with a result, ``not-found`` or an InputError naming
the field, never a raw exception; a job belongs to its worker until the worker's lease expires.
"""

import asyncio
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citeverify_core.service.jobs as _jobs
import citeverify_core.service.store as _store
from citeverify_core import InputError
from citeverify_core.references import LocalIndex, ReferenceVerifier
from citeverify_core.service.jobs import JobStore
from tests.robustness.test_index_hostile import foreign_sqlite

DATA = Path(__file__).parents[1] / "data"
KUHN = "Kuhn, T. S. (1962). The Structure of Scientific Revolutions. University of Chicago Press."
FAKE = "Doe, J. (2020). Quantum sponges of the deep sea. Journal of Nothing, 1, 1-2."


@pytest.fixture(scope="module")
def verifier(tmp_path_factory):
    index = LocalIndex(tmp_path_factory.mktemp("index") / "index.sqlite")
    index.build(DATA / "works-crossref.jsonl")
    return ReferenceVerifier(index)


@pytest.fixture
def store(tmp_path, verifier):
    return JobStore(tmp_path / "jobs.sqlite", verifier)


class Clock:
    """The leases' clock, moved by hand."""

    def __init__(self, monkeypatch):
        self.now = 1_000_000.0
        monkeypatch.setattr(_store, "clock", lambda: self.now)


# --- ids, limits and types -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "job_id",
    [
        pytest.param("²", id="superscript-two"),  # str.isdigit() is true, int() fails
        pytest.param("٣", id="arabic-indic-three"),
        pytest.param("9" * 30, id="thirty-nines"),  # overflows SQLite's 64-bit integers
        pytest.param(str(2**63), id="two-to-the-63"),
        pytest.param("-1", id="negative"),
        pytest.param("0", id="zero"),
        pytest.param("", id="empty"),
        pytest.param(" 1", id="space"),
        pytest.param("1.0", id="decimal"),
        pytest.param("\ud800", id="lone-surrogate"),
        pytest.param("nope", id="word"),
    ],
)
def test_a_string_that_names_no_job_is_not_found(store, job_id):
    real = store.submit([KUHN])["jobIds"][0]
    jobs = store.results([job_id, real])["jobs"]
    assert jobs[0] == {"id": job_id, "state": "not-found", "error": None, "progress": None}
    assert jobs[1]["state"] == "waiting"
    assert store.cancel(job_ids=[job_id])["cancelledJobs"] == 0


@pytest.mark.parametrize(
    ("job_id", "fragment"),
    [
        pytest.param(True, "got bool", id="bool"),
        pytest.param(1.0, "got float", id="float"),
        pytest.param(None, "got NoneType", id="none"),
        pytest.param(["1"], "got list", id="list"),
        pytest.param({"id": 1}, "got dict", id="dict"),
        pytest.param(-1, "not a job id", id="negative-int"),
        pytest.param(2**63, "not a job id", id="int-too-big"),
        pytest.param(10**5000, "not a job id", id="int-5000-digits"),
    ],
)
def test_an_id_of_the_wrong_type_is_an_input_error_naming_it(store, job_id, fragment):
    for call in (lambda: store.results(["1", job_id]), lambda: store.cancel(job_ids=["1", job_id])):
        with pytest.raises(InputError, match=fragment) as caught:
            call()
        assert caught.value.path == "jobIds[1]"


def test_an_int_id_is_a_job_id(store):
    real = store.submit([KUHN])["jobIds"][0]
    assert store.results([int(real)])["jobs"][0] == {
        "id": real,
        "state": "waiting",
        "error": None,
        "progress": None,
    }


@pytest.mark.parametrize(
    ("job_ids", "fragment"),
    [
        pytest.param("12", "a list", id="a-string"),
        pytest.param(b"12", "a list", id="bytes"),
        pytest.param(12, "a list", id="an-int"),
        pytest.param({"1": 1}, "a list", id="a-dict"),
        pytest.param(["1"] * 51, "at most 50", id="51-ids"),
    ],
)
def test_job_id_lists_are_lists_of_at_most_50(store, job_ids, fragment):
    with pytest.raises(InputError, match=fragment):
        store.results(job_ids)
    with pytest.raises(InputError, match=fragment):
        store.cancel(job_ids=job_ids)


def test_50_ids_are_accepted(store):
    assert len(store.results(["1"] * 50)["jobs"]) == 50


@pytest.mark.parametrize(
    ("document_id", "expected"),
    [
        pytest.param("\ud800", 0, id="lone-surrogate"),
        pytest.param("x" * 10_000, 0, id="long"),
        pytest.param("", 0, id="empty"),
    ],
)
def test_a_document_id_that_names_nothing_cancels_nothing(store, document_id, expected):
    store.submit([KUHN])
    outcome = store.cancel(document_id=document_id)
    assert (outcome["cancelledJobs"], outcome["documentStatus"]) == (expected, None)


def test_a_document_id_must_be_a_string(store):
    with pytest.raises(InputError, match="documentId must be a string") as caught:
        store.cancel(document_id=5)
    assert caught.value.path == "documentId"


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        pytest.param({"limit": "5"}, "limit", id="limit-string"),
        pytest.param({"limit": 5.0}, "limit", id="limit-float"),
        pytest.param({"limit": True}, "limit", id="limit-bool"),
        pytest.param({"limit": None}, "limit", id="limit-none"),
        pytest.param({"limit": 0}, "limit", id="limit-zero"),
        pytest.param({"limit": 51}, "limit", id="limit-51"),
        pytest.param({"limit": 10**5000}, "limit", id="limit-huge"),
        pytest.param({"offset": "0"}, "offset", id="offset-string"),
        pytest.param({"offset": -1}, "offset", id="offset-negative"),
        pytest.param({"offset": 2**64}, "offset", id="offset-overflow"),
    ],
)
def test_history_arguments_of_the_wrong_type_or_range(store, kwargs, path):
    with pytest.raises(InputError) as caught:
        store.history(**kwargs)
    assert caught.value.path == path


def test_history_at_the_limits(store):
    store.submit([KUHN])
    assert len(store.history(limit=50, offset=0)["documents"]) == 1
    assert store.history(limit=1, offset=2**63 - 1)["documents"] == []


@pytest.mark.parametrize(
    ("references", "path", "fragment"),
    [
        pytest.param(
            [KUHN, "Doe, J. \ud800 (2020)."], "references[1]", "surrogate", id="surrogate"
        ),
        pytest.param([KUHN, None], "references[1]", "got NoneType", id="none"),
        pytest.param([KUHN, b"bytes"], "references[1]", "got bytes", id="bytes-item"),
        pytest.param(b"Kuhn", "references", "a list", id="bytes"),
        pytest.param({"a": KUHN}, "references", "a list", id="dict"),
        pytest.param([" \n\t"], "references[0]", "non-empty", id="blank"),
        pytest.param(["a " * 25_000_000], "references[0]", "limit is 1,200", id="50-MB"),
    ],
)
def test_submit_names_the_reference_that_is_refused(store, references, path, fragment):
    with pytest.raises(InputError, match=fragment) as caught:
        store.submit(references)
    assert caught.value.path == path
    assert store.history()["pagination"]["total"] == 0  # nothing was queued


@pytest.mark.parametrize(
    "title",
    [
        pytest.param("\udfff", id="surrogate"),
        pytest.param(5, id="number"),
        pytest.param("t" * 501, id="too-long"),
    ],
)
def test_a_title_that_cannot_be_stored_is_refused(store, title):
    with pytest.raises(InputError) as caught:
        store.submit([KUHN], title=title)
    assert caught.value.path == "title"


def test_exactly_20_references_and_1200_characters_are_accepted(store):
    long = KUHN + " " * (1200 - len(KUHN))
    assert len(store.submit([long] * 20)["jobIds"]) == 20


# --- files ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        pytest.param(
            lambda p: (p / "notes.txt", (p / "notes.txt").write_text("hello " * 1000))[0],
            "is not a SQLite database",
            id="text-file",
        ),
        pytest.param(lambda p: p / "missing" / "jobs.sqlite", "no such folder", id="no-folder"),
        pytest.param(lambda p: p, "it is a folder", id="a-folder"),
        pytest.param(
            lambda p: foreign_sqlite(p, "jobs"),
            "not a job store .*raw_text",
            id="foreign-jobs-table",
        ),
        pytest.param(lambda p: None, "must be a string or a Path", id="none"),
    ],
)
def test_a_path_that_is_not_a_job_store_is_one_clear_input_error(
    tmp_path, verifier, make, fragment
):
    with pytest.raises(InputError, match=fragment) as caught:
        JobStore(make(tmp_path), verifier)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "lease",
    [
        pytest.param(0, id="zero"),
        pytest.param(-1, id="negative"),
        pytest.param(float("inf"), id="inf"),
        pytest.param(float("nan"), id="nan"),
        pytest.param(10**5000, id="int-5000-digits"),
        pytest.param("30", id="string"),
        pytest.param(True, id="bool"),
        pytest.param(None, id="none"),
    ],
)
def test_a_lease_is_a_positive_finite_number(tmp_path, verifier, lease):
    with pytest.raises(InputError, match="lease"):
        JobStore(tmp_path / "jobs.sqlite", verifier, lease=lease)


#: The schema before leases: stores created by earlier versions must keep working.
OLD_SCHEMA = """
CREATE TABLE documents (id TEXT PRIMARY KEY, title TEXT, created_at TEXT NOT NULL);
CREATE TABLE jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    document_id TEXT NOT NULL REFERENCES documents(id),
    position INTEGER NOT NULL, raw_text TEXT NOT NULL, state TEXT NOT NULL,
    step TEXT, message TEXT, result TEXT, error TEXT, verified_at TEXT
);
CREATE INDEX jobs_state ON jobs(state);
CREATE INDEX jobs_document ON jobs(document_id);
INSERT INTO documents VALUES ('d1', 'old', '2026-01-01T00:00:00.000Z');
INSERT INTO jobs (document_id, position, raw_text, state, result, verified_at)
    VALUES ('d1', 0, 'done', 'completed', '{"status": "verified"}', '2026-01-01T00:00:01.000Z');
INSERT INTO jobs (document_id, position, raw_text, state) VALUES ('d1', 1, ?, 'waiting');
INSERT INTO jobs (document_id, position, raw_text, state, step) VALUES ('d1', 2, ?, 'active', 'x');
"""


def test_a_store_of_the_old_schema_is_migrated_and_keeps_its_jobs(tmp_path, verifier):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        statements = [s for s in OLD_SCHEMA.split(";") if s.strip()]
        for statement in statements:
            params = (
                (KUHN,) if "'waiting'" in statement else (FAKE,) if "'active'" in statement else ()
            )
            db.execute(statement, params)
    store = JobStore(path, verifier)
    with sqlite3.connect(path) as db:
        columns = {row[1] for row in db.execute("PRAGMA table_info(jobs)")}
    assert {"worker", "lease_expires", "heartbeat_at", "attempts"} <= columns
    assert store.results(["1"])["jobs"][0]["result"] == {"status": "verified"}
    # The job an old version left active has no lease: nobody can prove it is running.
    assert store.process() == 2
    assert [j["result"]["status"] for j in store.results(["2", "3"])["jobs"]] == [
        "verified",
        "unverified",
    ]
    JobStore(path, verifier)  # a second open finds the columns there


# --- leases ---------------------------------------------------------------------------------------


def test_a_claimed_job_is_its_workers_until_the_lease_expires(tmp_path, verifier, monkeypatch):
    clock = Clock(monkeypatch)
    path = tmp_path / "jobs.sqlite"
    first, second = JobStore(path, verifier, lease=10), JobStore(path, verifier, lease=10)
    job = first.submit([KUHN])["jobIds"][0]
    assert first._claim(5) == [(int(job), KUHN)]
    clock.now += 9
    assert second._claim(5) == []  # 9 s into a 10 s lease: the first worker may be running it
    first._extend()  # its heartbeat
    clock.now += 9
    assert second._claim(5) == []  # still its lease, renewed
    clock.now += 2
    assert second._claim(5) == [(int(job), KUHN)]  # expired: the first worker is gone
    # A worker that comes back after losing its lease writes nothing: the job is the second's.
    first._progress(int(job), "late", "late")
    first._finish(int(job), "failed", None, "late")
    polled = second.results([job])["jobs"][0]
    assert (polled["state"], polled["progress"]["step"]) == ("active", "queued")
    second._finish(int(job), "completed", '{"status": "verified"}', None)
    assert second.results([job])["jobs"][0]["result"] == {"status": "verified"}


def test_a_job_whose_worker_dies_three_times_fails(tmp_path, verifier, monkeypatch):
    clock = Clock(monkeypatch)
    store = JobStore(tmp_path / "jobs.sqlite", verifier, lease=1)
    job = store.submit([KUHN])["jobIds"][0]
    for _ in range(_jobs.MAX_ATTEMPTS):
        assert store._claim(5) == [(int(job), KUHN)]
        clock.now += 2  # its worker died: the lease ran out
    assert store._claim(5) == []
    polled = store.results([job])["jobs"][0]
    assert polled["state"] == "failed"
    assert "stopped 3 times" in polled["error"]


def test_a_job_cancelled_while_running_stays_cancelled(store):
    job = store.submit([KUHN])["jobIds"][0]
    store._claim(5)
    assert store.cancel(job_ids=[job])["cancelledJobs"] == 1
    store._finish(int(job), "completed", '{"status": "verified"}', None)
    assert store.results([job])["jobs"][0]["error"] == "cancelled"


@pytest.mark.asyncio
async def test_a_cancelled_run_leaves_its_job_to_expire(tmp_path, verifier, monkeypatch):
    clock = Clock(monkeypatch)
    started = asyncio.Event()

    class Hanging(ReferenceVerifier):
        async def averify_or_error(self, reference, **options):
            started.set()
            await asyncio.sleep(3600)

    path = tmp_path / "jobs.sqlite"
    store = JobStore(path, Hanging(verifier.index), lease=10)
    job = store.submit([KUHN])["jobIds"][0]
    task = asyncio.create_task(store.aprocess())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert store.results([job])["jobs"][0]["state"] == "active"
    clock.now += 5
    store._extend()  # a later heartbeat of this store: not for a job nobody runs any more
    clock.now += 6
    assert JobStore(path, verifier).process() == 1  # expired: another worker takes it
    assert store.results([job])["jobs"][0]["result"]["status"] == "verified"


# --- any value a caller can send -------------------------------------------------------------------

_ANY = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**5000), max_value=10**5000)
    | st.floats()
    | st.text(max_size=30)  # lone surrogates included
    | st.binary(max_size=10)
    | st.sampled_from(["1", "²", "9" * 30, "-1", KUHN, "x" * 1201]),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=20,
)


@settings(max_examples=150)
@given(value=_ANY, other=_ANY)
def test_any_value_gives_an_answer_or_an_input_error(verifier, value, other):
    store = JobStore(":memory:", verifier)
    calls = {
        "results": lambda: store.results(value),
        "cancel-jobs": lambda: store.cancel(job_ids=value),
        "cancel-document": lambda: store.cancel(document_id=value),
        "history": lambda: store.history(limit=value, offset=other),
        "submit": lambda: store.submit(value, title=other),
    }
    refused = []
    for name, call in calls.items():
        try:
            answer = call()
        except InputError as exc:
            refused.append(exc)
            continue
        if name == "results":
            assert len(answer["jobs"]) == len(value)
            assert all(job["state"] in {"not-found", "waiting"} for job in answer["jobs"])
        elif name == "submit":
            assert store.results(answer["jobIds"])["jobs"][0]["state"] == "waiting"
    assert all(str(exc) and exc.path for exc in refused)  # says what, and where
