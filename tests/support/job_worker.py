"""A job-store worker in its own process, for tests/service/test_jobs_processes.py.

    python -m tests.support.job_worker STORE INDEX CALLS --lease 1 --go GO [--delay S] [--hang-on TEXT]

Opens the store, prints ``ready``, waits for the file GO, then runs ``process()`` until no job is
waiting or active. Every verification is counted first: a row (pid, reference, time) in the
``calls`` table of CALLS. A reference containing TEXT hangs (a worker busy on a job, to be
killed by the test).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from citeverify_core.references import LocalIndex, ReferenceResult, ReferenceVerifier
from citeverify_core.service.jobs import JobStore


class CountingVerifier(ReferenceVerifier):
    """Records each verification in the calls table before doing it."""

    def __init__(self, index: LocalIndex, calls: str, delay: float, hang_on: str | None) -> None:
        super().__init__(index, max_concurrency=2)
        self.calls, self.delay, self.hang_on = calls, delay, hang_on

    async def averify_or_error(self, reference: str, **options: Any) -> ReferenceResult:
        with closing(sqlite3.connect(self.calls, timeout=30)) as db, db:
            db.execute("INSERT INTO calls VALUES (?, ?, ?)", (os.getpid(), reference, time.time()))
        if self.hang_on and self.hang_on in reference:
            await asyncio.sleep(3600)  # busy on this job until killed
        await asyncio.sleep(self.delay)  # so that workers overlap
        return await super().averify_or_error(reference, **options)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("index")
    parser.add_argument("calls")
    parser.add_argument("--go", required=True)
    parser.add_argument("--lease", type=float, required=True)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--hang-on")
    parser.add_argument("--deadline", type=float, default=60.0)
    args = parser.parse_args()
    verifier = CountingVerifier(LocalIndex(args.index), args.calls, args.delay, args.hang_on)
    store = JobStore(args.store, verifier, lease=args.lease)
    print("ready", flush=True)
    while not Path(args.go).exists():
        time.sleep(0.01)
    end = time.monotonic() + args.deadline
    while time.monotonic() < end:
        store.process()
        with closing(sqlite3.connect(args.store, timeout=30)) as db:
            (open_jobs,) = db.execute(
                "SELECT count(*) FROM jobs WHERE state IN ('waiting', 'active')"
            ).fetchone()
        if not open_jobs:
            return 0
        time.sleep(0.05)  # jobs other workers hold: wait for them, or for their leases
    return 3


if __name__ == "__main__":
    sys.exit(main())
