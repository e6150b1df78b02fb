"""Batch verification (issue 15): throughput per core and memory against input size.

Synthetic records as logged RAG answers look: a 300-word answer (about 20 sentences, most taken
from the documents, some drifted) and 10 context documents of about 1 KB, drawn from a corpus
of retrieved passages (``--corpus``, 5,000 by default: retrieval repeats passages across
answers, which is what the verifier's context cache is for). Lookups off.

Throughput: the same input with 1 and 2 workers (``--repeat N``: alternately, N times), each a
fresh ``citeverify batch`` process, so that both pay the same start-up; the CPU seconds are
those of every process of the run (the command, its fork server and workers: this process
adopts the fork server as a subreaper and waits for it). The machine is shared: compare the
answers per CPU-second and the CPU of 2 workers against 1, which other processes do not inflate.
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
    """CPU seconds of the processes this one has waited for (with their own waited children)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime


def machine_busy_seconds() -> float:
    """CPU seconds every process on the machine has used since boot (/proc/stat; 0 elsewhere)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def wait_until_idle(limit: float) -> float:
    """Wait (at most ``limit`` s) until the machine's other work has used under a tenth of a core
    for 3 s in a row; returns the seconds waited."""
    started = time.perf_counter()
    while time.perf_counter() - started < limit:
        busy = machine_busy_seconds()
        time.sleep(3)
        if machine_busy_seconds() - busy < 0.3:
            break
    return time.perf_counter() - started


def become_subreaper() -> bool:
    """Adopt orphaned descendants (the fork server outlives its parent by a moment), so that
    waiting for them adds their CPU time to ours: every process of a run is counted."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def reap() -> None:
    """Wait for every adopted descendant."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def run_cli(source: Path, out: Path, workers: int, batch_size: int) -> tuple[float, float, float]:
    """``citeverify batch`` in a fresh process: wall seconds, CPU seconds of all its processes,
    and the CPU seconds other processes on the machine used meanwhile."""
    command = [sys.executable, "-m", "citeverify_core", "batch", str(source), "-o", str(out)]
    command += ["--workers", str(workers), "--batch-size", str(batch_size), "--quiet"]
    reap()
    cpu, wall, busy = cpu_seconds(), time.perf_counter(), machine_busy_seconds()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    reap()
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    others = max(machine_busy_seconds() - busy - cpu, 0.0)
    if done.returncode:
        raise SystemExit(f"batch failed: {done.stderr}")
    return wall, cpu, others


def throughput(
    folder: Path, n: int, corpus_size: int, batch_size: int, repeat: int, idle: float
) -> None:
    source = folder / "throughput.jsonl"
    count = write_input(source, n, corpus(corpus_size))
    mb = source.stat().st_size / 1e6
    counted = become_subreaper()
    print(f"## Throughput: {count:,} records ({mb:,.0f} MB), corpus {corpus_size:,} passages")
    print(
        "Each run is `citeverify batch` in a fresh process (start-up, fork server, workers, "
        "reading, parts and assembly included); CPU s is every process's"
        + ("" if counted else " (without the fork server: no subreaper here)")
        + "; others' CPU s is what the rest of the machine used during the run (/proc/stat); "
        "load is the 1-minute load average before and after.\n"
    )
    print(
        "| run | workers | load | others' CPU s | wall s | answers/s | CPU s "
        "| answers per CPU-second |"
    )
    print("|---|---|---|---|---|---|---|---|")
    results: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
    outputs = {}
    for attempt in range(repeat):
        for workers in (1, 2):
            out = folder / f"out-{workers}.jsonl"
            if idle:
                wait_until_idle(idle)
            load = os.getloadavg()[0]
            wall, cpu, others = run_cli(source, out, workers, batch_size)
            results[workers].append((wall, cpu))
            print(
                f"| {attempt + 1} | {workers} | {load:.1f}-{os.getloadavg()[0]:.1f} "
                f"| {others:,.1f} | {wall:,.1f} | {count / wall:,.0f} | {cpu:,.1f} "
                f"| {count / cpu:,.0f} |",
                flush=True,
            )
            outputs[workers] = out.read_bytes()
    wall1 = min(w for w, _ in results[1])
    wall2 = min(w for w, _ in results[2])
    cpu1 = min(c for _, c in results[1])
    cpu2 = min(c for _, c in results[2])
    print(
        f"\nBest of {repeat}: speed-up {wall1 / wall2:.2f}x on the wall clock; "
        f"2 workers cost {cpu2 / cpu1 - 1:+.1%} CPU of 1 "
        f"(on 2 free cores the speed-up would be about {2 * cpu1 / cpu2:.2f}x)"
    )
    print(f"Outputs identical between 1 and 2 workers: {outputs[1] == outputs[2]}")


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
    command = [sys.executable, "-m", "citeverify_core", "batch", str(source), "-o", str(out)]
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
    parser.add_argument("--repeat", type=int, default=1, help="alternate 1 and 2 workers N times")
    parser.add_argument(
        "--wait-idle",
        type=float,
        default=0.0,
        metavar="S",
        help="before each run, wait up to S s for the rest of the machine to be idle",
    )
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
            throughput(folder, n, args.corpus, args.batch_size, args.repeat, args.wait_idle)
        if not args.skip_memory:
            mb = 2048 if args.large else args.memory_mb
            memory(folder, mb, args.corpus, args.workers)


if __name__ == "__main__":
    main()
