"""One reference never fails a batch, and an oversized one costs nothing (issue 9)."""

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from citeverify_core import InputError
from citeverify_core.references import LocalIndex, ReferenceVerifier
from citeverify_core.service.jobs import JobStore

DATA = Path(__file__).parents[1] / "data"
KUHN = "Kuhn, T. S. (1962). The Structure of Scientific Revolutions. University of Chicago Press."
BOOM = "Boom, B. (2020). A reference whose lookup fails. Journal of Failures, 1, 1-2."


class ExplodingSource:
    """A source with a bug (or meeting an answer nobody foresaw) for one reference."""

    name = "EXPLODING"

    def __init__(self, exc):
        self.exc = exc

    async def candidates(self, ref, limit):
        if ref.title and "fails" in ref.title:
            raise self.exc
        return []


@pytest.fixture
def verifier(tmp_path):
    index = LocalIndex(tmp_path / "index.sqlite")
    index.build(DATA / "works-crossref.jsonl")
    return ReferenceVerifier(index)


@pytest.mark.parametrize(
    "exc",
    [
        pytest.param(KeyError("title"), id="key-error"),
        pytest.param(AttributeError("'str' object has no attribute 'get'"), id="attribute-error"),
        pytest.param(RecursionError("maximum recursion depth exceeded"), id="recursion-error"),
        pytest.param(OverflowError("cannot convert float infinity to integer"), id="overflow"),
    ],
)
def test_a_reference_whose_check_fails_gets_its_own_result(verifier, caplog, exc):
    verifier.sources.append(ExplodingSource(exc))
    with caplog.at_level(logging.ERROR, logger="citeverify_core.references.verify"):
        results = verifier.verify_references([KUHN, BOOM, KUHN])
    assert [r.status for r in results] == ["verified", "needs-human", "verified"]
    failed = results[1]
    assert failed.error.startswith(f"{type(exc).__name__}: ")
    assert failed.reference == "The reference could not be checked."
    assert "check it by hand" in failed.message
    # Not hidden: the traceback is logged.
    assert caplog.records[-1].exc_info[0] is type(exc)
    json.dumps(failed.model_dump(mode="json"))  # a result like any other


def test_verify_one_returns_the_failed_result_instead_of_raising(verifier):
    verifier.sources.append(ExplodingSource(ZeroDivisionError("division by zero")))
    result = verifier.verify(BOOM)
    assert (result.status, result.error) == ("needs-human", "ZeroDivisionError: division by zero")


def test_a_long_exception_message_is_cut(verifier):
    verifier.sources.append(ExplodingSource(ValueError("x" * 100_000)))
    assert len(verifier.verify(BOOM).error) == 300


def test_a_failing_job_fails_alone(tmp_path, verifier):
    verifier.sources.append(ExplodingSource(KeyError("title")))
    store = JobStore(tmp_path / "jobs.sqlite", verifier)
    ids = store.submit([KUHN, BOOM])["jobIds"]
    assert store.process() == 2
    jobs = store.results(ids)["jobs"]
    assert [j["state"] for j in jobs] == ["completed", "failed"]
    assert jobs[1]["error"] == "KeyError: 'title'"


@pytest.mark.parametrize(
    ("reference", "fragment"),
    [
        pytest.param(
            "Kuhn, T. \ud800 (1962). Title.", "character 10 is a lone surrogate", id="surrogate"
        ),
        pytest.param("x" * 200_000, "at most 1,200 characters, got 200,000", id="200k"),
        pytest.param(None, "must be a string, got NoneType", id="none"),
        pytest.param(b"Kuhn", "must be a string, got bytes", id="bytes"),
        pytest.param("  ", "must not be empty", id="blank"),
    ],
)
def test_an_unreadable_reference_is_an_input_error_alone_and_unverified_in_a_batch(
    verifier, reference, fragment
):
    with pytest.raises(InputError, match=fragment):
        verifier.verify(reference)
    results = verifier.verify_references([reference, KUHN])
    assert results[0].status == "unverified"
    assert fragment in results[0].error
    assert results[1].status == "verified"


@pytest.mark.parametrize("references", ["Kuhn (1962)", b"Kuhn (1962)", 5, None])
def test_a_batch_must_be_a_list(verifier, references):
    with pytest.raises(InputError, match="a list of strings"):
        verifier.verify_references(references)


_MEMORY_PROBE = """
import json, resource, sys, time
from citeverify_core import InputError
from citeverify_core.references import LocalIndex, ReferenceVerifier
from citeverify_core.service.jobs import JobStore

verifier = ReferenceVerifier(LocalIndex(":memory:"))
store = JobStore(":memory:", verifier)
huge = "a " * 25_000_000  # 50 MB of words: splitting it would make 25 million strings
calls = {
    "verify": lambda: verifier.verify(huge),
    "verify_references": lambda: verifier.verify_references([huge]),
    "submit": lambda: store.submit([huge]),
}
out = {}
for name, call in calls.items():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    try:
        outcome = call()
    except InputError as exc:
        outcome = str(exc)
    else:
        outcome = outcome[0].error if isinstance(outcome, list) else "accepted"
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out[name] = [outcome, (peak - before) / 1024, time.perf_counter() - start]
print(json.dumps(out))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="resource.getrusage is POSIX")
def test_a_50_mb_reference_is_refused_before_any_work():
    # In a fresh process, so that the peak RSS is this call's.
    done = subprocess.run(
        [sys.executable, "-c", _MEMORY_PROBE], capture_output=True, text=True, check=True
    )
    for name, (outcome, extra_mb, seconds) in json.loads(done.stdout).items():
        assert "50,000,000" in outcome, name
        assert extra_mb < 20, (name, extra_mb)  # it was 1,400 MB
        assert seconds < 1, (name, seconds)  # the first call includes the lookups session
