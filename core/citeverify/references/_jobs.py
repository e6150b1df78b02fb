"""The job store (seed 004's submit/poll API, at library level): SQLite, so nothing is lost.

Submit 1-20 references -> job ids and a document id; poll up to 50 job ids for their state
(``waiting``, ``active``, ``completed``, ``failed``, ``not-found``) and live progress; cancel by
document or job ids; list history. A completed result is written in the same statement that marks
the job completed, so it is never lost.

Several processes may work on one store file (issue 9). A worker claims waiting jobs in one
``UPDATE ... RETURNING`` inside ``BEGIN IMMEDIATE`` (SQLite lets one writer in at a time, so two
workers never claim the same job), and holds each claimed job under a lease: ``worker`` (who),
``lease_expires`` (until when, Unix seconds) and ``heartbeat_at``. While it runs, a heartbeat
thread extends the leases of its jobs every ``lease / 3`` seconds. A job is taken from its worker
only when its lease has expired, that is when the worker is gone (killed, crashed, its machine
off); opening a store never touches running jobs. A worker whose lease was taken writes nothing:
progress and results are only written by the job's current worker. A job whose worker died
``MAX_ATTEMPTS`` times fails instead of killing a fourth one. Leases compare wall clocks: the
workers of one store run on one machine (SQLite over a network file system is not supported).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import logging
import math
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from citeverify._errors import InputError
from citeverify._runner import run_sync
from citeverify.references._index import connect_sqlite, encodable, require_columns
from citeverify.references._parse import MAX_REFERENCE_CHARS
from citeverify.references._verify import ReferenceVerifier, _is_list, check_reference

__all__ = ["DEFAULT_LEASE", "MAX_ATTEMPTS", "MAX_POLL_IDS", "MAX_REFERENCES", "JobStore"]

_log = logging.getLogger(__name__)

#: The seed's limits.
MAX_REFERENCES = 20
MAX_POLL_IDS = 50
MAX_HISTORY = 50
#: A document title is a label, not a document.
MAX_TITLE_CHARS = 500
#: Seconds a claimed job stays its worker's without a heartbeat. A killed worker's jobs run again
#: after at most this long; the heartbeat (every third of it) keeps a live worker's jobs.
DEFAULT_LEASE = 30.0
#: Claims of one job: a job whose worker died this many times fails ("worker lost") instead.
MAX_ATTEMPTS = 3
#: SQLite integers are signed 64-bit: a larger id cannot be a job.
_MAX_ID = 2**63 - 1

_TABLES = (
    """CREATE TABLE IF NOT EXISTS documents (
        id TEXT PRIMARY KEY, title TEXT, created_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS jobs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        document_id TEXT NOT NULL REFERENCES documents(id),
        position INTEGER NOT NULL,
        raw_text TEXT NOT NULL,
        state TEXT NOT NULL,            -- waiting, active, completed, failed
        step TEXT, message TEXT,        -- live progress
        result TEXT, error TEXT,
        verified_at TEXT,
        worker TEXT,                    -- the lease: who runs it, until when, last heartbeat
        lease_expires REAL,
        heartbeat_at REAL,
        attempts INTEGER NOT NULL DEFAULT 0
    )""",
)
#: Columns added since the first schema: stores created before issue 9 get them on open.
_ADDED_COLUMNS = {
    "worker": "TEXT",
    "lease_expires": "REAL",
    "heartbeat_at": "REAL",
    "attempts": "INTEGER NOT NULL DEFAULT 0",
}
_INDEXES = (
    "CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state)",
    "CREATE INDEX IF NOT EXISTS jobs_document ON jobs(document_id)",
)
_JOB_COLUMNS = {"id", "document_id", "position", "raw_text", "state", "result", "error"}

# A job is claimable when waiting, or active under a lease that expired. An active job without a
# lease was claimed by a version without leases (before issue 9): its worker cannot prove it is
# alive, so it is claimable too, as every open used to make it.
_EXPIRED = "state = 'active' AND (lease_expires IS NULL OR lease_expires < :now)"


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
    """Reference verification jobs persisted in SQLite, shared safely by several processes.

    Args:
        path: The database file (``":memory:"`` for a throwaway store).
        verifier: Verifies the references (its ``max_concurrency`` bounds the jobs run at once).
        lease: Seconds a claimed job stays this worker's without a heartbeat; the heartbeat
            extends it every ``lease / 3`` seconds while the worker runs.

    Raises:
        InputError: ``path`` is not a SQLite file, or a folder that does not exist.
    """

    def __init__(
        self, path: str | Path, verifier: ReferenceVerifier, *, lease: float = DEFAULT_LEASE
    ) -> None:
        if not _positive_seconds(lease):
            raise InputError("lease must be a positive, finite number of seconds", path="lease")
        self._db = connect_sqlite(path, what="job store")
        self._db.isolation_level = None  # transactions are explicit: BEGIN IMMEDIATE ... COMMIT
        self.path = str(path)
        self.verifier = verifier
        self.lease = float(lease)
        #: This store's name in the ``worker`` column: host, process and instance.
        self.worker_id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._lock = threading.Lock()
        #: The jobs this store's workers hold now: the heartbeat extends these, and only these.
        self._running: set[int] = set()
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            with self._transaction():
                self._migrate()
        except InputError:
            self._db.close()
            raise
        except sqlite3.Error as exc:
            self._db.close()
            msg = f"{path} cannot be used as a job store: {exc}"
            raise InputError(msg, path=self.path) from None

    def _migrate(self) -> None:
        for statement in _TABLES:
            self._db.execute(statement)
        columns = require_columns(self._db, "jobs", _JOB_COLUMNS, what="job store", path=self.path)
        for name, kind in _ADDED_COLUMNS.items():
            if name not in columns:
                self._db.execute(f"ALTER TABLE jobs ADD COLUMN {name} {kind}")  # our names only
        for statement in _INDEXES:
            self._db.execute(statement)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` (the write lock at once, so a claim is atomic) ... ``COMMIT``."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    # --- submit ----------------------------------------------------------------------------------

    def submit(self, references: Sequence[str], *, title: str | None = None) -> dict[str, Any]:
        """Queue 1-20 references; returns ``jobIds``, ``documentId`` and ``message``.

        Raises:
            InputError: 0 or more than 20 references, or one that is not a string, is empty,
                longer than 1,200 characters or not valid Unicode (``path`` names it:
                ``references[3]``); a title that is not a string of at most 500 characters.
        """
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
        if title is not None:
            if not isinstance(title, str) or len(title) > MAX_TITLE_CHARS:
                msg = f"title must be a string of at most {MAX_TITLE_CHARS} characters"
                raise InputError(msg, path="title")
            if not encodable(title):
                msg = "title must be valid Unicode text (it has a lone surrogate)"
                raise InputError(msg, path="title")
        document_id = uuid.uuid4().hex
        with self._lock, self._transaction():
            self._db.execute("INSERT INTO documents VALUES (?, ?, ?)", (document_id, title, _now()))
            ids = [
                str(
                    self._db.execute(
                        "INSERT INTO jobs (document_id, position, raw_text, state) "
                        "VALUES (?, ?, ?, 'waiting')",
                        (document_id, i, ref),
                    ).lastrowid
                )
                for i, ref in enumerate(references)
            ]
        return {
            "jobIds": ids,
            "documentId": document_id,
            "message": f"{len(ids)} reference(s) queued for verification",
        }

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
            try:
                async with semaphore:
                    await self._run(job_id, text)
            finally:
                # Whatever ended it: no more heartbeats. A job left active (its run was
                # cancelled) expires like a dead worker's, even while this store lives on.
                with self._lock:
                    self._running.discard(job_id)

        with self._heartbeat():
            while claimed := self._claim(self.verifier.max_concurrency * 2):
                async with self.verifier.lookups.session():
                    await asyncio.gather(*(run(job_id, text) for job_id, text in claimed))
                processed += len(claimed)
        return processed

    def _claim(self, limit: int) -> list[tuple[int, str]]:
        """Claim up to ``limit`` jobs in one statement; jobs lost too often fail first."""
        now = _clock()
        params = {"now": now, "limit": limit, "worker": self.worker_id}
        with self._lock, self._transaction():
            self._db.execute(
                "UPDATE jobs SET state = 'failed', step = NULL, message = NULL, "
                "lease_expires = NULL, verified_at = :at, "
                "error = 'its worker stopped ' || attempts || ' times while verifying it "
                "(killed or crashed); not retried' "
                f"WHERE {_EXPIRED} AND attempts >= :max",
                {**params, "at": _now(), "max": MAX_ATTEMPTS},
            )
            rows = self._db.execute(
                "UPDATE jobs SET state = 'active', worker = :worker, lease_expires = :expires, "
                "heartbeat_at = :now, attempts = attempts + 1, step = 'queued', "
                "message = 'starting' "
                "WHERE id IN (SELECT id FROM jobs "
                f"WHERE state = 'waiting' OR ({_EXPIRED}) ORDER BY id LIMIT :limit) "
                "RETURNING id, raw_text",
                {**params, "expires": now + self.lease},
            ).fetchall()
            claimed = sorted((int(r[0]), str(r[1])) for r in rows)
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
        try:
            with self._lock:
                running = sorted(self._running)
                if not running:
                    return
                marks = ",".join("?" * len(running))
                self._db.execute(
                    "UPDATE jobs SET lease_expires = ?, heartbeat_at = ? "
                    f"WHERE worker = ? AND state = 'active' AND id IN ({marks})",
                    (now + self.lease, now, self.worker_id, *running),
                )
        except sqlite3.Error as exc:
            # A busy or failing database: the next beat tries again, within the lease.
            _log.warning("job store heartbeat failed (%s); retrying", exc)

    async def _run(self, job_id: int, text: str) -> None:
        self._progress(job_id, "searching", "looking for candidate records")
        # Never raises: a reference that cannot be read or checked gives a result with its error
        # (the verifier's per-reference boundary), so a job always ends.
        result = await self.verifier.averify_or_error(text)
        state = "failed" if result.error else "completed"
        self._finish(job_id, state, result.model_dump_json(), result.error)

    def _progress(self, job_id: int, step: str, message: str) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE jobs SET step = ?, message = ? "
                "WHERE id = ? AND state = 'active' AND worker = ?",
                (step, message, job_id, self.worker_id),
            )

    def _finish(self, job_id: int, state: str, result: str | None, error: str | None) -> None:
        with self._lock:
            # Only the job's current worker finishes it: a job cancelled meanwhile stays
            # cancelled, and a job whose lease another worker took is that worker's now.
            self._db.execute(
                "UPDATE jobs SET state = ?, result = ?, error = ?, step = NULL, message = NULL, "
                "lease_expires = NULL, verified_at = ? "
                "WHERE id = ? AND state = 'active' AND worker = ?",
                (state, result, error, _now(), job_id, self.worker_id),
            )

    # --- poll, cancel, history ---------------------------------------------------------------

    def results(self, job_ids: Sequence[str]) -> dict[str, Any]:
        """The seed's ``{"jobs": [...]}`` for up to 50 job ids.

        An id that names no job (``"nope"``, ``"-1"``, ``"²"``, thirty nines) is ``not-found``.

        Raises:
            InputError: not a list, more than 50 ids, or an id that is neither a string nor an
                integer (``path`` names it: ``jobIds[2]``).
        """
        ids = _job_ids(job_ids, verb="poll")
        jobs = []
        for job_id, number in ids:
            row = None
            if number is not None:
                with self._lock:
                    row = self._db.execute(
                        "SELECT state, step, message, result, error FROM jobs WHERE id = ?",
                        (number,),
                    ).fetchone()
            if row is None:
                jobs.append({"id": job_id, "state": "not-found", "error": None, "progress": None})
                continue
            state, step, message, result, error = row
            job: dict[str, Any] = {
                "id": job_id,
                "state": state,
                "error": error,
                "progress": {"step": step, "message": message} if state == "active" else None,
            }
            if state == "completed" and result is not None:
                job["result"] = json.loads(result)
            jobs.append(job)
        return {"jobs": jobs}

    def cancel(
        self, *, document_id: str | None = None, job_ids: Sequence[str] | None = None
    ) -> dict[str, Any]:
        """Cancel waiting or running jobs of a document and/or by id.

        Ids that name no job cancel nothing.

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
        clauses: list[str] = []
        params: list[Any] = []
        if document_id is not None and encodable(document_id):
            clauses.append("document_id = ?")
            params.append(document_id)
        if numbers:
            clauses.append(f"id IN ({','.join('?' * len(numbers))})")
            params.extend(numbers)
        where = " OR ".join(clauses) or "0"
        with self._lock, self._transaction():
            cursor = self._db.execute(
                "UPDATE jobs SET state = 'failed', error = 'cancelled', step = NULL, "
                "message = NULL, lease_expires = NULL "
                f"WHERE ({where}) AND state IN ('waiting', 'active')",  # only placeholders inside
                params,
            )
            cancelled = cursor.rowcount
            doc = document_id
            if doc is None and numbers:
                row = self._db.execute(
                    "SELECT document_id FROM jobs WHERE id = ?", (numbers[0],)
                ).fetchone()
                doc = row[0] if row else None
        status = self._document_status(doc) if doc and encodable(doc) else None
        return {
            "success": True,
            "cancelledJobs": cancelled,
            "documentId": doc,
            "documentStatus": status,
        }

    def _document_status(self, document_id: str) -> str | None:
        with self._lock:
            states = [
                r[0]
                for r in self._db.execute(
                    "SELECT state FROM jobs WHERE document_id = ?", (document_id,)
                )
            ]
        if not states:
            return None
        if any(s in {"waiting", "active"} for s in states):
            return "PROCESSING" if any(s != "waiting" for s in states) else "PENDING"
        return "COMPLETED" if "completed" in states else "FAILED"

    def history(self, *, limit: int = 20, offset: int = 0) -> dict[str, Any]:
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
        with self._lock:
            total = self._db.execute("SELECT count(*) FROM documents").fetchone()[0]
            docs = self._db.execute(
                "SELECT id, title, created_at FROM documents "
                "ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?",
                (limit, offset),
            ).fetchall()
        documents = []
        for doc_id, title, created in docs:
            with self._lock:
                rows = self._db.execute(
                    "SELECT id, raw_text, state, result, verified_at FROM jobs "
                    "WHERE document_id = ? ORDER BY position",
                    (doc_id,),
                ).fetchall()
            references = []
            for job_id, raw, state, result, verified_at in rows:
                parsed = json.loads(result) if result else None
                graph = (parsed or {}).get("verificationGraph") or {}
                nodes = graph.get("nodes", [])
                cit: dict[str, Any] = next((n for n in nodes if n.get("type") == "CITATION"), {})
                references.append(
                    {
                        "id": str(job_id),
                        "rawText": raw,
                        "status": parsed["status"] if parsed else state,
                        "parsedData": cit.get("parsedFields"),
                        "verifiedAt": verified_at,
                    }
                )
            documents.append(
                {
                    "id": doc_id,
                    "title": title or f"{len(rows)} reference(s)",
                    "status": self._document_status(doc_id),
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
