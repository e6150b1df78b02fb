"""The postgres_url fixture: a real, empty, writable database on the CI's PostgreSQL server."""

from __future__ import annotations

import psycopg

from tests.support.pg import postgres_url

__all__ = ["postgres_url"]  # the fixture, imported for pytest to find


def test_fresh_database(postgres_url: str) -> None:
    assert postgres_url.startswith("postgresql+psycopg://postgres@127.0.0.1:")
    name = postgres_url.rsplit("/", 1)[1]
    assert name.startswith("cv_")
    libpq_url = postgres_url.replace("postgresql+psycopg://", "postgresql://", 1)
    with psycopg.connect(libpq_url, connect_timeout=10) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
        assert conn.execute("SELECT current_database()").fetchone() == (name,)
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
        assert tables == (0,)
        conn.execute("CREATE TABLE t (id integer PRIMARY KEY, note text)")
        conn.execute("INSERT INTO t VALUES (1, 'x')")
        assert conn.execute("SELECT note FROM t").fetchall() == [("x",)]
