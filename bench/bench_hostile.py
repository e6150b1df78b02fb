"""Hostile answers (issue 9): the time of verify() for every generator of tests/hostile.py.

Targets: under the answer limit, no answer takes more than 1 s against a 1 MB context; time grows
linearly with the answer (100k -> 1M characters: at most 11x).

Each generator runs at 10k, 100k and 1M characters against a 1 MB context (cases that bring their
own context get it at 1 MB: one 1 MB document for the quotes, a 1 MB context full of numbers for
the percentages, 50,000 small documents for the many claims), lookups off, with the strict
options and redact on (every pass runs). Each measurement runs in a forked child and is cut at a
cap; the figure is CPU time of the call (a loaded machine stretches wall-clock time, not this),
the worst of the repeats. The growth 100k -> 1M is given as measured and net of what the context
alone costs (verify of a one-line answer against the same context), which the answer's growth must
not hide. An answer over the claim limit (10,000) is refused as an InputError before any work: for
those the answer is also timed at the largest size under the limit ("at the claim limit").

Run: ``uv run python bench/bench_hostile.py`` (``--quick``: 10k and 100k only, a 5 s cap;
``--only NAME`` for one generator; ``--markdown`` for the README table).
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import resource
import sys
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from citeverify_core import CitationVerifier, CiteVerifyError
from tests.support.hostile import CASES, POLICY, Case, english

CONTEXT_CHARS = 1_000_000
VERIFIER = CitationVerifier(POLICY)
TARGET_1M = 1.0  # seconds at 1M against 1 MB
TARGET_GROWTH = 11.0


def _child(case: Case, n: int, repeat: int, cap: float, conn: Any) -> None:
    answer = case.gen(n)
    context = case.context(CONTEXT_CHARS) if case.context is not None else [english(CONTEXT_CHARS)]
    # Past the cap (CPU time) the kernel stops the child: SIGXCPU.
    soft = math.ceil(time.process_time() + cap * repeat) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 5))
    # What the context alone costs (a one-line answer): the growth ratio is also given net of it.
    base = float("inf")
    for _ in range(2):
        start = time.process_time()
        VERIFIER.verify("The museum opens at nine.", context)
        base = min(base, time.process_time() - start)
    worst = 0.0
    error = ""
    for _ in range(repeat):
        start = time.process_time()
        try:
            VERIFIER.verify(answer, context)
        except CiteVerifyError as exc:
            error = f"refused: {type(exc).__name__}"  # e.g. over the claim limit: cheap, fine
        except Exception as exc:  # a crash is a figure too
            frames = [
                f for f in traceback.extract_tb(exc.__traceback__) if "citeverify" in f.filename
            ]
            where = f"{Path(frames[-1].filename).name}:{frames[-1].name}" if frames else "?"
            error = f"{type(exc).__name__} ({where})"
        worst = max(worst, time.process_time() - start)
        if error or worst > cap:
            break
    conn.send((worst if worst <= cap else None, error, base))


def measure(case: Case, n: int, cap: float) -> tuple[float | None, str, float]:
    """The worst CPU seconds of the repeats (None: over the cap), a crash if any, the base."""
    repeat = 3 if n <= 100_000 else 1
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(case, n, repeat, cap, child), daemon=True)
    proc.start()
    child.close()
    result: tuple[float | None, str, float] = (None, "", 0.0)
    # Wall-clock backstop for a child that waits instead of working.
    if parent.poll(10 * cap * repeat + 60):
        with contextlib.suppress(EOFError):  # EOF: SIGXCPU, over the cap
            result = parent.recv()
    proc.kill()
    proc.join(5)
    parent.close()
    return result


def largest_accepted(case: Case, n: int) -> int:
    """The largest size up to ``n`` whose answer stays under the claim limit (bisection)."""
    from citeverify_core.engine.verifier import MAX_CLAIMS
    from citeverify_core.text import split_claims

    def ok(size: int) -> bool:
        return len(split_claims(case.gen(size), limit=MAX_CLAIMS)) <= MAX_CLAIMS

    lo, hi = 1_000, n
    if ok(hi):
        return hi
    while hi - lo > max(1_000, lo // 50):
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def fmt(t: float | None, cap: float) -> str:
    if t is None:
        return f">{cap:g} s"
    return f"{t * 1000:.0f} ms" if t < 1 else f"{t:.2f} s"


def main() -> None:
    quick = "--quick" in sys.argv
    markdown = "--markdown" in sys.argv
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    sizes: tuple[int, ...] = (10_000, 100_000) if quick else (10_000, 100_000, 1_000_000)
    cap = 5.0 if quick else 10.0
    english(CONTEXT_CHARS)  # built once, before the forks
    VERIFIER.verify('See 5 U.S. 137 (1803), doi:10.1234/x, "q", 5% [1].', ["x 5%"])  # imports
    cases = [c for c in CASES if only is None or c.name == only]
    print(
        f"verify() of hostile answers against a {CONTEXT_CHARS // 1000} KB context, lookups off "
        f"(CPU time, worst of the repeats, cap {cap:g} s)"
    )
    header = ["generator", "origin", *(f"{n // 1000}k" for n in sizes)]
    if not quick:
        header += ["100k->1M", "net", "at the claim limit", "flag"]
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("| " + " | ".join(["---", "---"] + ["---:"] * (len(header) - 2)) + " |")
    else:
        print(f"{header[0]:<24} {header[1]:<8}" + "".join(f"{h:>16}" for h in header[2:]))
    over, crashes, nonlinear, refused = [], [], [], []
    for case in cases:
        times: list[float | None] = []
        notes: list[str] = []  # per size: "", "refused", "crash"
        base = 0.0
        for n in sizes:
            t, error, b = measure(case, n, cap)
            base = b or base
            times.append(t)
            notes.append("refused" if error.startswith("refused") else ("crash" if error else ""))
            if error and not error.startswith("refused"):
                crashes.append(f"{case.name} at {n // 1000}k: {error}")
            if t is None and not error:
                times.extend([None] * (len(sizes) - len(times)))
                notes.extend([""] * (len(sizes) - len(notes)))
                break  # over the cap: larger sizes are too
        cells = [
            fmt(t, cap) + (f" ({note})" if note else "")
            for t, note in zip(times, notes, strict=True)
        ]
        row = [case.name, case.origin, *cells]
        if "refused" in notes:
            refused.append(f"{case.name} at {sizes[notes.index('refused')] // 1000}k")
        if not quick:
            t100, t1m = times[1], times[2]
            accepted = notes[1] == notes[2] == ""
            if not accepted or t100 is None:
                growth = net = "n/a"
            elif t1m is None:
                growth = f">{cap / max(t100, 1e-3):.0f}x"
                net = (
                    f">{(cap - base) / max(t100 - base, 1e-3):.0f}x"
                    if t100 - base >= 0.01
                    else "n/a"
                )
            else:
                growth = f"{t1m / max(t100, 1e-3):.1f}x"
                net = f"{(t1m - base) / (t100 - base):.1f}x" if t100 - base >= 0.01 else "n/a"
            limit_cell = ""
            if notes[2] == "refused":
                n_lim = largest_accepted(case, sizes[2])
                t_lim, error_lim, _ = measure(case, n_lim, cap)
                times.append(t_lim)
                notes.append("refused" if error_lim.startswith("refused") else "")
                limit_cell = f"{fmt(t_lim, cap)} at {n_lim // 1000}k"
            flags = []
            slow = [
                t is None or t > TARGET_1M
                for t, note in zip(times, notes, strict=True)
                if note != "refused"
            ]
            if any(slow):
                flags.append("> 1 s")
                over.append(case.name)
            if (
                accepted
                and t100 is not None
                and t100 - base >= 0.01
                and (t1m is None or (t1m - base) / (t100 - base) > TARGET_GROWTH)
            ):
                flags.append("superlinear")
                nonlinear.append(case.name)
            if "crash" in notes:
                flags.append("crash")
            del times[3:], notes[3:]
            row += [growth, net, limit_cell, ", ".join(flags)]
        if markdown:
            print("| " + " | ".join(row) + " |", flush=True)
        else:
            print(f"{row[0]:<24} {row[1]:<8}" + "".join(f"{c:>16}" for c in row[2:]), flush=True)
    print()
    if not quick:
        print(f"over 1 s against 1 MB, any size ({len(over)}): {', '.join(over) or 'none'}")
        print(
            f"growth 100k -> 1M over {TARGET_GROWTH:g}x, net of the context ({len(nonlinear)}): "
            f"{', '.join(nonlinear) or 'none'}"
        )
    print(f"refused as input errors ({len(refused)}): {', '.join(refused) or 'none'}")
    print(f"crashes ({len(crashes)}): {'; '.join(crashes) or 'none'}")


if __name__ == "__main__":
    main()
