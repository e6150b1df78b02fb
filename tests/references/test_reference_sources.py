"""Remote bibliographic sources over real HTTP on 127.0.0.1, in the shapes of the real APIs."""

import itertools
import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from citeverify_core.policy.settings import LookupSettings
from citeverify_core.references import ReferenceVerifier
from tests.support.loopback import Loopback, Reply

SHARED = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "api"

CROSSREF_ITEM = {
    "DOI": "10.1038/nature14539",
    "type": "journal-article",
    "title": ["Deep learning"],
    "author": [
        {"given": "Yann", "family": "LeCun", "sequence": "first", "affiliation": []},
        {"given": "Yoshua", "family": "Bengio", "sequence": "additional", "affiliation": []},
        {"given": "Geoffrey", "family": "Hinton", "sequence": "additional", "affiliation": []},
    ],
    "container-title": ["Nature"],
    "issued": {"date-parts": [[2015, 5, 27]]},
    "volume": "521",
    "issue": "7553",
    "page": "436-444",
    "score": 87.2,
}
OPENALEX_WORK = {
    "id": "https://openalex.org/W1",
    "doi": "https://doi.org/10.1038/nature14539",
    "title": "Deep learning",
    "display_name": "Deep learning",
    "publication_year": 2015,
    "type": "article",
    "authorships": [
        {
            "author_position": "first",
            "author": {"display_name": "Yann LeCun"},
            "raw_author_name": "Yann LeCun",
        },
        {
            "author_position": "middle",
            "author": {"display_name": "Yoshua Bengio"},
            "raw_author_name": "Yoshua Bengio",
        },
        {
            "author_position": "last",
            "author": {"display_name": "Geoffrey E. Hinton"},
            "raw_author_name": "Geoffrey E. Hinton",
        },
    ],
    "primary_location": {"source": {"display_name": "Nature"}},
    "biblio": {"volume": "521", "issue": "7553", "first_page": "436", "last_page": "444"},
}
REFERENCE = "LeCun, Y., Bengio, Y., & Hinton, G. (2015). Deep learning. Nature, 521(7553), 436–444."


@pytest.fixture
def server():
    with Loopback() as s:
        yield s


def settings(server, **extra):
    return LookupSettings(
        crossref_base_url=server.url,
        openalex_base_url=server.url + "/oa",
        ncbi_base_url=server.url + "/eutils",
        semanticscholar_base_url=server.url + "/s2",
        **{"timeout": 2.0, **extra},
    )


def test_crossref_bibliographic_query(server):
    server.routes[("GET", "/works")] = Reply(
        200, {"status": "ok", "message-type": "work-list", "message": {"items": [CROSSREF_ITEM]}}
    )
    result = ReferenceVerifier(
        sources=["crossref"], settings=settings(server, mailto="dev@example.org")
    ).verify(REFERENCE)
    assert result.status == "verified"
    assert result.verificationGraph["nodes"][1]["sourceType"] == "CROSSREF"
    assert result.verificationGraph["metadata"]["sourcesQueried"] == ["CROSSREF"]
    assert "query.bibliographic=LeCun" in server.seen[0].query
    assert "mailto=dev%40example.org" in server.seen[0].query


def test_openalex_search_and_merge_by_doi(server):
    server.routes[("GET", "/oa/works")] = Reply(
        200, {"meta": {"count": 1}, "results": [OPENALEX_WORK]}
    )
    server.routes[("GET", "/works")] = Reply(
        200, {"status": "ok", "message": {"items": [CROSSREF_ITEM]}}
    )
    result = ReferenceVerifier(sources=["openalex", "crossref"], settings=settings(server)).verify(
        REFERENCE
    )
    graph = result.verificationGraph
    assert graph["metadata"]["totalCandidates"] == 1  # the same DOI from two sources: one candidate
    assert graph["nodes"][1]["sourceType"] == "OPENALEX"  # the first source keeps it
    assert result.status == "verified"


def test_pubmed_esearch_then_esummary(server):
    server.routes[("GET", "/eutils/esearch.fcgi")] = Reply(
        200, {"esearchresult": {"count": "1", "idlist": ["26017442"]}}
    )
    server.routes[("GET", "/eutils/esummary.fcgi")] = Reply(
        200,
        {"result": {"uids": ["26017442"], "26017442": {
            "uid": "26017442", "pubdate": "2015 May 28", "source": "Nature", "fulljournalname": "Nature",
            "title": "Deep learning.", "volume": "521", "issue": "7553", "pages": "436-44",
            "authors": [{"name": "LeCun Y"}, {"name": "Bengio Y"}, {"name": "Hinton G"}],
            "articleids": [{"idtype": "doi", "value": "10.1038/nature14539"}],
        }}},
    )  # fmt: skip
    result = ReferenceVerifier(sources=["pubmed"], settings=settings(server)).verify(REFERENCE)
    assert result.status == "verified"
    assert result.verificationGraph["nodes"][1]["sourceType"] == "PUBMED"
    assert "term=Deep+learning%5BTitle%5D" in server.seen[0].query


def test_semantic_scholar_match(server):
    server.routes[("GET", "/s2/graph/v1/paper/search/match")] = Reply(
        200,
        {"data": [{"paperId": "x", "title": "Deep learning", "matchScore": 120.1, "year": 2015, "venue": "Nature",
                   "authors": [{"name": "Yann LeCun"}, {"name": "Yoshua Bengio"}, {"name": "Geoffrey E. Hinton"}],
                   "externalIds": {"DOI": "10.1038/nature14539"}}]},
    )  # fmt: skip
    result = ReferenceVerifier(
        sources=["semanticscholar"], settings=settings(server, semanticscholar_api_key="K")
    ).verify(REFERENCE)
    assert result.status == "verified"
    assert server.seen[0].headers["x-api-key"] == "K"


@pytest.mark.parametrize(
    "reply",
    [
        Reply(500, "boom"),
        Reply(200, "{not json", {"Content-Type": "application/json"}),
        Reply(200, {"message": "odd"}),
        Reply(200, CROSSREF_ITEM, delay=3),
    ],
    ids=["500", "bad-json", "odd-shape", "timeout"],
)
def test_a_failing_source_never_fails_the_reference(server, reply):
    server.routes[("GET", "/works")] = reply
    server.routes[("GET", "/oa/works")] = Reply(200, {"results": [OPENALEX_WORK]})
    result = ReferenceVerifier(
        sources=["crossref", "openalex"], settings=settings(server, timeout=1.0)
    ).verify(REFERENCE)
    assert result.status == "verified"  # OpenAlex still answered


def test_twenty_references_run_concurrently(server):
    server.routes[("GET", "/works")] = Reply(
        200, {"status": "ok", "message": {"items": [CROSSREF_ITEM]}}, delay=0.3
    )
    verifier = ReferenceVerifier(sources=["crossref"], settings=settings(server))
    start = time.monotonic()
    results = verifier.verify_references([REFERENCE] * 20)
    assert time.monotonic() - start < 3.0  # serially 6 s; 15 at a time: two rounds (0.6 s)
    assert {r.status for r in results} == {"verified"}


@pytest.mark.skipif(
    not SHARED.is_dir(),
    reason=f"the shared API fixtures are not at {SHARED} (outside this repository)",
)
def test_recorded_crossref_bibliographic_responses(server):
    # The CERMINE paper, queried correctly and with a corrupted reference (Crossref's own test).
    correct = json.loads(
        (SHARED / "crossref-works-query.bibliographic-cermine-correct.json").read_text()
    )
    server.routes[("GET", "/works")] = Reply(200, correct)
    reference = ("D. Tkaczyk, P. Szostek, M. Fedoryszak, P. J. Dendek, and Ł. Bolikowski, “CERMINE: automatic "
                 "extraction of structured metadata from scientific literature,” International Journal on Document "
                 "Analysis and Recognition (IJDAR), vol. 18, no. 4, pp. 317–335, 2015.")  # fmt: skip
    result = ReferenceVerifier(sources=["crossref"], settings=settings(server)).verify(reference)
    assert result.status in {"verified", "verified-with-error"}
    assert "10.1007/s10032-015-0249-8" in result.reference
    corrupted = json.loads(
        (SHARED / "crossref-works-query.bibliographic-cermine-corrupted.json").read_text()
    )
    server.routes[("GET", "/works")] = Reply(200, corrupted)
    bad = ("P. Szostek, M. Fedoryszak, P. J. Dendek, and Ł. Bolikowski, “CERMINE: automatic extraction of "
           "structured metadata from scientific literature,” IJDAR, vol. 14, no. 40, pp. 310–335, 2016.")  # fmt: skip
    result = ReferenceVerifier(sources=["crossref"], settings=settings(server)).verify(bad)
    assert result.status in {
        "verified-with-error",
        "needs-human",
    }  # never "verified" with a wrong year


def test_remote_answers_are_cached(server):
    server.routes[("GET", "/works")] = Reply(
        200, {"status": "ok", "message": {"items": [CROSSREF_ITEM]}}
    )
    verifier = ReferenceVerifier(sources=["crossref"], settings=settings(server))
    verifier.verify(REFERENCE)
    again = verifier.verify(REFERENCE)
    assert again.status == "verified"
    assert len(server.seen) == 1


# --- NCBI's rate limit: every call to E-utilities waits on one limiter -------------------------

ESUMMARY_DEEP_LEARNING = {
    "result": {
        "uids": ["26017442"],
        "26017442": {
            "uid": "26017442",
            "pubdate": "2015 May 28",
            "fulljournalname": "Nature",
            "title": "Deep learning.",
            "authors": [{"name": "LeCun Y"}, {"name": "Bengio Y"}, {"name": "Hinton G"}],
            "articleids": [{"idtype": "doi", "value": "10.1038/nature14539"}],
        },
    }
}


def stamped(server, path, reply, times):
    """Route ``path`` to ``reply``, noting when each request arrived (monotonic seconds)."""

    def answer(_seen):
        times.append(time.monotonic())
        return reply

    server.routes[("GET", path)] = answer


def spacing(times):
    """The shortest gap between two requests, in arrival order."""
    ordered = sorted(times)
    return min(b - a for a, b in itertools.pairwise(ordered))


def test_reference_verification_waits_on_ncbis_limiter(server):
    # Four references verified at once make four esearch and four esummary calls: at 3/s
    # without an API key, never two within a third of a second of each other.
    times: list[float] = []
    stamped(
        server,
        "/eutils/esearch.fcgi",
        Reply(200, {"esearchresult": {"idlist": ["26017442"]}}),
        times,
    )
    stamped(server, "/eutils/esummary.fcgi", Reply(200, ESUMMARY_DEEP_LEARNING), times)
    verifier = ReferenceVerifier(
        sources=["pubmed"],
        settings=settings(server, cache_ttl=0, negative_cache_ttl=0, timeout=10.0),
    )
    titles = ["Deep learning", "Deep learning again", "Deep learning, once more", "Deep nets"]
    references = [REFERENCE.replace("Deep learning", title) for title in titles]
    results = verifier.verify_references(references)
    assert len(times) == 8
    # The limiter's slots are a third of a second apart; the server notes them with some jitter.
    assert spacing(times) >= 0.25
    assert max(times) - min(times) >= (len(times) - 1) / 3 - 0.05
    assert results[0].status == "verified"


def test_answer_lookups_and_reference_sources_share_ncbis_limiter(server):
    # The answer verifier's PMID lookups and the reference sources are two clients of one core:
    # run side by side, their calls to the same E-utilities host are spaced as one stream.
    from citeverify_core import CitationVerifier

    times: list[float] = []
    stamped(
        server,
        "/eutils/esearch.fcgi",
        Reply(200, {"esearchresult": {"idlist": ["26017442"]}}),
        times,
    )
    stamped(server, "/eutils/esummary.fcgi", Reply(200, ESUMMARY_DEEP_LEARNING), times)
    # A source's deadline covers its waits on the limiter: long enough for all of them here.
    uncached = {"cache_ttl": 0, "negative_cache_ttl": 0, "timeout": 10.0}
    answers = CitationVerifier(
        {
            "require_sources": False,
            "extensions": {"lookups": {"ncbi_base_url": server.url + "/eutils", **uncached}},
        }
    )
    references = ReferenceVerifier(sources=["pubmed"], settings=settings(server, **uncached))

    def check_answers():
        for _ in range(3):
            answers.verify("PMID: 26017442")

    with ThreadPoolExecutor(2) as pool:
        done = pool.submit(check_answers)
        results = references.verify_references([REFERENCE, REFERENCE.replace("Deep", "Deeper")])
        done.result()
    assert len(times) == 3 + 4
    assert spacing(times) >= 0.25
    assert max(times) - min(times) >= (len(times) - 1) / 3 - 0.05
    assert {r.status for r in results} <= {"verified", "verified-with-error"}
