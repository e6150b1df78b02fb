"""``--engine ray``: the batch as a Ray Data pipeline, on whatever cluster ``ray.init()`` finds.

read (one task per file, streaming blocks of ``batch_size`` records) -> ``map_batches`` with
:class:`RayVerifier`, a callable class whose actors build the verifier once (``concurrency`` =
``workers``) -> the driver, which takes the rows in input order (``preserve_order``) and writes
OUTPUT with the same :class:`~citeverify.batch._output.Assembler` as the local engine: the same
bytes. Scheduling, retries of failed tasks and actors, object storage and spilling are Ray's.

Parquet is read with ``ray.data.read_parquet``. JSONL and CSV are read by a small
``FileBasedDatasource`` (Ray's own file listing, compression and filesystems; our line and CSV
splitting): ``read_json`` infers one Arrow schema for a whole file (documents given as strings in
one record and as objects in another do not fit one) and fails the file on one bad line, and
``read_text`` splits at every Unicode line boundary, which a JSON string may contain.
"""

from __future__ import annotations

import inspect
import io
import json
import logging
import os
import time
import warnings
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

from citeverify._errors import InputError
from citeverify.batch._core import (
    WorkerConfig,
    build_verifier,
    dumps_entry,
    verify_line,
    verify_record,
)
from citeverify.batch._local import BatchSummary
from citeverify.batch._output import Assembler, errors_path
from citeverify.batch._read import check_input, csv_chunks, find_shards, line_chunks

#: Reading is light next to verifying: the read tasks take no CPU of their own, so that
#: ``workers`` actors of one CPU each can use every core without starving the reads (with them
#: at one CPU, two actors on two cores leave the reads unscheduled: a deadlock).
_READ = {"num_cpus": 0}


def _read_args(read: Any) -> dict[str, Any]:
    # Newer Ray takes num_cpus= (ray_remote_args is deprecated); older only ray_remote_args.
    if "num_cpus" in inspect.signature(read).parameters:
        return dict(_READ)
    return {"ray_remote_args": dict(_READ)}


_ENTRY, _SHARD, _NUMBER, _ITEM, _LINE = "entry", "shard", "n", "item", "is_line"


def _datasource_class() -> Any:
    from ray.data.datasource import FileBasedDatasource  # noqa: PLC0415

    class RecordsDatasource(FileBasedDatasource):
        """JSONL lines (bytes) or CSV records (as JSON), numbered, in blocks."""

        def __init__(
            self, paths: list[str], *, kind: str, names: dict[str, str], batch_size: int
        ) -> None:
            super().__init__(paths)
            self.kind = kind
            self.names = names
            self.batch_size = batch_size

        def _read_stream(self, f: Any, path: str) -> Iterator[Any]:
            import pyarrow as pa  # noqa: PLC0415

            name = shard_name(path, self.names)
            stream = io.BufferedReader(_Raw(f), buffer_size=1 << 20)
            split = line_chunks if self.kind == "jsonl" else csv_chunks
            for chunk in split(stream, 0, name, self.batch_size, lambda: 0, path):
                items = (
                    chunk.items
                    if chunk.lines
                    else [dumps_entry(r).encode("utf-8") for r in chunk.items]
                )
                count = len(items)
                yield pa.table(
                    {
                        _ITEM: pa.array(items, pa.binary()),
                        _LINE: pa.array([chunk.lines] * count, pa.bool_()),
                        _SHARD: pa.array([name] * count, pa.string()),
                        _NUMBER: pa.array(range(chunk.first, chunk.first + count), pa.int64()),
                    }
                )

    return RecordsDatasource


class _Raw(io.RawIOBase):
    """A pyarrow input stream as a Python binary file."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def shard_name(path: str, names: dict[str, str]) -> str:
    """The shard's name as the local engine gives it (relative to INPUT)."""
    return names.get(os.path.abspath(path)) or names.get(path) or Path(path).name


class RayVerifier:
    """The ``map_batches`` callable: one verifier per actor, built once."""

    def __init__(self, config: WorkerConfig, names: dict[str, str]) -> None:
        self.verifier = build_verifier(config)
        self.config = config
        self.names = names

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa  # noqa: PLC0415

        config = self.config
        columns = batch.column_names
        entries: list[str] = []
        shards: list[str] = []
        numbers: list[int | None] = []
        if _ITEM in columns:
            data = batch.to_pydict()
            for item, is_line, shard, number in zip(
                data[_ITEM], data[_LINE], data[_SHARD], data[_NUMBER], strict=True
            ):
                if is_line:
                    entry = verify_line(
                        self.verifier, item, config.fields, details=config.details, number=number
                    )
                else:
                    entry = verify_record(
                        self.verifier,
                        json.loads(item),
                        config.fields,
                        details=config.details,
                        number=number,
                    )
                entries.append(dumps_entry(entry))
                shards.append(shard)
                numbers.append(number)
        else:  # read_parquet: the records' own columns and "path"; numbered by the driver
            for record in batch.to_pylist():
                path = record.pop("path", "")
                entry = verify_record(
                    self.verifier, record, config.fields, details=config.details, number=None
                )
                entries.append(dumps_entry(entry))
                shards.append(shard_name(str(path), self.names))
                numbers.append(None)
        return pa.table(
            {
                _ENTRY: pa.array(entries, pa.string()),
                _SHARD: pa.array(shards, pa.string()),
                _NUMBER: pa.array(numbers, pa.int64()),
            }
        )


def run_ray(
    source: str | os.PathLike[str],
    config: WorkerConfig,
    output: Path,
    *,
    workers: int,
    batch_size: int,
    progress: bool,
) -> BatchSummary:
    """Run the batch on Ray (the cluster at ``RAY_ADDRESS``, else a local instance)."""
    try:
        import ray  # noqa: PLC0415
        import ray.data  # noqa: PLC0415
    except ImportError:
        msg = "--engine ray needs Ray: pip install 'citeverify-core[ray]'"
        raise InputError(msg, path="--engine") from None
    started = time.monotonic()
    shards = find_shards(source)
    check_input(shards, config.fields)
    kinds = {s.kind for s in shards}
    if len(kinds) > 1:
        msg = f"--engine ray reads one format per run; {source} mixes {', '.join(sorted(kinds))}"
        raise InputError(msg, path="INPUT")
    kind = kinds.pop()
    paths = [str(s.path.resolve()) for s in shards]
    names = {str(s.path.resolve()): s.name for s in shards}

    ours = not ray.is_initialized()
    if ours:
        # Started here, the instance is local: its workers use this interpreter as it is (Ray
        # would otherwise rebuild the environment of a `uv run` in every worker).
        os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
        os.environ.setdefault("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")  # no GPU in this job
        ray.init(logging_level=logging.WARNING, log_to_driver=False)
    try:
        with warnings.catch_warnings():  # Ray's own deprecations, on its first DataContext
            warnings.simplefilter("ignore", DeprecationWarning)
            context = ray.data.DataContext.get_current()
        context.execution_options.preserve_order = True  # rows in input order
        context.enable_progress_bars = progress
        if kind == "parquet":
            fields = config.fields
            read = ray.data.read_parquet
            dataset = read(paths, include_paths=True, **_read_args(read))
            wanted = [fields.id, fields.answer, fields.context, "path"]
            present = [c for c in wanted if c in dataset.schema().names]
            dataset = dataset.select_columns(present)
        else:
            datasource = _datasource_class()(paths, kind=kind, names=names, batch_size=batch_size)
            read = ray.data.read_datasource
            dataset = read(datasource, **_read_args(read))
        verified = dataset.map_batches(
            RayVerifier,
            fn_constructor_kwargs={"config": config, "names": names},
            batch_size=batch_size,
            batch_format="pyarrow",
            # From one actor up to ``workers``: a fixed pool of one CPU per actor that takes
            # every CPU starves the listing and reading tasks (a deadlock on a small cluster).
            compute=ray.data.ActorPoolStrategy(min_size=1, max_size=workers),
            num_cpus=1,
        )
        assembler = Assembler(output, details=config.details)
        counters: defaultdict[str, int] = defaultdict(int)
        try:
            for batch in verified.iter_batches(batch_format="pyarrow", batch_size=None):
                data = cast("Any", batch).to_pydict()
                for text, shard, number in zip(
                    data[_ENTRY], data[_SHARD], data[_NUMBER], strict=True
                ):
                    counters[shard] += 1
                    assembler.add(json.loads(text), shard, number or counters[shard])
            assembler.finish()
        except BaseException:
            assembler.abort()
            raise
    finally:
        if ours:
            ray.shutdown()
    stats = assembler.stats
    return BatchSummary(
        output=output,
        errors_file=errors_path(output),
        rows=stats.rows,
        errors=stats.errors,
        seconds=time.monotonic() - started,
        stats=stats,
    )
