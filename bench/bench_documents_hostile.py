"""Hostile uploads against ``citeverify serve --workers 2`` (issue 33): what one bad upload costs.

Targets (the issue's):

- any upload up to the size limit, in any format: the service's RSS grows by at most 300 MB
  per document in flight (the worker processes themselves; their reader children are shown
  apart), everything is freed after the answer (here: every worker back within 50 MB of where
  it was, waited for up to ``--settle`` seconds), and ``GET /healthz`` p99 stays under 250 ms
  meanwhile (called every 50 ms on a new connection, so both processes answer it);
- a key with 0 tokens: refused (402) before its body is read, in every format; the store does
  not grow;
- 8 connections of one key, each sending 1 MB of a 40 MB body and holding the rest: all but
  the allowed one (one upload of a key at once, across both processes) refused before their
  body is read; the admitted one, and a body dripping one byte every 0.5 s, end within the
  body read timeout (``--body-timeout``, 3 s here: the default is 60 s).

The documents: 20 MB of ``a\\n`` (``.txt``), a 20 MB ``.md`` of 2,000 references of 10,000
characters (too long to verify: stored as failed jobs), 20 MB of ``<div>`` nested in one
another (``.html``) and a 20 MB ``.bib`` (about 120,000 entries). Each is uploaded by a key with
tokens (the reading costs one), so that it is read; the first round runs on a service that has
read nothing yet (first imports, first allocations), the next ones after it.

The service is ``citeverify serve --workers 2`` in its own processes on loopback; the RSS of
each worker (``/proc/PID/status``) and the sum of its children's (the reader child and the warm
spare) are sampled every 50 ms. The scenarios are those of
``tests/service/test_documents_hostile.py`` (imported from there). Linux only (``/proc``).

Run: ``python -m uv run --frozen --all-extras python bench/bench_documents_hostile.py``
(``--size-mb`` of each document, ``--bib-mb``, ``--rounds``, ``--workers``, ``--body-timeout``,
``--settle`` seconds to wait for the memory to come back, ``--only documents|broke|held|drip``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.service.test_documents_hostile import (  # noqa: E402
    GROWTH_LIMIT,
    HAS_PROC,
    HEALTHZ_P99_TARGET,
    HOSTILE,
    MB,
    SETTLED_LIMIT,
    Answer,
    Monitor,
    Served,
    Window,
    drip,
    held_uploads,
    refused_uploads,
    run_document,
    serve,
    store_size,
    stored_documents,
)

KEYS = {"reader": 1000, "broke": 0, "holder": 5, "dripper": 5}


@dataclass
class Row:
    case: str
    status: str
    took: str
    window: Window
    left: int
    waited: float
    store: str
    met: bool
    why: str = ""

    def cells(self) -> list[str]:
        w = self.window
        return [
            self.case,
            self.status,
            self.took,
            f"{w.growth / MB:+.0f} MB",
            f"{w.readers_peak / MB:.0f} MB",
            f"{self.left / MB:+.0f} MB ({self.waited:.1f} s)",
            f"{w.p(0.5) * 1000:.0f} / {w.p(0.99) * 1000:.0f} ms ({len(w.healthz)})",
            self.store,
            "yes" if self.met else f"**no**: {self.why}",
        ]


HEADER = [
    "case",
    "status",
    "time to answer",
    "worker RSS peak growth",
    "reader children RSS peak",
    "worker RSS after (waited)",
    "/healthz p50 / p99 (calls)",
    "store",
    "target met?",
]


def healthz_ok(window: Window) -> list[str]:
    why = []
    if window.healthz_failures:
        why.append(f"{len(window.healthz_failures)} /healthz failures")
    if window.p(0.99) >= HEALTHZ_P99_TARGET:
        why.append(f"/healthz p99 {window.p(0.99) * 1000:.0f} ms")
    return why


def memory_ok(window: Window, settled: bool, left: int) -> list[str]:
    why = []
    if window.growth > GROWTH_LIMIT:
        why.append(f"growth {window.growth / MB:.0f} MB > {GROWTH_LIMIT / MB:.0f}")
    if not settled:
        why.append(f"{left / MB:+.0f} MB held after (> {SETTLED_LIMIT / MB:.0f})")
    return why


def documents(served: Served, monitor: Monitor, args: argparse.Namespace) -> list[Row]:
    rows = []
    for round_ in range(1, args.rounds + 1):
        for hostile in HOSTILE:
            size = int((args.bib_mb if hostile.name.endswith(".bib") else args.size_mb) * MB)
            run = run_document(
                served,
                monitor,
                hostile,
                served.keys["reader"],
                size=size,
                settle_timeout=args.settle,
            )
            print(f"  round {round_}: {run.figures()}", flush=True)
            why = memory_ok(run.window, run.settled, run.left) + healthz_ok(run.window)
            if run.answer.status >= 500:
                why.insert(0, f"status {run.answer.status}")
            code = f" `{run.answer.code}`" if run.answer.code else ""
            rows.append(
                Row(
                    f"{hostile.name}, {size / MB:.0f} MB (round {round_})",
                    f"{run.answer.status}{code}",
                    f"{run.answer.seconds:.2f} s",
                    run.window,
                    run.left,
                    run.waited,
                    f"+{run.documents} doc, {run.store_bytes / MB:+.1f} MB",
                    not why,
                    "; ".join(why),
                )
            )
    return rows


def broke(served: Served, monitor: Monitor, args: argparse.Namespace) -> list[Row]:
    from citeverify_core.service.routes.documents import UPLOAD_SUFFIXES

    names = [f"paper{suffix}" for suffix in UPLOAD_SUFFIXES]
    before, before_bytes = stored_documents(served.db), store_size(served.db)
    window = monitor.start()
    answers = refused_uploads(served, served.keys["broke"], names, int(args.size_mb * MB))
    settled, left, waited = monitor.settle(window, args.settle)
    gained = stored_documents(served.db) - before
    gained_bytes = store_size(served.db) - before_bytes
    statuses = sorted({(a.status, a.code) for a in answers}, key=str)
    sent = max(a.sent for a in answers)
    print(
        f"  0 tokens, {len(names)} formats: {statuses}, slowest {max(a.seconds for a in answers):.3f} s, "
        f"at most {sent / MB:.2f} MB of {args.size_mb:g} MB sent, connections closed "
        f"{sum(a.closed for a in answers)}/{len(answers)}; store +{gained} documents",
        flush=True,
    )
    why = memory_ok(window, settled, left) + healthz_ok(window)
    if any(a.status != 402 for a in answers):
        why.append(f"statuses {statuses}")
    if sent > MB + 1024 or not all(a.closed for a in answers):
        why.append("the body was read (or the connection kept)")
    if gained:
        why.append(f"{gained} documents stored")
    return [
        Row(
            f"key with 0 tokens, each of {len(names)} formats ({args.size_mb:g} MB declared, "
            f"{sent / MB:.1f} MB sent)",
            f"402 x{sum(a.status == 402 for a in answers)}",
            f"<= {max(a.seconds for a in answers):.3f} s",
            window,
            left,
            waited,
            f"+{gained} doc, {gained_bytes / MB:+.1f} MB",
            not why,
            "; ".join(why),
        )
    ]


def held(served: Served, monitor: Monitor, args: argparse.Namespace) -> list[Row]:
    pids: set[str] = set()
    attempts = 0
    answers: list[Answer] = []
    window = monitor.start()
    while attempts < 3 and len(pids) < 2:  # until both processes took some (the kernel chooses)
        attempts += 1
        answers = held_uploads(served, served.keys["holder"], 8, 40 * MB)
        pids = {a.pid for a in answers if a.pid}
    settled, left, waited = monitor.settle(window, args.settle)
    refused = [a for a in answers if a.status == 429]
    admitted = [a for a in answers if a.status != 429]
    print(
        f"  8 held connections (attempt {attempts}): "
        + ", ".join(
            f"{a.status} after {a.seconds:.3f} s ({a.sent / MB:.2f} MB sent, pid {a.pid})"
            for a in answers
        ),
        flush=True,
    )
    why = memory_ok(window, settled, left) + healthz_ok(window)
    if len(admitted) > 1:
        why.append(f"{len(admitted)} admitted")
    if any(a.sent > MB + 1024 or not a.closed for a in refused):
        why.append("a refused body was read (or its connection kept)")
    if any(a.status != 408 or a.seconds > args.body_timeout + 1 for a in admitted):
        why.append("the admitted upload did not end at the body timeout")
    if len(pids) < 2:
        why.append("all on one process")
    counts = ", ".join(
        f"{status} x{sum(a.status == status for a in answers)}"
        for status in sorted({a.status for a in answers})
    )
    took = f"429 <= {max((a.seconds for a in refused), default=0):.3f} s"
    if admitted:
        took += f"; {admitted[0].status} at {admitted[0].seconds:.2f} s"
    return [
        Row(
            f"8 connections of one key, 1 MB of 40 MB sent each, held ({len(pids)} processes)",
            counts,
            took,
            window,
            left,
            waited,
            "",
            not why,
            "; ".join(why),
        )
    ]


def dripping(served: Served, monitor: Monitor, args: argparse.Namespace) -> list[Row]:
    window = monitor.start()
    answer = drip(served, served.keys["dripper"])
    settled, left, waited = monitor.settle(window, args.settle)
    print(f"  drip: {answer}", flush=True)
    why = memory_ok(window, settled, left) + healthz_ok(window)
    if answer.status != 408 or answer.seconds > args.body_timeout + 1:
        why.append(f"{answer.status} after {answer.seconds:.1f} s")
    return [
        Row(
            f"body dripping 1 byte / 0.5 s ({answer.sent} bytes sent)",
            f"{answer.status} `{answer.code}`",
            f"{answer.seconds:.2f} s",
            window,
            left,
            waited,
            "",
            not why,
            "; ".join(why),
        )
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--size-mb", type=float, default=20.0)
    parser.add_argument("--bib-mb", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=2, help="of the documents")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--body-timeout", type=float, default=3.0)
    parser.add_argument("--settle", type=float, default=15.0)
    parser.add_argument("--only", choices=["documents", "broke", "held", "drip"])
    args = parser.parse_args()
    if not HAS_PROC:
        sys.exit("this benchmark reads /proc (Linux)")
    load = os.getloadavg()
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {load[0]:.1f} "
        f"{load[1]:.1f} {load[2]:.1f}; serve --workers {args.workers} --body-timeout "
        f"{args.body_timeout:g}",
        flush=True,
    )
    scenarios = {"documents": documents, "broke": broke, "held": held, "drip": dripping}
    rows: list[Row] = []
    started = time.monotonic()
    with (
        tempfile.TemporaryDirectory() as tmp,
        serve(Path(tmp), KEYS, workers=args.workers, body_timeout=args.body_timeout) as served,
        Monitor(served) as monitor,
    ):
        time.sleep(1.0)  # both processes idle
        memory, readers = monitor.memory()
        print(
            "  idle: workers "
            + ", ".join(f"{pid} {value / MB:.0f} MB" for pid, value in memory.items())
            + f"; their children {readers / MB:.0f} MB",
            flush=True,
        )
        for name, run in scenarios.items():
            if args.only in (None, name):
                rows += run(served, monitor, args)
        memory, readers = monitor.memory()
        print(
            "  at the end: workers "
            + ", ".join(f"{pid} {value / MB:.0f} MB" for pid, value in memory.items())
            + f"; their children {readers / MB:.0f} MB",
            flush=True,
        )
        log = served.log.read_text(errors="replace")
    print(f"\n{len(rows)} cases in {time.monotonic() - started:.0f} s\n")
    print("| " + " | ".join(HEADER) + " |")
    print("|" + " --- |" * len(HEADER))
    for row in rows:
        print("| " + " | ".join(row.cells()) + " |")
    errors = log.count('HTTP/1.1" 500')
    print(
        f"\nanswers 500 in the service's access log: {errors}; tracebacks: "
        f"{log.count('Traceback')}; targets met in {sum(r.met for r in rows)} of {len(rows)} cases"
    )


if __name__ == "__main__":
    main()
