"""Stops the processes of a local Ray instance once the batch that started it has ended.

Run as a script (standard library only, the package is not imported) by
:func:`citeverify_core.batch.ray_session.connected`, before ``ray.init`` starts the instance::

    python _ray_watchdog.py

The driver writes to this script's stdin, one line each, the processes that ``ray.init``
started (``PID START``, START being the start time in ``/proc/PID/stat``: a reused id is not
taken for them). While the driver runs, the script notes every process below them (the
raylet's agents and workers), every :data:`TICK` seconds. When the driver closes stdin, or dies
and the system closes it, the script sends SIGTERM to every noted process still running, then
SIGKILL to those left after a grace period, and exits.

Why a process of its own: ``ray.shutdown()`` gives the raylet one second to stop its
``ray::DashboardAgent``, ``ray::RuntimeEnvAgent`` and workers and then kills it, so on a busy
machine they live on, orphaned (SIGINT blocked, as Ray starts them); and a driver stopped by
SIGTERM can end inside ``ray.shutdown()`` (Ray aborts the process, or exits it from a thread
that calls into Ray after the shutdown), before anything after it runs. Why noted while they
run: an orphan is re-parented, and nothing in it then says which instance it was part of (Ray
overwrites its command line and environment with its ``ray::`` title). Needs ``/proc``
(Linux); elsewhere it notes nothing.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

#: Seconds between two looks at the processes below the noted ones.
TICK = 0.25

#: A process: its id and its start time (clock ticks since boot).
Process = tuple[int, int]


def processes() -> dict[Process, int]:
    """Every running process and its parent's id (a zombie has ended: left out)."""
    table: dict[Process, int] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:  # ended meanwhile
            continue
        # After "(command)": state, parent id, ...; the start time is the 20th field.
        fields = stat[stat.rindex(b")") + 2 :].split()
        if fields[0] != b"Z":
            table[(int(name), int(fields[19]))] = int(fields[1])
    return table


def below(noted: set[Process], table: dict[Process, int]) -> set[Process]:
    """``noted`` and every running process below a running one of them."""
    found = set(noted)
    ids = {process[0] for process in noted if process in table}
    grew = True
    while grew:
        more = {p for p, parent in table.items() if parent in ids and p not in found}
        found |= more
        ids |= {pid for pid, _ in more}
        grew = bool(more)
    return found


def stop(noted: set[Process], grace: float = 10.0) -> set[Process]:
    """SIGTERM to the noted processes still running, SIGKILL to those left after ``grace`` s.

    Returns those that were still running.
    """
    first = noted & set(processes())
    for signal_number, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
        left = noted & set(processes())
        for pid, _ in left:
            try:
                os.kill(pid, signal_number)
            except OSError:
                continue
        deadline = time.monotonic() + wait
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = noted & set(processes())
        if not left:
            break
    return first


def parse(lines: bytes) -> set[Process]:
    """``PID START`` lines; anything else is ignored."""
    found = set()
    for line in lines.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
            found.add((int(parts[0]), int(parts[1])))
    return found


def main() -> int:
    """Note the processes named on stdin, and those below them, until it closes; stop them."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the batch's to handle
    noted: set[Process] = set()
    received = b""
    stdin = sys.stdin.fileno()
    while True:
        ready, _, _ = select.select([stdin], [], [], TICK)
        if ready:
            data = os.read(stdin, 1 << 16)
            if not data:
                break
            received += data
            complete, _, received = received.rpartition(b"\n")
            noted |= parse(complete)
        if noted:
            noted = below(noted, processes())
    noted = below(noted, processes())
    stop(noted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
