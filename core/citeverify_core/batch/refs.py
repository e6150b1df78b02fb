"""``citeverify refs --batch INPUT -o OUTPUT``: many reference strings against the local index.

INPUT is a text file (plain or ``.gz``) with one reference a line, or JSONL with ``reference``
(and optionally ``id``) in each record. OUTPUT (JSONL or Parquet) gets one row per reference, in
input order: ``id`` (the record's, else the line number), ``input``, ``status``, ``reference``
(the corrected APA 7 reference or a status message), ``match_set_size``,
``contained_set_size``, ``fields`` (each field's label, as JSON) and ``error``. A process pool
(one ``ReferenceVerifier`` on the SQLite index per worker, built once, forked from a server that
has imported the reference verifier) verifies chunks; memory is bounded by the chunks in flight.

Resumable as ``citeverify batch`` is: each chunk becomes a part file in ``OUTPUT.parts/``
(written under a temporary name, renamed when complete); a re-run with the same OUTPUT, input,
index and batch size skips the parts written before. The parts are assembled in order into
OUTPUT, then removed.
"""

from __future__ import annotations

import collections
import gzip
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from citeverify_core.batch.config import dumps_entry, format_id
from citeverify_core.batch.local import (
    BatchInterruptedError,
    _mp_context,
    _prepare_parts,
    parts_dir,
)
from citeverify_core.batch.output import output_format
from citeverify_core.errors import InputError

if TYPE_CHECKING:
    from citeverify_core.references import ReferenceResult, ReferenceVerifier

REF_COLUMNS = (
    "id",
    "input",
    "status",
    "reference",
    "match_set_size",
    "contained_set_size",
    "fields",
    "error",
)


@dataclass
class RefsSummary:
    """What a reference batch did."""

    output: Path
    rows: int
    statuses: collections.Counter[str]
    seconds: float
    skipped_parts: int = 0


_worker: ReferenceVerifier | None = None
#: What the fork server imports once for all the reference workers.
_PRELOAD = ["__main__", "citeverify_core.batch.refs", "citeverify_core.references.verify"]


def _init(index: str) -> None:
    global _worker  # noqa: PLW0603 - one verifier per worker process
    from citeverify_core.references import LocalIndex, ReferenceVerifier  # noqa: PLC0415 - start-up

    _worker = ReferenceVerifier(LocalIndex(index), sources=["local"])


def worker_verifier() -> ReferenceVerifier:
    """This worker process's verifier (made by the pool's initializer)."""
    assert _worker is not None, "the worker was not initialized"
    return _worker


def result_row(ident: str, text: str, result: ReferenceResult) -> dict[str, Any]:
    """The output row of one reference's result (the columns of :data:`REF_COLUMNS`)."""
    labels = {k: str(v) for k, v in result.field_results.items()}
    return {
        "id": ident,
        "input": text,
        "status": result.status,
        "reference": result.reference,
        "match_set_size": result.match_set_size,
        "contained_set_size": result.contained_set_size,
        "fields": json.dumps(labels, ensure_ascii=False, separators=(",", ":")),
        "error": result.error,
    }


def write_rows(rows: list[dict[str, Any]], path: str) -> None:
    """Write a part's rows under a temporary name, then rename it: a part exists only whole."""
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.writelines(dumps_entry(row) + "\n" for row in rows)
    os.replace(tmp, path)


def _verify(chunk: list[tuple[str, str]]) -> list[dict[str, Any]]:
    results = worker_verifier().verify_references([text for _, text in chunk])
    return [
        result_row(ident, text, result)
        for (ident, text), result in zip(chunk, results, strict=True)
    ]


def _write_part(chunk: list[tuple[str, str]], path: str) -> int:
    rows = _verify(chunk)
    write_rows(rows, path)
    return len(rows)


def _references(source: Path) -> Iterator[tuple[str, str]]:
    """(id, reference) pairs; blank lines are skipped (their numbers still count)."""
    raw: IO[bytes] = source.open("rb")
    compressed = source.name.lower().endswith(".gz")
    stream = cast("IO[bytes]", gzip.GzipFile(fileobj=raw, mode="rb")) if compressed else raw
    jsonl = source.name.lower().removesuffix(".gz").endswith((".jsonl", ".ndjson"))
    try:
        for number, line in enumerate(stream, 1):
            text = line.decode("utf-8", errors="replace").strip()
            if not text:
                continue
            if not jsonl:
                yield str(number), text
                continue
            try:
                record = json.loads(text)
            except ValueError:
                yield str(number), text  # unreadable: verified as given, it comes out unverified
                continue
            if isinstance(record, dict):
                ident = record.get("id")
                value = record.get("reference")
                yield (
                    str(number) if ident is None else format_id(ident),
                    value if isinstance(value, str) else "",
                )
            else:
                yield str(number), ""
    finally:
        stream.close()
        raw.close()


def _chunks(source: Path, size: int) -> Iterator[list[tuple[str, str]]]:
    chunk: list[tuple[str, str]] = []
    for pair in _references(source):
        chunk.append(pair)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _signature(path: Path) -> list[Any]:
    stat = path.stat()
    return [str(path.resolve()), stat.st_size, stat.st_mtime_ns]


def run_refs_batch(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    index: str | os.PathLike[str],
    *,
    workers: int = 1,
    batch_size: int = 200,
    note: Callable[[str], None] | None = None,
) -> RefsSummary:
    """Verify every reference of ``source`` against the local index into ``output``.

    A run that stops (a killed worker, Ctrl-C) keeps its parts: the same call again resumes.
    Raises BatchInterruptedError when a worker dies.
    """
    started = time.monotonic()
    src, out, idx = Path(source), Path(output), Path(index)
    fmt = output_format(out)
    if not src.is_file():
        raise InputError(f"no such file: {src}", path="--batch")
    check_index(idx)
    say = note or (lambda _message: None)
    folder = parts_dir(out)
    manifest = {
        "version": 1,
        "input": _signature(src),
        "index": _signature(idx),
        "batch_size": batch_size,
    }
    kept = _prepare_parts(folder, manifest, say)
    if kept:
        say(f"resuming: {kept:,} parts of {out} were written before")
    tasks = (
        Task(folder / f"{number:08d}.jsonl", _write_part, (chunk,))
        for number, chunk in enumerate(_chunks(src, batch_size))
    )
    names, skipped = run_parts(tasks, folder, idx, workers=workers, preload=_PRELOAD)
    rows, statuses = assemble_parts(folder, names, out, fmt, REF_COLUMNS)
    shutil.rmtree(folder, ignore_errors=True)
    return RefsSummary(out, rows, statuses, time.monotonic() - started, skipped)


def check_index(idx: Path) -> None:
    """Refuse a missing index with the command that builds one."""
    if not idx.is_file():
        raise InputError(f"no index at {idx}; build one with: citeverify index build DUMP.jsonl")


@dataclass(frozen=True)
class Task:
    """One part to write: ``function(*args, str(target))`` runs in a worker, returns its rows."""

    target: Path
    function: Callable[..., int]
    args: tuple[Any, ...]


def run_parts(
    tasks: Iterable[Task],
    folder: Path,
    idx: Path,
    *,
    workers: int,
    preload: list[str],
    done: Callable[[Task, int], None] | None = None,
) -> tuple[list[str], int]:
    """Write every task's part in a process pool of reference verifiers on ``idx``.

    A part that exists already (a run before this one wrote it) is skipped. ``done(task,
    rows)`` is told of each part written, in the order they finish. Returns the parts' names
    in task order and how many were skipped. Tasks are taken lazily, two per worker in flight:
    memory is bounded by them, not by the input.

    Raises:
        BatchInterruptedError: a worker died; the parts written are kept for a re-run.
    """
    names: list[str] = []
    skipped = 0
    pool = ProcessPoolExecutor(
        max(workers, 1), _mp_context(preload), initializer=_init, initargs=(str(idx),)
    )
    pending: dict[Future[int], Task] = {}

    def collect(finished: set[Future[int]]) -> None:
        for future in finished:
            task = pending.pop(future)
            rows = future.result()
            if done is not None:
                done(task, rows)

    try:
        for task in tasks:
            names.append(task.target.name)
            if task.target.exists():
                skipped += 1
                continue
            while len(pending) >= 2 * workers:  # parts in flight bound the memory
                finished, _ = wait(set(pending), return_when=FIRST_COMPLETED)
                collect(finished)
            future = pool.submit(task.function, *task.args, str(task.target))
            pending[future] = task
        while pending:
            finished, _ = wait(set(pending), return_when=FIRST_COMPLETED)
            collect(finished)
    except BrokenProcessPool:
        raise BatchInterruptedError.worker_died(folder) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return names, skipped


def assemble_parts(
    folder: Path,
    names: list[str],
    out: Path,
    fmt: str,
    columns: Sequence[str],
    integers: Sequence[str] = ("match_set_size", "contained_set_size"),
) -> tuple[int, collections.Counter[str]]:
    """Write the parts' rows, in order, into ``out`` (JSONL or Parquet) as one file.

    The file appears whole or not at all (written under a temporary name, then renamed).
    Returns the rows written and their counts by ``status``.
    """
    tmp = out.with_name(f".{out.name}.writing-{os.getpid()}")
    statuses: collections.Counter[str] = collections.Counter()
    rows = 0
    writer: Any = None
    handle: IO[str] | None = None
    try:
        if fmt == "parquet":
            import pyarrow as pa  # noqa: PLC0415 - the batch extra
            import pyarrow.parquet as pq  # noqa: PLC0415 - the batch extra

            schema = pa.schema(
                [pa.field(c, pa.int64() if c in integers else pa.string()) for c in columns]
            )
            writer = pq.ParquetWriter(str(tmp), schema)
        else:
            handle = tmp.open("w", encoding="utf-8")
        for name in names:
            with (folder / name).open(encoding="utf-8") as part:
                lines = part.readlines()
            batch = [json.loads(line) for line in lines]
            statuses.update(row["status"] for row in batch)
            rows += len(batch)
            if handle is not None:
                handle.writelines(lines)
            else:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
        if handle is not None:
            handle.close()
        if writer is not None:
            writer.close()
        os.replace(tmp, out)
    except BaseException:
        if handle is not None:
            handle.close()
        if writer is not None:
            writer.close()
        tmp.unlink(missing_ok=True)
        raise
    return rows, statuses
