"""Citation extraction speed, and lookup concurrency and caching against a loopback service.

Targets (issue 3): extraction of all types over a 1 MB answer at 5 MB/s or more; 20 distinct DOIs
against a service answering after 200 ms verified in at most 1.5x one call's latency; a second
run served fully from the cache with zero calls.

Run: ``uv run python bench/bench_citations.py``.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

from _corpus import text, vocabulary

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.loopback

from citeverify import CitationVerifier
from citeverify._extract import extract, find_markers
from citeverify._text import find_quotes
from tests.loopback import Loopback, Reply

ALL = ["academic", "url", "case_law", "regulatory", "statistic"]
SNIPPETS = [
    "as shown in doi:10.1371/journal.pone.0033693",
    "(PMID: 27933103)",
    "see https://example.org/report_(2020).pdf",
    "in Marbury v. Madison, 5 U.S. 137 (1803)",
    "under 42 U.S.C. § 1983",
    "Regulation (EU) 2016/679",
    "rose 12.5% to $3.5 million (p < 0.05, n = 1,024)",
    '"a quoted passage of the source"',
    "[2]",
]


def answer_of(size: int) -> str:
    rng = random.Random(5)
    prose = text(size, vocabulary())
    parts = []
    for i in range(0, len(prose), 2000):  # one citation per ~2 KB of prose
        parts.append(prose[i : i + 2000])
        parts.append(" " + rng.choice(SNIPPETS) + ". ")
    return "".join(parts)[:size]


def bench_extraction() -> None:
    for size in (100_000, 1_000_000):
        answer = answer_of(size)
        extract(answer[:5000], ALL, current_year=2026)  # import eyecite outside the timing
        best = float("inf")
        for _ in range(7):
            start = time.perf_counter()
            found = extract(answer, ALL, current_year=2026)
            find_quotes(answer)
            find_markers(answer)
            best = min(best, time.perf_counter() - start)
        mb = size / 1e6
        print(
            f"extraction, {size / 1000:>5.0f} KB answer: {best * 1000:7.1f} ms, "
            f"{mb / best:5.1f} MB/s, {len(found)} citations (target >= 5 MB/s)"
        )


WORK = {
    "status": "ok",
    "message-type": "work",
    "message": {"title": ["A work"], "author": [], "issued": {"date-parts": [[2020]]}},
}


def bench_lookups() -> None:
    dois = [f"10.5555/bench.{i}" for i in range(20)]
    with Loopback() as server:
        for d in dois:
            server.routes[("GET", f"/works/{d}")] = Reply(200, WORK, delay=0.2)
        policy = {
            "require_sources": False,
            "extensions": {"lookups": {"crossref_base_url": server.url, "timeout": 5}},
        }
        server.routes[("GET", "/works/10.5555/warmup")] = Reply(200, WORK)
        verifier = CitationVerifier(policy)
        verifier.verify("doi:10.5555/warmup")  # start the loop and the client outside the timing
        single = CitationVerifier(policy)
        one = float("inf")
        for i in range(3):  # distinct DOIs, so none is served from the cache
            server.routes[("GET", f"/works/10.5555/single.{i}")] = Reply(200, WORK, delay=0.2)
            start = time.perf_counter()
            single.verify(f"doi:10.5555/single.{i}")
            one = min(one, time.perf_counter() - start)
        server.seen.clear()
        answer = " ".join(f"Claim {i} (doi:{d})." for i, d in enumerate(dois))
        start = time.perf_counter()
        first = verifier.verify(answer)
        cold = time.perf_counter() - start
        calls_cold = len(server.seen)
        start = time.perf_counter()
        second = verifier.verify(answer)
        warm = time.perf_counter() - start
        calls_warm = len(server.seen) - calls_cold
    ok = sum(r.ok for r in first.details.external_lookup)
    cached = sum(r.cached for r in second.details.external_lookup)
    print(f"one DOI call (200 ms service):   {one * 1000:7.1f} ms")
    print(
        f"20 DOIs in one answer:           {cold * 1000:7.1f} ms = {cold / one:.2f}x one call "
        f"(target <= 1.5x), {calls_cold} calls, {ok} verified"
    )
    print(
        f"same answer again:               {warm * 1000:7.1f} ms, {calls_warm} calls, "
        f"{cached}/20 from the cache (target: 0 calls)"
    )


if __name__ == "__main__":
    bench_extraction()
    bench_lookups()
