"""Shared helpers for the test suite."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

DATA = Path(__file__).parent / "data"
SEED_POLICY = DATA / "seed-policy-config.yaml"


@pytest.fixture
def seed_policy_path() -> Path:
    return SEED_POLICY


# The first call that meets a legal-looking token imports eyecite (about a second): no per-example
# deadline, or hypothesis blames whichever example came first.
settings.register_profile("citeverify", deadline=None)
settings.load_profile("citeverify")
