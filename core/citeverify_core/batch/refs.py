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
from collections.abc import Callable, Iterator
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
    from citeverify_core.references import ReferenceVerifier

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


def _verify(chunk: list[tuple[str, str]]) -> list[dict[str, Any]]:
    assert _worker is not None, "the worker was not initialized"
    results = _worker.verify_references([text for _, text in chunk])
    rows = []
    for (ident, text), result in zip(chunk, results, strict=True):
        labels = {k: str(v) for k, v in result.field_results.items()}
        rows.append(
            {
                "id": ident,
                "input": text,
                "status": result.status,
                "reference": result.reference,
                "match_set_size": result.match_set_size,
                "contained_set_size": result.contained_set_size,
                "fields": json.dumps(labels, ensure_ascii=False, separators=(",", ":")),
                "error": result.error,
            }
        )
    return rows


def _write_part(chunk: list[tuple[str, str]], path: str) -> int:
    rows = _verify(chunk)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.writelines(dumps_entry(row) + "\n" for row in rows)
    os.replace(tmp, path)
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
    if not idx.is_file():
        raise InputError(f"no index at {idx}; build one with: citeverify index build DUMP.jsonl")
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
    names: list[str] = []
    skipped = 0
    pool = ProcessPoolExecutor(
        max(workers, 1), _mp_context(_PRELOAD), initializer=_init, initargs=(str(idx),)
    )
    pending: set[Future[int]] = set()
    try:
        for number, chunk in enumerate(_chunks(src, batch_size)):
            target = folder / f"{number:08d}.jsonl"
            names.append(target.name)
            if target.exists():
                skipped += 1
                continue
            while len(pending) >= 2 * workers:  # chunks in flight bound the memory
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    future.result()
            pending.add(pool.submit(_write_part, chunk, str(target)))
        for future in pending:
            future.result()
    except BrokenProcessPool:
        raise BatchInterruptedError.worker_died(folder) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)

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
                [
                    pa.field(c, pa.int64() if c.endswith("_size") else pa.string())
                    for c in REF_COLUMNS
                ]
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
    shutil.rmtree(folder, ignore_errors=True)
    return RefsSummary(out, rows, statuses, time.monotonic() - started, skipped)
