"""The local index and the reference verifier: build size and memory, lookup latency, throughput,
and the confusion matrix of the statuses on a labelled set.

Targets (issue 6): build a 1,000,000-record index in bounded memory (streaming insert); a lookup
in at most 10 ms p50; at least 200 references per second sustained on one core.

Run: ``uv run python bench/bench_references.py`` (``--records 100000`` for a quicker run).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import resource
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from citeverify_core.references import LocalIndex, Record, ReferenceVerifier, apa7

from _corpus import vocabulary

SURNAMES = [
    "Smith", "Müller", "García", "Nguyen", "Kowalski", "Rossi", "Tanaka", "Okafor", "Johansson",
    "Dubois", "Silva", "Kim", "Ivanova", "Cohen", "O'Brien", "van der Berg", "Novák", "Haddad",
]  # fmt: skip
GIVEN = ["Anna", "Jean-Luc", "María José", "T. S.", "Wei", "Olu", "Sven", "Ana", "J."]
JOURNALS = [
    "Journal of Applied Research", "Analytical Biochemistry", "Physical Review Letters",
    "Nature Communications", "PLoS ONE", "Annals of Statistics", "Cell Reports",
]  # fmt: skip


def work(i: int, rng: random.Random, words: list[str]) -> dict[str, object]:
    """A Crossref work of the real shape (message fields as in api.crossref.org/works)."""
    title = " ".join(rng.choice(words) for _ in range(rng.randint(4, 12))).capitalize()
    return {
        "DOI": f"10.{5000 + i % 4000}/bench.{i}",
        "type": "journal-article",
        "title": [title],
        "author": [
            {
                "given": rng.choice(GIVEN),
                "family": rng.choice(SURNAMES),
                "sequence": "additional",
                "affiliation": [],
            }
            for _ in range(rng.randint(1, 6))
        ],
        "container-title": [rng.choice(JOURNALS)],
        "issued": {"date-parts": [[rng.randint(1950, 2025), rng.randint(1, 12)]]},
        "volume": str(rng.randint(1, 300)),
        "issue": str(rng.randint(1, 12)),
        "page": f"{(p := rng.randint(1, 900))}-{p + rng.randint(2, 30)}",
    }


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument(
        "--keep", type=Path, help="keep the index here and reuse it on the next run"
    )
    args = parser.parse_args()
    rng = random.Random(11)
    words = vocabulary(50_000)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "index.sqlite"
        if path.exists():
            index = LocalIndex(path)
            print(f"reusing {path}: {index.stats()['records']:,} records")
        else:
            dump = Path(tmp) / "works.jsonl.gz"
            start = time.perf_counter()
            with gzip.open(dump, "wt", compresslevel=1) as f:
                for i in range(args.records):
                    f.write(json.dumps(work(i, rng, words)) + "\n")
            print(
                f"generated {args.records:,} Crossref-shaped works in {time.perf_counter() - start:.1f} s "
                f"({dump.stat().st_size / 2**20:.0f} MB gzipped)"
            )
            before = peak_mb()
            index = LocalIndex(path)
            start = time.perf_counter()
            count = index.build(dump)
            build = time.perf_counter() - start
            print(
                f"built the index: {count:,} records in {build:.1f} s ({count / build:,.0f} records/s), "
                f"{path.stat().st_size / 2**20:.0f} MB on disk; peak RSS {peak_mb():.0f} MB "
                f"(before the build: {before:.0f} MB)"
            )
        args.records = index.stats()["records"]

        # Lookups: title searches for records that exist, by DOI, and for made-up titles.
        probe_rng = random.Random(7)
        ids = [probe_rng.randrange(args.records) for _ in range(500)]
        titles: list[Record] = []
        for i in ids:
            record = index.by_doi(f"10.{5000 + i % 4000}/bench.{i}")
            assert record is not None
            titles.append(record)
        latencies = []
        for record in titles:
            start = time.perf_counter()
            index.search(record.title or "")
            latencies.append((time.perf_counter() - start) * 1000)
        doi_latencies = []
        for record in titles:
            start = time.perf_counter()
            index.by_doi(record.doi or "")
            doi_latencies.append((time.perf_counter() - start) * 1000)
        q = statistics.quantiles(latencies, n=100)
        print(
            f"title search: p50 {statistics.median(latencies):.2f} ms, p95 {q[94]:.2f} ms "
            f"(target p50 <= 10 ms); DOI lookup p50 {statistics.median(doi_latencies):.3f} ms"
        )

        # Throughput and accuracy: correct references, each with one injected error, fabricated.
        verifier = ReferenceVerifier(index)
        labelled: list[tuple[str, str]] = []
        for record in titles[:100]:
            correct = apa7(record).split(" https://")[0]
            labelled.append((correct, "verified"))
            year = str(record.year)
            labelled.append(
                (correct.replace(f"({year})", f"({int(year) - 3})"), "verified-with-error")
            )
            first = record.authors[0].family
            labelled.append((correct.replace(first, first[:-1] + "x", 1), "verified-with-error"))
        for _ in range(100):
            fake = " ".join(probe_rng.choice(words) for _ in range(8)).capitalize()
            labelled.append(
                (
                    f"Doe, J. ({probe_rng.randint(1990, 2020)}). {fake}. Journal of Nothing, 1, 1-2.",
                    "unverified",
                )
            )
        start = time.perf_counter()
        results = verifier.verify_references([text for text, _ in labelled])
        elapsed = time.perf_counter() - start
        print(
            f"verified {len(labelled)} references in {elapsed:.2f} s: {len(labelled) / elapsed:.0f} references/s "
            "(target >= 200/s, one core)"
        )
        matrix = Counter(
            (want, got.status) for (_, want), got in zip(labelled, results, strict=True)
        )
        statuses = ["verified", "verified-with-error", "needs-human", "unverified"]
        print("\nconfusion matrix (rows: expected, columns: got)")
        print(f"{'':>22}" + "".join(f"{s:>21}" for s in statuses))
        for want in statuses:
            print(f"{want:>22}" + "".join(f"{matrix[(want, got)]:>21}" for got in statuses))
        correct_n = sum(matrix[(s, s)] for s in statuses)
        print(f"accuracy: {correct_n}/{len(labelled)} = {correct_n / len(labelled):.1%}")
        paths_of_issue_10(verifier, titles[100:300])
        index.close()
    remote_concurrency()
    sys.stdout.flush()


def paths_of_issue_10(verifier: ReferenceVerifier, records: list[Record]) -> None:
    """Throughput of titleless references (the year + volume query) and of title typos (a word
    the index does not have: its vocabulary is searched for close words)."""
    titleless, typos = [], []
    for r in records[:100]:
        first = r.authors[0]
        titleless.append(
            f"{first.family}, {first.given[:1]}. {r.venue} {r.year}, {r.volume}, {r.pages}."
        )
    for r in records[100:]:
        correct = apa7(r).split(" https://")[0]
        word = max((r.title or "").split(), key=len)
        typos.append(correct.replace(word, word[0] + word[2] + word[1] + word[3:], 1))
    for name, refs in (("titleless (ACS)", titleless), ("title with a typo", typos)):
        verifier.verify_references(refs)  # warm, like the set above
        start = time.perf_counter()
        results = verifier.verify_references(refs)
        elapsed = time.perf_counter() - start
        found = sum(x.status in {"verified", "verified-with-error"} for x in results)
        print(f"{name}: {len(refs) / elapsed:.0f} references/s, {found}/{len(refs)} found")


def remote_concurrency() -> None:
    """20 references against a Crossref-shaped loopback service answering after 300 ms."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.support.loopback
    from citeverify_core.policy.settings import LookupSettings
    from tests.support.loopback import Loopback, Reply

    item = {
        "DOI": "10.1038/nature14539", "type": "journal-article", "title": ["Deep learning"],
        "author": [{"given": "Yann", "family": "LeCun"}, {"given": "Yoshua", "family": "Bengio"},
                   {"given": "Geoffrey", "family": "Hinton"}],
        "container-title": ["Nature"], "issued": {"date-parts": [[2015]]},
    }  # fmt: skip
    with Loopback() as server:
        server.routes[("GET", "/works")] = Reply(
            200, {"status": "ok", "message": {"items": [item]}}, delay=0.3
        )
        verifier = ReferenceVerifier(
            sources=["crossref"], settings=LookupSettings(crossref_base_url=server.url)
        )
        verifier.verify("LeCun, Y. (2015). Deep learning. Nature.")  # warm the loop and the client
        refs = [
            f"LeCun, Y., Bengio, Y., & Hinton, G. (2015). Deep learning. Nature, 521, {i}."
            for i in range(20)
        ]
        start = time.perf_counter()
        results = verifier.verify_references(refs)
        elapsed = time.perf_counter() - start
    verified = sum(r.status == "verified" for r in results)
    print(
        f"\n20 references against a source answering after 300 ms: {elapsed:.2f} s, {verified}/20 verified "
        "(target <= 1.5 s; 15 at a time, so two rounds)"
    )


if __name__ == "__main__":
    main()
