"""The lookups of one answer run concurrently, and a repeat is served from the cache.

Generous bounds, not timing benchmarks (``bench/bench_citations.py`` measures): 20 DOIs against a
service answering after 200 ms take 4 s one after the other; concurrently they must finish in
under 5 x 200 ms. The same answer again makes no call.
"""

import asyncio
import socket
import threading
import time

import pytest

from citeverify_core import CitationVerifier
from tests.support.loopback import Loopback, Reply

# One served lookup takes DELAY: 20 in a row take 20 x DELAY (10 s); run together, about one
# DELAY. The limit of 5 x DELAY leaves room for a loaded CI machine (1.01 s was seen with 0.2 s).
DELAY = 0.5
DOIS = [f"10.5555/concurrency.{i}" for i in range(20)]
ANSWER = " ".join(f"Finding {i} is reported in doi:{doi}." for i, doi in enumerate(DOIS))


def work(doi: str, i: int) -> dict[str, object]:
    """A Crossref ``/works/{doi}`` answer in the real service's shape, for ``doi``."""
    return {
        "status": "ok",
        "message-type": "work",
        "message-version": "1.0.0",
        "message": {
            "DOI": doi,
            "type": "journal-article",
            "title": [f"Concurrent lookup study {i}"],
            "author": [
                {"given": "Ada", "family": "Okafor", "sequence": "first", "affiliation": []},
                {"given": "Ben J.", "family": "Novak", "sequence": "additional", "affiliation": []},
            ],
            "container-title": ["PLoS ONE"],
            "publisher": "Public Library of Science (PLoS)",
            "volume": "7",
            "issue": "3",
            "page": f"e{33000 + i}",
            "prefix": "10.5555",
            "URL": f"https://doi.org/{doi}",
            "issued": {"date-parts": [[2012, 3, 21]]},
            "published": {"date-parts": [[2012, 3, 21]]},
        },
    }


@pytest.fixture
def server():
    with Loopback() as s:
        for i, doi in enumerate(DOIS):
            s.routes[("GET", f"/works/{doi}")] = Reply(200, work(doi, i), delay=DELAY)
        s.routes[("GET", "/works/10.5555/warmup")] = Reply(200, work("10.5555/warmup", 99))
        yield s


def verifier(server):
    policy = {
        "require_sources": False,
        "extensions": {"lookups": {"crossref_base_url": server.url, "timeout": 5.0}},
    }
    v = CitationVerifier(policy)
    v.verify("doi:10.5555/warmup")  # the loop, the client, the DOI parser: outside the timing
    server.seen.clear()
    return v


def check_first(result, server, elapsed):
    lookups = result.details.external_lookup
    assert [r.target for r in lookups] == DOIS
    assert all(r.ok for r in lookups), [r.error for r in lookups if not r.ok]
    assert len(server.seen) == 20
    assert elapsed < 5 * DELAY, f"20 lookups took {elapsed:.2f} s: they did not run concurrently"


def check_again(result, server):
    assert len(server.seen) == 20  # no new call
    assert all(r.cached and r.ok for r in result.details.external_lookup)


def test_twenty_doi_lookups_run_concurrently_and_a_repeat_makes_no_call(server):
    v = verifier(server)
    start = time.monotonic()
    first = v.verify(ANSWER)
    check_first(first, server, time.monotonic() - start)
    check_again(v.verify(ANSWER), server)


def test_twenty_doi_lookups_run_concurrently_with_averify(server):
    v = verifier(server)

    async def run():
        start = time.monotonic()
        first = await v.averify(ANSWER)
        elapsed = time.monotonic() - start
        return first, elapsed, await v.averify(ANSWER)

    first, elapsed, again = asyncio.run(run())
    check_first(first, server, elapsed)
    check_again(again, server)


def test_loopback_serves_a_burst_of_clients_at_once(server):
    """20 raw clients connecting together are all answered within about one delay."""

    def get(path, out):
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as conn:
            conn.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
            out.append(conn.recv(16).startswith(b"HTTP/1.1 200"))

    answers: list[bool] = []
    threads = [threading.Thread(target=get, args=(f"/works/{doi}", answers)) for doi in DOIS]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == [True] * 20
    assert time.monotonic() - start < 5 * DELAY


def test_loopback_socket_is_tcp_with_nodelay(server):
    sock = server.httpd.socket
    assert sock.proto == socket.IPPROTO_TCP
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    assert server.httpd.request_queue_size >= 20
