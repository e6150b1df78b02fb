"""``--engine ray``: the batch as a Ray Data pipeline, on whatever cluster ``ray.init()`` finds.

read (one task per file, streaming blocks of ``batch_size`` records) -> ``map_batches`` with
:class:`RayVerifier`, a callable class whose actors build the verifier once (``concurrency`` =
``workers``) -> the driver, which takes the rows in input order (``preserve_order``) and writes
OUTPUT with the same :class:`~citeverify_core.batch.output.Assembler` as the local engine: the same
bytes. Scheduling, retries of failed tasks and actors, object storage and spilling are Ray's.

Resumable by input file: the driver writes each shard's entries, as they arrive in order, to a
part file in ``OUTPUT.parts/`` (renamed when the shard is complete). A re-run with the same
OUTPUT, input and options reads only the shards without a part, then assembles every part, in
order. A killed actor is Ray's to restart (its task is retried); a dead driver loses the shards
in progress, not those completed.

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
import os
import shutil
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, cast

from citeverify_core.batch.config import (
    WorkerConfig,
    build_verifier,
    dumps_entry,
    verify_line,
    verify_record,
)
from citeverify_core.batch.local import BatchSummary, _prepare_parts, parts_dir
from citeverify_core.batch.output import Assembler, read_entries
from citeverify_core.batch.ray_session import connected
from citeverify_core.batch.read import (
    Shard,
    check_input,
    csv_chunks,
    find_shards,
    line_chunks,
    signature,
)
from citeverify_core.errors import InputError, missing_extra_message

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
    from ray.data.datasource import FileBasedDatasource  # noqa: PLC0415 - the ray extra

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
            import pyarrow as pa  # noqa: PLC0415 - the batch extra

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
        """Verify one Arrow batch of records into a batch of output rows."""
        import pyarrow as pa  # noqa: PLC0415 - the batch extra

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


def _part(shard: Shard) -> str:
    return f"{shard.index:06d}.jsonl"


class _ShardParts:
    """The driver's side: entries in input order -> one part file per shard."""

    def __init__(self, folder: Path, shards: list[Shard]) -> None:
        self.folder = folder
        self.index = {s.name: s for s in shards}
        self.current: Shard | None = None
        self.handle: IO[str] | None = None
        self.count = 0
        self.done: set[str] = set()

    def add(self, text: str, name: str, number: int | None) -> None:
        shard = self.index[name]
        if shard is not self.current:
            self.close()
            if name in self.done:  # preserve_order keeps a file's rows together
                msg = f"Ray returned the rows of {name} out of order (is preserve_order off?)"
                raise InputError(msg)
            self.done.add(name)
            self.current, self.count = shard, 0
            self.handle = (self.folder / f"{_part(shard)}.tmp-{os.getpid()}").open(
                "w", encoding="utf-8"
            )
        self.count += 1
        if number is None:  # read_parquet: numbered here, in order
            entry = json.loads(text)
            entry["_n"] = self.count
            text = dumps_entry(entry)
        assert self.handle is not None
        self.handle.write(text + "\n")

    def close(self) -> None:
        """The current shard is complete: its part moves into place."""
        if self.handle is not None and self.current is not None:
            self.handle.close()
            tmp = self.folder / f"{_part(self.current)}.tmp-{os.getpid()}"
            os.replace(tmp, self.folder / _part(self.current))
        self.handle = None


def run_ray(
    source: str | os.PathLike[str],
    config: WorkerConfig,
    output: Path,
    *,
    workers: int,
    batch_size: int,
    progress: bool,
    note: Callable[[str], None] | None = None,
    options: dict[str, Any] | None = None,
) -> BatchSummary:
    """Run the batch on Ray (the cluster at ``RAY_ADDRESS``, else a local instance)."""
    try:
        import ray  # noqa: PLC0415 - the ray extra
        import ray.data  # noqa: PLC0415 - the ray extra
    except ImportError:
        msg = missing_extra_message("--engine ray", "ray")
        raise InputError(msg, path="--engine") from None
    started = time.monotonic()
    say = note or (lambda _message: None)
    shards = find_shards(source)
    check_input(shards, config.fields)
    kinds = {s.kind for s in shards}
    if len(kinds) > 1:
        msg = f"--engine ray reads one format per run; {source} mixes {', '.join(sorted(kinds))}"
        raise InputError(msg, path="INPUT")
    kind = kinds.pop()
    folder = parts_dir(output)
    manifest = {"version": 1, "engine": "ray", "input": signature(shards), "options": options}
    kept = _prepare_parts(folder, manifest, say)
    if kept:
        say(f"resuming: {kept:,} input files of {output} were verified before")
    todo = [s for s in shards if not (folder / _part(s)).exists()]
    if todo:
        with connected(ray):
            _verify_on_ray(ray, todo, kind, config, folder, workers, batch_size, progress)

    assembler = Assembler(output, details=config.details)
    try:
        for shard in shards:
            for entry in read_entries(folder / _part(shard)):
                assembler.add(entry, shard.name, int(entry["_n"]))
        assembler.finish()
    except BaseException:
        assembler.abort()
        raise
    shutil.rmtree(folder, ignore_errors=True)
    return BatchSummary.of(output, assembler.stats, started, len(shards) - len(todo))


def _verify_on_ray(
    ray: Any,
    shards: list[Shard],
    kind: str,
    config: WorkerConfig,
    folder: Path,
    workers: int,
    batch_size: int,
    progress: bool,
) -> None:
    """Each shard's entries, in order, into its part file (on the instance Ray is connected to)."""
    paths = [str(s.path.resolve()) for s in shards]
    names = {str(s.path.resolve()): s.name for s in shards}
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
    parts = _ShardParts(folder, shards)
    for batch in verified.iter_batches(batch_format="pyarrow", batch_size=None):
        data = cast("Any", batch).to_pydict()
        for text, shard, number in zip(data[_ENTRY], data[_SHARD], data[_NUMBER], strict=True):
            parts.add(text, shard, number)
    parts.close()
    for shard in shards:  # a shard without a single line has no entries: an empty part
        (folder / _part(shard)).touch()
