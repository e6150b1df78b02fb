"""The service's database: one store, SQLite or PostgreSQL, its tables and their migration.

Everything the service keeps lives in one database: the reference jobs and their documents
(:mod:`citeverify_core.service.jobs`), the API keys, their tokens and the per-address hits of
unauthenticated requests (:mod:`citeverify_core.service.tenants`), the submissions' idempotency
keys (:mod:`citeverify_core.service.idempotency`) and the guard's decision log
(:mod:`citeverify_core.service.decisions`). This module holds what they share: the engine, the
transactions, every table and the one migration path.

One store, two dialects, through SQLAlchemy Core: a SQLite file (the embedded default; WAL) or a
PostgreSQL database (``postgresql://...``, for several service instances). The schema carries its
version (``citeverify_schema``) and is migrated on open: stores of earlier versions gain the
columns and tables they lack and keep their jobs.
"""

from __future__ import annotations

import contextlib
import datetime
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.pool import StaticPool

from citeverify_core.errors import InputError, ServiceError
from citeverify_core.references.index import connect_sqlite, encodable, require_columns

__all__ = [
    "API_KEYS",
    "DECISIONS",
    "DOCUMENTS",
    "IDEMPOTENCY",
    "JOBS",
    "MAX_ID",
    "RATE_HITS",
    "SCHEMA_VERSION",
    "Store",
    "clock",
    "now_iso",
    "owned",
    "storable",
]

#: Ids are signed 64-bit integers in both dialects: a larger id cannot name a row.
MAX_ID = 2**63 - 1
#: The schema this code writes: 1 the first, 2 job leases, 3 tenants and tokens, 4 the guard's
#: decision log, 5 shared rate-limit hits and idempotency keys, 6 whole documents (a document's
#: file name, format and what was extracted from it: locations, citations, findings).
SCHEMA_VERSION = 7

_META = sa.MetaData()
_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")  # SQLite's rowid is INTEGER
DOCUMENTS = sa.Table(
    "documents",
    _META,
    sa.Column("id", sa.Text, primary_key=True),
    sa.Column("title", sa.Text),
    sa.Column("created_at", sa.Text, nullable=False),
    sa.Column("api_key_id", _ID),  # the tenant; NULL for jobs submitted through the library
    # Schema 6: a document submitted whole (POST /api/verify-document); NULL for a list.
    sa.Column("name", sa.Text),  # the file's name
    sa.Column("format", sa.Text),  # the format it was read as (pdf, docx, md, ...)
    # JSON: ExtractedDocument.to_dict(), the references' locations and labels, the in-text
    # citations and the consistency findings; reference i is the job at position i.
    sa.Column("extracted", sa.Text),
)
JOBS = sa.Table(
    "jobs",
    _META,
    sa.Column("id", _ID, primary_key=True, autoincrement=True),
    sa.Column("document_id", sa.Text, sa.ForeignKey("documents.id"), nullable=False),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("raw_text", sa.Text, nullable=False),
    sa.Column("state", sa.Text, nullable=False),  # waiting, active, completed, failed
    sa.Column("step", sa.Text),  # live progress
    sa.Column("message", sa.Text),
    sa.Column("result", sa.Text),
    sa.Column("error", sa.Text),
    sa.Column("verified_at", sa.Text),
    sa.Column("worker", sa.Text),  # the lease: who runs it, until when, last heartbeat
    sa.Column("lease_expires", sa.Float),
    sa.Column("heartbeat_at", sa.Float),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("api_key_id", _ID),  # the tenant (denormalised from documents, for the queries)
    sa.Column("tokens", sa.Integer, nullable=False, server_default="0"),  # reserved for it
    sa.Index("jobs_state", "state"),
    sa.Index("jobs_document", "document_id"),
    sqlite_autoincrement=True,  # ids are never reused, as before
)
API_KEYS = sa.Table(
    "api_keys",
    _META,
    sa.Column("id", _ID, primary_key=True, autoincrement=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("prefix", sa.Text, nullable=False, index=True),  # to find a key, not to check it
    sa.Column("key_hash", sa.Text, nullable=False, unique=True),  # sha256 of the whole key
    sa.Column("tokens", sa.BigInteger, nullable=False, server_default="0"),  # available
    sa.Column("pending", sa.BigInteger, nullable=False, server_default="0"),  # reserved
    sa.Column("created_at", sa.Text, nullable=False),
    sa.Column("revoked_at", sa.Text),
    sqlite_autoincrement=True,
)
#: The guard's decisions (written and read by citeverify_core.service.decisions): what was
#: decided, never the answer or the documents unless the service logs content (``--log-content``).
DECISIONS = sa.Table(
    "decisions",
    _META,
    sa.Column("id", _ID, primary_key=True, autoincrement=True),
    sa.Column("created_at", sa.Text, nullable=False),  # ISO 8601 UTC; its first 10 are the day
    sa.Column("created_ts", sa.Float, nullable=False),  # Unix seconds, for the retention
    sa.Column("api_key_id", _ID),  # the key that asked; NULL: a gateway request without one
    sa.Column("source", sa.Text, nullable=False),  # chat, responses, page
    sa.Column("policy", sa.Text, nullable=False),
    sa.Column("status", sa.Integer, nullable=False),  # the HTTP status answered
    sa.Column("verdict", sa.Text),  # NULL: not checked (a stream passed through)
    sa.Column("action", sa.Text),
    sa.Column("reason_code", sa.Text),
    sa.Column("groundedness", sa.Float),
    sa.Column("claim_confidence", sa.Float),
    sa.Column("counts", sa.Text, nullable=False),  # JSON: claims, quotes, citations by status
    sa.Column("latency_ms", sa.Float, nullable=False),
    sa.Column("enforced", sa.Boolean, nullable=False),
    sa.Column("stream", sa.Boolean, nullable=False),
    sa.Column("content", sa.Text),  # JSON {answer, context_documents} with --log-content
    sa.Index("decisions_key", "api_key_id", "id"),
    sa.Index("decisions_time", "created_ts"),
    sqlite_autoincrement=True,
)
#: Requests without a valid API key, one row per request, per client address: the service's
#: per-address limit counted in the database, so that every process of the service sees them.
RATE_HITS = sa.Table(
    "rate_hits",
    _META,
    sa.Column("id", _ID, primary_key=True, autoincrement=True),
    sa.Column("address", sa.Text, nullable=False),
    sa.Column("ts", sa.Float, nullable=False),  # Unix seconds
    sa.Index("rate_hits_address", "address", "ts"),
    sa.Index("rate_hits_time", "ts"),
)
#: Submissions made with an ``Idempotency-Key``: the body's hash and the answer given, replayed
#: to a retry with the same key (per API key) instead of queueing and charging again.
IDEMPOTENCY = sa.Table(
    "idempotency_keys",
    _META,
    sa.Column("api_key_id", _ID, primary_key=True),
    sa.Column("key", sa.Text, primary_key=True),
    sa.Column("body_hash", sa.Text, nullable=False),
    sa.Column("answer", sa.Text, nullable=False),  # JSON: the submit answer
    sa.Column("created_ts", sa.Float, nullable=False),
    sa.Index("idempotency_time", "created_ts"),
)
#: Document uploads in flight, one row each, from before their body is read until they are
#: answered: the per-key bound on uploads at once that every process of the service shares, and
#: the token each holds reserved for its reading. A row whose lease ran out (a process killed
#: mid-upload) is refunded and removed by the key's next upload.
UPLOADS = sa.Table(
    "uploads_in_flight",
    _META,
    sa.Column("id", sa.Text, primary_key=True),  # uuid4 hex
    sa.Column("api_key_id", _ID, nullable=False),
    sa.Column("tokens", sa.Integer, nullable=False, server_default="0"),
    sa.Column("expires_ts", sa.Float, nullable=False),  # Unix seconds
    sa.Index("uploads_key", "api_key_id", "expires_ts"),
)
SCHEMA = sa.Table("citeverify_schema", _META, sa.Column("version", sa.Integer, nullable=False))
_JOB_COLUMNS = {"id", "document_id", "position", "raw_text", "state", "result", "error"}


def now_iso() -> str:
    """The current UTC time as ISO 8601 with milliseconds (``2026-01-01T00:00:00.000Z``)."""
    return (
        datetime.datetime.now(datetime.UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def clock() -> float:
    """Unix seconds: the clock of leases, idempotency windows and rate hits.

    Called through this module by the others (``store.clock()``), so that tests can move time.
    """
    return time.time()


def storable(text: str) -> bool:
    """Text both dialects can hold: no lone surrogate, no NUL (PostgreSQL text cannot)."""
    return encodable(text) and "\x00" not in text


def owned(table: sa.Table, tenant: int | None) -> list[Any]:
    """The tenant's rows only (``tenant=None``: the library, every row)."""
    return [] if tenant is None else [table.c.api_key_id == tenant]


class Store:
    """The service's database: an engine, its transactions, its schema brought up to date.

    Args:
        path: A SQLite file (``":memory:"`` for a throwaway store), or a database URL:
            ``postgresql://user@host/db`` (psycopg), ``sqlite:///path``.

    Raises:
        InputError: ``path`` is not a job store (another SQLite file, a folder that does not
            exist, a database of a newer schema), or the database cannot be reached.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path) if isinstance(path, str | Path) else ""
        self.engine = _engine(path)
        # SQLite: one connection at a time from this process (the heartbeat thread and the
        # service's request threads share it). PostgreSQL: the pool's connections run in parallel.
        self._sqlite = self.engine.dialect.name == "sqlite"
        self._lock: contextlib.AbstractContextManager[Any] = (
            threading.Lock() if self._sqlite else contextlib.nullcontext()
        )
        try:
            with self.transaction() as db:
                _migrate(db, self.path)
        except InputError:
            self.engine.dispose()
            raise
        except ServiceError as exc:
            self.engine.dispose()
            raise InputError(
                f"{self.path} cannot be used as a job store: {exc}", path=self.path
            ) from None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sa.Connection]:
        """One transaction, committed when the block ends without an exception.

        On SQLite it starts with ``BEGIN IMMEDIATE``: the write lock at once, so a claim is atomic.

        Raises:
            ServiceError: 503 ``store_unavailable``, the database failed.
        """
        try:
            with self._lock, self.engine.begin() as db:
                yield db
        except sa.exc.SQLAlchemyError as exc:
            reason = getattr(exc, "orig", None) or exc
            first = (str(reason).splitlines() or [""])[0]
            msg = f"the job store failed: {type(reason).__name__}: {first}"
            raise ServiceError(msg, status=503, code="store_unavailable") from None

    def close(self) -> None:
        """Close the database connections."""
        self.engine.dispose()


def _engine(path: object) -> sa.Engine:
    """An engine for a SQLite file or a database URL; InputError when it cannot be one."""
    if isinstance(path, str) and "://" in path:
        url = path
        if url.startswith(("postgresql://", "postgres://")):
            url = "postgresql+psycopg://" + url.split("://", 1)[1]  # psycopg 3, not psycopg2
        try:
            parsed = sa.make_url(url)
        except (sa.exc.ArgumentError, ValueError) as exc:
            raise InputError(f"not a database URL: {exc}", path="db") from None
        if parsed.get_backend_name() == "sqlite":
            return _engine(parsed.database or ":memory:")
        if parsed.get_backend_name() != "postgresql":
            msg = f"the job store runs on SQLite or PostgreSQL, not {parsed.get_backend_name()}"
            raise InputError(msg, path="db")
        try:
            return sa.create_engine(parsed, pool_pre_ping=True, pool_size=10, max_overflow=20)
        except (sa.exc.ArgumentError, ImportError) as exc:
            extra = "install citeverify-core[postgresql]"
            msg = f"cannot use {parsed.render_as_string()}: {exc} ({extra})"
            raise InputError(msg, path="db") from None
    # A SQLite file: checked with sqlite3 first, for the clear errors (no folder, not SQLite,
    # someone else's tables), then opened by SQLAlchemy.
    db = connect_sqlite(path, what="job store")
    try:
        if db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='jobs'").fetchone():
            require_columns(db, "jobs", _JOB_COLUMNS, what="job store", path=str(path))
    finally:
        db.close()
    name = str(path)
    if name == ":memory:":
        # One connection shared by every thread (a new one would be a new, empty database).
        engine = sa.create_engine(
            "sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False}
        )
    else:
        engine = sa.create_engine(
            sa.URL.create("sqlite", database=name),
            connect_args={"check_same_thread": False, "timeout": 30.0},
        )

    @sa.event.listens_for(engine, "connect")
    def _connect(dbapi: sqlite3.Connection, _record: Any) -> None:
        dbapi.isolation_level = None  # transactions are ours: BEGIN IMMEDIATE below
        if name != ":memory:":
            dbapi.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL: a commit survives a killed process (what "a restart loses nothing"
            # needs) without waiting for a disk flush; a power cut may lose the last commits.
            # FULL made the store the service's bottleneck (bench/bench_service.py: 1.3-3x).
            dbapi.execute("PRAGMA synchronous=NORMAL")

    @sa.event.listens_for(engine, "begin")
    def _begin(conn: sa.Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _migrate(db: sa.Connection, where: str) -> None:
    """Create what is missing and bring an older schema to ``SCHEMA_VERSION``."""
    inspector = sa.inspect(db)
    tables = set(inspector.get_table_names())
    if "citeverify_schema" in tables:
        version = db.execute(sa.select(sa.func.max(SCHEMA.c.version))).scalar()
        if version is not None and version > SCHEMA_VERSION:
            msg = (
                f"{where} has job store schema {version}, newer than this citeverify's "
                f"{SCHEMA_VERSION}: upgrade citeverify"
            )
            raise InputError(msg, path=where)
    _META.create_all(db, checkfirst=True)
    for table in (DOCUMENTS, JOBS):
        if table.name not in tables:
            continue
        have = {c["name"] for c in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name not in have:  # our names and types only
                kind = column.type.compile(dialect=db.dialect)
                server_default = getattr(column.server_default, "arg", None)
                default = "" if server_default is None else f" NOT NULL DEFAULT {server_default}"
                db.exec_driver_sql(
                    f"ALTER TABLE {table.name} ADD COLUMN {column.name} {kind}{default}"
                )
    db.execute(SCHEMA.delete())
    db.execute(SCHEMA.insert().values(version=SCHEMA_VERSION))
