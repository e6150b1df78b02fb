"""The reference jobs: submit, claim under a lease, verify, poll, cancel, list history.

Submit 1-20 references -> job ids and a document id; poll up to 50 job ids for their state
(``waiting``, ``active``, ``completed``, ``failed``, ``not-found``) and live progress; cancel by
document or job ids; list history. A completed result is written in the same statement that marks
the job completed, so it is never lost. The jobs live in the service's database
(:mod:`citeverify_core.service.store`), next to the tenants whose tokens they cost
(:mod:`citeverify_core.service.tenants`).

Several workers may share one store. A worker claims waiting jobs inside one transaction: on
SQLite the transaction starts with ``BEGIN IMMEDIATE`` (one writer at a time), on PostgreSQL the
candidate rows are selected ``FOR UPDATE SKIP LOCKED``; either way two workers never claim the
same job. Each claimed job is held under a lease: ``worker`` (who), ``lease_expires`` (until when,
Unix seconds) and ``heartbeat_at``. While it runs, a heartbeat thread extends the leases of its
jobs every ``lease / 3`` seconds. A job is taken from its worker only when its lease has expired,
that is when the worker is gone (killed, crashed, its machine off); opening a store never touches
running jobs. A worker whose lease was taken writes nothing: progress and results are only written
by the job's current worker. A job whose worker died ``MAX_ATTEMPTS`` times fails instead of
killing a fourth one. Leases compare wall clocks: keep the instances' clocks in sync (NTP), as
any lease-based queue needs.

Tenants: a job submitted under an API key belongs to it and costs one token, reserved while the
job waits or runs, spent when it completes, refunded when it fails or is cancelled, in the same
transaction as the job's change. Methods given ``tenant=`` see only that tenant's jobs and
documents; ``tenant=None`` (the library) sees every job.
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
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from citeverify_core.errors import InputError, ServiceError
from citeverify_core.references.document.model import ExtractedDocument
from citeverify_core.references.index import encodable
from citeverify_core.references.parse import MAX_REFERENCE_CHARS
from citeverify_core.references.verify import ReferenceVerifier, _is_list, check_reference
from citeverify_core.service import idempotency, store
from citeverify_core.service.schema import (
    MAX_DOCUMENT_REFERENCES,
    MAX_HISTORY,
    MAX_POLL_IDS,
    MAX_REFERENCES,
    MAX_TITLE_CHARS,
)
from citeverify_core.service.store import DOCUMENTS, JOBS, MAX_ID, now_iso, owned, storable
from citeverify_core.service.tenants import TenantStore, reserve, settle
from citeverify_core.sync import run_sync

__all__ = ["DEFAULT_LEASE", "MAX_ATTEMPTS", "MAX_POLL_IDS", "MAX_REFERENCES", "JobStore"]

_log = logging.getLogger(__name__)

#: Seconds a claimed job stays its worker's without a heartbeat. A killed worker's jobs run again
#: after at most this long; the heartbeat (every third of it) keeps a live worker's jobs.
DEFAULT_LEASE = 30.0
#: Claims of one job: a job whose worker died this many times fails ("worker lost") instead.
MAX_ATTEMPTS = 3


class JobStore(TenantStore):
    """Reference verification jobs persisted in SQLite or PostgreSQL, shared by many workers.

    The one store of the service: its database also holds the API keys and tokens
    (:class:`~citeverify_core.service.tenants.TenantStore`, whose methods it has) and the
    decision log.

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
        self.verifier = verifier
        self.lease = float(lease)
        #: This store's name in the ``worker`` column: host, process and instance.
        self.worker_id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        #: The jobs this store's workers hold now: the heartbeat extends these, and only these.
        self._running: set[int] = set()
        self._running_lock = threading.Lock()
        self._idempotency_pruned = 0.0
        #: Told ``(state, seconds)`` when a job ends (the service's latency metric).
        self.observe: Callable[[str, float], None] | None = None
        super().__init__(path)

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
        _check_title(title)
        if idempotency_key is None or tenant is None:
            return self._submit(references, title, tenant, None)
        idem = (idempotency.check_key(idempotency_key), idempotency.body_hash(references, title))
        return self._idempotent(lambda: self._submit(references, title, tenant, idem))

    def _idempotent(self, submit: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """Run a submission under its idempotency key: the first answer, or a replay of it."""
        if store.clock() - self._idempotency_pruned > 3600:  # expired keys go once an hour
            self._idempotency_pruned = store.clock()
            with self.transaction() as db:
                idempotency.forget_expired(db)
        for _ in range(3):
            try:
                return submit()
            except idempotency.SameKeyMeanwhile:
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
        rows = [
            {
                "document_id": document_id,
                "position": i,
                "raw_text": ref,
                "state": "waiting",
                "api_key_id": tenant,
                "tokens": 1 if tenant is not None else 0,
            }
            for i, ref in enumerate(references)
        ]

        def answer(ids: list[str]) -> dict[str, Any]:
            return {
                "jobIds": ids,
                "documentId": document_id,
                "message": f"{len(ids)} reference(s) queued for verification",
            }

        return self._queue({"id": document_id, "title": title}, rows, tenant, idem, answer)

    def _queue(
        self,
        document: dict[str, Any],
        rows: list[dict[str, Any]],
        tenant: int | None,
        idem: tuple[str, str] | None,
        answer_for: Callable[[list[str]], dict[str, Any]],
    ) -> dict[str, Any]:
        """Queue a document's jobs in one transaction; answers ``answer_for(job ids in order)``.

        The one home of both submissions (a list and a whole document): an idempotent repeat
        replays the first answer, the rows' tokens are reserved before anything is inserted, and
        the answer is remembered for the key.
        """
        with self.transaction() as db:
            if idem is not None and tenant is not None:
                replay = idempotency.replay(db, tenant, *idem)
                if replay is not None:
                    return replay
            available = None
            if tenant is not None:
                available = reserve(db, tenant, sum(row["tokens"] for row in rows))
            # Values as parameters, not in the statement: SQLAlchemy's statement cache keeps the
            # first statement's embedded values, which held a 20 MB extraction for good.
            db.execute(
                DOCUMENTS.insert(), [{"created_at": now_iso(), "api_key_id": tenant, **document}]
            )
            # One statement for the lot (a thesis has hundreds), then their ids in order.
            db.execute(JOBS.insert(), rows)
            ids = [
                str(i)
                for i in db.execute(
                    sa.select(JOBS.c.id)
                    .where(JOBS.c.document_id == document["id"])
                    .order_by(JOBS.c.position)
                ).scalars()
            ]
            answer = answer_for(ids)
            if available is not None:
                answer["tokensAvailable"] = available
            if idem is not None and tenant is not None:
                idempotency.remember(db, tenant, *idem, answer)
        return {**answer, "replayed": False} if idem is not None else answer

    def submit_document(
        self,
        document: ExtractedDocument,
        *,
        title: str | None = None,
        tenant: int | None = None,
        idempotency_key: str | None = None,
        fingerprint: str = "",
    ) -> dict[str, Any]:
        """Queue every reference of a whole document: one job (and one token) each.

        The document is kept with its jobs: its file name, format and what was extracted
        (``document.to_dict()``: locations, labels, citations, findings), so that
        :meth:`document` can show it again. A reference the verifier cannot take (longer than
        1,200 characters, or not text) gets a job that is already ``failed`` with the reason,
        costing nothing. Answers ``documentId``, ``jobIds`` (in the references' order),
        ``references`` (each with its ``jobId``), ``document``, ``counts``, ``title``,
        ``fileName``, ``format``, ``message`` and, with a tenant, ``tokensAvailable``.

        ``fingerprint`` names the submitted bytes for ``idempotency_key`` (a hash of the file):
        the same key with the same file and title within 24 hours replays the first answer.

        Raises:
            InputError: no reference, more than :data:`MAX_DOCUMENT_REFERENCES`, a bad title or
                idempotency key.
            InsufficientTokensError: fewer tokens than verifiable references (nothing queued).
            ServiceError: as :meth:`submit` for idempotency keys.
        """
        count = len(document.references)
        if not 1 <= count <= MAX_DOCUMENT_REFERENCES:
            msg = (
                f"a document may have 1 to {MAX_DOCUMENT_REFERENCES:,} references; "
                f"{document.name} has {count:,}"
            )
            raise InputError(msg, path="references")
        _check_title(title)
        if idempotency_key is None or tenant is None:
            return self._submit_document(document, title, tenant, None)
        idem = (
            idempotency.check_key(idempotency_key),
            idempotency.body_hash(["verify-document", fingerprint, document.name], title),
        )
        return self._idempotent(lambda: self._submit_document(document, title, tenant, idem))

    def _submit_document(
        self,
        document: ExtractedDocument,
        title: str | None,
        tenant: int | None,
        idem: tuple[str, str] | None,
    ) -> dict[str, Any]:
        document_id = uuid.uuid4().hex
        # Text from a file may hold NUL or lone surrogates: neither is kept, nor sent back.
        extracted: dict[str, Any] = _storable_json(document.to_dict())
        rows: list[dict[str, Any]] = []
        for i, ref in enumerate(document.references):
            refusal = _refusal(ref.text)
            rows.append(
                {
                    "document_id": document_id,
                    "position": i,
                    # What cannot be stored is stored cleaned (its job fails anyway).
                    "raw_text": ref.text if storable(ref.text) else _cleaned(ref.text),
                    "state": "waiting" if refusal is None else "failed",
                    "error": None if refusal is None else f"not verified: {refusal}",
                    "api_key_id": tenant,
                    "tokens": 1 if tenant is not None and refusal is None else 0,
                }
            )
        queued = sum(1 for r in rows if r["state"] == "waiting")
        name = _cleaned(document.name)[:255]
        findings = len(extracted["findings"])

        def answer(ids: list[str]) -> dict[str, Any]:
            return {
                "documentId": document_id,
                "jobIds": ids,
                "title": title,
                "fileName": name,
                "format": document.format,
                "references": [
                    {**ref, "jobId": job_id}
                    for ref, job_id in zip(extracted["references"], ids, strict=True)
                ],
                "document": extracted,
                "counts": {
                    "references": len(rows),
                    "queued": queued,
                    "notVerifiable": len(rows) - queued,
                    "citations": len(extracted["citations"]),
                    "findings": findings,
                },
                "message": (
                    f"{queued} of {len(rows)} reference(s) queued for verification; "
                    f"{findings} consistency finding(s)"
                ),
            }

        row = {
            "id": document_id,
            "title": title,
            "name": name,
            "format": document.format,
            "extracted": json.dumps(extracted),
        }
        return self._queue(row, rows, tenant, idem, answer)

    def document(self, document_id: str, *, tenant: int | None = None) -> dict[str, Any] | None:
        """A document with its references and their jobs' states; None when there is none.

        Another tenant's document is None, as one that does not exist. A document submitted
        as a list (``POST /api/verify-reference``) has its references without locations and an
        empty ``document``.
        """
        if not isinstance(document_id, str) or not storable(document_id):
            return None
        with self.transaction() as db:
            doc = db.execute(
                sa.select(
                    DOCUMENTS.c.id,
                    DOCUMENTS.c.title,
                    DOCUMENTS.c.created_at,
                    DOCUMENTS.c.name,
                    DOCUMENTS.c.format,
                    DOCUMENTS.c.extracted,
                ).where(DOCUMENTS.c.id == document_id, *owned(DOCUMENTS, tenant))
            ).first()
            if doc is None:
                return None
            jobs = db.execute(
                sa.select(
                    JOBS.c.id,
                    JOBS.c.position,
                    JOBS.c.raw_text,
                    JOBS.c.state,
                    JOBS.c.error,
                    JOBS.c.result,
                )
                .where(JOBS.c.document_id == document_id)
                .order_by(JOBS.c.position)
            ).all()
        extracted: dict[str, Any] = json.loads(doc.extracted) if doc.extracted else {}
        found = extracted.get("references") or []
        references = []
        for job in jobs:
            ref = found[job.position] if job.position < len(found) else {}
            references.append(
                {
                    "number": ref.get("number", job.position + 1),
                    "text": ref.get("text", job.raw_text),
                    "label": ref.get("label"),
                    "key": ref.get("key"),
                    "location": ref.get("location"),
                    "end": ref.get("end"),
                    "jobId": str(job.id),
                    "state": job.state,
                    "error": job.error,
                    "result": (
                        json.loads(job.result)
                        if job.state == "completed" and job.result is not None
                        else None
                    ),
                }
            )
        return {
            "documentId": doc.id,
            "title": doc.title,
            "fileName": doc.name,
            "format": doc.format,
            "createdAt": doc.created_at,
            "status": _status_of([j.state for j in jobs]),
            "referenceCount": len(jobs),
            "references": references,
            "document": extracted,
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

        Keeps up to ``verifier.max_concurrency`` jobs running (15 by default), claiming more as
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
        now = store.clock()
        expired = sa.and_(
            JOBS.c.state == "active",
            sa.or_(JOBS.c.lease_expires.is_(None), JOBS.c.lease_expires < now),
        )
        with self.transaction() as db:
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
                    ended_at=now_iso(),
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
        now = store.clock()
        with self._running_lock:
            running = sorted(self._running)
        if not running:
            return
        try:
            with self.transaction() as db:
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
        if self.observe is not None:
            # Counted before the job is stored as ended: whoever sees it ended (a client that
            # polled its result, then /metrics) finds it counted. After, the two raced (a CI
            # run under load read /metrics between them).
            self.observe(state, time.perf_counter() - start)
        await asyncio.to_thread(self._finish, job_id, state, result.model_dump_json(), result.error)

    def _progress(self, job_id: int, step: str, message: str) -> None:
        with self.transaction() as db:
            db.execute(
                JOBS.update()
                .where(
                    JOBS.c.id == job_id, JOBS.c.state == "active", JOBS.c.worker == self.worker_id
                )
                .values(step=step, message=message)
            )

    def _finish(self, job_id: int, state: str, result: str | None, error: str | None) -> None:
        with self.transaction() as db:
            self._end(db, job_id, state, result, error, only_worker=True, ended_at=now_iso())

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
        return settle(db, row.api_key_id, row.tokens, spent=state == "completed")

    # --- poll, cancel, history ---------------------------------------------------------------
    def results(self, job_ids: Sequence[str], *, tenant: int | None = None) -> dict[str, Any]:
        """The API's ``{"jobs": [...]}`` for up to 50 job ids.

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
            ).where(JOBS.c.id.in_(numbers), *owned(JOBS, tenant))
            with self.transaction() as db:
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
        if document_id is not None and storable(document_id):
            chosen.append(JOBS.c.document_id == document_id)
        if numbers:
            chosen.append(JOBS.c.id.in_(numbers))
        refunded = cancelled = 0
        doc = None
        with self.transaction() as db:
            if chosen:
                # Every open job is locked first, in id order, before any token is settled: a
                # worker ends its job (that row, then the key's balance) while this runs, and
                # settling one job (the key's row) before locking the next would wait for that
                # worker while it waits for the key: a deadlock PostgreSQL ends with an error.
                open_jobs = db.execute(
                    sa.select(JOBS.c.id)
                    .where(
                        sa.or_(*chosen),
                        JOBS.c.state.in_(("waiting", "active")),
                        *owned(JOBS, tenant),
                    )
                    .order_by(JOBS.c.id)
                    .with_for_update()
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
                    .where(JOBS.c.id.in_(numbers), *owned(JOBS, tenant))
                    .order_by(JOBS.c.id)
                    .limit(1)
                ).scalar()
        status = self._document_status(doc, tenant) if doc and storable(doc) else None
        return {
            "success": True,
            "cancelledJobs": cancelled,
            "refundedTokens": refunded,
            "documentId": doc,
            "documentStatus": status,
        }

    def _document_status(self, document_id: str, tenant: int | None = None) -> str | None:
        with self.transaction() as db:
            states = list(
                db.execute(
                    sa.select(JOBS.c.state).where(
                        JOBS.c.document_id == document_id, *owned(JOBS, tenant)
                    )
                ).scalars()
            )
        return _status_of(states)

    def prune_documents(self, retention_days: float, *, batch: int = 500) -> int:
        """Delete the uploaded documents older than ``retention_days``, with their jobs; how many.

        Only whole documents (``POST /api/verify-document``) are kept for a retention period;
        a document with a job still waiting or running stays until it has ended (its tokens
        are reserved). Deleted in batches, one transaction each, so that a long purge never
        holds the store.
        """
        cutoff = (
            datetime.datetime.fromtimestamp(store.clock() - retention_days * 86400, datetime.UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z")
        )
        busy = sa.select(JOBS.c.document_id).where(JOBS.c.state.in_(("waiting", "active")))
        deleted = 0
        while True:
            with self.transaction() as db:
                ids = list(
                    db.execute(
                        sa.select(DOCUMENTS.c.id)
                        .where(
                            DOCUMENTS.c.name.is_not(None),
                            DOCUMENTS.c.created_at < cutoff,
                            DOCUMENTS.c.id.not_in(busy),
                        )
                        .limit(batch)
                    ).scalars()
                )
                if not ids:
                    return deleted
                db.execute(JOBS.delete().where(JOBS.c.document_id.in_(ids)))
                db.execute(DOCUMENTS.delete().where(DOCUMENTS.c.id.in_(ids)))
                deleted += len(ids)

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
        if not 0 <= offset <= MAX_ID:
            msg = f"offset must be 0 to {MAX_ID}"
            raise InputError(msg, path="offset")
        own = owned(DOCUMENTS, tenant)
        with self.transaction() as db:
            total = db.execute(
                sa.select(sa.func.count()).select_from(DOCUMENTS).where(*own)
            ).scalar_one()
            docs = db.execute(
                sa.select(
                    DOCUMENTS.c.id,
                    DOCUMENTS.c.title,
                    DOCUMENTS.c.created_at,
                    DOCUMENTS.c.name,
                    DOCUMENTS.c.format,
                )
                .where(*own)
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
        for doc_id, title, created, file_name, file_format in docs:
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
                    "title": title or file_name or f"{len(rows)} reference(s)",
                    "status": _status_of([r.state for r in rows]),
                    "referenceCount": len(rows),
                    "createdAt": created,
                    "references": references,
                    "fileName": file_name,
                    "format": file_format,
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
        with self.transaction() as db:
            rows = db.execute(sa.select(JOBS.c.state, sa.func.count()).group_by(JOBS.c.state)).all()
        return {str(state): int(n) for state, n in rows}


def _first_job_of_document() -> Any:
    """A document's first job id: its place in submission order."""
    return (
        sa.select(sa.func.min(JOBS.c.id))
        .where(JOBS.c.document_id == DOCUMENTS.c.id)
        .scalar_subquery()
    )


def _status_of(states: Sequence[str]) -> str | None:
    if not states:
        return None
    if any(s in {"waiting", "active"} for s in states):
        return "PROCESSING" if any(s != "waiting" for s in states) else "PENDING"
    return "COMPLETED" if "completed" in states else "FAILED"


def _check_title(title: object) -> None:
    if title is None:
        return
    if not isinstance(title, str) or len(title) > MAX_TITLE_CHARS:
        msg = f"title must be a string of at most {MAX_TITLE_CHARS} characters"
        raise InputError(msg, path="title")
    if not encodable(title) or "\x00" in title:
        msg = "title must be valid Unicode text without NUL characters"
        raise InputError(msg, path="title")


def _refusal(text: str) -> str | None:
    """Why the verifier cannot take one reference of a document (None: it can)."""
    if len(text) > MAX_REFERENCE_CHARS:
        return f"{len(text):,} characters; a reference may have {MAX_REFERENCE_CHARS:,}"
    if not text.strip():
        return "empty"
    if not storable(text):
        return "not valid Unicode text"
    try:
        check_reference(text, path="reference")
    except InputError as exc:
        return str(exc)
    return None


def _cleaned(text: str) -> str:
    """``text`` without what neither dialect stores (NUL, lone surrogates)."""
    return text.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")


def _storable_json(value: Any) -> Any:
    """``value`` with its strings cleaned: no NUL, no lone surrogate (rows hold none)."""
    if isinstance(value, str):
        return value if storable(value) else _cleaned(value)
    if isinstance(value, list):
        return [_storable_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _storable_json(v) for k, v in value.items()}
    return value


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
            if not 0 < value <= MAX_ID:  # str() of a 5,000-digit int would raise
                msg = f"jobIds[{i}] is not a job id (job ids are 1 to {MAX_ID})"
                raise InputError(msg, path=f"jobIds[{i}]")
            out.append((str(value), value))
            continue
        number = None
        if value.isascii() and value.isdigit() and len(value) <= len(str(MAX_ID)):
            number = int(value)
        out.append((value, number if number is not None and 0 < number <= MAX_ID else None))
    return out


def _positive_seconds(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return 0 < float(value) < math.inf  # nan compares false
    except OverflowError:  # an int too large for a float
        return False
