"""The service's bounds on concurrent verifications (citeverify_core.service.limits)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from citeverify_core.errors import InputError, RateLimitError
from citeverify_core.service.limits import VerificationSlots


def test_a_caller_beyond_its_bound_is_refused_while_others_run() -> None:
    async def main() -> None:
        slots = VerificationSlots(per_instance=3, per_key=2)
        release = threading.Event()
        first = [asyncio.ensure_future(slots.run("a", release.wait, timeout=5)) for _ in range(2)]
        await asyncio.sleep(0.05)
        with pytest.raises(RateLimitError) as refused:
            await slots.run("a", lambda: True, timeout=5)
        assert refused.value.retry_after > 0
        # Another caller still has the instance's third slot, then the instance is full.
        other = asyncio.ensure_future(slots.run("b", release.wait, timeout=5))
        await asyncio.sleep(0.05)
        with pytest.raises(RateLimitError, match="at once"):
            await slots.run("c", lambda: True, timeout=5)
        release.set()
        assert await asyncio.gather(*first, other) == [True, True, True]
        assert slots.running == 0
        assert await slots.run("a", lambda: 42, timeout=5) == 42
        slots.close()

    asyncio.run(main())


def test_a_timed_out_verification_keeps_its_slot_until_its_thread_ends() -> None:
    async def main() -> None:
        slots = VerificationSlots(per_instance=1, per_key=1)
        release = threading.Event()
        with pytest.raises(TimeoutError):
            await slots.run("a", release.wait, timeout=0.05)
        # The thread still runs: the bound counts it.
        with pytest.raises(RateLimitError):
            await slots.run("b", lambda: True, timeout=5)
        release.set()
        for _ in range(100):
            if slots.running == 0:
                break
            await asyncio.sleep(0.01)
        assert await slots.run("b", lambda: "ok", timeout=5) == "ok"
        slots.close()

    asyncio.run(main())


def test_an_error_in_the_verification_reaches_the_caller_and_frees_the_slot() -> None:
    async def main() -> None:
        slots = VerificationSlots(per_instance=1, per_key=1)

        def broken() -> None:
            raise InputError("bad answer")

        with pytest.raises(InputError, match="bad answer"):
            await slots.run("a", broken, timeout=5)
        await asyncio.sleep(0.01)
        assert slots.running == 0
        slots.close()

    asyncio.run(main())


@pytest.mark.parametrize("bound", [0, -1, True, 1.5, "2"])
def test_bounds_are_positive_integers(bound: object) -> None:
    with pytest.raises(InputError, match="positive integer"):
        VerificationSlots(per_instance=bound)  # type: ignore[arg-type]


def test_check_says_whether_a_caller_would_be_refused_and_takes_nothing() -> None:
    async def main() -> None:
        slots = VerificationSlots(per_instance=2, per_key=1)
        release = threading.Event()
        slots.check("a")
        slots.check("a")  # checking twice takes nothing
        running = asyncio.ensure_future(slots.run("a", release.wait, timeout=5))
        await asyncio.sleep(0.05)
        with pytest.raises(RateLimitError):
            slots.check("a")
        slots.check("b")
        release.set()
        await running
        await asyncio.sleep(0.01)
        slots.check("a")
        assert slots.running == 0
        slots.close()

    asyncio.run(main())
