"""The embedded engine: a process pool over the local cores, resumable part by part.

Each worker builds its verifier once (the pool's initializer): the policy, a context cache and,
with lookups on, the shared SQLite lookup cache. The workers come from a fork server that has
imported the engine once (``forkserver`` with the engine preloaded), so a worker costs a fork,
not an import. Every run, one worker or many, goes through the pool: the same code path.

The reading process hands out *tasks*: byte ranges of plain JSONL shards (each worker reads its
own lines) or, for gzip, CSV and Parquet, chunks of records it has read. A worker verifies a
task and writes it as one part file (atomically: a temporary file renamed when complete), so a
worker killed mid-task leaves no part behind, and a re-run with the same OUTPUT skips the parts
already written. When every part is there they are assembled, in order, into OUTPUT.
"""

from __future__ import annotations

import collections
import json
import multiprocessing
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citeverify_core.batch.config import (
    COLUMNS,
    WorkerConfig,
    build_verifier,
    dumps_entry,
    format_id,
    verify_line,
    verify_record,
)
from citeverify_core.batch.output import Assembler, Stats, errors_path, read_entries
from citeverify_core.batch.read import Chunk, Range, Shard, iter_tasks, read_range, signature
from citeverify_core.errors import CiteVerifyError

if TYPE_CHECKING:
    from citeverify_core.engine.verifier import CitationVerifier

_MANIFEST = "manifest.json"
#: Bumped when the parts' form changes: parts of another version are not reused.
_PARTS_VERSION = 2
#: What the fork server imports once for all its workers.
_PRELOAD = ["__main__", "citeverify_core.batch.local", "citeverify_core.engine.verifier"]


class BatchInterruptedError(CiteVerifyError):
    """The run stopped before every part was written; the written parts are kept."""

    @classmethod
    def worker_died(cls, folder: Path) -> BatchInterruptedError:
        """The error for a pool that lost a worker: the parts in ``folder`` serve a re-run."""
        written = sum(1 for _ in folder.glob("*.jsonl"))
        msg = (
            f"a worker process died (killed, or out of memory); {written:,} parts are kept in "
            f"{folder}: run the same command again to resume"
        )
        return cls(msg)


@dataclass
class BatchSummary:
    """What a batch run did."""

    output: Path
    errors_file: Path
    rows: int
    errors: int
    seconds: float
    skipped_parts: int = 0
    stats: Stats = field(default_factory=Stats)

    @classmethod
    def of(cls, output: Path, stats: Stats, started: float, skipped_parts: int) -> BatchSummary:
        """The summary of a finished run, from its assembler's ``stats``."""
        return cls(
            output=output,
            errors_file=errors_path(output),
            rows=stats.rows,
            errors=stats.errors,
            seconds=time.monotonic() - started,
            skipped_parts=skipped_parts,
            stats=stats,
        )

    @property
    def records_per_second(self) -> float:
        """Records (rows and errors) per second of wall time."""
        return (self.rows + self.errors) / self.seconds if self.seconds else 0.0


# --- in the workers ------------------------------------------------------------------------------

_worker: tuple[CitationVerifier, WorkerConfig] | None = None


def _init_worker(config: WorkerConfig) -> None:
    global _worker  # noqa: PLW0603 - one verifier per worker process, built once
    _worker = (build_verifier(config), config)


def _entries(items: Iterable[Any], *, lines: bool, first: int) -> Iterator[dict[str, Any]]:
    """One entry per item (JSONL line or record), numbered from ``first``."""
    assert _worker is not None, "the worker was not initialized"
    verifier, config = _worker
    for number, item in enumerate(items, first):
        if lines:
            yield verify_line(verifier, item, config.fields, details=config.details, number=number)
        else:
            yield verify_record(
                verifier, item, config.fields, details=config.details, number=number
            )


def _chunk_entries(chunk: Chunk) -> list[dict[str, Any]]:
    return list(_entries(chunk.items, lines=chunk.lines, first=chunk.first))


def _write_part(task: Range | Chunk, path: str) -> int:
    """Verify a task into its part file; entries are numbered within the task, from 1."""
    if isinstance(task, Range):
        items: Iterable[Any] = read_range(task)
        lines = True
    else:
        items, lines = task.items, task.lines
    count = 0
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as handle:
        for entry in _entries(items, lines=lines, first=1):
            handle.write(dumps_entry(entry) + "\n")
            count += 1
    os.replace(tmp, path)
    return count


# --- in the reading process ----------------------------------------------------------------------


def part_name(task: Range | Chunk) -> str:
    """Part files sort in input order."""
    return f"{task.shard:06d}-{task.index:08d}.jsonl"


def parts_dir(output: Path) -> Path:
    """Where the parts of OUTPUT are kept until they are assembled."""
    return output.with_name(output.name + ".parts")


def _prepare_parts(folder: Path, manifest: dict[str, Any], note: Callable[[str], None]) -> int:
    """Keep the parts of the same job; start afresh otherwise. Returns the parts kept."""
    path = folder / _MANIFEST
    if folder.is_dir():
        try:
            same = json.loads(path.read_text("utf-8")) == manifest
        except (OSError, ValueError):
            same = False
        if not same:
            note(f"{folder} was made from another input or other options: starting afresh")
            shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for leftover in folder.glob("*.tmp-*"):  # a worker killed while writing
        leftover.unlink(missing_ok=True)
    path.write_text(json.dumps(manifest), "utf-8")
    return sum(1 for _ in folder.glob("*.jsonl"))


def _mp_context(preload: list[str] | None = None) -> Any:
    """A fork server with the engine (or ``preload``) imported once; spawn where there is none.

    Not plain fork: the reading process may hold threads (the lookups' event loop, pyarrow's
    pool). The fork server is a fresh process that imports the engine once; each worker is a
    fork of it, so it does not import the engine again. (When the fork server was already
    started by other code, its preloads stand and the workers import what they lack.)
    """
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_PRELOAD if preload is None else preload)
    return context


class Progress:
    """A progress line on stderr (records/s, share of the input, ETA), when stderr is a TTY."""

    def __init__(self, total_bytes: int, *, enabled: bool) -> None:
        self.enabled = enabled
        self.total = max(total_bytes, 1)
        self.records = 0
        self.started = time.monotonic()
        self._shown = 0.0

    def update(self, records: int, done_bytes: int, *, force: bool = False) -> None:
        """Add ``records`` finished; ``done_bytes`` of the input are read."""
        self.records += records
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._shown < 0.2:
            return
        self._shown = now
        elapsed = max(now - self.started, 1e-6)
        share = min(done_bytes / self.total, 1.0)
        rate = self.records / elapsed
        eta = elapsed * (1 - share) / share if share > 0 else 0.0
        width = 24
        bar = "#" * int(share * width) + "-" * (width - int(share * width))
        minutes, seconds = divmod(int(eta), 60)
        hours, minutes = divmod(minutes, 60)
        import sys  # noqa: PLC0415 - start-up time

        sys.stderr.write(
            f"\r[{bar}] {share:6.1%}  {self.records:,} records  {rate:,.0f}/s  "
            f"ETA {hours:d}:{minutes:02d}:{seconds:02d} "
        )
        sys.stderr.flush()

    def close(self) -> None:
        """End the progress line."""
        if self.enabled:
            import sys  # noqa: PLC0415 - start-up time

            sys.stderr.write("\n")
            sys.stderr.flush()


def run_local(
    shards: list[Shard],
    config: WorkerConfig,
    output: Path,
    *,
    workers: int,
    batch_size: int,
    progress: Progress,
    note: Callable[[str], None],
    options: dict[str, Any],
) -> BatchSummary:
    """Verify every shard into parts (skipping those written before) and assemble OUTPUT."""
    started = time.monotonic()
    folder = parts_dir(output)
    manifest = {"version": _PARTS_VERSION, "input": signature(shards), "options": options}
    kept = _prepare_parts(folder, manifest, note)
    if kept:
        note(f"resuming: {kept:,} parts of {output} were written before")
    skipped = 0
    done_bytes = 0
    expected: list[tuple[int, str]] = []  # (shard, part name) in input order

    def tasks() -> Iterator[tuple[Range | Chunk, int]]:
        """Each task with the input bytes it covers (for the progress bar)."""
        for shard in shards:
            position = 0
            for task in iter_tasks(shard, batch_size):
                end = task.end if isinstance(task, Range) else task.done_bytes
                yield task, end - position
                position = end

    # OUTPUT is assembled while the workers verify: each part as soon as it and every part
    # before it are written (no serial tail; the reading process is otherwise idle).
    assembler = Assembler(output, details=config.details)
    assembled = 0
    current_shard, lines_before = -1, 0

    def assemble_ready() -> None:
        nonlocal assembled, current_shard, lines_before
        while assembled < len(expected):
            index, part = expected[assembled]
            path = folder / part
            if not path.exists():  # renamed into place only when complete
                return
            if index != current_shard:
                current_shard, lines_before = index, 0
            name = shards[index].name
            entries = read_entries(path)
            for entry in entries:
                assembler.add(entry, name, lines_before + int(entry.get("_n") or 0))
            lines_before += len(entries)  # every line of the input, blank or not, is one entry
            assembled += 1

    def finish() -> None:
        assemble_ready()
        if assembled != len(expected):  # a part removed by hand during the run
            missing = folder / expected[assembled][1]
            msg = f"{missing} is missing: run the same command again to resume"
            raise BatchInterruptedError(msg)
        assembler.finish()

    # One worker or many: the same pool, so that the two cost the same per worker.
    pool = ProcessPoolExecutor(
        max_workers=max(workers, 1),
        mp_context=_mp_context(),
        initializer=_init_worker,
        initargs=(config,),
    )
    pending: dict[Future[int], int] = {}

    def collect(futures: Iterable[Future[int]]) -> None:
        nonlocal done_bytes
        for future in futures:
            records = future.result()
            done_bytes += pending.pop(future)
            progress.update(records, done_bytes)
        assemble_ready()

    try:
        try:
            for task, size in tasks():
                target = folder / part_name(task)
                expected.append((task.shard, target.name))
                if target.exists():
                    skipped += 1
                    done_bytes += size
                    progress.update(0, done_bytes)
                    assemble_ready()
                    continue
                # Chunks carry their records: at most two in flight per worker bound the memory.
                while len(pending) >= 2 * workers:
                    finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                    collect(finished)
                pending[pool.submit(_write_part, task, str(target))] = size
            collect(list(pending))
        except BrokenProcessPool:
            raise BatchInterruptedError.worker_died(folder) from None
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        progress.update(0, done_bytes, force=True)
        progress.close()
        finish()
    except BaseException:
        assembler.abort()
        raise
    shutil.rmtree(folder, ignore_errors=True)
    return BatchSummary.of(output, assembler.stats, started, skipped)


# --- the notebook API ----------------------------------------------------------------------------


def _api_row(entry: dict[str, Any], number: int, details: bool) -> dict[str, Any]:
    columns = (*COLUMNS, "details") if details else COLUMNS
    error = entry.get("_error")
    if error is not None:
        row = dict.fromkeys(columns)
        row["id"] = error.get("id") or str(number)
        row["error"] = error["reason"]
        return row
    row = {name: entry.get(name) for name in columns}
    if row["id"] is None:
        row["id"] = str(number)
    row["error"] = None
    return row


def iter_verified(
    records: Iterable[Any],
    config: WorkerConfig,
    *,
    workers: int,
    batch_size: int,
) -> Iterator[dict[str, Any]]:
    """Rows in input order; records are mappings (or JSON lines as str/bytes)."""

    def chunks() -> Iterator[Chunk]:
        items: list[Any] = []
        first = 1
        index = 0
        for record in records:
            items.append(record)
            if len(items) == batch_size:
                yield Chunk(0, index, "", False, first, items, 0)
                first, index, items = first + len(items), index + 1, []
        if items:
            yield Chunk(0, index, "", False, first, items, 0)

    def lines_as_records(chunk: Chunk) -> Chunk:
        chunk.lines = bool(chunk.items) and isinstance(chunk.items[0], str | bytes)
        return chunk

    if workers <= 1:
        _init_worker(config)
        for chunk in chunks():
            for entry in _chunk_entries(lines_as_records(chunk)):
                if not entry.get("_blank"):
                    yield _api_row(entry, entry["_n"], config.details)
        return
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=_mp_context(), initializer=_init_worker, initargs=(config,)
    ) as pool:
        queue: collections.deque[Future[list[dict[str, Any]]]] = collections.deque()
        for chunk in chunks():
            queue.append(pool.submit(_chunk_entries, lines_as_records(chunk)))
            while len(queue) > 2 * workers:
                yield from _rows_of(queue.popleft().result(), config.details)
        while queue:
            yield from _rows_of(queue.popleft().result(), config.details)


def _rows_of(entries: list[dict[str, Any]], details: bool) -> Iterator[dict[str, Any]]:
    for entry in entries:
        if not entry.get("_blank"):
            yield _api_row(entry, entry["_n"], details)


__all__ = ["BatchInterruptedError", "BatchSummary", "Progress", "format_id", "run_local"]
