"""Parsers meet real response shapes: VCR cassettes at the real service URLs, no network."""

import json
from pathlib import Path

import pytest
import vcr

from citeverify_core import CitationVerifier
from tests.support.loopback import Loopback, Reply

CASSETTES = Path(__file__).parents[1] / "cassettes" / "lookups"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "api"

# record_mode "none": a request that is not in the cassette fails instead of reaching the network.
replay = vcr.VCR(
    cassette_library_dir=str(CASSETTES), record_mode="none", filter_headers=["authorization"]
)

POLICY = {"require_sources": False, "extensions": {"lookups": {"timeout": 5}}}


def by_target(result):
    return {r.target: r for r in result.details.external_lookup}


@pytest.mark.asyncio
async def test_crossref_and_pubmed_through_cassettes():
    answer = (
        "Methylphenidate exposure induces dopamine neuron loss in mice (doi:10.1371/journal.pone.0033693). "
        "Wireless and congestion losses can be told apart (https://doi.org/10.1109/ICDCSW.2003.1203662). "
        "A made-up work doi:10.1371/notarealdoi. Jmol converts crystal structures for 3D printing (PMID: 27933103)."
    )
    with replay.use_cassette("crossref_and_pubmed.yaml"):
        result = await CitationVerifier(POLICY).averify(answer)
    records = by_target(result)
    plos = records["10.1371/journal.pone.0033693"]
    assert plos.ok
    assert plos.metadata["authors"][:2] == ["Shankar Sadasivan", "Brooks B. Pond"]
    assert plos.metadata["year"] == 2012
    icdcsw = records["10.1109/icdcsw.2003.1203662"]
    assert icdcsw.ok
    assert icdcsw.metadata["year"] is None  # issued is [[null]]; the registration date is not used
    assert icdcsw.metadata["type"] == "proceedings-article"
    assert records["10.1371/notarealdoi"].status_code == 404
    pubmed = records["27933103"]
    assert pubmed.metadata["container"] == "Journal of cheminformatics"
    assert pubmed.metadata["doi"] == "10.1186/s13321-016-0181-z"
    statuses = [c.status for c in result.details.citations]
    assert statuses == ["verified", "verified", "not_found", "verified"]


def test_sync_api_replays_too():
    with replay.use_cassette("crossref_and_pubmed.yaml"):
        result = CitationVerifier(POLICY).verify("See doi:10.1371/notarealdoi.")
    assert result.details.citations[0].status == "not_found"


# --- the recorded originals in ../shared, served over loopback -------------------------------------

needs_shared = pytest.mark.skipif(
    not SHARED.is_dir(),
    reason=f"the shared API fixtures are not at {SHARED} (outside this repository)",
)


def serve(path: str, name: str, status: int = 200, content_type: str = "application/json"):
    server = Loopback()
    server.routes[("GET", path)] = Reply(
        status, (SHARED / name).read_bytes(), {"Content-Type": content_type}
    )
    return server


def loopback_policy(server):
    return {
        "require_sources": False,
        "extensions": {"lookups": {"crossref_base_url": server.url, "ncbi_base_url": server.url}},
    }


@needs_shared
@pytest.mark.parametrize(
    ("doi", "name", "title", "year"),
    [
        (
            "10.1371/journal.pone.0033693",
            "crossref-works-doi-10.1371_journal.pone.0033693.json",
            "Methylphenidate Exposure",
            2012,
        ),
        (
            "10.1109/icdcsw.2003.1203662",
            "crossref-works-doi-10.1109_icdcsw.2003.1203662.json",
            "Accurate and explicit",
            None,
        ),
    ],
)
def test_recorded_crossref_payloads(doi, name, title, year):
    with serve(f"/works/{doi}", name) as server:
        result = CitationVerifier(loopback_policy(server)).verify(f"doi:{doi}")
    record = result.details.external_lookup[0]
    assert record.ok
    assert record.metadata["title"].startswith(title)
    assert record.metadata["year"] == year
    assert record.metadata["authors"]


@needs_shared
def test_recorded_crossref_404():
    with serve(
        "/works/10.1371/notarealdoi",
        "crossref-works-doi-10.1371_notarealdoi.404.txt",
        404,
        "text/plain",
    ) as server:
        result = CitationVerifier(loopback_policy(server)).verify("doi:10.1371/notarealdoi")
    assert result.details.citations[0].status == "not_found"


@needs_shared
def test_recorded_pubmed_esummary():
    with serve("/esummary.fcgi", "pubmed-esummary-json-pmid-27933103.json") as server:
        result = CitationVerifier(loopback_policy(server)).verify("PMID: 27933103")
    record = result.details.external_lookup[0]
    expected = json.loads((SHARED / "pubmed-esummary-json-pmid-27933103.json").read_text())[
        "result"
    ]["27933103"]
    assert record.ok
    assert record.metadata["title"] == expected["title"]
    assert record.metadata["year"] == 2016
