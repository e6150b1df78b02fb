"""Batch verification (issue 15): throughput per core and memory against input size.

Synthetic records as logged RAG answers look: a 300-word answer (about 20 sentences, most taken
from the documents, some drifted) and 10 context documents of about 1 KB, drawn from a corpus
of retrieved passages (``--corpus``, 5,000 by default: retrieval repeats passages across
answers, which is what the verifier's context cache is for). Lookups off.

Throughput: the same input with 1 and 2 workers, in one run (the machine is shared: compare the
ratio, and the answers per CPU-second, which other processes do not inflate).
Memory: an input of ``--memory-mb`` MB (2,048 with ``--large``) generated on the fly into a
temporary folder, verified by ``citeverify batch`` in a subprocess; the peak RSS of the whole
process tree (the reader and its workers, sampled every 0.1 s) against the input size.

    python -m uv run --frozen --all-extras python bench/bench_batch.py            # 20,000 records
    python -m uv run --frozen --all-extras python bench/bench_batch.py --full     # 100,000
    python -m uv run --frozen --all-extras python bench/bench_batch.py --large    # 2 GB input
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from citeverify.batch import run_batch

VOCABULARY = [
    "".join(random.Random(i).choice("abcdefghijklmnopqrstuvwxyz") for _ in range(3 + i % 7))
    for i in range(20_000)
]


def corpus(size: int, seed: int = 1) -> list[str]:
    """Passages of about 1 KB (sentences of 8 to 16 words)."""
    rng = random.Random(seed)
    passages = []
    for _ in range(size):
        sentences, length = [], 0
        while length < 1000:
            sentence = " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(8, 16)))
            sentence = sentence.capitalize() + "."
            sentences.append(sentence)
            length += len(sentence) + 1
        passages.append(" ".join(sentences))
    return passages


def records(n: int, passages: list[str], seed: int = 2):
    """``n`` records: 300-word answers against 10 passages each, 4 in 5 sentences grounded."""
    rng = random.Random(seed)
    for i in range(n):
        docs = rng.sample(passages, 10)
        sentences, count = [], 0
        while count < 300:
            if rng.random() < 0.8:
                doc = rng.choice(docs).split(". ")
                sentence = rng.choice(doc).rstrip(".") + "."
            else:
                sentence = " ".join(rng.choice(VOCABULARY) for _ in range(12)).capitalize() + "."
            sentences.append(sentence)
            count += len(sentence.split())
        yield {
            "id": f"a{i:09d}",
            "answer": " ".join(sentences),
            "context_documents": [{"content": d} for d in docs],
        }


def write_input(
    path: Path, n: int | None, passages: list[str], max_bytes: int | None = None
) -> int:
    """Write records until ``n`` or ``max_bytes``; returns the records written."""
    written = size = 0
    with path.open("w", encoding="utf-8") as handle:
        for record in records(n or 10**12, passages):
            line = json.dumps(record) + "\n"
            handle.write(line)
            written += 1
            size += len(line)
            if max_bytes is not None and size >= max_bytes:
                break
    return written


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def throughput(folder: Path, n: int, corpus_size: int, batch_size: int) -> None:
    source = folder / "throughput.jsonl"
    count = write_input(source, n, corpus(corpus_size))
    mb = source.stat().st_size / 1e6
    print(f"## Throughput: {count:,} records ({mb:,.0f} MB), corpus {corpus_size:,} passages")
    print("| workers | wall s | answers/s | CPU s | answers per CPU-second | speed-up |")
    print("|---|---|---|---|---|---|")
    base = None
    outputs = []
    for workers in (1, 2):
        out = folder / f"out-{workers}.jsonl"
        cpu, wall = cpu_seconds(), time.perf_counter()
        summary = run_batch(source, out, workers=workers, batch_size=batch_size)
        wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
        rate = summary.rows / wall
        base = base or rate
        print(
            f"| {workers} | {wall:,.1f} | {rate:,.0f} | {cpu:,.1f} | {summary.rows / cpu:,.0f} "
            f"| {rate / base:.2f}x |"
        )
        outputs.append(out.read_bytes())
    print(f"\nOutputs identical between 1 and 2 workers: {outputs[0] == outputs[1]}")


def tree_rss(pid: int) -> int:
    """RSS (bytes) of a process and all its descendants."""
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
            for task in Path(f"/proc/{current}/task").iterdir():
                stack.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return total


def memory(folder: Path, megabytes: int, corpus_size: int, workers: int) -> None:
    source = folder / "large.jsonl"
    started = time.perf_counter()
    count = write_input(source, None, corpus(corpus_size), max_bytes=megabytes * 1_000_000)
    size = source.stat().st_size
    print(
        f"\n## Memory: {size / 1e9:.2f} GB input ({count:,} records), generated in "
        f"{time.perf_counter() - started:.0f} s"
    )
    out = folder / "large-out.parquet"
    command = [sys.executable, "-m", "citeverify", "batch", str(source), "-o", str(out)]
    command += ["--workers", str(workers), "--quiet"]
    started = time.perf_counter()
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0
    while run.poll() is None:
        peak = max(peak, tree_rss(run.pid))
        time.sleep(0.1)
    stdout, stderr = run.communicate()
    wall = time.perf_counter() - started
    if run.returncode:
        raise SystemExit(f"batch failed: {stderr}")
    print(stdout.strip())
    print(
        "| input | records | workers | wall s | answers/s | peak RSS (all processes) | RSS / input |"
    )
    print("|---|---|---|---|---|---|---|")
    print(
        f"| {size / 1e9:.2f} GB | {count:,} | {workers} | {wall:,.0f} | {count / wall:,.0f} "
        f"| {peak / 1e6:,.0f} MB | {peak / size:.2f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--full", action="store_true", help="100,000 records")
    parser.add_argument("--corpus", type=int, default=5_000)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--memory-mb", type=int, default=200)
    parser.add_argument("--large", action="store_true", help="a 2 GB input for the memory test")
    parser.add_argument("--workers", type=int, default=2, help="workers of the memory test")
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()
    print(
        f"Python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}\n"
    )
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        folder = Path(tmp)
        if not args.skip_throughput:
            n = 100_000 if args.full else args.records
            throughput(folder, n, args.corpus, args.batch_size)
        if not args.skip_memory:
            mb = 2048 if args.large else args.memory_mb
            memory(folder, mb, args.corpus, args.workers)


if __name__ == "__main__":
    main()
