"""Startup: what a one-shot ``citeverify`` process costs, as a ratio of ``python -c pass``.

Targets, as ratios of the floor in the same run: ``import citeverify_core`` <= 2x;
``citeverify check --answer ... --context ...`` on a tiny answer without citations <= 8x. The
default policy and the results are frozen dataclasses, so that check needs no pydantic (validating
a policy does: ``--policy`` and an unknown ``--action`` pay for it).

Every case is a fresh subprocess of this interpreter (or of the ``citeverify`` script next to
it), so nothing is cached in the process; the cases run interleaved, round after round, so that a
load spike on a shared machine hits all of them alike, and each figure is the median over the
rounds. The floor is ``python -c pass`` (the interpreter's own startup, site and .pth files
included), measured in the same rounds: compare the ratios, not absolute times across runs.

Two more floors say what the dependencies cost before any code of ours runs: pydantic imported
with one model built (what validating a policy costs), and a typer application
with the same options as ``check`` whose command only prints the answer (typer 0.2x coerces every
option through a pydantic TypeAdapter, so it imports pydantic too).

``--baseline REV`` also runs every case against ``core/citeverify_core`` as it was at git revision REV
(extracted to a temporary folder, put first on PYTHONPATH), in the same rounds: the "before"
column. By default every child may write and use .pyc files (in a temporary PYTHONPYCACHEPREFIX),
as an installed package does; ``--no-bytecode`` keeps PYTHONDONTWRITEBYTECODE as the environment
has it, so that a sandbox that sets it compiles every module from source in every process.

Run: ``.venv/bin/python bench/bench_startup.py --baseline b2347c7`` (``--runs N``, default 15;
``--markdown`` prints only the table). The venv's interpreter directly: ``uv run`` adds nothing
to the children, it only starts the benchmark more slowly.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

PYTHON = sys.executable
SCRIPT = str(Path(PYTHON).with_name("citeverify"))
ROOT = Path(__file__).resolve().parent.parent

CONTEXT = "The museum opens at nine. Entry is free on Sundays.\n"
PLAIN = "The museum opens at nine. Entry is free on Sundays.\n"
CASE = "Brown v. Board of Education, 347 U.S. 483 (1954) says the museum opens at nine.\n"
DOI = "The museum opens at nine (doi:10.1038/nature12373).\n"

#: A first verify() in Python of an answer without citations: the library's own cold path.
FIRST_VERIFY = (
    "from citeverify_core import CitationVerifier; "
    "CitationVerifier().verify('The museum opens at nine.', ['The museum opens at nine.'])"
)
PYDANTIC_FLOOR = "from pydantic import BaseModel\nclass A(BaseModel):\n    x: int = 1\nA()"
TYPER_FLOOR = '''
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(add_completion=False)


@app.callback()
def main() -> None:
    """The same options as citeverify check; the command prints the answer."""


@app.command()
def check(
    answer: Annotated[Path | None, typer.Option("--answer", "-a")] = None,
    context: Annotated[list[Path] | None, typer.Option("--context", "-c")] = None,
    request: Annotated[Path | None, typer.Option()] = None,
    response: Annotated[Path | None, typer.Option()] = None,
    policy: Annotated[Path | None, typer.Option("--policy", "-p")] = None,
    action: Annotated[str | None, typer.Option()] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    strict: Annotated[bool, typer.Option()] = False,
    lookups: Annotated[bool, typer.Option()] = True,
) -> None:
    assert answer is not None
    print(answer.read_text())


app()
'''


@dataclass(frozen=True)
class Case:
    name: str
    argv: list[str]
    target_x: float | None = None  # at most this many times the floor
    ours: bool = True  # runs against the baseline too


def cases(tmp: Path) -> list[Case]:
    files = {}
    for name, text in (
        ("context", CONTEXT),
        ("plain", PLAIN),
        ("case", CASE),
        ("doi", DOI),
        ("typer_floor.py", TYPER_FLOOR),
    ):
        files[name] = tmp / (name if name.endswith(".py") else f"{name}.txt")
        files[name].write_text(text, encoding="utf-8")

    def check(answer: str) -> list[str]:
        return [SCRIPT, "check", "--answer", str(files[answer]), "--context", str(files["context"])]

    return [
        Case("python -c pass (floor)", [PYTHON, "-c", "pass"], ours=False),
        Case("pydantic: import + one model", [PYTHON, "-c", PYDANTIC_FLOOR], ours=False),
        Case(
            "typer app, check's options, prints only",
            [PYTHON, str(files["typer_floor.py"]), "check", "--answer", str(files["plain"])],
            ours=False,
        ),
        Case("import citeverify_core", [PYTHON, "-c", "import citeverify_core"], 2),
        Case("first verify() in Python, no citations", [PYTHON, "-c", FIRST_VERIFY]),
        Case("citeverify --version", [SCRIPT, "--version"]),
        Case("citeverify check, no citations", check("plain"), 8),
        Case("citeverify check, case citation", check("case")),
        Case("citeverify check, DOI, --no-lookups", [*check("doi"), "--no-lookups"]),
    ]


def run_once(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False, env=env
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        msg = f"{argv} exited {done.returncode}: {done.stderr.decode(errors='replace')}"
        raise RuntimeError(msg)
    return elapsed * 1000


def script_entry(rev: str) -> list[str]:
    """What the ``citeverify`` script runs at ``rev``, as a command line of this interpreter.

    The installed script imports the entry point of the current tree, which an older revision
    may not have: its cases run that revision's own
    entry point from ``[project.scripts]`` instead, as its generated script would.
    """
    pyproject = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:pyproject.toml"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    entry = tomllib.loads(pyproject)["project"]["scripts"]["citeverify"]
    module, func = entry.split(":")
    code = (
        f"import sys; from {module} import {func}; sys.argv[0] = 'citeverify'; sys.exit({func}())"
    )
    return [PYTHON, "-c", code]


def measure(
    all_cases: list[Case],
    runs: int,
    envs: dict[str, dict[str, str]],
    entries: dict[str, list[str]],
) -> dict[tuple[str, str], float]:
    """Median wall time of each case in each variant; ``entries``: a variant's script command."""
    jobs = [
        (case, variant, env, argv)
        for case in all_cases
        for variant, env in envs.items()
        if variant == "after" or case.ours
        for argv in [
            [*entries[variant], *case.argv[1:]]
            if case.argv[0] == SCRIPT and variant in entries
            else case.argv
        ]
    ]
    times: dict[tuple[str, str], list[float]] = {(c.name, v): [] for c, v, _, _ in jobs}
    for _, _, env, argv in jobs:  # warm the OS caches (and write the .pyc files) once, untimed
        run_once(argv, env)
    for _ in range(runs):
        for case, variant, env, argv in jobs:
            times[case.name, variant].append(run_once(argv, env))
    return {key: statistics.median(values) for key, values in times.items()}


def table(all_cases: list[Case], medians: dict[tuple[str, str], float], baseline: str) -> str:
    floor = medians[all_cases[0].name, "after"]
    head = "| case | median | x floor | target |"
    rule = "| --- | ---: | ---: | --- |"
    if baseline:
        head += f" before ({baseline}) | x floor | after / before |"
        rule += " ---: | ---: | ---: |"
    lines = [head, rule]
    for case in all_cases:
        ms = medians[case.name, "after"]
        if case.target_x is None:
            target = ""
        else:
            verdict = "met" if ms <= case.target_x * floor else "**not met**"
            target = f"<= {case.target_x:g}x: {verdict}"
        row = f"| {case.name} | {ms:.0f} ms | {ms / floor:.1f}x | {target} |"
        if baseline:
            old = medians.get((case.name, "before"))
            if old is None:
                row += " | | |"
            else:
                row += f" {old:.0f} ms | {old / floor:.1f}x | {ms / old:.2f} |"
        lines.append(row)
    return "\n".join(lines)


def extract_baseline(rev: str, into: Path) -> Path:
    """``core/citeverify_core`` at ``rev``, extracted under ``into``; the folder to put on PYTHONPATH."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev, "core/citeverify_core"],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "core"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="rounds (default 15)")
    parser.add_argument("--baseline", default="", help="git revision to compare with, same run")
    parser.add_argument("--markdown", action="store_true", help="only the table")
    parser.add_argument(
        "--no-bytecode",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE as it is: every module compiled from source each run",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        if not args.no_bytecode:
            # As installed by pip: every module has its .pyc. A sandbox that sets
            # PYTHONDONTWRITEBYTECODE compiles ~100 modules from source in every process (about
            # 0.35 s of a `check`); the caches go to a temporary folder, not into the tree.
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(Path(tmp, "pycache"))
        envs = {"after": env}
        entries: dict[str, list[str]] = {}
        if args.baseline:
            entries["before"] = script_entry(args.baseline)
            old = extract_baseline(args.baseline, Path(tmp, "baseline"))
            path = os.pathsep.join(p for p in (str(old), env.get("PYTHONPATH", "")) if p)
            envs["before"] = {**env, "PYTHONPATH": path}
        all_cases = cases(Path(tmp))
        medians = measure(all_cases, args.runs, envs, entries)
    if not args.markdown:
        pyc = "no .pyc (compiled every run)" if args.no_bytecode else ".pyc cached"
        print(f"{PYTHON} (CPython {sys.version.split()[0]}), {pyc}, median of {args.runs} rounds")
    print(table(all_cases, medians, args.baseline))


if __name__ == "__main__":
    main()
