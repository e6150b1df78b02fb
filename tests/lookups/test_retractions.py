"""An answer that cites a retracted work (issue 35): reported, and failed under strict_retractions.

Crossref's API lists a work's notices on the work itself (``updated-by``: the notice's DOI, its
type and date); the lookup keeps them in its metadata, and the answer verifier reports a
retracted citation by its span. A real loopback server answers as Crossref does.
"""

from __future__ import annotations

import copy

import pytest

from citeverify_core import CitationVerifier
from tests.lookups.test_lookups import CROSSREF_WORK, DOI, policy
from tests.support.loopback import Loopback, Reply

ANSWER = f"Methylphenidate exposure causes dopamine neuron loss in mice (doi:{DOI})."


def _work(kind: str) -> dict:
    work = copy.deepcopy(CROSSREF_WORK)
    work["message"]["updated-by"] = [
        {
            "DOI": "10.1371/journal.pone.0999999",
            "type": kind,
            "label": kind.title(),
            "source": "publisher",
            "updated": {"date-parts": [[2021, 3, 15]], "timestamp": 1615766400000},
        }
    ]
    return work


@pytest.fixture
def server():
    with Loopback() as s:
        yield s


def test_a_retracted_citation_is_reported_with_its_notice(server):
    server.routes[("GET", f"/works/{DOI}")] = Reply(200, _work("retraction"))
    result = CitationVerifier(policy(server)).verify(ANSWER)
    (record,) = result.details.external_lookup
    assert record.metadata["notices"] == [
        {
            "kind": "retraction",
            "date": "2021-03-15",
            "doi": "10.1371/journal.pone.0999999",
            "source": "crossref",
        }
    ]
    start = ANSWER.index("doi:")
    assert any(
        n.startswith(f"the citation at {start}-") and "retracted work (retracted 2021-03-15)" in n
        for n in result.notes
    )
    assert result.action == "allow"  # strict_retractions is off by default


def test_strict_retractions_fails_the_answer_and_the_block_names_only_the_span(server):
    server.routes[("GET", f"/works/{DOI}")] = Reply(200, _work("retraction"))
    strict = policy(server)
    strict["extensions"]["strict_retractions"] = True
    strict["output_action"] = {"unverified_action": "block"}
    result = CitationVerifier(strict).verify(ANSWER)
    assert (result.verdict, result.reason_code) == ("block", "citation.unverified")
    start = ANSWER.index("doi:")
    (reason,) = [r for r in result.reasons if r.startswith("strict_retractions")]
    assert reason.startswith(f"strict_retractions: the citation at {start}-")
    assert reason.endswith("is of a retracted work (retracted 2021-03-15)")
    assert DOI not in " ".join(result.reasons)  # a block hands back no text of the answer


@pytest.mark.parametrize("kind", ["correction", "erratum", "new_version"])
def test_a_corrected_work_is_not_called_retracted(server, kind):
    server.routes[("GET", f"/works/{DOI}")] = Reply(200, _work(kind))
    strict = policy(server)
    strict["extensions"]["strict_retractions"] = True
    result = CitationVerifier(strict).verify(ANSWER)
    assert not any("retracted" in n for n in result.notes)
    assert not any(r.startswith("strict_retractions") for r in result.reasons)
    (record,) = result.details.external_lookup
    expected = [] if kind == "new_version" else ["correction"]
    assert [n["kind"] for n in record.metadata["notices"]] == expected
