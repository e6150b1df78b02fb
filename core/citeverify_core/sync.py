"""Run coroutines from synchronous code, also where an event loop is already running (Jupyter).

The sync API submits its coroutine to one long-lived event loop in a daemon thread. That works
whether or not the calling thread has a running loop, and it lets the default HTTP client keep its
connections alive across sync calls (an ``asyncio.run`` per call would throw them away).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

# asyncio (about 30 ms at import) is imported when the loop is first needed: a verify() with
# nothing to look up never runs a coroutine.

__all__ = ["background_loop", "on_background_loop", "run_sync"]

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


def _reset_after_fork() -> None:
    # A forked child has the parent's loop object but not its thread: a coroutine submitted to
    # it would wait forever (gunicorn --preload, multiprocessing "fork", Celery prefork). The
    # child starts its own loop on first use.
    global _lock, _loop, _thread  # noqa: PLW0603
    _lock = threading.Lock()
    _loop, _thread = None, None


os.register_at_fork(after_in_child=_reset_after_fork)


def background_loop() -> asyncio.AbstractEventLoop:
    """The shared background event loop, started on first use."""
    global _loop, _thread  # one loop per process, created lazily
    import asyncio  # noqa: PLC0415 - start-up time

    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(
                target=loop.run_forever, name="citeverify-sync-loop", daemon=True
            )
            thread.start()
            _loop, _thread = loop, thread
        return _loop


def on_background_loop() -> bool:
    """Whether the caller runs on the background loop's thread."""
    return _thread is not None and threading.current_thread() is _thread


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion on the background loop and return its result.

    Raises:
        RuntimeError: when called from the background loop itself (use the async API there).
    """
    loop = background_loop()
    if threading.current_thread() is _thread:
        coro.close()
        msg = "the sync API was called from citeverify's own event loop; await the async API"
        raise RuntimeError(msg)
    import asyncio  # noqa: PLC0415 - start-up time

    return asyncio.run_coroutine_threadsafe(coro, loop).result()
