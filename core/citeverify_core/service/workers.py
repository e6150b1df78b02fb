"""The verification workers of a service process: a thread with its own event loop.

The workers run :meth:`~citeverify_core.service.jobs.JobStore.work` on their own loop, so that
verification never delays a request on the app's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading

from citeverify_core.service.jobs import JobStore

__all__ = ["Workers"]

_log = logging.getLogger("citeverify_core.service")


class Workers:
    """The verification workers: a thread with its own event loop running ``store.work``."""

    def __init__(self, store: JobStore, poll: float) -> None:
        self.store = store
        self.poll = poll
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name="citeverify-workers", daemon=True)

    def start(self) -> None:
        """Start the thread; returns once its event loop runs."""
        self._thread.start()
        self._ready.wait()

    def _main(self) -> None:
        async def run() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            self._ready.set()
            await self.store.work(self._stop, poll=self.poll)

        try:
            asyncio.run(run())
        except Exception:
            _log.exception("the verification workers stopped")
            self._ready.set()

    def stop(self) -> None:
        """Ask the workers to stop and wait (30 s at most) for the thread to end."""
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop ended meanwhile
                self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=30)
