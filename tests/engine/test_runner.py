"""The sync API's background loop: works in threads with a running loop and after a fork."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
import warnings

import pytest

from citeverify_core.sync import run_sync


async def _answer() -> int:
    await asyncio.sleep(0)
    return 42


@pytest.mark.skipif(sys.platform == "win32", reason="os.fork is POSIX only")
def test_the_sync_api_works_in_a_forked_child():
    # gunicorn --preload, multiprocessing "fork", Celery prefork: the parent used the sync API,
    # then forked; the child's first sync call must not wait forever for the parent's loop.
    assert run_sync(_answer()) == 42
    with warnings.catch_warnings():  # Python 3.12+ warns about fork with threads: that is the case
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child
        code = 0 if run_sync(_answer()) == 42 else 1
        os._exit(code)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail("the forked child hung on the sync API")
