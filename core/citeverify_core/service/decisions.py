"""The decision log: every decision of the guard endpoints and of ``POST /api/check``.

Each row holds what was decided (verdict, action, reason code, groundedness, claim confidence,
counts of claims / quotes / citations, latency, whether it was enforced), in the same database as
the reference jobs (table ``decisions``). The answer and the context documents are stored only
when the service logs content (``citeverify serve --log-content``). Rows older than the retention
(``--log-retention-days``, 30 by default) are deleted.

Durability: a decision is committed before its response is sent. :meth:`DecisionLog.record`
puts the row on a queue and returns at once; a writer thread inserts every queued row in one
transaction (a group commit: the rows that arrive while one commit runs go together in the
next). Inside a request wrapped by :class:`DurableDecisions`, the response's first byte waits
(on the event loop, without blocking it) until the request's rows are committed, so an answer a
client received is in the log even if the process is killed right after. A row the database
refused is counted in ``dropped`` and logged; the response is still sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import datetime
import json
import logging
import queue
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import sqlalchemy as sa
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from citeverify_core.engine.results import VerificationResult
from citeverify_core.errors import InputError, ServiceError
from citeverify_core.service.store import DECISIONS, Store

__all__ = ["DEFAULT_RETENTION_DAYS", "DecisionLog", "DurableDecisions", "decision_row"]

_log = logging.getLogger("citeverify_core.service")

DEFAULT_RETENTION_DAYS = 30.0
#: Rows waiting to be written; beyond this the oldest are dropped (and counted), never the service.
MAX_QUEUED = 10_000
#: Seconds the writer waits after the first queued row, to write the rows that follow with it.
#: Short: a response waits for its row's commit. Under load the rows that arrive during one
#: commit go in the next anyway; this only gathers a burst's rows when the writer was idle.
BATCH_WAIT = 0.001
#: The log stores at most this much content per decision (answer and documents, as JSON).
MAX_CONTENT_CHARS = 1_000_000
_VERDICTS = {"allow", "block"}

#: The commits the current request waits for before its response starts (set by
#: DurableDecisions; the list is shared with the tasks and threads the request runs in).
_PENDING: contextvars.ContextVar[list[asyncio.Future[str | None]] | None] = contextvars.ContextVar(
    "citeverify_pending_decisions", default=None
)
#: Who waits for a row: the loop, the future to resolve, and whether it needs the row's id.
_Ticket = tuple[asyncio.AbstractEventLoop, "asyncio.Future[str | None]", bool]
_ACTIONS = {"allow", "flag", "redact", "block"}


def decision_row(
    result: VerificationResult | None,
    *,
    source: str,
    policy: str,
    status: int,
    latency_ms: float,
    enforced: bool = True,
    stream: bool = False,
) -> dict[str, Any]:
    """A log row for one decision; ``result`` is None for an exchange that was not checked."""
    row: dict[str, Any] = {
        "source": source,
        "policy": policy,
        "status": status,
        "latency_ms": round(latency_ms, 3),
        "enforced": enforced,
        "stream": stream,
        "verdict": None,
        "action": None,
        "reason_code": None,
        "groundedness": None,
        "claim_confidence": None,
        "counts": {},
    }
    if result is None:
        return row
    details = result.details
    claims = details.claims or []
    quotes = details.quotes or []
    citations: dict[str, int] = {}
    for citation in details.citations or []:
        citations[citation.status] = citations.get(citation.status, 0) + 1
    row.update(
        verdict=result.verdict,
        action=result.action,
        reason_code=result.reason_code,
        groundedness=details.groundedness,
        claim_confidence=details.claim_confidence,
        counts={
            "claims": len(claims),
            "unsupported_claims": sum(1 for c in claims if not c.verified),
            "quotes": len(quotes),
            "altered_quotes": sum(1 for q in quotes if not q.matched),
            "citations": citations,
        },
    )
    return row


class DecisionLog:
    """The decisions of one service, written in the background to the service's database.

    Args:
        store: The service's store; its database holds the log.
        log_content: Also store the answer and the context documents (off by default: they may
            be private, and the log is kept for ``retention_days``).
        retention_days: Rows older than this are deleted (checked at start and every hour).
    """

    def __init__(
        self,
        store: Store,
        *,
        log_content: bool = False,
        retention_days: float = DEFAULT_RETENTION_DAYS,
    ) -> None:
        if not (isinstance(retention_days, int | float) and 0 < retention_days < 100_000):
            raise InputError("the log retention is a positive number of days", path="retention")
        self.store = store
        self.log_content = log_content
        self.retention_days = float(retention_days)
        self.dropped = 0
        self._queue: queue.Queue[tuple[dict[str, Any], _Ticket | None]] = queue.Queue()
        self._wake = threading.Event()
        self._stopping = False
        self._write_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pruned = 0.0
        #: Told each row as it is logged (the service's metrics).
        self.observe: Callable[[Mapping[str, Any]], None] | None = None

    # --- writing ---------------------------------------------------------------------------------

    def record(
        self,
        row: Mapping[str, Any],
        *,
        tenant: int | None = None,
        answer: str | None = None,
        documents: list[str] | None = None,
        result: VerificationResult | None = None,
        wait: bool = False,
    ) -> str | None:
        """Log one decision (see :func:`decision_row`); the content only with ``log_content``.

        The content is the answer, the documents and the full ``result`` (what the page shows
        when a reviewer opens the decision).

        Queued for the writer thread, or with ``wait`` written now: then its id (None if the
        database failed).
        """
        return self._record(row, tenant, answer, documents, result, wait=wait, wants_id=False)

    def _record(
        self,
        row: Mapping[str, Any],
        tenant: int | None,
        answer: str | None,
        documents: list[str] | None,
        result: VerificationResult | None,
        *,
        wait: bool,
        wants_id: bool,
    ) -> str | None:
        if self.observe is not None:
            self.observe(row)
        now = time.time()
        stored = {
            **row,
            "counts": json.dumps(row.get("counts") or {}),
            "api_key_id": tenant,
            "created_ts": now,
            "created_at": _iso(now),
            "content": None,
        }
        if self.log_content and answer is not None:
            kept: dict[str, Any] = {"answer": answer, "context_documents": documents or []}
            if result is not None:
                kept["result"] = result.to_dict()
            content = json.dumps(kept)
            stored["content"] = content if len(content) <= MAX_CONTENT_CHARS else None
        if wait:
            try:
                with self._write_lock, self.store.transaction() as db:
                    done = db.execute(DECISIONS.insert().returning(DECISIONS.c.id), stored)
                    return str(done.scalar_one())
            except ServiceError as exc:
                self.dropped += 1
                _log.warning("a decision not logged: %s", exc)
                return None
        self._enqueue(stored, wants_id=wants_id)
        return None

    def record_durably(
        self,
        row: Mapping[str, Any],
        *,
        tenant: int | None = None,
        answer: str | None = None,
        documents: list[str] | None = None,
        result: VerificationResult | None = None,
    ) -> Awaitable[str | None]:
        """Log one decision like :meth:`record`; await the result for its id once committed.

        Called on an event loop. The wait happens off the loop (the writer thread commits); the
        id is None when the database refused the row.
        """
        before = _PENDING.get()
        pending: list[asyncio.Future[str | None]] = []
        token = _PENDING.set(pending)
        try:
            self._record(row, tenant, answer, documents, result, wait=False, wants_id=True)
        finally:
            _PENDING.reset(token)
        if before is not None:
            before.extend(pending)
        return pending[0]

    def _enqueue(self, stored: dict[str, Any], *, wants_id: bool) -> None:
        pending = _PENDING.get()
        ticket: _Ticket | None = None
        if pending is not None:
            loop = asyncio.get_running_loop()
            future: asyncio.Future[str | None] = loop.create_future()
            pending.append(future)
            ticket = (loop, future, wants_id)
        if self._queue.qsize() >= MAX_QUEUED:
            try:
                _, dropped = self._queue.get_nowait()
                self.dropped += 1
                _resolve([(dropped, None)] if dropped is not None else [])
            except queue.Empty:
                pass
        self._queue.put((stored, ticket))
        if self._thread is None:  # no writer (an app run without its lifespan): write now
            self.flush()
        else:
            self._wake.set()

    def start(self) -> None:
        """Start the writer thread (the service's lifespan does)."""
        if self._thread is None:
            self._stopping = False
            self._thread = threading.Thread(
                target=self._run, name="citeverify-decision-log", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """Write what is queued and stop the writer."""
        if self._thread is not None:
            self._stopping = True
            self._wake.set()
            self._thread.join(timeout=30)
            self._thread = None
        self.flush()

    def _run(self) -> None:
        while not self._stopping:
            self._wake.wait()
            self._wake.clear()
            if not self._stopping:
                # A moment for more rows to arrive: under load one transaction carries many
                # rows (a commit costs the service more than the inserts).
                time.sleep(BATCH_WAIT)
            self.flush()
            if time.monotonic() - self._pruned > 3600:
                self.prune()

    def flush(self) -> None:
        """Write every queued row now (and wait for the rows the writer is writing)."""
        with self._write_lock:
            while True:
                batch: list[tuple[dict[str, Any], _Ticket | None]] = []
                while len(batch) < 1000:
                    try:
                        batch.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                if not batch:
                    return
                rows = [row for row, _ in batch]
                ids: list[str | None] = [None] * len(rows)
                try:
                    with self.store.transaction() as db:
                        # RETURNING only when someone needs an id (POST /api/check's answer).
                        if any(ticket is not None and ticket[2] for _, ticket in batch):
                            done = db.execute(
                                DECISIONS.insert().returning(
                                    DECISIONS.c.id, sort_by_parameter_order=True
                                ),
                                rows,
                            )
                            ids = [str(i) for i in done.scalars()]
                        else:
                            db.execute(DECISIONS.insert(), rows)
                except ServiceError as exc:
                    self.dropped += len(rows)
                    _log.warning("%d decisions not logged: %s", len(rows), exc)
                finally:
                    _resolve(
                        [
                            (ticket, logged)
                            for (_, ticket), logged in zip(batch, ids, strict=True)
                            if ticket is not None
                        ]
                    )

    def prune(self) -> int:
        """Delete the rows older than the retention; how many."""
        self._pruned = time.monotonic()
        cutoff = time.time() - self.retention_days * 86400
        try:
            with self.store.transaction() as db:
                gone = db.execute(DECISIONS.delete().where(DECISIONS.c.created_ts < cutoff))
        except ServiceError as exc:
            _log.warning("old decisions not deleted: %s", exc)
            return 0
        return int(gone.rowcount or 0)

    # --- reading (one key's rows only) -----------------------------------------------------------

    def query(
        self,
        tenant: int,
        *,
        verdict: str | None = None,
        action: str | None = None,
        policy: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> dict[str, Any]:
        """The key's decisions, newest first, with the history's pagination object."""
        self.flush()
        where = [DECISIONS.c.api_key_id == tenant]
        if verdict is not None:
            where.append(DECISIONS.c.verdict == _one_of(verdict, _VERDICTS, "verdict"))
        if action is not None:
            where.append(DECISIONS.c.action == _one_of(action, _ACTIONS, "action"))
        if policy is not None:
            where.append(DECISIONS.c.policy == policy)
        with self.store.transaction() as db:
            total = db.execute(
                sa.select(sa.func.count()).select_from(DECISIONS).where(*where)
            ).scalar_one()
            rows = db.execute(
                sa.select(*_SUMMARY)
                .where(*where)
                .order_by(DECISIONS.c.id.desc())
                .limit(limit)
                .offset(offset)
            ).all()
        return {
            "decisions": [_public(row) for row in rows],
            "pagination": {
                "total": total,
                "limit": limit,
                "offset": offset,
                "hasMore": offset + len(rows) < total,
            },
        }

    def get(self, decision_id: str, tenant: int) -> dict[str, Any] | None:
        """One of the key's decisions with its content (None when logged without), or None."""
        self.flush()
        # ASCII digits only: "٣" passes str.isdigit and int() reads it as 3, "²" passes
        # isdigit and int() refuses it. Neither is an id.
        if not (decision_id.isascii() and decision_id.isdigit() and len(decision_id) < 19):
            return None
        with self.store.transaction() as db:
            row = db.execute(
                sa.select(*_SUMMARY, DECISIONS.c.content).where(
                    DECISIONS.c.id == int(decision_id), DECISIONS.c.api_key_id == tenant
                )
            ).first()
        if row is None:
            return None
        out = _public(row)
        content = json.loads(row.content) if row.content else None
        out["result"] = content.pop("result", None) if content else None
        out["content"] = content
        return out

    def daily(self, tenant: int, *, days: int = 30, policy: str | None = None) -> dict[str, Any]:
        """Decisions per day and action over the last ``days`` days (UTC), oldest first."""
        self.flush()
        since = time.time() - days * 86400
        day = sa.func.substr(DECISIONS.c.created_at, 1, 10)
        where = [DECISIONS.c.api_key_id == tenant, DECISIONS.c.created_ts >= since]
        if policy is not None:
            where.append(DECISIONS.c.policy == policy)
        with self.store.transaction() as db:
            rows = db.execute(
                sa.select(day.label("day"), DECISIONS.c.action, sa.func.count().label("n"))
                .where(*where)
                .group_by(day, DECISIONS.c.action)
                .order_by(day)
            ).all()
        by_day: dict[str, dict[str, Any]] = {}
        for row in rows:
            entry = by_day.setdefault(
                row.day, {"day": row.day, **dict.fromkeys(sorted(_ACTIONS), 0), "unchecked": 0}
            )
            entry[row.action if row.action in _ACTIONS else "unchecked"] += row.n
        for entry in by_day.values():
            entry["total"] = sum(v for k, v in entry.items() if k != "day")
        return {"days": list(by_day.values())}


def _resolve(done: list[tuple[_Ticket, str | None]]) -> None:
    """Tell the waiting requests their rows' ids: one wake-up per event loop, not per row."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[str | None], str | None]]]
    by_loop = {}
    for (loop, future, _), logged in done:
        by_loop.setdefault(loop, []).append((future, logged))
    for loop, futures in by_loop.items():
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
            loop.call_soon_threadsafe(_set_results, futures)


def _set_results(futures: list[tuple[asyncio.Future[str | None], str | None]]) -> None:
    for future, logged in futures:
        if not future.done():
            future.set_result(logged)


class DurableDecisions:
    """ASGI middleware: a response starts only once the request's decisions are committed.

    The rows a request logs (:meth:`DecisionLog.record`, from the guard endpoints or
    ``POST /api/check``) are committed by the log's writer thread; the response's first message
    waits for those commits, so an acknowledged decision survives the process being killed.
    Requests that log nothing pass straight through.

    Args:
        app: The application to wrap.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI entry: pass the request on; commit its decision before the response."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        pending: list[asyncio.Future[str | None]] = []

        async def durable(message: Message) -> None:
            if pending and message["type"] == "http.response.start":
                waiting = pending[:]
                pending.clear()
                await asyncio.gather(*waiting)
            await send(message)

        token = _PENDING.set(pending)
        try:
            await self.app(scope, receive, durable)
        finally:
            _PENDING.reset(token)


_SUMMARY: list[Any] = [
    *(c for c in DECISIONS.columns if c.name not in {"content", "created_ts"}),
    DECISIONS.c.content.is_not(None).label("has_content"),
]


def _public(row: Any) -> dict[str, Any]:
    counts = json.loads(row.counts or "{}")
    return {
        "id": str(row.id),
        "created_at": row.created_at,
        "source": row.source,
        "policy": row.policy,
        "status": row.status,
        "verdict": row.verdict,
        "action": row.action,
        "reason_code": row.reason_code,
        "groundedness": row.groundedness,
        "claim_confidence": row.claim_confidence,
        "claims": counts.get("claims", 0),
        "unsupported_claims": counts.get("unsupported_claims", 0),
        "quotes": counts.get("quotes", 0),
        "altered_quotes": counts.get("altered_quotes", 0),
        "citations": counts.get("citations", {}),
        "latency_ms": row.latency_ms,
        "enforced": bool(row.enforced),
        "stream": bool(row.stream),
        "has_content": bool(row.has_content),
    }


def _one_of(value: str, allowed: set[str], what: str) -> str:
    if value not in allowed:
        raise InputError(f"{what} must be one of {', '.join(sorted(allowed))}", path=what)
    return value


def _iso(ts: float) -> str:
    moment = datetime.datetime.fromtimestamp(ts, datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
