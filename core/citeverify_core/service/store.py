"""The job store (seed 004's submit/poll API): SQLite or PostgreSQL, so nothing is lost.

Submit 1-20 references -> job ids and a document id; poll up to 50 job ids for their state
(``waiting``, ``active``, ``completed``, ``failed``, ``not-found``) and live progress; cancel by
document or job ids; list history. A completed result is written in the same statement that marks
the job completed, so it is never lost.

One store, two dialects, through SQLAlchemy Core: a SQLite file (the embedded default; WAL) or a
PostgreSQL database (``postgresql://...``, for several service instances). The schema carries its
version (``citeverify_schema``) and is migrated on open: stores of earlier versions gain the
columns and tables they lack and keep their jobs.

Several workers may share one store (issue 9). A worker claims waiting jobs inside one
transaction: on SQLite the transaction starts with ``BEGIN IMMEDIATE`` (one writer at a time), on
PostgreSQL the candidate rows are selected ``FOR UPDATE SKIP LOCKED``; either way two workers never
claim the same job. Each claimed job is held under a lease: ``worker`` (who), ``lease_expires``
(until when, Unix seconds) and ``heartbeat_at``. While it runs, a heartbeat thread extends the
leases of its jobs every ``lease / 3`` seconds. A job is taken from its worker only when its lease
has expired, that is when the worker is gone (killed, crashed, its machine off); opening a store
never touches running jobs. A worker whose lease was taken writes nothing: progress and results
are only written by the job's current worker. A job whose worker died ``MAX_ATTEMPTS`` times fails
instead of killing a fourth one. Leases compare wall clocks: keep the instances' clocks in sync
(NTP), as any lease-based queue needs.

Tenants (the service's API keys, issue 12): a job submitted under a key belongs to it and costs
one token, reserved (``pending``) while the job waits or runs. Completing a job spends its token;
a failure or a cancellation refunds it. The reservation, the spending and the refund happen in the
same transaction as the job's change, so the balance always adds up. Methods given ``tenant=``
see only that tenant's jobs and documents; ``tenant=None`` (the library) sees every job.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import hashlib
import hmac
import json
import logging
import math
import os
import secrets
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.pool import StaticPool

from citeverify_core.errors import (
    AuthenticationError,
    InputError,
    InsufficientTokensError,
    PermissionDeniedError,
    ServiceError,
)
from citeverify_core.references.index import connect_sqlite, encodable, require_columns
from citeverify_core.references.parse import MAX_REFERENCE_CHARS
from citeverify_core.references.verify import ReferenceVerifier, _is_list, check_reference
from citeverify_core.service.schema import (
    MAX_HISTORY,
    MAX_POLL_IDS,
    MAX_REFERENCES,
    MAX_TITLE_CHARS,
)
from citeverify_core.sync import run_sync

__all__ = ["DEFAULT_LEASE", "MAX_ATTEMPTS", "MAX_POLL_IDS", "MAX_REFERENCES", "JobStore"]

_log = logging.getLogger(__name__)

#: Seconds a claimed job stays its worker's without a heartbeat. A killed worker's jobs run again
#: after at most this long; the heartbeat (every third of it) keeps a live worker's jobs.
DEFAULT_LEASE = 30.0
#: Claims of one job: a job whose worker died this many times fails ("worker lost") instead.
MAX_ATTEMPTS = 3
#: Job ids are signed 64-bit integers in both dialects: a larger id cannot be a job.
_MAX_ID = 2**63 - 1
#: The schema this code writes: 1 the first, 2 leases (issue 9), 3 tenants and tokens (issue 12),
#: 4 the gateway's decision log (issue 13), 5 shared rate-limit hits and idempotency keys.
SCHEMA_VERSION = 5
#: Seconds an ``Idempotency-Key`` is remembered (a retry within this replays the first answer).
IDEMPOTENCY_SECONDS = 24 * 3600.0
#: The longest ``Idempotency-Key`` accepted.
MAX_IDEMPOTENCY_KEY = 255

_META = sa.MetaData()
_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")  # SQLite's rowid is INTEGER
DOCUMENTS = sa.Table(
    "documents",
    _META,
    sa.Column("id", sa.Text, primary_key=True),
    sa.Column("title", sa.Text),
    sa.Column("created_at", sa.Text, nullable=False),
    sa.Column("api_key_id", _ID),  # the tenant; NULL for jobs submitted through the library
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
#: The guard's decisions (citeverify_core.service.decisions): what was decided, never the answer or
#: the documents unless the service logs content (``--log-content``).
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
SCHEMA = sa.Table("citeverify_schema", _META, sa.Column("version", sa.Integer, nullable=False))
_JOB_COLUMNS = {"id", "document_id", "position", "raw_text", "state", "result", "error"}


def _now() -> str:
    return (
        datetime.datetime.now(datetime.UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def _clock() -> float:
    """Unix seconds, the leases' clock (a function so that tests can move time)."""
    return time.time()


class JobStore:
    """Reference verification jobs persisted in SQLite or PostgreSQL, shared by many workers.

    Args:
        path: A SQLite file (``":memory:"`` for a throwaway store), or a database URL:
            ``postgresql://user@host/db`` (psycopg), ``sqlite:///path``.
        verifier: Verifies the references (its ``max_concurrency`` bounds the jobs run at once).
        lease: Seconds a claimed job stays this worker's without a heartbeat; the heartbeat
            extends it every ``lease / 3`` seconds while the worker runs.

    Raises:
        InputError: ``path`` is not a job store (another SQLite file, a folder that does not
            exist, a database of a newer schema), or the database cannot be reached.
    """

    def __init__(
        self, path: str | Path, verifier: ReferenceVerifier, *, lease: float = DEFAULT_LEASE
    ) -> None:
        if not _positive_seconds(lease):
            raise InputError("lease must be a positive, finite number of seconds", path="lease")
        self.path = str(path) if isinstance(path, str | Path) else ""
        self.engine = _engine(path)
        self.verifier = verifier
        self.lease = float(lease)
        #: This store's name in the ``worker`` column: host, process and instance.
        self.worker_id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        # SQLite: one connection at a time from this process (the heartbeat thread and the
        # service's request threads share it). PostgreSQL: the pool's connections run in parallel.
        self._sqlite = self.engine.dialect.name == "sqlite"
        self._lock: contextlib.AbstractContextManager[Any] = (
            threading.Lock() if self._sqlite else contextlib.nullcontext()
        )
        #: The jobs this store's workers hold now: the heartbeat extends these, and only these.
        self._running: set[int] = set()
        self._running_lock = threading.Lock()
        self._rate_pruned = 0.0
        self._idempotency_pruned = 0.0
        #: Told ``(state, seconds)`` when a job ends (the service's latency metric).
        self.observe: Callable[[str, float], None] | None = None
        try:
            with self._transaction() as db:
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
    def _transaction(self) -> Iterator[sa.Connection]:
        """One transaction; a database failure becomes a :class:`ServiceError` (503).

        On SQLite it starts with ``BEGIN IMMEDIATE``: the write lock at once, so a claim is atomic.
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

    # --- submit ----------------------------------------------------------------------------------

    def submit(
        self,
        references: Sequence[str],
        *,
        title: str | None = None,
        tenant: int | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Queue 1-20 references; returns ``jobIds``, ``documentId`` and ``message``.

        With ``tenant`` (an API key's id), each reference reserves one of its tokens and the
        answer adds ``tokensAvailable``.

        With ``idempotency_key`` (and a tenant), a submission repeated with the same key and the
        same references and title within 24 hours returns the first answer (``replayed`` True)
        and queues and charges nothing; concurrent repeats charge once.

        Raises:
            InputError: 0 or more than 20 references, or one that is not a string, is empty,
                longer than 1,200 characters or not valid Unicode (``path`` names it:
                ``references[3]``); a title that is not a string of at most 500 characters; an
                idempotency key that is not 1-255 printable ASCII characters.
            ServiceError: 422 ``idempotency_key_reused``: the key was used for a different
                submission; 409 ``idempotency_key_in_use``: concurrent requests kept colliding.
            InsufficientTokensError: the tenant has fewer tokens than references (nothing queued).
            PermissionDeniedError: the tenant's key was revoked meanwhile.
        """
        _check_references(references)
        if title is not None:
            if not isinstance(title, str) or len(title) > MAX_TITLE_CHARS:
                msg = f"title must be a string of at most {MAX_TITLE_CHARS} characters"
                raise InputError(msg, path="title")
            if not encodable(title) or "\x00" in title:
                msg = "title must be valid Unicode text without NUL characters"
                raise InputError(msg, path="title")
        if idempotency_key is None or tenant is None:
            return self._submit(references, title, tenant, None)
        if not (
            isinstance(idempotency_key, str)
            and 0 < len(idempotency_key) <= MAX_IDEMPOTENCY_KEY
            and idempotency_key.isascii()
            and idempotency_key.isprintable()
        ):
            msg = f"Idempotency-Key must be 1 to {MAX_IDEMPOTENCY_KEY} printable ASCII characters"
            raise InputError(msg, path="Idempotency-Key")
        body_hash = hashlib.sha256(
            json.dumps([list(references), title], ensure_ascii=True).encode()
        ).hexdigest()
        idem = (idempotency_key, body_hash)
        if _clock() - self._idempotency_pruned > 3600:  # expired keys go once an hour
            self._idempotency_pruned = _clock()
            with self._transaction() as db:
                db.execute(
                    IDEMPOTENCY.delete().where(
                        IDEMPOTENCY.c.created_ts < _clock() - IDEMPOTENCY_SECONDS
                    )
                )
        for _ in range(3):
            try:
                return self._submit(references, title, tenant, idem)
            except _SameKeyMeanwhile:
                continue  # another request with this key committed first: replay its answer
        raise ServiceError(
            "the Idempotency-Key is in use by a concurrent request; retry",
            status=409,
            code="idempotency_key_in_use",
        )

    def _submit(
        self,
        references: Sequence[str],
        title: str | None,
        tenant: int | None,
        idem: tuple[str, str] | None,
    ) -> dict[str, Any]:
        document_id = uuid.uuid4().hex
        count = len(references)
        with self._transaction() as db:
            if idem is not None and tenant is not None:
                replay = _replay(db, tenant, *idem)
                if replay is not None:
                    return replay
            available = None
            if tenant is not None:
                available = _reserve(db, tenant, count)
            db.execute(
                DOCUMENTS.insert().values(
                    id=document_id, title=title, created_at=_now(), api_key_id=tenant
                )
            )
            ids = [
                str(
                    db.execute(
                        JOBS.insert()
                        .values(
                            document_id=document_id,
                            position=i,
                            raw_text=ref,
                            state="waiting",
                            api_key_id=tenant,
                            tokens=1 if tenant is not None else 0,
                        )
                        .returning(JOBS.c.id)
                    ).scalar_one()
                )
                for i, ref in enumerate(references)
            ]
            answer: dict[str, Any] = {
                "jobIds": ids,
                "documentId": document_id,
                "message": f"{len(ids)} reference(s) queued for verification",
            }
            if available is not None:
                answer["tokensAvailable"] = available
            if idem is not None and tenant is not None:
                # PostgreSQL: a concurrent request with the same key waits here on the primary
                # key until this one commits, then fails and replays this answer. SQLite's
                # BEGIN IMMEDIATE serialises the two before the lookup above.
                try:
                    with db.begin_nested():
                        db.execute(
                            IDEMPOTENCY.insert().values(
                                api_key_id=tenant,
                                key=idem[0],
                                body_hash=idem[1],
                                answer=json.dumps(answer),
                                created_ts=_clock(),
                            )
                        )
                except sa.exc.IntegrityError:
                    raise _SameKeyMeanwhile from None
        return {**answer, "replayed": False} if idem is not None else answer

    # --- the unauthenticated rate limit ----------------------------------------------------------

    def hit_rate_limit(self, address: str, limit: int, *, window: float = 60.0) -> float:
        """Count a request without a valid key from ``address``; 0 when within ``limit``.

        Counted in the database, so that every process sharing it applies one limit. Refused
        requests are not counted. Returns the seconds until the next request is allowed.
        """
        now = _clock()
        since = now - window
        address = address[:100]
        with self._transaction() as db:
            hits = db.execute(
                sa.select(sa.func.count(), sa.func.min(RATE_HITS.c.ts)).where(
                    RATE_HITS.c.address == address, RATE_HITS.c.ts > since
                )
            ).one()
            if hits[0] >= limit:
                return max(1.0, window - (now - float(hits[1])))
            db.execute(RATE_HITS.insert().values(address=address, ts=now))
            if now - self._rate_pruned > window:
                # Old hits of every address go once a window: the table holds one minute.
                self._rate_pruned = now
                db.execute(RATE_HITS.delete().where(RATE_HITS.c.ts <= since))
        return 0.0

    # --- work ------------------------------------------------------------------------------------

    def process(self) -> int:
        """Verify every claimable job (concurrently); returns how many this worker ran.

        Claimable: waiting, or active under an expired lease (its worker is gone). Jobs that
        other live workers run are left to them.
        """
        return run_sync(self.aprocess())

    async def aprocess(self) -> int:
        """Async :meth:`process`."""
        semaphore = asyncio.Semaphore(self.verifier.max_concurrency)
        processed = 0

        async def run(job_id: int, text: str) -> None:
            async with semaphore:
                await self._run_one(job_id, text)

        with self._heartbeat():
            while claimed := self._claim(self.verifier.max_concurrency * 2):
                async with self.verifier.lookups.session():
                    await asyncio.gather(*(run(job_id, text) for job_id, text in claimed))
                processed += len(claimed)
        return processed

    async def work(self, stop: asyncio.Event, *, poll: float = 0.25) -> None:
        """Verify jobs as they come until ``stop`` is set: the service's worker loop.

        Keeps up to ``verifier.max_concurrency`` jobs running (the seed's 15), claiming more as
        slots free; looks for new jobs every ``poll`` seconds when idle. A database that fails
        is retried (logged), never fatal.
        """
        limit = self.verifier.max_concurrency
        running: set[asyncio.Task[None]] = set()
        with self._heartbeat():
            async with self.verifier.lookups.session():
                while not stop.is_set():
                    free = limit - len(running)
                    claimed: list[tuple[int, str]] = []
                    if free > 0:
                        try:
                            claimed = await asyncio.to_thread(self._claim, free)
                        except ServiceError as exc:
                            _log.warning("claiming jobs failed (%s); retrying", exc)
                    for job_id, text in claimed:
                        task = asyncio.create_task(self._run_one(job_id, text))
                        running.add(task)
                        task.add_done_callback(running.discard)
                    if claimed and len(running) < limit:
                        continue  # there may be more waiting
                    waiters: set[asyncio.Future[Any]] = {asyncio.ensure_future(stop.wait())}
                    await asyncio.wait(
                        running | waiters, timeout=poll, return_when=asyncio.FIRST_COMPLETED
                    )
                    for waiter in waiters:
                        waiter.cancel()
                for task in running:
                    task.cancel()  # their leases expire; another instance runs them again
                await asyncio.gather(*running, return_exceptions=True)

    async def _run_one(self, job_id: int, text: str) -> None:
        try:
            await self._run(job_id, text)
        except ServiceError as exc:
            _log.warning("job %s: %s; its lease will expire and it runs again", job_id, exc)
        finally:
            # Whatever ended it: no more heartbeats. A job left active (its run was
            # cancelled) expires like a dead worker's, even while this store lives on.
            with self._running_lock:
                self._running.discard(job_id)

    def _claim(self, limit: int) -> list[tuple[int, str]]:
        """Claim up to ``limit`` jobs; jobs lost too often fail first (and are refunded)."""
        now = _clock()
        expired = sa.and_(
            JOBS.c.state == "active",
            sa.or_(JOBS.c.lease_expires.is_(None), JOBS.c.lease_expires < now),
        )
        with self._transaction() as db:
            lost = (
                db.execute(
                    sa.select(JOBS.c.id)
                    .where(expired, JOBS.c.attempts >= MAX_ATTEMPTS)
                    .with_for_update(skip_locked=True)
                )
                .scalars()
                .all()
            )
            for job_id in lost:
                self._end(
                    db,
                    job_id,
                    "failed",
                    None,
                    f"its worker stopped {MAX_ATTEMPTS} times while verifying it "
                    "(killed or crashed); not retried",
                    only_worker=False,
                    ended_at=_now(),
                )
            ids = (
                db.execute(
                    sa.select(JOBS.c.id)
                    .where(sa.or_(JOBS.c.state == "waiting", expired))
                    .order_by(JOBS.c.id)
                    .limit(limit)
                    .with_for_update(skip_locked=True)
                )
                .scalars()
                .all()
            )
            if not ids:
                return []
            rows = db.execute(
                JOBS.update()
                .where(JOBS.c.id.in_(ids))
                .values(
                    state="active",
                    worker=self.worker_id,
                    lease_expires=now + self.lease,
                    heartbeat_at=now,
                    attempts=JOBS.c.attempts + 1,
                    step="queued",
                    message="starting",
                )
                .returning(JOBS.c.id, JOBS.c.raw_text)
            ).all()
        claimed = sorted((int(r[0]), str(r[1])) for r in rows)
        with self._running_lock:
            self._running.update(job_id for job_id, _ in claimed)
        return claimed

    @contextlib.contextmanager
    def _heartbeat(self) -> Iterator[None]:
        """Extend this worker's leases every ``lease / 3`` seconds while the block runs.

        A thread, not a task: a reference that keeps the event loop busy must not cost its job.
        """
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(self.lease / 3):
                self._extend()

        thread = threading.Thread(target=beat, name=f"citeverify-heartbeat-{self.worker_id}")
        thread.daemon = True
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def _extend(self) -> None:
        """Extend the leases of the jobs this store is running now."""
        now = _clock()
        with self._running_lock:
            running = sorted(self._running)
        if not running:
            return
        try:
            with self._transaction() as db:
                db.execute(
                    JOBS.update()
                    .where(
                        JOBS.c.worker == self.worker_id,
                        JOBS.c.state == "active",
                        JOBS.c.id.in_(running),
                    )
                    .values(lease_expires=now + self.lease, heartbeat_at=now)
                )
        except ServiceError as exc:
            # A busy or failing database: the next beat tries again, within the lease.
            _log.warning("job store heartbeat failed (%s); retrying", exc)

    async def _run(self, job_id: int, text: str) -> None:
        start = time.perf_counter()
        await asyncio.to_thread(self._progress, job_id, "parsing", "reading the reference")

        def step(name: str, message: str) -> None:
            self._progress(job_id, name, message)

        # Never raises: a reference that cannot be read or checked gives a result with its error
        # (the verifier's per-reference boundary), so a job always ends.
        result = await self.verifier.averify_or_error(text, progress=step)
        state = "failed" if result.error else "completed"
        await asyncio.to_thread(self._finish, job_id, state, result.model_dump_json(), result.error)
        if self.observe is not None:
            self.observe(state, time.perf_counter() - start)

    def _progress(self, job_id: int, step: str, message: str) -> None:
        with self._transaction() as db:
            db.execute(
                JOBS.update()
                .where(
                    JOBS.c.id == job_id, JOBS.c.state == "active", JOBS.c.worker == self.worker_id
                )
                .values(step=step, message=message)
            )

    def _finish(self, job_id: int, state: str, result: str | None, error: str | None) -> None:
        with self._transaction() as db:
            self._end(db, job_id, state, result, error, only_worker=True, ended_at=_now())

    def _end(
        self,
        db: sa.Connection,
        job_id: int,
        state: str,
        result: str | None,
        error: str | None,
        *,
        only_worker: bool,
        ended_at: str | None,
    ) -> int | None:
        """End one job and settle its token, in the caller's transaction.

        The one way a job ends: finished by its worker, failed after too many lost workers, or
        cancelled. Only the job's current worker finishes it (``only_worker``): a job cancelled
        meanwhile stays cancelled, and a job whose lease another worker took is that worker's
        now; otherwise a waiting or active job ends. Returns the tokens refunded, or None when
        the job was not there to end.
        """
        states = ("active",) if only_worker else ("active", "waiting")
        where = [JOBS.c.id == job_id, JOBS.c.state.in_(states)]
        if only_worker:
            where.append(JOBS.c.worker == self.worker_id)
        row = db.execute(
            sa.select(JOBS.c.api_key_id, JOBS.c.tokens).where(*where).with_for_update()
        ).first()
        if row is None:
            return None
        db.execute(
            JOBS.update()
            .where(JOBS.c.id == job_id)
            .values(
                state=state,
                result=result,
                error=error,
                step=None,
                message=None,
                lease_expires=None,
                verified_at=ended_at,
                tokens=0,
            )
        )
        return _settle(db, row.api_key_id, row.tokens, spent=state == "completed")

    # --- poll, cancel, history ---------------------------------------------------------------
    def results(self, job_ids: Sequence[str], *, tenant: int | None = None) -> dict[str, Any]:
        """The seed's ``{"jobs": [...]}`` for up to 50 job ids.

        An id that names no job (``"nope"``, ``"-1"``, ``"²"``, thirty nines), or another
        tenant's job, is ``not-found``.

        Raises:
            InputError: not a list, more than 50 ids, or an id that is neither a string nor an
                integer (``path`` names it: ``jobIds[2]``).
        """
        ids = _job_ids(job_ids, verb="poll")
        numbers = [n for _, n in ids if n is not None]
        rows: dict[int, Any] = {}
        if numbers:
            query = sa.select(
                JOBS.c.id, JOBS.c.state, JOBS.c.step, JOBS.c.message, JOBS.c.result, JOBS.c.error
            ).where(JOBS.c.id.in_(numbers), *_owned(JOBS, tenant))
            with self._transaction() as db:
                rows = {int(r.id): r for r in db.execute(query)}
        jobs = []
        for job_id, number in ids:
            row = rows.get(number) if number is not None else None
            if row is None:
                jobs.append({"id": job_id, "state": "not-found", "error": None, "progress": None})
                continue
            job: dict[str, Any] = {
                "id": job_id,
                "state": row.state,
                "error": row.error,
                "progress": (
                    {"step": row.step, "message": row.message} if row.state == "active" else None
                ),
            }
            if row.state == "completed" and row.result is not None:
                job["result"] = json.loads(row.result)
            jobs.append(job)
        return {"jobs": jobs}

    def cancel(
        self,
        *,
        document_id: str | None = None,
        job_ids: Sequence[str] | None = None,
        tenant: int | None = None,
    ) -> dict[str, Any]:
        """Cancel waiting or running jobs of a document and/or by id; their tokens are refunded.

        Ids that name no job (or another tenant's) cancel nothing.

        Raises:
            InputError: neither a document id nor job ids, a document id that is not a string,
                more than 50 job ids, or an id that is neither a string nor an integer.
        """
        if document_id is not None and not isinstance(document_id, str):
            msg = f"documentId must be a string, got {type(document_id).__name__}"
            raise InputError(msg, path="documentId")
        ids = [] if job_ids is None else _job_ids(job_ids, verb="cancel")
        if document_id is None and not ids:
            raise InputError("give a documentId, jobIds, or both", path="documentId")
        numbers = [n for _, n in ids if n is not None]
        chosen = []
        if document_id is not None and _storable(document_id):
            chosen.append(JOBS.c.document_id == document_id)
        if numbers:
            chosen.append(JOBS.c.id.in_(numbers))
        refunded = cancelled = 0
        doc = None
        with self._transaction() as db:
            if chosen:
                open_jobs = db.execute(
                    sa.select(JOBS.c.id)
                    .where(
                        sa.or_(*chosen),
                        JOBS.c.state.in_(("waiting", "active")),
                        *_owned(JOBS, tenant),
                    )
                    .order_by(JOBS.c.id)
                ).scalars()
                for job_id in open_jobs.all():
                    ended = self._end(
                        db, job_id, "failed", None, "cancelled", only_worker=False, ended_at=None
                    )
                    if ended is not None:
                        cancelled += 1
                        refunded += ended
            doc = document_id
            if doc is None and numbers:
                doc = db.execute(
                    sa.select(JOBS.c.document_id)
                    .where(JOBS.c.id.in_(numbers), *_owned(JOBS, tenant))
                    .order_by(JOBS.c.id)
                    .limit(1)
                ).scalar()
        status = self._document_status(doc, tenant) if doc and _storable(doc) else None
        return {
            "success": True,
            "cancelledJobs": cancelled,
            "refundedTokens": refunded,
            "documentId": doc,
            "documentStatus": status,
        }

    def _document_status(self, document_id: str, tenant: int | None = None) -> str | None:
        with self._transaction() as db:
            states = list(
                db.execute(
                    sa.select(JOBS.c.state).where(
                        JOBS.c.document_id == document_id, *_owned(JOBS, tenant)
                    )
                ).scalars()
            )
        return _status_of(states)

    def history(
        self, *, limit: int = 20, offset: int = 0, tenant: int | None = None
    ) -> dict[str, Any]:
        """Past documents, newest first, with their references and pagination.

        Raises:
            InputError: ``limit`` or ``offset`` not an integer, ``limit`` outside 1-50, or a
                negative ``offset``.
        """
        for name, value in (("limit", limit), ("offset", offset)):
            if isinstance(value, bool) or not isinstance(value, int):
                msg = f"{name} must be an integer, got {type(value).__name__}"
                raise InputError(msg, path=name)
        if not 1 <= limit <= MAX_HISTORY:
            msg = f"limit must be 1 to {MAX_HISTORY}"  # not echoed: str() of a huge int raises
            raise InputError(msg, path="limit")
        if not 0 <= offset <= _MAX_ID:
            msg = f"offset must be 0 to {_MAX_ID}"
            raise InputError(msg, path="offset")
        owned = _owned(DOCUMENTS, tenant)
        with self._transaction() as db:
            total = db.execute(
                sa.select(sa.func.count()).select_from(DOCUMENTS).where(*owned)
            ).scalar_one()
            docs = db.execute(
                sa.select(DOCUMENTS.c.id, DOCUMENTS.c.title, DOCUMENTS.c.created_at)
                .where(*owned)
                # Newest first; documents of the same millisecond in submission order (their
                # first job id: ids only grow), never by their random ids.
                .order_by(DOCUMENTS.c.created_at.desc(), _first_job_of_document().desc())
                .limit(limit)
                .offset(offset)
            ).all()
            by_document: dict[str, list[Any]] = {d.id: [] for d in docs}
            if docs:
                for row in db.execute(
                    sa.select(
                        JOBS.c.id,
                        JOBS.c.document_id,
                        JOBS.c.raw_text,
                        JOBS.c.state,
                        JOBS.c.result,
                        JOBS.c.verified_at,
                    )
                    .where(JOBS.c.document_id.in_(list(by_document)))
                    .order_by(JOBS.c.position)
                ):
                    by_document[row.document_id].append(row)
        documents = []
        for doc_id, title, created in docs:
            rows = by_document[doc_id]
            references = []
            for row in rows:
                parsed = json.loads(row.result) if row.result else None
                graph = (parsed or {}).get("verificationGraph") or {}
                nodes = graph.get("nodes", [])
                cit: dict[str, Any] = next((n for n in nodes if n.get("type") == "CITATION"), {})
                references.append(
                    {
                        "id": str(row.id),
                        "rawText": row.raw_text,
                        "status": parsed["status"] if parsed else row.state,
                        "parsedData": cit.get("parsedFields"),
                        "verifiedAt": row.verified_at,
                    }
                )
            documents.append(
                {
                    "id": doc_id,
                    "title": title or f"{len(rows)} reference(s)",
                    "status": _status_of([r.state for r in rows]),
                    "referenceCount": len(rows),
                    "createdAt": created,
                    "references": references,
                }
            )
        return {
            "documents": documents,
            "pagination": {
                "total": total,
                "limit": limit,
                "offset": offset,
                "hasMore": offset + len(docs) < total,
            },
        }

    def counts(self) -> dict[str, int]:
        """Jobs by state (the service's ``/metrics``)."""
        with self._transaction() as db:
            rows = db.execute(sa.select(JOBS.c.state, sa.func.count()).group_by(JOBS.c.state)).all()
        return {str(state): int(n) for state, n in rows}

    # --- API keys (the service's tenants) ---------------------------------------------------------

    def create_key(self, name: str, *, tokens: int = 0) -> tuple[str, dict[str, Any]]:
        """A new API key with ``tokens``: the key (shown once) and its public record.

        Only the key's hash is kept.

        Raises:
            InputError: an empty name or one over 200 characters, or a negative token count.
        """
        _check_name(name)
        _check_tokens(tokens, allow_zero=True)
        key = f"{KEY_PREFIX}{secrets.token_urlsafe(32)}"
        with self._transaction() as db:
            key_id = db.execute(
                API_KEYS.insert()
                .values(
                    name=name,
                    prefix=_prefix(key),
                    key_hash=_hash(key),
                    tokens=tokens,
                    pending=0,
                    created_at=_now(),
                )
                .returning(API_KEYS.c.id)
            ).scalar_one()
        return key, self._key_record(int(key_id))

    def list_keys(self) -> list[dict[str, Any]]:
        """Every key's public record (never the key: only its first characters)."""
        with self._transaction() as db:
            rows = db.execute(sa.select(API_KEYS).order_by(API_KEYS.c.id)).all()
        return [_public(r) for r in rows]

    def _key_record(self, key_id: int) -> dict[str, Any]:
        with self._transaction() as db:
            row = db.execute(sa.select(API_KEYS).where(API_KEYS.c.id == key_id)).first()
        if row is None:
            raise InputError(f"no API key with id {key_id}", path="key")
        return _public(row)

    def _find_key(self, db: sa.Connection, ref: str | int) -> Any:
        """A key by id, by name, or by its public prefix; InputError when none or several."""
        if isinstance(ref, int) or (isinstance(ref, str) and ref.isascii() and ref.isdigit()):
            where = API_KEYS.c.id == int(ref)
        elif isinstance(ref, str) and ref.startswith(KEY_PREFIX):
            where = API_KEYS.c.prefix == _prefix(ref)
        elif isinstance(ref, str) and encodable(ref):
            where = API_KEYS.c.name == ref
        else:
            raise InputError("name a key by its id, its name or its first characters", path="key")
        rows = db.execute(sa.select(API_KEYS).where(where)).all()
        if not rows:
            raise InputError(f"no API key {ref!r}", path="key")
        if len(rows) > 1:
            raise InputError(f"{len(rows)} keys are named {ref!r}: use the id", path="key")
        return rows[0]

    def revoke_key(self, ref: str | int) -> dict[str, Any]:
        """Revoke a key (by id, name or prefix): its requests get 403 from now on."""
        with self._transaction() as db:
            row = self._find_key(db, ref)
            db.execute(
                API_KEYS.update()
                .where(API_KEYS.c.id == row.id, API_KEYS.c.revoked_at.is_(None))
                .values(revoked_at=_now())
            )
        return self._key_record(int(row.id))

    def add_tokens(self, ref: str | int, tokens: int) -> dict[str, Any]:
        """Add ``tokens`` (> 0) to a key's balance."""
        _check_tokens(tokens, allow_zero=False)
        with self._transaction() as db:
            row = self._find_key(db, ref)
            db.execute(
                API_KEYS.update()
                .where(API_KEYS.c.id == row.id)
                .values(tokens=API_KEYS.c.tokens + tokens)
            )
        return self._key_record(int(row.id))

    def authenticate(self, key: str) -> dict[str, Any]:
        """The record of the key a request presents.

        The key is found by its public prefix and checked by comparing hashes in constant time
        (``hmac.compare_digest``), so timing says nothing about how much of a guess was right.

        Raises:
            AuthenticationError: not a key this service issued.
            PermissionDeniedError: a revoked key.
        """
        if (
            not isinstance(key, str)
            or not key.startswith(KEY_PREFIX)
            or len(key) > 200
            or not key.isascii()
        ):
            raise AuthenticationError(
                "missing or invalid API key: send Authorization: Bearer <key>"
            )
        with self._transaction() as db:
            rows = db.execute(sa.select(API_KEYS).where(API_KEYS.c.prefix == _prefix(key))).all()
        digest = _hash(key)
        for row in rows:
            if hmac.compare_digest(row.key_hash, digest):
                if row.revoked_at is not None:
                    raise PermissionDeniedError("this API key was revoked")
                return _public(row)
        raise AuthenticationError("invalid API key")

    def balance(self, tenant: int) -> dict[str, Any]:
        """The seed's balance answer for a key."""
        record = self._key_record(tenant)
        return {
            "totalAvailable": record["tokens"],
            "subscriptionTokens": 0,
            "purchasedTokens": record["tokens"],
            "pendingTokens": record["pendingTokens"],
            "plan": None,
            "context": "user",
            "name": record["name"],
            "email": None,
        }


#: Every key starts so (a secret scanner can find leaked ones); the next 8 characters are its
#: public prefix, shown by ``keys list`` and used to find it.
KEY_PREFIX = "cvk_"


class _SameKeyMeanwhile(Exception):
    """A concurrent submission with the same idempotency key committed first."""


def _replay(db: sa.Connection, tenant: int, key: str, body_hash: str) -> dict[str, Any] | None:
    """The answer of an earlier submission with this key, or None when there is none.

    Raises:
        ServiceError: 422 ``idempotency_key_reused``, the key came with another body.
    """
    row = db.execute(
        sa.select(IDEMPOTENCY.c.body_hash, IDEMPOTENCY.c.answer, IDEMPOTENCY.c.created_ts).where(
            IDEMPOTENCY.c.api_key_id == tenant, IDEMPOTENCY.c.key == key
        )
    ).first()
    if row is None:
        return None
    if row.created_ts < _clock() - IDEMPOTENCY_SECONDS:  # expired: forget it, submit anew
        db.execute(
            IDEMPOTENCY.delete().where(IDEMPOTENCY.c.api_key_id == tenant, IDEMPOTENCY.c.key == key)
        )
        return None
    if not hmac.compare_digest(row.body_hash, body_hash):
        msg = (
            "this Idempotency-Key was used with a different request body; use a new key for a "
            "new submission"
        )
        raise ServiceError(msg, status=422, code="idempotency_key_reused")
    answer: dict[str, Any] = json.loads(row.answer)
    return {**answer, "replayed": True}


def _prefix(key: str) -> str:
    return key[: len(KEY_PREFIX) + 8]


def _hash(key: str) -> str:
    # Keys are 256 random bits: a fast hash is enough (nothing to brute-force), as for any
    # high-entropy API token.
    return hashlib.sha256(key.encode()).hexdigest()


def _public(row: Any) -> dict[str, Any]:
    return {
        "id": int(row.id),
        "name": row.name,
        "prefix": row.prefix,
        "tokens": int(row.tokens),
        "pendingTokens": int(row.pending),
        "createdAt": row.created_at,
        "revokedAt": row.revoked_at,
    }


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not name.strip() or len(name) > 200 or not encodable(name):
        raise InputError("a key's name is 1 to 200 characters of text", path="name")


def _check_tokens(tokens: object, *, allow_zero: bool) -> None:
    low = 0 if allow_zero else 1
    if isinstance(tokens, bool) or not isinstance(tokens, int) or not low <= tokens <= 10**12:
        raise InputError(f"tokens must be an integer from {low} to 10^12", path="tokens")


def _first_job_of_document() -> Any:
    """A document's first job id: its place in submission order."""
    return (
        sa.select(sa.func.min(JOBS.c.id))
        .where(JOBS.c.document_id == DOCUMENTS.c.id)
        .scalar_subquery()
    )


def _storable(text: str) -> bool:
    """Text both dialects can hold: no lone surrogate, no NUL (PostgreSQL text cannot)."""
    return encodable(text) and "\x00" not in text


def _owned(table: sa.Table, tenant: int | None) -> list[Any]:
    """The tenant's rows only (``tenant=None``: the library, every row)."""
    return [] if tenant is None else [table.c.api_key_id == tenant]


def _reserve(db: sa.Connection, tenant: int, count: int) -> int:
    """Take ``count`` tokens from the tenant into its pending ones; its balance after."""
    row = db.execute(
        API_KEYS.update()
        .where(
            API_KEYS.c.id == tenant,
            API_KEYS.c.revoked_at.is_(None),
            API_KEYS.c.tokens >= count,
        )
        .values(tokens=API_KEYS.c.tokens - count, pending=API_KEYS.c.pending + count)
        .returning(API_KEYS.c.tokens)
    ).first()
    if row is not None:
        return int(row.tokens)
    key = db.execute(sa.select(API_KEYS).where(API_KEYS.c.id == tenant)).first()
    if key is None:
        raise AuthenticationError("invalid API key")
    if key.revoked_at is not None:
        raise PermissionDeniedError("this API key was revoked")
    msg = f"{count} reference(s) need {count} token(s); the key has {key.tokens}"
    raise InsufficientTokensError(msg, needed=count, available=int(key.tokens))


def _settle(db: sa.Connection, tenant: int | None, tokens: int, *, spent: bool) -> int:
    """Release a job's reserved tokens: spent (completed) or refunded; returns the refund."""
    if tenant is None or not tokens:
        return 0
    values: dict[str, Any] = {"pending": API_KEYS.c.pending - tokens}
    if not spent:
        values["tokens"] = API_KEYS.c.tokens + tokens
    db.execute(API_KEYS.update().where(API_KEYS.c.id == tenant).values(**values))
    return 0 if spent else tokens


def _status_of(states: Sequence[str]) -> str | None:
    if not states:
        return None
    if any(s in {"waiting", "active"} for s in states):
        return "PROCESSING" if any(s != "waiting" for s in states) else "PENDING"
    return "COMPLETED" if "completed" in states else "FAILED"


def _check_references(references: object) -> None:
    if not _is_list(references):
        msg = f"references must be a list of strings, got {type(references).__name__}"
        raise InputError(msg, path="references")
    if not 1 <= len(references) <= MAX_REFERENCES:
        msg = f"submit 1 to {MAX_REFERENCES} references at a time, got {len(references)}"
        raise InputError(msg, path="references")
    for i, ref in enumerate(references):
        where = f"references[{i}]"
        if not isinstance(ref, str):
            msg = f"{where} must be a non-empty string, got {type(ref).__name__}"
            raise InputError(msg, path=where)
        # The length first: nothing else reads a string longer than the limit.
        if len(ref) > MAX_REFERENCE_CHARS:
            limit = MAX_REFERENCE_CHARS
            msg = f"{where} is {len(ref):,} characters; the limit is {limit:,}"
            raise InputError(msg, path=where)
        if not ref.strip():
            msg = f"{where} must be a non-empty string"
            raise InputError(msg, path=where)
        try:
            check_reference(ref, path=where)
        except InputError as exc:
            raise InputError(f"{where}: {exc}", path=where) from None
        if "\x00" in ref:  # PostgreSQL text cannot hold NUL
            raise InputError(f"{where} contains a NUL character", path=where)


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


def _job_ids(job_ids: object, *, verb: str) -> list[tuple[str, int | None]]:
    """Each id as given (a string) and the job number it names, or None if it names none.

    Ids come from callers (the HTTP service): a job id is a string of ASCII digits or an int,
    from 1 to 2**63 - 1. ``"²"`` passes ``str.isdigit`` but is no number, and thirty nines do not
    fit in SQLite: both name no job.
    """
    if not _is_list(job_ids):
        msg = f"jobIds must be a list of job ids, got {type(job_ids).__name__}"
        raise InputError(msg, path="jobIds")
    if len(job_ids) > MAX_POLL_IDS:
        msg = f"{verb} at most {MAX_POLL_IDS} job ids at a time, got {len(job_ids)}"
        raise InputError(msg, path="jobIds")
    out: list[tuple[str, int | None]] = []
    for i, value in enumerate(job_ids):
        if isinstance(value, bool) or not isinstance(value, str | int):
            msg = f"jobIds[{i}] must be a job id (a string of digits), got {type(value).__name__}"
            raise InputError(msg, path=f"jobIds[{i}]")
        if isinstance(value, int):
            if not 0 < value <= _MAX_ID:  # str() of a 5,000-digit int would raise
                msg = f"jobIds[{i}] is not a job id (job ids are 1 to {_MAX_ID})"
                raise InputError(msg, path=f"jobIds[{i}]")
            out.append((str(value), value))
            continue
        number = None
        if value.isascii() and value.isdigit() and len(value) <= len(str(_MAX_ID)):
            number = int(value)
        out.append((value, number if number is not None and 0 < number <= _MAX_ID else None))
    return out


def _positive_seconds(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return 0 < float(value) < math.inf  # nan compares false
    except OverflowError:  # an int too large for a float
        return False
