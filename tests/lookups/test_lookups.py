"""Lookups over real HTTP on 127.0.0.1: Crossref, PubMed, URLs, CourtListener, faults, caching."""

import asyncio
import gzip
import itertools
import logging
import time

import pytest

from citeverify_core import CitationVerifier
from citeverify_core.lookups.cache import LookupCache
from tests.support.loopback import Loopback, Reply

DOI = "10.1371/journal.pone.0033693"
TITLE = "Methylphenidate Exposure Induces Dopamine Neuron Loss and Activation of Microglia in the Basal Ganglia of Mice"
CROSSREF_WORK = {
    "status": "ok",
    "message-type": "work",
    "message-version": "1.0.0",
    "message": {
        "DOI": DOI,
        "type": "journal-article",
        "title": [TITLE],
        "author": [
            {"given": "Shankar", "family": "Sadasivan", "sequence": "first", "affiliation": []},
            {
                "given": "Richard J.",
                "family": "Smeyne",
                "sequence": "additional",
                "affiliation": [],
            },
        ],
        "container-title": ["PLoS ONE"],
        "issued": {"date-parts": [[2012, 3, 21]]},
    },
}
ESUMMARY = {
    "header": {"type": "esummary", "version": "0.3"},
    "result": {
        "uids": ["27933103", "99999999"],
        "27933103": {
            "uid": "27933103",
            "pubdate": "2016",
            "source": "J Cheminform",
            "authors": [{"name": "Scalfani VF", "authtype": "Author", "clusterid": ""}],
            "title": "Programmatic conversion of crystal structures into 3D printable files using Jmol.",
            "articleids": [{"idtype": "doi", "idtypen": 3, "value": "10.1186/s13321-016-0181-z"}],
        },
        "99999999": {"uid": "99999999", "error": "cannot get document summary"},
    },
}


@pytest.fixture
def server():
    with Loopback() as s:
        yield s


def policy(server, **lookups):
    return {
        "require_sources": False,
        "extensions": {
            "lookups": {
                "crossref_base_url": server.url,
                "ncbi_base_url": server.url + "/eutils",
                "courtlistener_base_url": server.url,
                "url_allow_hosts": ["127.0.0.1"],
                "timeout": 2.0,
                **lookups,
            }
        },
    }


def citation(result, kind):
    return next(c for c in result.details.citations if c.kind == kind)


def test_doi_found_records_what_the_doi_is(server):
    server.routes[("GET", f"/works/{DOI}")] = Reply(200, CROSSREF_WORK)
    result = CitationVerifier(policy(server, mailto="dev@example.org")).verify(
        f"Methylphenidate exposure causes dopamine neuron loss in mice (doi:{DOI})."
    )
    c = citation(result, "doi")
    assert (c.verified, c.status) == (True, "verified")
    (record,) = result.details.external_lookup
    assert record.service == "crossref"
    assert record.ok
    assert record.status_code == 200
    assert record.metadata["title"] == TITLE
    assert record.metadata["year"] == 2012
    assert record.metadata["container"] == "PLoS ONE"
    assert record.metadata["authors"][0] == "Shankar Sadasivan"
    seen = server.seen[0]
    assert seen.query == "mailto=dev%40example.org"
    assert "mailto:dev@example.org" in seen.headers["User-Agent"]


def test_real_doi_cited_for_the_wrong_paper_is_a_mismatch(server):
    server.routes[("GET", f"/works/{DOI}")] = Reply(200, CROSSREF_WORK)
    result = CitationVerifier(policy(server)).verify(
        f"Transformer language models outperform recurrent networks on translation benchmarks (doi:{DOI})."
    )
    c = citation(result, "doi")
    assert (c.verified, c.status) == (False, "mismatch")
    assert "Methylphenidate" in c.reason


def test_doi_not_found(server):
    result = CitationVerifier(policy(server)).verify("See doi:10.1371/notarealdoi for details.")
    c = citation(result, "doi")
    assert (c.verified, c.status) == (False, "not_found")
    assert result.details.external_lookup[0].status_code == 404


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        pytest.param(Reply(500, "boom"), "HTTP 500", id="server-error"),
        pytest.param(
            Reply(200, "{not json", {"Content-Type": "application/json"}),
            "malformed JSON",
            id="bad-json",
        ),
        pytest.param(Reply(200, ["a list"]), "unexpected Crossref response", id="wrong-shape"),
        pytest.param(Reply(200, CROSSREF_WORK, delay=3.0), "timed out after 0.5s", id="timeout"),
    ],
)
def test_failures_are_data_and_never_block(server, reply, fragment):
    server.routes[("GET", f"/works/{DOI}")] = reply
    verifier = CitationVerifier(
        {**policy(server, timeout=0.5), "output_action": {"unverified_action": "block"}}
    )
    docs = [f"Dopamine neuron loss in mice, see doi:{DOI}."]
    result = verifier.verify(f"Dopamine neuron loss in mice, see doi:{DOI}.", docs)
    c = citation(result, "doi")
    assert c.verified is False
    assert c.status == "lookup_failed"
    assert fragment in c.reason
    assert result.verdict == "allow"  # a failed lookup never blocks by itself
    assert fragment in result.details.external_lookup[0].error


def test_429_is_retried_after_retry_after(server):
    server.routes[("GET", f"/works/{DOI}")] = [
        Reply(429, "slow down", {"Retry-After": "1"}),
        Reply(200, CROSSREF_WORK),
    ]
    start = time.monotonic()
    result = CitationVerifier(policy(server, timeout=3.0)).verify(f"doi:{DOI}")
    assert citation(result, "doi").status == "verified"
    assert time.monotonic() - start >= 1.0
    assert server.calls(f"/works/{DOI}") == 2


def test_retry_after_beyond_the_deadline_gives_up_at_once(server):
    server.routes[("GET", f"/works/{DOI}")] = Reply(503, "maintenance", {"Retry-After": "30"})
    start = time.monotonic()
    result = CitationVerifier(policy(server, timeout=2.0)).verify(f"doi:{DOI}")
    assert time.monotonic() - start < 1.5
    assert "HTTP 503" in citation(result, "doi").reason
    assert server.calls(f"/works/{DOI}") == 1


def test_pubmed_found_and_not_found_in_one_call(server):
    server.routes[("GET", "/eutils/esummary.fcgi")] = Reply(200, ESUMMARY)
    result = CitationVerifier(policy(server, ncbi_api_key="KEY", mailto="dev@example.org")).verify(
        "Jmol printing (PMID: 27933103) and another (PMID: 99999999)."
    )
    found, missing = [c for c in result.details.citations if c.kind == "pmid"]
    assert (found.verified, found.status) == (True, "verified")
    assert (missing.verified, missing.status) == (False, "not_found")
    assert "cannot get document summary" in missing.reason
    assert server.calls("/eutils/esummary.fcgi") == 1
    query = server.seen[0].query
    assert "id=27933103%2C99999999" in query
    assert "api_key=KEY" in query
    assert "tool=citeverify" in query
    record = next(r for r in result.details.external_lookup if r.target == "27933103")
    assert record.metadata["doi"] == "10.1186/s13321-016-0181-z"


def test_the_ncbi_key_in_the_url_is_never_logged(server, caplog):
    # httpx logs every request's URL at INFO; NCBI takes its key only in the query.
    server.routes[("GET", "/eutils/esummary.fcgi")] = Reply(200, ESUMMARY)
    key = "ncbi-7f3a-secret"
    with caplog.at_level(logging.DEBUG):
        CitationVerifier(policy(server, ncbi_api_key=key)).verify("Jmol (PMID: 27933103).")
    assert f"api_key={key}" in server.seen[0].query  # sent, as NCBI needs it
    logged = [r.getMessage() for r in caplog.records]
    assert any("esummary.fcgi" in line and "api_key=***" in line for line in logged)
    assert not any(key in line for line in logged)


def test_url_head_then_get_when_head_is_refused(server):
    server.routes[("HEAD", "/page")] = Reply(405)
    server.routes[("GET", "/page")] = Reply(
        200, "<html><title>A page</title>" + "x" * 200_000, {"Content-Type": "text/html"}
    )
    result = CitationVerifier(policy(server, url_max_bytes=1024)).verify(f"See {server.url}/page.")
    c = citation(result, "url")
    assert (c.verified, c.status) == (True, "verified")
    record = result.details.external_lookup[0]
    assert record.metadata["title"] == "A page"
    assert [s.method for s in server.seen] == ["HEAD", "GET"]


def test_url_redirects_are_followed_and_counted(server):
    for i in range(3):
        server.routes[("HEAD", f"/r{i}")] = Reply(302, headers={"Location": f"/r{i + 1}"})
    server.routes[("HEAD", "/r3")] = Reply(200)
    result = CitationVerifier(policy(server)).verify(f"See {server.url}/r0 now.")
    assert citation(result, "url").status == "verified"
    assert result.details.external_lookup[0].metadata["final_url"].endswith("/r3")
    too_many = CitationVerifier(policy(server, url_max_redirects=2)).verify(
        f"See {server.url}/r0 now."
    )
    assert "more than 2 redirects" in citation(too_many, "url").reason


def test_broken_url_is_not_verified(server):
    result = CitationVerifier(policy(server)).verify(f"See {server.url}/missing now.")
    c = citation(result, "url")
    assert (c.verified, c.status) == (False, "not_found")


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/secret",
        "http://localhost:{port}/secret",
        "http://[::1]:{port}/secret",
        "http://10.0.0.1/admin",
        "http://192.168.1.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://0.0.0.0:{port}/",
        "http://2130706433:{port}/",
        "http://[::ffff:127.0.0.1]:{port}/",
    ],
)
def test_hostile_urls_are_never_fetched(server, url):
    server.routes[("*", "/secret")] = Reply(200, "secret")
    answer = "See " + url.format(port=server.port) + " now."
    result = CitationVerifier(policy(server, url_allow_hosts=[])).verify(answer)
    c = citation(result, "url")
    assert (c.verified, c.status) == (False, "blocked")
    assert server.seen == []


def test_redirect_to_a_loopback_address_is_blocked(server):
    # The allow-list lets the test server in by name only; its redirect to 127.0.0.1 is not.
    server.routes[("HEAD", "/out")] = Reply(
        302, headers={"Location": f"http://127.0.0.1:{server.port}/secret"}
    )
    server.routes[("*", "/secret")] = Reply(200, "secret")
    answer = f"See http://localhost:{server.port}/out now."
    result = CitationVerifier(policy(server, url_allow_hosts=["localhost"])).verify(answer)
    c = citation(result, "url")
    assert c.status == "blocked"
    assert "127.0.0.1" in c.reason
    assert server.calls("/secret") == 0


def test_non_http_schemes_and_credentials(server):
    server.routes[("HEAD", "/private")] = Reply(200)
    result = CitationVerifier(policy(server)).verify(
        f"See http://user:pass@127.0.0.1:{server.port}/private now."
    )
    assert citation(result, "url").status == "verified"
    assert "Authorization" not in server.seen[0].headers
    assert "Cookie" not in server.seen[0].headers


def test_slow_body_is_cut_by_the_call_timeout(server):
    server.routes[("HEAD", "/slow")] = Reply(405)
    server.routes[("GET", "/slow")] = Reply(200, "x" * 50_000, trickle=0.2)
    start = time.monotonic()
    result = CitationVerifier(policy(server, timeout=0.6, url_max_bytes=60_000)).verify(
        f"See {server.url}/slow now."
    )
    assert time.monotonic() - start < 2.5
    assert "timed out" in citation(result, "url").reason


def test_lookups_of_an_answer_run_concurrently_within_the_deadline(server):
    dois = [f"10.5555/test.{i}" for i in range(10)]
    for d in dois:
        server.routes[("GET", f"/works/{d}")] = Reply(200, CROSSREF_WORK, delay=0.3)
    answer = " ".join(f"doi:{d}" for d in dois)
    start = time.monotonic()
    result = CitationVerifier(policy(server)).verify(answer)
    assert time.monotonic() - start < 2.0  # ten 0.3 s calls: 3 s one after the other
    assert len(result.details.external_lookup) == 10


def test_answer_deadline_marks_pending_lookups(server):
    server.routes[("GET", f"/works/{DOI}")] = Reply(200, CROSSREF_WORK, delay=1.5)
    result = CitationVerifier(policy(server, timeout=5.0, deadline=0.3)).verify(f"doi:{DOI}")
    assert "deadline" in citation(result, "doi").reason


def test_cache_serves_repeats_with_zero_calls(server, tmp_path):
    server.routes[("GET", f"/works/{DOI}")] = Reply(200, CROSSREF_WORK)
    verifier = CitationVerifier(policy(server, cache_path=str(tmp_path / "lookups.sqlite")))
    verifier.verify(f"doi:{DOI} and doi:10.1371/notarealdoi")
    again = verifier.verify(f"doi:{DOI} and doi:10.1371/notarealdoi")
    assert [r.cached for r in again.details.external_lookup] == [True, True]
    assert server.calls(f"/works/{DOI}") == 1
    # A new process (a new verifier) reads the SQLite file.
    fresh = CitationVerifier(policy(server, cache_path=str(tmp_path / "lookups.sqlite")))
    assert fresh.verify(f"doi:{DOI}").details.external_lookup[0].cached
    assert server.calls(f"/works/{DOI}") == 1


def test_failures_are_not_cached(server):
    server.routes[("GET", f"/works/{DOI}")] = [Reply(500, "boom"), Reply(200, CROSSREF_WORK)]
    verifier = CitationVerifier(policy(server, retries=0))
    assert citation(verifier.verify(f"doi:{DOI}"), "doi").status == "lookup_failed"
    assert citation(verifier.verify(f"doi:{DOI}"), "doi").status == "verified"


def test_negative_results_expire_sooner(tmp_path):
    cache = LookupCache()
    cache.put("crossref", "a", {"x": 1}, ttl=60)
    cache.put("crossref", "b", {"x": 2}, ttl=0.01)
    time.sleep(0.05)
    assert cache.get("crossref", "a") == {"x": 1}
    assert cache.get("crossref", "b") is None


def test_lookups_can_be_turned_off(server):
    result = CitationVerifier(policy(server, enabled=False)).verify(f"doi:{DOI}")
    assert citation(result, "doi").verified is None
    assert result.details.external_lookup == []
    assert server.seen == []


def test_a_successful_lookup_is_source_evidence():
    # No context documents: the answer passes only with source evidence (the decision's rule for no context).
    with Loopback() as server:
        server.routes[("GET", f"/works/{DOI}")] = Reply(200, CROSSREF_WORK)
        strict = {**policy(server), "require_sources": True}
        ok = CitationVerifier(strict).verify(
            f"Dopamine neuron loss in mice after methylphenidate (doi:{DOI})."
        )
        assert ok.verified
        missing = CitationVerifier(strict).verify("Dopamine loss, doi:10.1371/notarealdoi.")
        assert not missing.verified


def test_case_law_resolver_is_opt_in(server):
    server.routes[("POST", "/api/rest/v4/citation-lookup/")] = Reply(
        200,
        [
            {
                "citation": "5 U.S. 137",
                "normalized_citations": ["5 U.S. 137"],
                "start_index": 0,
                "end_index": 10,
                "status": 200,
                "error_message": "",
                "clusters": [{"case_name": "Marbury v. Madison"}],
            },
            {
                "citation": "999 U.S. 1",
                "normalized_citations": ["999 U.S. 1"],
                "start_index": 12,
                "end_index": 22,
                "status": 404,
                "error_message": "Citation not found: '999 U.S. 1'",
                "clusters": [],
            },
        ],
    )
    answer = "Marbury v. Madison, 5 U.S. 137 (1803). Doe v. Roe, 999 U.S. 1 (2001)."
    plain = CitationVerifier(policy(server)).verify(answer)
    assert {c.status for c in plain.details.citations if c.type == "case_law"} == {"format_valid"}
    assert server.seen == []
    resolved = CitationVerifier(
        policy(server, case_law_resolver=True, courtlistener_token="T")
    ).verify(answer)
    statuses = {
        c.normalized: (c.verified, c.status)
        for c in resolved.details.citations
        if c.type == "case_law"
    }
    assert statuses == {"5 U.S. 137": (True, "verified"), "999 U.S. 1": (False, "not_found")}
    assert server.seen[0].headers["Authorization"] == "Token T"


def test_sync_verify_works_inside_a_running_event_loop(server):
    server.routes[("GET", f"/works/{DOI}")] = Reply(200, CROSSREF_WORK)
    verifier = CitationVerifier(policy(server))

    async def notebook_cell():
        return verifier.verify(f"doi:{DOI}")  # what a Jupyter cell does

    result = asyncio.run(notebook_cell())
    assert citation(result, "doi").status == "verified"


@pytest.mark.asyncio
async def test_averify_with_an_injected_client(server):
    import httpx

    server.routes[("GET", f"/works/{DOI}")] = Reply(200, CROSSREF_WORK)
    async with httpx.AsyncClient() as client:
        verifier = CitationVerifier(policy(server), client=client)
        result = await verifier.averify(f"doi:{DOI}")
    assert citation(result, "doi").status == "verified"


def test_redirect_to_another_scheme_is_blocked(server):
    server.routes[("HEAD", "/ftp")] = Reply(301, headers={"Location": "ftp://example.org/file"})
    result = CitationVerifier(policy(server)).verify(f"See {server.url}/ftp now.")
    c = citation(result, "url")
    assert c.status == "blocked"
    assert "scheme 'ftp'" in c.reason


@pytest.mark.asyncio
async def test_ncbi_rate_limit_spaces_calls():
    from citeverify_core.lookups.http import RateLimiter

    limiter = RateLimiter(10)  # with an API key
    start = time.monotonic()
    for _ in range(4):
        await limiter.wait()
    assert time.monotonic() - start >= 0.3  # 4 calls at 10/s: the last one 0.3 s after the first
    assert RateLimiter(3).interval == pytest.approx(1 / 3)


def test_pubmed_calls_of_separate_answers_respect_the_rate(server):
    server.routes[("GET", "/eutils/esummary.fcgi")] = Reply(200, ESUMMARY)
    start = time.monotonic()
    for _ in range(3):  # separate verifiers: the limit is per process, as NCBI counts it
        CitationVerifier(policy(server, negative_cache_ttl=0, cache_ttl=0)).verify("PMID: 27933103")
    assert server.calls("/eutils/esummary.fcgi") == 3
    assert time.monotonic() - start >= 2 / 3  # three calls at 3/s without an API key


# --- the core's rules, shared by every caller ---------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(None, None, id="absent"),
        pytest.param("", None, id="empty"),
        pytest.param(" 7 ", 7.0, id="seconds"),
        pytest.param("\u00b2", None, id="superscript-two"),
        pytest.param("1.5", None, id="fraction"),
        pytest.param("-5", None, id="negative"),
        pytest.param("nan", None, id="nan"),
        pytest.param("9" * 5000, float("inf"), id="5000-digits"),
        pytest.param("Mon, 01 Jan 2001 00:00:00 GMT", 0.0, id="past-date"),
        pytest.param("Mon, 01 Jan 99999 00:00:00 GMT", None, id="year-99999"),
    ],
)
def test_retry_after_is_one_rule(value, expected):
    from citeverify_core.lookups.http import retry_after

    assert retry_after(value) == expected


def test_retry_after_reads_a_future_date():
    from email.utils import formatdate

    from citeverify_core.lookups.http import retry_after

    seconds = retry_after(formatdate(time.time() + 30, usegmt=True))
    assert seconds is not None and 28 <= seconds <= 31


def test_a_host_rate_applies_to_every_caller(server, monkeypatch):
    # NCBI's rate is a property of its host: a URL in an answer that points there waits too.
    import citeverify_core.lookups.http as core

    monkeypatch.setattr(core, "DEFAULT_HOST_RATES", {"127.0.0.1": 5.0})
    times: list[float] = []

    def page(_seen):
        times.append(time.monotonic())
        return Reply(200)

    for path in ("/a", "/b", "/c"):
        server.routes[("HEAD", path)] = page
    url = server.url
    result = CitationVerifier(policy(server)).verify(f"See {url}/a and {url}/b and {url}/c now.")
    assert [c.status for c in result.details.citations] == ["verified"] * 3
    ordered = sorted(times)
    assert min(b - a for a, b in itertools.pairwise(ordered)) >= 0.15  # 5/s: 0.2 s


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw-deflate", "identity"])
def test_the_inflater_never_makes_more_than_a_step(encoding):
    import zlib

    from citeverify_core.lookups.http import Inflater

    plain = b"x" * 3_000_000
    if encoding == "gzip":
        data = gzip.compress(plain)
    elif encoding == "identity":
        data = plain
    else:
        wbits = -zlib.MAX_WBITS if encoding == "raw-deflate" else zlib.MAX_WBITS
        packer = zlib.compressobj(wbits=wbits)
        data = packer.compress(plain) + packer.flush()
    inflater = Inflater("deflate" if encoding == "raw-deflate" else encoding, step=4096)
    pieces = [p for i in range(0, len(data), 1000) for p in inflater.feed(data[i : i + 1000])]
    assert b"".join(pieces) == plain
    assert encoding == "identity" or max(map(len, pieces)) <= 4096
