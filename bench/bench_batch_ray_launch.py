"""``citeverify batch --engine ray`` as the README launches it: wall time, bytes, leftovers.

The batch bench's synthetic records (bench_batch.py: 300-word answers, 10 passages of ~1 KB),
``--records`` of them (3,000 by default). The local engine's OUTPUT first, then the Ray engine
launched as a user would, each a fresh process with its output captured (a CI job, a script):

- ``uv``: ``python -m uv run --frozen citeverify batch ... --engine ray`` (the README's way)
- ``venv``: the venv's own script, ``.venv/bin/citeverify batch ... --engine ray``
- ``module``: ``python -m citeverify_core batch ... --engine ray``

For each: the wall time until the command returned and its output closed, whether OUTPUT is the
local engine's byte for byte, and the processes left afterwards: any process of the command's
session (Ray's processes stay in the session of the command that started them) and any
watchdog of the engine, right when it returned and 10 s later. The machine is shared: the
load is printed with each run.

    python -m uv run --frozen python bench/bench_batch_ray_launch.py                # uv, 3,000
    python -m uv run --frozen python bench/bench_batch_ray_launch.py --launch all
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_batch import corpus, write_input

ROOT = Path(__file__).resolve().parents[1]


def command_for(launch: str) -> list[str]:
    """How ``launch`` starts citeverify."""
    if launch == "uv":
        # `python -m uv` replaces itself with this binary: the same process as the README's.
        uv = os.environ.get("UV") or shutil.which("uv")  # `uv run` names itself in $UV
        if uv is None:
            raise SystemExit("uv not found: python -m pip install uv")
        return [uv, "run", "--frozen", "citeverify"]
    if launch == "venv":
        return [str(Path(sys.executable).parent / "citeverify")]
    return [sys.executable, "-m", "citeverify_core"]


def session_processes(session: int) -> dict[int, str]:
    """Running processes of ``session``, and the engine's watchdogs (in a session of their own)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        if fields[0] == b"Z":
            continue
        if int(fields[3]) == session or "_ray_watchdog.py" in cmdline:
            found[int(entry.name)] = cmdline.strip()[:80]
    return found


def run(command: list[str]) -> tuple[int, float, str, int]:
    """Run ``command`` in a session of its own, output captured: exit code, wall seconds (until
    it returned and its output was closed), stderr, and the session id."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _stdout, stderr = process.communicate(timeout=1800)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        _stdout, stderr = process.communicate()
        stderr += "\n(killed after 1,800 s)"
    return process.returncode, time.perf_counter() - started, stderr, process.pid


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=3000)
    parser.add_argument("--corpus", type=int, default=5000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--launch", choices=["uv", "venv", "module", "all"], default="uv")
    args = parser.parse_args()
    launches = ["uv", "venv", "module"] if args.launch == "all" else [args.launch]
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} cores\n")
    with tempfile.TemporaryDirectory(prefix="bench-ray-launch-") as tmp:
        folder = Path(tmp)
        source = folder / "in.jsonl"
        count = write_input(source, args.records, corpus(args.corpus))
        options = ["--workers", str(args.workers), "--batch-size", str(args.batch_size)]
        local = folder / "local.jsonl"
        code, wall, stderr, _ = run(
            [*command_for("uv"), "batch", str(source), "-o", str(local), *options]
        )
        if code:
            raise SystemExit(f"the local engine failed: {stderr}")
        print(
            f"{count:,} records ({source.stat().st_size / 1e6:,.0f} MB); local engine "
            f"(uv run, {args.workers} workers): {wall:,.1f} s\n"
        )
        print(
            "| launch | load | exit | wall s | same bytes as local | left at return | 10 s later |"
        )
        print("|---|---|---|---|---|---|---|")
        for launch in launches:
            out = folder / f"ray-{launch}.jsonl"
            load = os.getloadavg()[0]
            command = [*command_for(launch), "batch", str(source), "-o", str(out)]
            code, wall, stderr, session = run([*command, "--engine", "ray", *options])
            left = session_processes(session)
            time.sleep(10)
            later = session_processes(session)
            same = out.exists() and out.read_bytes() == local.read_bytes()
            print(
                f"| {launch} | {load:.1f} | {code} | {wall:,.1f} | {same} "
                f"| {len(left)} {sorted(set(left.values())) if left else ''} "
                f"| {len(later)} {sorted(set(later.values())) if later else ''} |",
                flush=True,
            )
            if code:
                print(stderr[-2000:])
            for pid in later:  # leave nothing behind
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    continue


if __name__ == "__main__":
    main()
