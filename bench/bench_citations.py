"""Citation extraction speed, and lookup concurrency and caching against a loopback service.

Targets (issue 3): extraction of all types over a 1 MB answer at 5 MB/s or more; 20 distinct DOIs
against a service answering after 200 ms verified in at most 1.5x one call's latency; a second
run served fully from the cache with zero calls. Issue 14 repaired the lookup part: each DOI is
served a Crossref work with that DOI (it had no DOI, so every lookup failed and nothing was
cached), and the loopback server no longer has a listen backlog of 5 that made 20 clients wait.

Run: ``uv run python bench/bench_citations.py`` (``--lookups`` for the lookup part only).
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

from _corpus import text, vocabulary

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.support.loopback

from citeverify_core import CitationVerifier
from citeverify_core.engine.extract import extract, find_markers
from citeverify_core.text import find_quotes
from tests.support.loopback import Loopback, Reply

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


ROUNDS = 5
DELAY = 0.2  # seconds the loopback service takes to answer each call
SURNAMES = ["Okafor", "Lindqvist", "Moreau", "Tanaka", "Haddad", "Novak", "Ferreira", "Kim"]


def work(doi: str, i: int) -> dict[str, object]:
    """A Crossref ``/works/{doi}`` answer in the shape the real service gives (written here, not
    recorded): the envelope, and a journal article whose ``DOI`` is the one asked for."""
    year = 2000 + i % 25
    first, second = SURNAMES[i % len(SURNAMES)], SURNAMES[(i + 3) % len(SURNAMES)]
    return {
        "status": "ok",
        "message-type": "work",
        "message-version": "1.0.0",
        "message": {
            "indexed": {"date-parts": [[2026, 6, 6]], "date-time": "2026-06-06T19:55:37Z"},
            "reference-count": 30 + i,
            "publisher": "Public Library of Science (PLoS)",
            "issue": str(1 + i % 12),
            "content-domain": {"domain": [], "crossmark-restriction": False},
            "short-container-title": ["PLoS ONE"],
            "DOI": doi,
            "type": "journal-article",
            "created": {"date-parts": [[year, 3, 23]], "date-time": f"{year}-03-23T01:00:52Z"},
            "page": f"e{33000 + i}",
            "source": "Crossref",
            "is-referenced-by-count": 7 * i,
            "title": [f"Benchmark study {i} of lookup concurrency in citation checking"],
            "prefix": doi.split("/", 1)[0],
            "volume": str(year - 2005),
            "author": [
                {"given": "Ada", "family": first, "sequence": "first", "affiliation": []},
                {"given": "Ben J.", "family": second, "sequence": "additional", "affiliation": []},
            ],
            "member": "340",
            "container-title": ["PLoS ONE"],
            "language": "en",
            "link": [],
            "deposited": {"date-parts": [[year, 5, 1]], "date-time": f"{year}-05-01T00:00:00Z"},
            "score": 1,
            "issued": {"date-parts": [[year, 3, 21]]},
            "references-count": 30 + i,
            "URL": f"https://doi.org/{doi}",
            "ISSN": ["1932-6203"],
            "issn-type": [{"value": "1932-6203", "type": "electronic"}],
            "published": {"date-parts": [[year, 3, 21]]},
        },
    }


def bench_lookups() -> None:
    """One DOI call vs 20 distinct DOIs in one answer (fresh DOIs each round, so nothing comes
    from the cache), then that answer again: medians of ``ROUNDS`` interleaved rounds."""
    with Loopback() as server:

        def serve(doi: str, i: int, delay: float = DELAY) -> str:
            server.routes[("GET", f"/works/{doi}")] = Reply(200, work(doi, i), delay=delay)
            return doi

        policy = {
            "require_sources": False,
            "extensions": {"lookups": {"crossref_base_url": server.url, "timeout": 5}},
        }
        verifier = CitationVerifier(policy)
        single = CitationVerifier(policy)
        for v, name in ((verifier, "warmup.a"), (single, "warmup.b")):
            # start each verifier's loop and client outside the timing
            v.verify(f"doi:{serve(f'10.5555/{name}', 0, 0.0)}")
        ones, colds, warms, ratios, calls_cold, calls_warm, oks, cached = ([] for _ in range(8))
        for r in range(ROUNDS):
            doi = serve(f"10.5555/single.{r}", r)
            start = time.perf_counter()
            single.verify(f"doi:{doi}")
            one = time.perf_counter() - start
            dois = [serve(f"10.5555/bench.{r}.{i}", i) for i in range(20)]
            answer = " ".join(f"Claim {i} (doi:{d})." for i, d in enumerate(dois))
            before = len(server.seen)
            start = time.perf_counter()
            first = verifier.verify(answer)
            cold = time.perf_counter() - start
            middle = len(server.seen)
            start = time.perf_counter()
            second = verifier.verify(answer)
            warm = time.perf_counter() - start
            ones.append(one)
            colds.append(cold)
            warms.append(warm)
            ratios.append(cold / one)
            calls_cold.append(middle - before)
            calls_warm.append(len(server.seen) - middle)
            oks.append(sum(x.ok for x in first.details.external_lookup))
            cached.append(sum(x.cached for x in second.details.external_lookup))
    med = statistics.median
    print(
        f"lookups against a loopback Crossref answering after {DELAY * 1000:.0f} ms, "
        f"median of {ROUNDS} rounds:"
    )
    print(f"  one DOI call:           {med(ones) * 1000:7.1f} ms")
    ratio = med(ratios)
    print(
        f"  20 DOIs concurrently:   {med(colds) * 1000:7.1f} ms = {ratio:.2f}x one call "
        f"(target <= 1.5x: {'met' if ratio <= 1.5 else 'NOT MET'}), "
        f"{min(calls_cold)}-{max(calls_cold)} calls, {min(oks)}-{max(oks)}/20 verified"
    )
    again = max(calls_warm)
    print(
        f"  same answer again:      {med(warms) * 1000:7.1f} ms, {again} calls "
        f"(target 0: {'met' if again == 0 else 'NOT MET'}), "
        f"{min(cached)}-{max(cached)}/20 from the cache"
    )


if __name__ == "__main__":
    if "--lookups" not in sys.argv:
        bench_extraction()
    bench_lookups()
