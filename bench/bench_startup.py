"""Startup (issue 14): what a one-shot ``citeverify`` process costs, as a ratio of ``python -c pass``.

Targets: ``import citeverify`` <= 150 ms; ``citeverify check --answer ... --context ...`` on a
tiny input <= 150 ms without citations and <= 400 ms with a case citation (wall time).

Every case is a fresh subprocess of this interpreter (or of the ``citeverify`` script next to
it), so nothing is cached in the process; the cases run interleaved, round after round, so that a
load spike on a shared machine hits all of them alike, and each figure is the median over the
rounds. The floor is ``python -c pass`` (the interpreter's own startup, site and .pth files
included), measured in the same rounds: compare the ratios, not absolute times across runs.

Run: ``python -m uv run --frozen --all-extras python bench/bench_startup.py`` (``--runs N``,
default 15; ``--save FILE`` writes the medians as JSON; ``--before FILE`` adds a column with the
figures of an earlier ``--save``; ``--markdown`` prints the README table). Call it with the venv's
interpreter directly (``.venv/bin/python bench/bench_startup.py``): ``uv run`` itself adds
nothing to the children, but it is slower to start the benchmark.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

PYTHON = sys.executable
SCRIPT = str(Path(PYTHON).with_name("citeverify"))

CONTEXT = "The museum opens at nine. Entry is free on Sundays.\n"
PLAIN = "The museum opens at nine. Entry is free on Sundays.\n"
CASE = "Brown v. Board of Education, 347 U.S. 483 (1954) says the museum opens at nine.\n"
DOI = "The museum opens at nine (doi:10.1038/nature12373).\n"

#: A first verify() in Python of an answer without citations: the library's own cold path.
FIRST_VERIFY = (
    "from citeverify import CitationVerifier; "
    "CitationVerifier().verify('The museum opens at nine.', ['The museum opens at nine.'])"
)


@dataclass(frozen=True)
class Case:
    name: str
    argv: list[str]
    target_ms: float | None = None


def cases(tmp: Path) -> list[Case]:
    files = {}
    for name, text in (("context", CONTEXT), ("plain", PLAIN), ("case", CASE), ("doi", DOI)):
        files[name] = tmp / f"{name}.txt"
        files[name].write_text(text, encoding="utf-8")

    def check(answer: str) -> list[str]:
        return [SCRIPT, "check", "--answer", str(files[answer]), "--context", str(files["context"])]

    return [
        Case("python -c pass (floor)", [PYTHON, "-c", "pass"]),
        Case("import citeverify", [PYTHON, "-c", "import citeverify"], 150),
        Case("first verify() in Python, no citations", [PYTHON, "-c", FIRST_VERIFY]),
        Case("citeverify --version", [SCRIPT, "--version"]),
        Case("citeverify check, no citations", check("plain"), 150),
        Case("citeverify check, case citation", check("case"), 400),
        Case("citeverify check, DOI, --no-lookups", [*check("doi"), "--no-lookups"]),
    ]


def run_once(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False, env=env
    )
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):  # 1: an unverified answer under --strict/block; not here
        msg = f"{argv} exited {done.returncode}: {done.stderr.decode(errors='replace')}"
        raise RuntimeError(msg)
    return elapsed * 1000


def measure(all_cases: list[Case], runs: int, env: dict[str, str]) -> dict[str, float]:
    times: dict[str, list[float]] = {c.name: [] for c in all_cases}
    for case in all_cases:  # warm the OS caches (and write the .pyc files) once, untimed
        run_once(case.argv, env)
    for _ in range(runs):
        for case in all_cases:
            times[case.name].append(run_once(case.argv, env))
    return {name: statistics.median(values) for name, values in times.items()}


def table(all_cases: list[Case], medians: dict[str, float], before: dict[str, float]) -> str:
    floor = medians[all_cases[0].name]
    head = "| case | median | x floor | over floor | target |"
    rule = "| --- | ---: | ---: | ---: | --- |"
    if before:
        head += " before |"
        rule += " ---: |"
    lines = [head, rule]
    for case in all_cases:
        ms = medians[case.name]
        if case.target_ms is None:
            target = ""
        else:
            verdict = "met" if ms <= case.target_ms else "**not met**"
            target = f"<= {case.target_ms:.0f} ms: {verdict}"
        row = f"| {case.name} | {ms:.0f} ms | {ms / floor:.1f}x | {ms - floor:.0f} ms | {target} |"
        if before:
            old = before.get(case.name)
            row += f" {old:.0f} ms |" if old is not None else " |"
        lines.append(row)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="rounds (default 15)")
    parser.add_argument("--save", type=Path, help="write the medians (JSON) to this file")
    parser.add_argument("--before", type=Path, help="compare with the medians of a --save")
    parser.add_argument("--markdown", action="store_true", help="only the table")
    parser.add_argument(
        "--no-bytecode",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE as it is: every module compiled from source each run",
    )
    args = parser.parse_args()
    before = json.loads(args.before.read_text()) if args.before else {}
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        if not args.no_bytecode:
            # As installed by pip: every module has its .pyc. A sandbox that sets
            # PYTHONDONTWRITEBYTECODE compiles ~100 modules from source in every process (about
            # 0.35 s of a `check`); the caches go to a temporary folder, not into the tree.
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(Path(tmp, "pycache"))
        all_cases = cases(Path(tmp))
        medians = measure(all_cases, args.runs, env)
    if args.save:
        args.save.write_text(json.dumps(medians, indent=2) + "\n")
    if not args.markdown:
        pyc = "no .pyc (compiled every run)" if args.no_bytecode else ".pyc cached"
        print(f"{PYTHON} (CPython {sys.version.split()[0]}), {pyc}, median of {args.runs} rounds")
    print(table(all_cases, medians, before))


if __name__ == "__main__":
    main()
