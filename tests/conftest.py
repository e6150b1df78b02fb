"""Shared helpers for the test suite."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
SEED_POLICY = DATA / "seed-policy-config.yaml"


@pytest.fixture
def seed_policy_path() -> Path:
    return SEED_POLICY
