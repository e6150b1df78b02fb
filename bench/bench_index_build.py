"""Building the local index from snapshots as published: rate per core, memory, resumability cost.

Generates ``--records`` Crossref-shaped works (``bench_references.work``: titles from a made-up
50,000-word vocabulary) and writes them twice, as a Crossref public data file (a folder of
``N.json.gz`` files of 5,000 items each, the published shape) and as one JSON Lines dump. Then,
each in a fresh index and a fresh process (so that peak RSS is the build's own):

- ``dump``: ``LocalIndex.build`` of the JSON Lines dump (one transaction);
- ``snapshot, 1 worker``: ``index_build.ingest`` of the folder, in this process (one
  transaction per file, recorded as done: the cost of resumability);
- ``snapshot, N workers``: the same with N worker processes parsing (``--workers``).

Prints works/s, works/s per core used, bytes per work on disk and peak RSS (the largest of the
process and its children). Run: ``.venv/bin/python bench/bench_index_build.py --records 1000000``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_references import vocabulary, work

PER_FILE = 5000


def generate(folder: Path, records: int) -> tuple[Path, Path]:
    rng = random.Random(11)
    words = vocabulary(50_000)
    data = folder / "crossref"
    data.mkdir()
    dump = folder / "works.jsonl.gz"
    with gzip.open(dump, "wt", compresslevel=1) as lines:
        for start in range(0, records, PER_FILE):
            items = [work(i, rng, words) for i in range(start, min(records, start + PER_FILE))]
            for item in items:
                lines.write(json.dumps(item) + "\n")
            with gzip.open(data / f"{start // PER_FILE}.json.gz", "wt", compresslevel=1) as f:
                json.dump({"items": items}, f)
    return data, dump


def child(mode: str, source: str, index: str, workers: int) -> None:
    """One build in this (fresh) process; prints a JSON line of figures."""
    from citeverify_core.references.index import LocalIndex
    from citeverify_core.references.index_build import ingest
    from citeverify_core.references.snapshots import open_snapshot

    local = LocalIndex(index)
    cpu0 = time.process_time()
    start = time.perf_counter()
    if mode == "dump":
        count = local.build(source)
    else:
        count = ingest(local, open_snapshot([Path(source)]), workers=workers).records
    wall = time.perf_counter() - start
    local.close()
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        json.dumps(
            {
                "records": count,
                "wall": wall,
                "cpu": time.process_time() - cpu0 + kids.ru_utime + kids.ru_stime,
                "rss_mb": max(own.ru_maxrss, kids.ru_maxrss) / 1024,
                "bytes": Path(index).stat().st_size,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, source, index, workers = args.child
        child(mode, source, index, int(workers))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        data, dump = generate(folder, args.records)
        print(
            f"generated {args.records:,} Crossref-shaped works in {time.perf_counter() - t0:.0f} s: "
            f"{len(list(data.iterdir()))} files of {PER_FILE:,} (the public data file's shape) "
            f"and one JSON Lines dump\n"
        )
        runs = [
            ("dump (one file, one transaction)", "dump", dump, 1),
            ("snapshot, 1 worker (a transaction per file)", "snapshot", data, 1),
            (f"snapshot, {args.workers} workers parsing", "snapshot", data, args.workers),
        ]
        print("| build | works/s | works/s per core used | bytes/work | peak RSS |")
        print("|---|--:|--:|--:|--:|")
        for label, mode, source, workers in runs:
            index = folder / f"{mode}-{workers}.sqlite"
            out = subprocess.run(
                [sys.executable, __file__, "--child", mode, str(source), str(index), str(workers)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            fig = json.loads(out.strip().splitlines()[-1])
            cores = fig["cpu"] / fig["wall"] if fig["wall"] else 1.0
            rate = fig["records"] / fig["wall"]
            print(
                f"| {label} | {rate:,.0f} | {rate / max(cores, 1.0):,.0f} (x{cores:.1f} CPU) | "
                f"{fig['bytes'] / fig['records']:,.0f} | {fig['rss_mb']:.0f} MB |"
            )
            index.unlink()


if __name__ == "__main__":
    main()
