"""The job store (seed 004's submit/poll API, at library level): SQLite, so nothing is lost.

Submit 1-20 references -> job ids and a document id; poll up to 50 job ids for their state
(``waiting``, ``active``, ``completed``, ``failed``, ``not-found``) and live progress; cancel by
document or job ids; list history. A job that was ``active`` when the process died is ``waiting``
again when the store reopens; a completed result is written in the same transaction that marks
the job completed, so it is never lost.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import sqlite3
import threading
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from citeverify._errors import InputError
from citeverify._runner import run_sync
from citeverify.references._parse import MAX_REFERENCE_CHARS
from citeverify.references._verify import ReferenceVerifier

__all__ = ["MAX_POLL_IDS", "MAX_REFERENCES", "JobStore"]

#: The seed's limits.
MAX_REFERENCES = 20
MAX_POLL_IDS = 50
MAX_HISTORY = 50

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY, title TEXT, created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    document_id TEXT NOT NULL REFERENCES documents(id),
    position INTEGER NOT NULL,
    raw_text TEXT NOT NULL,
    state TEXT NOT NULL,            -- waiting, active, completed, failed
    step TEXT, message TEXT,        -- live progress
    result TEXT, error TEXT,
    verified_at TEXT
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state);
CREATE INDEX IF NOT EXISTS jobs_document ON jobs(document_id);
"""


def _now() -> str:
    return (
        datetime.datetime.now(datetime.UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


class JobStore:
    """Reference verification jobs persisted in SQLite.

    Args:
        path: The database file (``":memory:"`` for a throwaway store).
        verifier: Verifies the references (its ``max_concurrency`` bounds the jobs run at once).
    """

    def __init__(self, path: str | Path, verifier: ReferenceVerifier) -> None:
        self.path = str(path)
        self.verifier = verifier
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()
        # Restart: what was running when the process died runs again.
        self._db.execute(
            "UPDATE jobs SET state = 'waiting', step = NULL, message = NULL WHERE state = 'active'"
        )

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    # --- submit ----------------------------------------------------------------------------------

    def submit(self, references: Sequence[str], *, title: str | None = None) -> dict[str, Any]:
        """Queue 1-20 references; returns ``jobIds``, ``documentId`` and ``message``.

        Raises:
            InputError: 0 or more than 20 references, or one that is not a string or too long.
        """
        if isinstance(references, str) or not isinstance(references, Sequence):
            raise InputError("references must be a list of strings", path="references")
        if not 1 <= len(references) <= MAX_REFERENCES:
            msg = f"submit 1 to {MAX_REFERENCES} references at a time, got {len(references)}"
            raise InputError(msg, path="references")
        for i, ref in enumerate(references):
            if not isinstance(ref, str) or not ref.strip():
                msg = f"references[{i}] must be a non-empty string"
                raise InputError(msg, path=f"references[{i}]")
            if len(ref) > MAX_REFERENCE_CHARS:
                limit = MAX_REFERENCE_CHARS
                msg = f"references[{i}] is {len(ref):,} characters; the limit is {limit:,}"
                raise InputError(msg, path=f"references[{i}]")
        document_id = uuid.uuid4().hex
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
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
            self._db.execute("COMMIT")
        return {
            "jobIds": ids,
            "documentId": document_id,
            "message": f"{len(ids)} reference(s) queued for verification",
        }

    # --- work ------------------------------------------------------------------------------------

    def process(self) -> int:
        """Verify every waiting job (concurrently); returns how many were processed."""
        return run_sync(self.aprocess())

    async def aprocess(self) -> int:
        """Async :meth:`process`."""
        semaphore = asyncio.Semaphore(self.verifier.max_concurrency)
        processed = 0
        while claimed := self._claim(self.verifier.max_concurrency * 2):

            async def run(job_id: int, text: str) -> None:
                async with semaphore:
                    await self._run(job_id, text)

            async with self.verifier.lookups.session():
                await asyncio.gather(*(run(job_id, text) for job_id, text in claimed))
            processed += len(claimed)
        return processed

    def _claim(self, limit: int) -> list[tuple[int, str]]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            rows = self._db.execute(
                "SELECT id, raw_text FROM jobs WHERE state = 'waiting' ORDER BY id LIMIT ?",
                (limit,),
            ).fetchall()
            self._db.executemany(
                "UPDATE jobs SET state = 'active', step = 'queued', message = 'starting' "
                "WHERE id = ?",
                [(r[0],) for r in rows],
            )
            self._db.execute("COMMIT")
        return [(int(r[0]), str(r[1])) for r in rows]

    async def _run(self, job_id: int, text: str) -> None:
        self._progress(job_id, "searching", "looking for candidate records")
        try:
            result = await self.verifier.averify_or_error(text)
        except Exception as exc:  # a job must end, never stay active: the error is recorded
            self._finish(job_id, "failed", None, f"{type(exc).__name__}: {exc}")
            return
        state = "failed" if result.error else "completed"
        self._finish(job_id, state, result.model_dump_json(), result.error)

    def _progress(self, job_id: int, step: str, message: str) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE jobs SET step = ?, message = ? WHERE id = ? AND state = 'active'",
                (step, message, job_id),
            )

    def _finish(self, job_id: int, state: str, result: str | None, error: str | None) -> None:
        with self._lock:
            # Only an active job finishes: a job cancelled meanwhile stays cancelled.
            self._db.execute(
                "UPDATE jobs SET state = ?, result = ?, error = ?, step = NULL, message = NULL, "
                "verified_at = ? WHERE id = ? AND state = 'active'",
                (state, result, error, _now(), job_id),
            )

    # --- poll, cancel, history ---------------------------------------------------------------

    def results(self, job_ids: Sequence[str]) -> dict[str, Any]:
        """The seed's ``{"jobs": [...]}`` for up to 50 job ids.

        Raises:
            InputError: more than 50 ids, or not a list.
        """
        if isinstance(job_ids, str) or not isinstance(job_ids, Sequence):
            raise InputError("jobIds must be a list of job ids", path="jobIds")
        if len(job_ids) > MAX_POLL_IDS:
            msg = f"poll at most {MAX_POLL_IDS} job ids at a time, got {len(job_ids)}"
            raise InputError(msg, path="jobIds")
        jobs = []
        for job_id in job_ids:
            row = None
            if str(job_id).isdigit():
                with self._lock:
                    row = self._db.execute(
                        "SELECT state, step, message, result, error FROM jobs WHERE id = ?",
                        (int(job_id),),
                    ).fetchone()
            if row is None:
                jobs.append(
                    {"id": str(job_id), "state": "not-found", "error": None, "progress": None}
                )
                continue
            state, step, message, result, error = row
            job: dict[str, Any] = {
                "id": str(job_id),
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

        Raises:
            InputError: neither a document id nor job ids, or more than 50 job ids.
        """
        if document_id is None and not job_ids:
            raise InputError("give a documentId, jobIds, or both", path="documentId")
        if job_ids is not None and len(job_ids) > MAX_POLL_IDS:
            msg = f"cancel at most {MAX_POLL_IDS} job ids at a time, got {len(job_ids)}"
            raise InputError(msg, path="jobIds")
        clauses: list[str] = []
        params: list[Any] = []
        if document_id is not None:
            clauses.append("document_id = ?")
            params.append(document_id)
        if job_ids:
            ids = [int(j) for j in job_ids if str(j).isdigit()]
            clauses.append(f"id IN ({','.join('?' * len(ids)) or 'NULL'})")
            params.extend(ids)
        where = " OR ".join(clauses)
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            cursor = self._db.execute(
                "UPDATE jobs SET state = 'failed', error = 'cancelled', step = NULL, "
                "message = NULL "
                f"WHERE ({where}) AND state IN ('waiting', 'active')",  # only placeholders inside
                params,
            )
            cancelled = cursor.rowcount
            doc = document_id
            if doc is None and job_ids:
                row = (
                    self._db.execute(
                        "SELECT document_id FROM jobs WHERE id = ?", (int(next(iter(job_ids))),)
                    ).fetchone()
                    if str(next(iter(job_ids))).isdigit()
                    else None
                )
                doc = row[0] if row else None
            self._db.execute("COMMIT")
        status = self._document_status(doc) if doc else None
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
            InputError: ``limit`` outside 1-50 or a negative ``offset``.
        """
        if not 1 <= limit <= MAX_HISTORY or offset < 0:
            msg = f"limit must be 1 to {MAX_HISTORY} and offset at least 0"
            raise InputError(msg, path="limit")
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
