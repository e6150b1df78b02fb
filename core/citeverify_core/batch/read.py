"""Reading the input: JSONL (plain or .gz), CSV, Parquet; one file or a folder of shards.

Everything streams. A plain JSONL shard is cut into byte ranges of about ``batch_size`` records
(:class:`Range`, cut without reading the file: a range holds the lines that *start* in it, as
Hadoop's text input does) and each worker reads its own ranges: the reading process sends
offsets, not records. Gzip, CSV and Parquet cannot be cut by bytes: the reading process reads
them in chunks of ``batch_size`` records (:class:`Chunk`) and sends those. Records are numbered
within their range or chunk; the assembler adds the lines of the parts before (every line,
blank or not, makes one entry), so that numbers and ids do not depend on how the input was cut.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal, cast

from citeverify_core.batch.config import Fields, RecordError, check_fields, parse_line
from citeverify_core.errors import InputError, missing_extra_message

Kind = Literal["jsonl", "csv", "parquet"]
_SUFFIXES: dict[str, Kind] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
}
#: A CSV cell may hold a whole answer with its documents.
_CSV_FIELD_LIMIT = 512 * 1024 * 1024


@dataclass(frozen=True)
class Shard:
    """One input file."""

    index: int
    name: str  # relative to INPUT: ids of records without one, sources of errors
    path: Path
    kind: Kind
    gzip: bool
    size: int
    mtime_ns: int


@dataclass
class Chunk:
    """Up to ``batch_size`` consecutive records of one shard (numbers count from 1)."""

    shard: int
    index: int
    name: str
    lines: bool  # items are JSONL lines (bytes), else records (dicts)
    first: int
    items: list[Any]
    done_bytes: int  # input bytes read up to the end of this chunk (for the progress bar)


@dataclass(frozen=True)
class Range:
    """The JSONL lines of one plain shard that start at a byte in ``[start, end)``."""

    shard: int
    index: int
    path: str
    start: int
    end: int


#: The head of a shard read to estimate its line length (for the size of its ranges).
_SAMPLE_BYTES = 4 << 20
_MIN_RANGE = 1


def range_bytes(shard: Shard, batch_size: int) -> int:
    """Bytes per range: about ``batch_size`` lines as long as those at the head of the shard.

    Depends on the file's content only, so that a re-run cuts the same ranges (and finds the
    same parts).
    """
    lines = size = 0
    with shard.path.open("rb") as handle:
        while lines < batch_size and size < _SAMPLE_BYTES:
            line = handle.readline()
            if not line:
                break
            lines += 1
            size += len(line)
    if not lines:
        return max(shard.size, 1)
    return max(_MIN_RANGE, -(-size * batch_size // lines))


def iter_ranges(shard: Shard, batch_size: int) -> Iterator[Range]:
    """The ranges of a plain JSONL shard, in order."""
    step = range_bytes(shard, batch_size)
    path = str(shard.path)
    for index, start in enumerate(range(0, shard.size, step)):
        yield Range(shard.index, index, path, start, min(start + step, shard.size))


def read_range(task: Range) -> Iterator[bytes]:
    """The lines of a range (each with its newline), as ``line_chunks`` splits them."""
    try:
        with open(task.path, "rb") as handle:
            position = task.start
            if position > 0:
                # The line that starts before the range belongs to the range before.
                handle.seek(position - 1)
                position += len(handle.readline()) - 1
            while position < task.end:
                line = handle.readline()
                if not line:
                    break
                position += len(line)
                yield line
    except OSError as exc:
        msg = f"{task.path}: cannot read bytes {task.start:,} to {task.end:,} ({exc})"
        raise InputError(msg, path="INPUT") from None


def iter_tasks(shard: Shard, batch_size: int) -> Iterator[Range | Chunk]:
    """What the workers get: byte ranges of a plain JSONL shard, else chunks of records."""
    if shard.kind == "jsonl" and not shard.gzip:
        yield from iter_ranges(shard, batch_size)
    else:
        yield from iter_chunks(shard, batch_size)


def _kind(path: Path) -> tuple[Kind, bool] | None:
    suffixes = [s.lower() for s in path.suffixes]
    compressed = bool(suffixes) and suffixes[-1] == ".gz"
    if compressed:
        suffixes = suffixes[:-1]
    kind = _SUFFIXES.get(suffixes[-1]) if suffixes else None
    if kind is None or (compressed and kind == "parquet"):
        return None
    return kind, compressed


def find_shards(source: str | os.PathLike[str]) -> list[Shard]:
    """The input files, in order: INPUT itself, or every supported file under it, sorted."""
    root = Path(source)
    if root.is_dir():
        paths = sorted(
            p
            for p in root.rglob("*")
            if p.is_file()
            and not any(part.startswith((".", "_")) for part in p.relative_to(root).parts)
            and _kind(p) is not None
        )
        if not paths:
            msg = f"{root} holds no .jsonl, .jsonl.gz, .csv or .parquet file"
            raise InputError(msg, path="INPUT")
    elif root.is_file():
        if _kind(root) is None:
            msg = f"{root}: unknown input format (use .jsonl, .jsonl.gz, .csv or .parquet)"
            raise InputError(msg, path="INPUT")
        paths = [root]
    else:
        raise InputError(f"no such file or folder: {root}", path="INPUT")
    shards = []
    for i, path in enumerate(paths):
        kind, compressed = _kind(path) or ("jsonl", False)
        stat = path.stat()
        name = path.relative_to(root).as_posix() if root.is_dir() else path.name
        shards.append(Shard(i, name, path, kind, compressed, stat.st_size, stat.st_mtime_ns))
    return shards


def _open_lines(shard: Shard) -> tuple[IO[bytes], IO[bytes]]:
    """The shard's decompressed bytes, and the raw file (whose position is the progress)."""
    raw: IO[bytes] = shard.path.open("rb")
    if shard.gzip:
        return cast("IO[bytes]", gzip.GzipFile(fileobj=raw, mode="rb")), raw
    return raw, raw


def iter_chunks(shard: Shard, batch_size: int) -> Iterator[Chunk]:
    """The shard's records in chunks; unreadable input ends the shard with an InputError."""
    if shard.kind == "jsonl":
        yield from _jsonl_chunks(shard, batch_size)
    elif shard.kind == "csv":
        yield from _csv_chunks(shard, batch_size)
    else:
        yield from _parquet_chunks(shard, batch_size)


def _jsonl_chunks(shard: Shard, batch_size: int) -> Iterator[Chunk]:
    stream, raw = _open_lines(shard)
    try:
        yield from line_chunks(stream, shard.index, shard.name, batch_size, raw.tell, shard.path)
    finally:
        stream.close()
        raw.close()


def line_chunks(
    stream: IO[bytes],
    shard: int,
    name: str,
    batch_size: int,
    position: Callable[[], int],
    where: object,
) -> Iterator[Chunk]:
    """JSONL lines (bytes, split at newline characters only) in chunks, numbered from 1."""
    index, first, items = 0, 1, []
    try:
        for line in stream:
            items.append(line)
            if len(items) == batch_size:
                yield Chunk(shard, index, name, True, first, items, position())
                index, first, items = index + 1, first + len(items), []
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        msg = f"{where}: cannot read past record {first + len(items) - 1} ({exc})"
        raise InputError(msg, path="INPUT") from None
    if items:
        yield Chunk(shard, index, name, True, first, items, position())


def _csv_chunks(shard: Shard, batch_size: int) -> Iterator[Chunk]:
    stream, raw = _open_lines(shard)
    try:
        yield from csv_chunks(stream, shard.index, shard.name, batch_size, raw.tell, shard.path)
    finally:
        stream.close()
        raw.close()


def csv_chunks(
    stream: IO[bytes],
    shard: int,
    name: str,
    batch_size: int,
    position: Callable[[], int],
    where: object,
) -> Iterator[Chunk]:
    """CSV records (dicts of text, by the header) in chunks, numbered from 1."""
    csv.field_size_limit(_CSV_FIELD_LIMIT)
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace", newline="")
    reader = csv.DictReader(text)
    index, first, items = 0, 1, []
    try:
        for row in reader:
            items.append(dict(row))
            if len(items) == batch_size:
                yield Chunk(shard, index, name, False, first, items, position())
                index, first, items = index + 1, first + len(items), []
    except (csv.Error, OSError, EOFError) as exc:
        msg = f"{where}: cannot read CSV past record {first + len(items) - 1} ({exc})"
        raise InputError(msg, path="INPUT") from None
    finally:
        text.detach()
    if items:
        yield Chunk(shard, index, name, False, first, items, position())


def _parquet_file(shard: Shard) -> Any:
    try:
        import pyarrow.parquet as pq  # noqa: PLC0415 - the batch extra
    except ImportError:
        msg = missing_extra_message("reading Parquet", "batch")
        raise InputError(msg, path="INPUT") from None
    try:
        return pq.ParquetFile(shard.path)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ...
        raise InputError(f"{shard.path}: not a readable Parquet file ({exc})") from None


def _parquet_chunks(shard: Shard, batch_size: int) -> Iterator[Chunk]:
    parquet = _parquet_file(shard)
    total = max(parquet.metadata.num_rows, 1)
    index, first = 0, 1
    try:
        for batch in parquet.iter_batches(batch_size=batch_size):
            items = batch.to_pylist()
            done = min(shard.size, shard.size * (first - 1 + len(items)) // total)
            yield Chunk(shard.index, index, shard.name, False, first, items, done)
            index, first = index + 1, first + len(items)
    except Exception as exc:
        msg = f"{shard.path}: cannot read Parquet past record {first - 1} ({exc})"
        raise InputError(msg, path="INPUT") from None
    finally:
        parquet.close()


def first_record(shard: Shard) -> Any:
    """The first readable record of a shard (None when it has none), to check the fields."""
    if shard.kind == "parquet":
        parquet = _parquet_file(shard)
        try:
            return dict.fromkeys(parquet.schema_arrow.names)
        finally:
            parquet.close()
    for chunk in iter_chunks(shard, 64):
        for item in chunk.items:
            if not chunk.lines:
                return item
            if not item.strip():
                continue
            try:
                return parse_line(item)
            except RecordError:
                continue
        if chunk.index >= 16:
            break
    return None


def check_input(shards: list[Shard], fields: Fields) -> None:
    """One clear error when the first shard's first record lacks the answer or context field."""
    for shard in shards:
        record = first_record(shard)
        if record is not None:
            check_fields(record, fields, str(shard.path))
            return


def signature(shards: list[Shard]) -> list[list[Any]]:
    """What identifies the input, for resuming: names, sizes and modification times."""
    return [[s.name, s.size, s.mtime_ns] for s in shards]


def total_bytes(shards: list[Shard]) -> int:
    """The input's size on disk."""
    return sum(s.size for s in shards) or 1


__all__ = [
    "Chunk",
    "Kind",
    "Range",
    "Shard",
    "check_input",
    "find_shards",
    "first_record",
    "iter_chunks",
    "iter_ranges",
    "iter_tasks",
    "range_bytes",
    "read_range",
    "signature",
    "total_bytes",
]
