"""Building and updating the local index from whole snapshots: in parallel, resumable (issue 35).

:func:`ingest` reads a :class:`~citeverify_core.references.snapshots.Snapshot` file by file:

- **parsing in parallel, one writer.** With ``workers`` > 1, worker processes parse files (the
  JSON is the cost) and spool each file's works to a temporary file; the writer (this process)
  applies files in the snapshot's order, so that a newer partition of OpenAlex replaces the
  older record of a work. At most ``2 x workers`` files are parsed ahead, so the spool stays a
  few files deep. With one worker, files are read and written in this process, streaming.
- **each file whole or not at all, recorded as done.** Each file's works, notices and removals
  are written in a savepoint that also records the file in the index's ``build_files`` table,
  and files are committed together, :data:`TRANSACTION_WORKS` works at a time (a commit
  writes every page it dirtied twice, WAL and checkpoint: one per 5,000-work file spent a third
  of a build in commits). A build stopped anywhere keeps every file committed (Ctrl-C and
  errors commit the files finished before them; a killed process loses at most the last
  transaction) and nothing of the one it was writing; run it again and it goes on at the first
  file not done, without losing or duplicating a record.
- **the dump-safety rules of the single-dump build.** A broken file (not gzip, truncated, not
  JSON, a record count other than its manifest's) adds nothing and is named in
  :attr:`IngestReport.broken`; the other files are still read. Lines that are JSON but not
  works are skipped and counted.
- **updates.** ``since`` (``index update``) applies only the files dated after the index's
  last ``updated_date``: changed works replace their old records (by DOI or OpenAlex id), merged
  works are removed, and the index records the newest date it holds (``openalex_updated``).
  The index is in SQLite's WAL mode while it is written, so readers (the service, a batch) keep
  answering from the last committed file.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from citeverify_core.errors import InputError
from citeverify_core.references.index import LocalIndex
from citeverify_core.references.snapshots import Batch, Snapshot, SnapshotFile, read_file

__all__ = ["IngestProgress", "IngestReport", "ingest"]


@dataclass(slots=True)
class IngestProgress:
    """Where a build stands: for a progress line (records, rate, time left).

    Attributes:
        files_done: Files written (or found done by an earlier run).
        files_total: Files to read in this run.
        records: Works written in this run.
        bytes_done: Compressed bytes of the files written, of ``bytes_total``.
        elapsed: Seconds since this run started.
    """

    files_done: int = 0
    files_total: int = 0
    records: int = 0
    bytes_done: int = 0
    bytes_total: int = 0
    elapsed: float = 0.0

    @property
    def rate(self) -> float:
        """Works written per second in this run."""
        return self.records / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def seconds_left(self) -> float | None:
        """Time left, from the bytes still to read at this run's pace (None before any)."""
        if not self.bytes_done or self.elapsed <= 0:
            return None
        return self.elapsed * (self.bytes_total - self.bytes_done) / self.bytes_done

    def line(self) -> str:
        """One line for a terminal: files, works, rate, share and time left."""
        share = 100.0 * self.bytes_done / self.bytes_total if self.bytes_total else 100.0
        left = self.seconds_left
        eta = "" if left is None else f", about {_duration(left)} left"
        return (
            f"{self.files_done:,}/{self.files_total:,} files, {self.records:,} works "
            f"({self.rate:,.0f}/s), {share:.0f}% of the data{eta}"
        )


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


@dataclass(slots=True)
class IngestReport:
    """What :func:`ingest` did.

    Attributes:
        records: Works written (new or replacing an older record).
        removed: Works removed (merged into others).
        notices: Notices added (retractions, concerns, corrections).
        skipped: Records skipped (JSON, but not works), with ``examples``.
        files_read: Files written in this run.
        files_already_done: Files an earlier run had finished (a resumed build).
        broken: Files that added nothing, with why (``"name: reason"``).
        problems: What the manifest check found.
        latest: The newest ``updated_date`` the index now holds (OpenAlex), if any.
    """

    records: int = 0
    removed: int = 0
    notices: int = 0
    skipped: int = 0
    examples: list[str] = field(default_factory=list)
    files_read: int = 0
    files_already_done: int = 0
    broken: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    latest: str | None = None


#: Works written between two commits (files are never split: a larger file is one transaction).
TRANSACTION_WORKS = 50_000
#: The writer's page cache while it builds (KiB, SQLite's negative cache_size): the B-trees of
#: the DOI, OpenAlex id and year/volume indexes take inserts at random places, and a page read
#: from the file for each costs more than the insert (bench: x1.4 on the works table at 1M).
_WRITER_CACHE_KIB = 256 * 1024


class _Broken(Exception):
    """A file that turned out broken while it was written: its transaction is rolled back."""


def ingest(
    index: LocalIndex,
    snapshot: Snapshot,
    *,
    workers: int = 1,
    update: bool = False,
    progress: Callable[[IngestProgress], None] | None = None,
) -> IngestReport:
    """Write a snapshot's files into ``index``, resuming after the files already done.

    Args:
        index: A writable index.
        snapshot: What to read (:func:`~citeverify_core.references.snapshots.open_snapshot`).
        workers: Processes that parse files (1: this process only).
        update: Apply only the OpenAlex files dated after the index's ``openalex_updated`` (the
            files of an earlier snapshot are never read again, so an older record of a work
            cannot replace a newer one).
        progress: Called after each batch written with where the build stands.

    Returns:
        What was written, skipped and found broken.
    """
    if workers < 1:
        msg = f"workers must be at least 1, got {workers}"
        raise InputError(msg, path="workers")
    report = IngestReport(problems=list(snapshot.problems))
    db = index._db
    with index._lock:
        db.execute("PRAGMA journal_mode=WAL")
        (cache,) = db.execute("PRAGMA cache_size").fetchone()
        (sync,) = db.execute("PRAGMA synchronous").fetchone()
        (mapped,) = db.execute("PRAGMA mmap_size").fetchone()
        db.execute(f"PRAGMA cache_size={-_WRITER_CACHE_KIB}")
        # The reader's mapping (LocalIndex) off: every page the writer touches would stay
        # mapped into its memory (1.6 GB at 9M works), where the page cache is bounded.
        db.execute("PRAGMA mmap_size=0")
        # WAL with synchronous=NORMAL cannot be corrupted by a crash or a power loss; a power
        # loss may undo the last commits, and with them their build_files rows: those files
        # are read again, nothing is lost.
        db.execute("PRAGMA synchronous=NORMAL")
        done = dict(db.execute("SELECT name, size FROM build_files"))
        since = _meta(index, "openalex_updated") if update else None
    todo: list[SnapshotFile] = []
    for file in snapshot.newer_than(since).files:
        if done.get(file.name) == file.size:
            report.files_already_done += 1
        else:
            todo.append(file)
    state = IngestProgress(
        files_done=report.files_already_done,
        files_total=report.files_already_done + len(todo),
        bytes_total=sum(f.size for f in todo),
    )
    started = time.monotonic()

    def tick() -> None:
        if progress is not None:
            state.elapsed = time.monotonic() - started
            progress(state)

    try:
        try:
            _write_files(index, _parsed(todo, workers), report, state, tick)
            with index._lock:
                _finish(index, snapshot, report)
        finally:
            with index._lock:
                db.execute(f"PRAGMA synchronous={sync}")
                # Back to a single file (a copy or a read-only mount needs no -wal/-shm beside
                # it); refused while readers have it open, which is fine: WAL stays until the
                # next time.
                with contextlib.suppress(sqlite3.OperationalError):
                    db.execute("PRAGMA journal_mode=DELETE")
        if not update and report.records and not report.broken:
            with index._lock:
                _optimize(index)
    finally:
        with index._lock:
            db.execute(f"PRAGMA cache_size={cache}")
            db.execute(f"PRAGMA mmap_size={mapped}")
    return report


def _optimize(index: LocalIndex) -> None:
    """Merge the full-text index into one segment (after a build, not an update).

    A build leaves a dozen segments (FTS5 merges as it goes, four at a time), and a search
    looks each word up in every one: merged, a search costs a fifth less (5M works: 8 s to
    merge). An update leaves them as they are (a merge of the whole index would write it
    again while readers wait for nothing; FTS5's own merging keeps the count bounded).
    """
    index._db.execute("INSERT INTO works_fts (works_fts) VALUES ('optimize')")
    index._db.commit()


def _write_files(
    index: LocalIndex,
    parsed: Iterator[tuple[SnapshotFile, Iterator[Batch]]],
    report: IngestReport,
    state: IngestProgress,
    tick: Callable[[], None],
) -> None:
    """Every file, each in a savepoint, committed :data:`TRANSACTION_WORKS` works at a time.

    Whatever stops it (Ctrl-C, an error, a progress callback that raises) commits the files
    written whole before it; the one being written is undone.
    """
    db = index._db
    pending = 0  # works written since the last commit
    try:
        for file, batches in parsed:
            try:
                with index._lock:
                    if not db.in_transaction:
                        db.execute("BEGIN IMMEDIATE")
                    written = _write_file(index, file, batches, report, state, tick)
            except (InputError, _Broken) as exc:
                text = str(exc)
                report.broken.append(text if text.startswith(file.name) else f"{file.name}: {text}")
                continue
            report.records += written
            report.files_read += 1
            state.files_done += 1
            state.bytes_done += file.size
            pending += written
            if pending >= TRANSACTION_WORKS:
                with index._lock:
                    db.commit()
                pending = 0
            tick()
    except BaseException:
        with index._lock:
            try:
                db.commit()  # the files written whole (the one stopped was undone)
            except sqlite3.Error:
                db.rollback()
        raise
    with index._lock:
        db.commit()


def _finish(index: LocalIndex, snapshot: Snapshot, report: IngestReport) -> None:
    """Record the snapshot date the index holds and when it was updated; count the words."""
    db = index._db
    dates = [d for (d,) in db.execute("SELECT updated FROM build_files WHERE updated IS NOT NULL")]
    # Merge lists are dated too, but say nothing of which works the index holds.
    latest = max(
        (f.updated for f in snapshot.files if f.updated and f.kind != "merged-ids"),
        default=None,
    )
    if latest is not None and latest in dates and not report.broken:
        previous = _meta(index, "openalex_updated")
        if previous is None or latest > previous:
            index.set_meta("openalex_updated", latest)
    index.set_meta("updated_at", datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    if report.files_read:
        index.refresh_term_counts()
    db.commit()
    report.latest = _meta(index, "openalex_updated")


def _meta(index: LocalIndex, key: str) -> str | None:
    row = index._db.execute("SELECT value FROM index_meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def _write_file(
    index: LocalIndex,
    file: SnapshotFile,
    batches: Iterator[Batch],
    report: IngestReport,
    state: IngestProgress,
    tick: Callable[[], None],
) -> int:
    """One file in a savepoint of the open transaction, recorded as done; undone if it breaks."""
    db = index._db
    written = lines = skipped = 0
    examples: list[str] = []
    notices, removed = report.notices, report.removed
    db.execute("SAVEPOINT file")
    try:
        for batch in batches:
            works = batch.works
            written += index.store([w.row for w in works], [w.work_id for w in works])
            report.notices += index.store_notices(batch.notices)
            if batch.merged:
                report.removed += index.remove_works(batch.merged)
            lines += batch.lines
            skipped += batch.skipped
            examples += [f"{file.name}: {e}" for e in batch.examples[: 5 - len(examples)]]
            state.records += len(works)
            tick()
        _check_count(file, lines)
        db.execute(
            "INSERT OR REPLACE INTO build_files (name, size, records, skipped, updated, done_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                file.name,
                file.size,
                written,
                skipped,
                file.updated,
                datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            ),
        )
        db.execute("RELEASE file")
    except BaseException:
        db.execute("ROLLBACK TO file")
        db.execute("RELEASE file")
        state.records -= written
        report.notices, report.removed = notices, removed
        raise
    report.skipped += skipped
    report.examples += examples[: 5 - len(report.examples)]
    return written


def _check_count(file: SnapshotFile, lines: int) -> None:
    if file.expected_records is not None and lines != file.expected_records:
        msg = (
            f"{lines:,} records read, {file.expected_records:,} in the manifest "
            "(a partial or damaged file: nothing of it was added)"
        )
        raise _Broken(msg)


# -- parsing, here or in worker processes ------------------------------------------------------


def _parsed(
    files: list[SnapshotFile], workers: int
) -> Iterator[tuple[SnapshotFile, Iterator[Batch]]]:
    """Each file with its batches, in order: read here, or parsed ahead by worker processes."""
    if workers == 1 or len(files) <= 1:
        for file in files:
            yield file, read_file(file)
        return
    with tempfile.TemporaryDirectory(prefix="citeverify-ingest-") as spool:
        pool = ProcessPoolExecutor(max_workers=workers)
        pending: list[tuple[SnapshotFile, Future[tuple[str | None, str | None]]]] = []
        queue = iter(files)
        try:
            for file in queue:
                pending.append((file, pool.submit(_spool_file, file, spool)))
                if len(pending) >= 2 * workers:
                    break
            while pending:
                file, future = pending.pop(0)
                for more in queue:  # keep 2 x workers files in flight
                    pending.append((more, pool.submit(_spool_file, more, spool)))
                    break
                yield file, _from_spool(future)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def _spool_file(file: SnapshotFile, spool: str) -> tuple[str | None, str | None]:
    """Parse one file (in a worker) into a spool file of pickled batches.

    Returns its path, or why the file is broken (the message, not the exception: an error
    travels between processes as text).
    """
    handle, path = tempfile.mkstemp(dir=spool, suffix=".batches")
    try:
        with os.fdopen(handle, "wb") as out:
            for batch in read_file(file):
                pickle.dump(batch, out, protocol=pickle.HIGHEST_PROTOCOL)
    except InputError as exc:
        Path(path).unlink(missing_ok=True)
        return None, str(exc)
    except BaseException:
        Path(path).unlink(missing_ok=True)
        raise
    return path, None


def _from_spool(future: Future[tuple[str | None, str | None]]) -> Iterator[Batch]:
    """The batches a worker spooled (its error raised here, for the writer to name)."""
    spooled, error = future.result()
    if spooled is None:
        raise _Broken(error or "could not be read")
    path = Path(spooled)
    try:
        with path.open("rb") as stream:
            while True:
                try:
                    batch = pickle.load(stream)
                except EOFError:
                    return
                yield batch
    finally:
        path.unlink(missing_ok=True)
