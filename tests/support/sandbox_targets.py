"""Targets for the sandbox's child process in tests (``run_isolated("tests.support....:name")``)."""

from __future__ import annotations

import threading
from typing import Any


def never_ends(data: bytes, options: dict[str, Any]) -> None:
    """A reading that never ends by itself: only a kill stops it."""
    threading.Event().wait()
