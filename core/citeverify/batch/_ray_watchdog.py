"""Stops the processes of a local Ray instance once the batch that started it has ended.

Run as a script (standard library only, the package is not imported) by
:func:`citeverify.batch._ray_session.connected`, before ``ray.init`` starts the instance::

    python _ray_watchdog.py MARKER

Every process of the instance (GCS, raylet, agents, workers) inherits the environment variable
:data:`MARKER_VARIABLE` with the value MARKER from the driver. When the driver closes this
script's stdin, or dies and the system closes it, the script sends SIGTERM to every process
still carrying the marker, then SIGKILL to those left after a grace period, and exits.

Why a process of its own: ``ray.shutdown()`` gives the raylet one second to stop its
``ray::DashboardAgent``, ``ray::RuntimeEnvAgent`` and workers and then kills it, so on a busy
machine they live on, orphaned; and a driver stopped by SIGTERM can end inside
``ray.shutdown()`` (Ray aborts the process, or exits it from a thread that calls into Ray after
the shutdown), before anything after it runs. Found by the marker rather than as descendants:
the orphans have been re-parented by then. Needs ``/proc`` (Linux); elsewhere it finds nothing.
"""

from __future__ import annotations

import os
import signal
import sys
import time

#: The environment variable that marks the processes of one instance.
MARKER_VARIABLE = "CITEVERIFY_RAY_INSTANCE"


def marked(marker: str) -> list[int]:
    """The running processes (this one excepted) whose environment carries ``marker``."""
    wanted = f"{MARKER_VARIABLE}={marker}".encode()
    me = os.getpid()
    found: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:  # a zombie's is empty
                if wanted in handle.read().split(b"\0"):
                    found.append(int(name))
        except OSError:  # ended meanwhile, or not ours to read
            continue
    return found


def stop(marker: str, grace: float = 10.0) -> list[int]:
    """SIGTERM to the marked processes, SIGKILL to those left after ``grace`` s.

    Returns the processes that were still running (an empty list: nothing was left).
    """
    first = marked(marker)
    for signal_number, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
        left = marked(marker)
        for pid in left:
            try:
                os.kill(pid, signal_number)
            except OSError:
                continue
        deadline = time.monotonic() + wait
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = marked(marker)
        if not left:
            break
    return first


def main(argv: list[str]) -> int:
    """Wait for stdin to close, then stop the processes marked ``argv[1]``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the batch's to handle
    while sys.stdin.buffer.read(1 << 16):
        pass
    stop(argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
