"""Bounds on concurrent verifications: per service process and per API key.

A verification can wait on lookups (a slow URL, a slow Crossref) for seconds. Without a bound,
many such requests hold every worker thread and every upstream connection, and a tenant who sends
them delays everybody else. :class:`VerificationSlots` admits at most ``per_instance`` running
verifications in this process and ``per_key`` for any one caller; a request beyond either bound
is refused at once with :class:`~citeverify_core.errors.RateLimitError` (HTTP 429 with
``Retry-After``), never queued behind the slow ones.

The bounds are per process: with ``citeverify serve --workers N`` the service admits up to N
times ``per_instance`` in all.

:meth:`VerificationSlots.run` runs a synchronous verification on the slots' own thread pool (one
thread per instance slot), never on the event loop, so a slow lookup delays only its own request.
A request that outlives its deadline is answered (504) at once, but its slot stays taken until
its thread has finished: the bound counts what really runs, not what is still awaited.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from citeverify_core.errors import InputError, RateLimitError

__all__ = [
    "DEFAULT_PER_INSTANCE",
    "DEFAULT_PER_KEY",
    "EXTRACTIONS_PER_INSTANCE",
    "EXTRACTIONS_PER_KEY",
    "EXTRACTION_TIMEOUT",
    "ExtractionSlots",
    "VerificationSlots",
]

#: Verifications running at once in one process (guard requests and ``POST /api/check``).
DEFAULT_PER_INSTANCE = 64
#: Verifications running at once for one caller (an API key, or a client address without one).
DEFAULT_PER_KEY = 8
#: Documents read at once in one process (``POST /api/verify-document``): reading a 50 MB PDF
#: takes a core and a few hundred MB, so few run at once; more are refused (429), not queued.
EXTRACTIONS_PER_INSTANCE = 2
#: Documents read at once for one API key.
EXTRACTIONS_PER_KEY = 1
#: Seconds a document's reading may take before the request is answered 422 ``timeout``.
EXTRACTION_TIMEOUT = 60.0
#: Seconds a refused caller is told to wait (verifications take about a lookup timeout at most).
RETRY_AFTER = 1.0

T = TypeVar("T")


class VerificationSlots:
    """Counts running verifications; refuses (never queues) beyond the bounds.

    Used from one event loop (the service's): no lock is needed, since :meth:`run` does not await
    between checking and taking a slot.

    Args:
        per_instance: Most verifications at once in this process.
        per_key: Most verifications at once for one caller.

    Raises:
        InputError: a bound that is not a positive integer.
    """

    def __init__(
        self, *, per_instance: int = DEFAULT_PER_INSTANCE, per_key: int = DEFAULT_PER_KEY
    ) -> None:
        for name, value in (("per_instance", per_instance), ("per_key", per_key)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                msg = f"{name} must be a positive integer, got {value!r}"
                raise InputError(msg, path=name)
        self.per_instance = per_instance
        self.per_key = per_key
        self.running = 0
        self._by_key: dict[Hashable, int] = {}
        self._pool: ThreadPoolExecutor | None = None

    def check(self, caller: Hashable) -> None:
        """Raise RateLimitError if a verification for ``caller`` would be refused now.

        Takes nothing: a caller about to do costly work before verifying (the guard calls the
        upstream model first) learns at once that it would be refused.
        """
        self._refusal(caller)

    def _take(self, caller: Hashable) -> None:
        """Take a slot, or raise RateLimitError."""
        held = self._refusal(caller)
        self.running += 1
        self._by_key[caller] = held + 1

    def _refusal(self, caller: Hashable) -> int:
        """The slots ``caller`` holds; raises RateLimitError when it may not take one more."""
        held = self._by_key.get(caller, 0)
        if self.running >= self.per_instance:
            msg = f"the service is verifying {self.per_instance} answers at once; retry shortly"
            raise RateLimitError(msg, retry_after=RETRY_AFTER)
        if held >= self.per_key:
            msg = f"more than {self.per_key} verifications at once for this caller"
            raise RateLimitError(msg, retry_after=RETRY_AFTER)
        return held

    def _give(self, caller: Hashable) -> None:
        self.running -= 1
        left = self._by_key[caller] - 1
        if left:
            self._by_key[caller] = left
        else:
            del self._by_key[caller]

    async def run(
        self,
        caller: Hashable,
        fn: Callable[[], T],
        *,
        timeout: float | None,
        abandon: Callable[[], None] | None = None,
    ) -> T:
        """Run ``fn()`` on the slots' thread pool, holding one of ``caller``'s slots.

        Args:
            caller: Whose slot it is.
            fn: The work.
            timeout: Seconds the caller waits at most.
            abandon: Called when the caller stops waiting (the timeout, a client gone, a
                shutdown): it should make ``fn`` end now (a document reader's child is killed).

        Raises:
            RateLimitError: no slot is free for ``caller`` (nothing was run).
            TimeoutError: ``fn`` did not finish within ``timeout`` seconds (without
                ``abandon`` it goes on in its thread, holding its slot, until it ends by itself).
        """
        loop = asyncio.get_running_loop()
        self._take(caller)  # given back when the thread ends, not when this coroutine does
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.per_instance, "citeverify-verify")
        future = loop.run_in_executor(self._pool, fn)
        future.add_done_callback(lambda _f: self._give(caller))
        # shield: a deadline or a client that left cancels the wait, not the running thread;
        # abandon() is what stops the thread's work.
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except (TimeoutError, asyncio.CancelledError):
            if abandon is not None:
                abandon()
            raise

    def close(self) -> None:
        """Stop the thread pool without waiting for running verifications."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


class ExtractionSlots(VerificationSlots):
    """The bounds on documents read at once, on a pool of their own (never a verification's).

    Args:
        per_instance: Most documents read at once in this process.
        per_key: Most documents read at once for one caller.
    """

    def __init__(
        self, *, per_instance: int = EXTRACTIONS_PER_INSTANCE, per_key: int = EXTRACTIONS_PER_KEY
    ) -> None:
        super().__init__(per_instance=per_instance, per_key=per_key)

    def _refusal(self, caller: Hashable) -> int:
        held = self._by_key.get(caller, 0)
        if self.running >= self.per_instance:
            msg = f"the service is reading {self.per_instance} documents at once; retry shortly"
            raise RateLimitError(msg, retry_after=RETRY_AFTER)
        if held >= self.per_key:
            msg = f"more than {self.per_key} document(s) read at once for this caller"
            raise RateLimitError(msg, retry_after=RETRY_AFTER)
        return held
