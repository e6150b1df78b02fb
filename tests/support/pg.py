"""A fresh PostgreSQL database per test, on the server that CI starts (``.ci/postgres start``).

``.ci/run`` exports CITEVERIFY_TEST_POSTGRES_URL (``postgresql://postgres@127.0.0.1:PORT/...``).
Without it the tests that need PostgreSQL skip, except in CI (``CI=true``), where they fail: a
skipped test must not pass for a tested one there.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql

POSTGRES_URL = os.environ.get("CITEVERIFY_TEST_POSTGRES_URL")

UNAVAILABLE = (
    "PostgreSQL not available: set CITEVERIFY_TEST_POSTGRES_URL "
    "(.ci/run starts one with .ci/postgres start)"
)


def _admin(url: str) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(url, autocommit=True, connect_timeout=10)


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """The SQLAlchemy URL (``postgresql+psycopg://...``) of a new, empty database, dropped after."""
    if not POSTGRES_URL:
        if os.environ.get("CI") == "true":
            pytest.fail(UNAVAILABLE, pytrace=False)
        pytest.skip(UNAVAILABLE)
    base = urlsplit(POSTGRES_URL)
    name = f"cv_{uuid.uuid4().hex[:12]}"
    with _admin(POSTGRES_URL) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield urlunsplit(base._replace(scheme="postgresql+psycopg", path=f"/{name}"))
    finally:
        with _admin(POSTGRES_URL) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
