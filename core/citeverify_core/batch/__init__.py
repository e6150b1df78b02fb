"""Batch verification of logged RAG answers: ``citeverify batch`` and its engines.

- :func:`run_batch`: INPUT (JSONL, .jsonl.gz, CSV, Parquet; a file or a folder of shards) to
  OUTPUT (JSONL or Parquet), one row per record in input order, on a local process pool
  (resumable) or on a Ray cluster (``engine="ray"``).
- :func:`verify_records` / :func:`verify_table`: the same rows for records in memory (a notebook).

Lookups are off unless asked for (``lookups=True``); then every worker shares one SQLite lookup
cache. See docs/scale.md.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from citeverify_core.batch.config import (
    CITATION_STATUSES,
    COLUMNS,
    Fields,
    WorkerConfig,
    resolve_batch_policy,
)
from citeverify_core.batch.local import (
    BatchInterruptedError,
    BatchSummary,
    Progress,
    iter_verified,
    run_local,
)
from citeverify_core.batch.output import errors_path, output_format
from citeverify_core.batch.read import check_input, find_shards, total_bytes
from citeverify_core.errors import InputError

if TYPE_CHECKING:
    from citeverify_core.engine.verifier import PolicyLike

__all__ = [
    "CITATION_STATUSES",
    "COLUMNS",
    "BatchInterruptedError",
    "BatchSummary",
    "Fields",
    "default_workers",
    "errors_path",
    "run_batch",
    "verify_records",
    "verify_table",
]

DEFAULT_BATCH_SIZE = 500


def default_workers() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _config(
    policy: PolicyLike,
    fields: Fields,
    details: bool,
    lookups: bool,
    lookup_cache: str | os.PathLike[str] | None,
) -> WorkerConfig:
    cache = None if lookup_cache is None else str(lookup_cache)
    _, data = resolve_batch_policy(policy, lookups=lookups, lookup_cache=cache)
    return WorkerConfig(policy=data, fields=fields, details=details)


def run_batch(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    policy: PolicyLike = None,
    *,
    fields: Fields | None = None,
    engine: Literal["local", "ray"] = "local",
    workers: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    details: bool = False,
    lookups: bool = False,
    lookup_cache: str | os.PathLike[str] | None = None,
    report: str | os.PathLike[str] | None = None,
    progress: bool = False,
    note: Callable[[str], None] | None = None,
) -> BatchSummary:
    """Verify every record of ``source`` into ``output`` (and its ``.errors.jsonl``).

    Args:
        source: A .jsonl / .jsonl.gz / .csv / .parquet file, or a folder of them (shards).
        output: ``.jsonl`` or ``.parquet``. Its parts are kept in ``OUTPUT.parts`` until the
            end, so that a re-run after an interruption skips what is done (the local engine
            skips parts of about ``batch_size`` records, the Ray engine whole input files).
        policy: A PolicyConfig, the policy mapping, or a policy pack path.
        fields: The answer, context and id fields of a record.
        engine: ``local`` (a process pool) or ``ray`` (Ray Data on the cluster ``ray.init()``
            finds).
        workers: Processes (local) or Ray actors; default: the local cores.
        batch_size: Records per chunk (a part of OUTPUT, a Ray batch).
        details: Add the full details of each result as JSON (column ``details``).
        lookups: Look DOIs, PubMed IDs and URLs up (off by default in batch).
        lookup_cache: The SQLite lookup cache shared by the workers (with ``lookups``; default
            ``OUTPUT.lookups.sqlite`` unless the policy sets ``cache_path``).
        report: Write an HTML report there.
        progress: Show a progress bar on stderr.
        note: Where to say what happens (resuming, starting afresh); default: nowhere.

    Raises:
        InputError: the input is missing or unreadable, a field is missing, the output format
            is unknown.
        PolicyError: the policy is not valid.
        BatchInterruptedError: a worker died; the parts written are kept for a re-run.
    """
    fields = fields or Fields()
    out = Path(output)
    output_format(out)  # fail early on an unknown extension
    if batch_size < 1:
        raise InputError("batch_size must be at least 1", path="--batch-size")
    if out.is_dir():
        raise InputError(f"{out} is a folder; give OUTPUT as a .jsonl or .parquet file")
    if not out.parent.is_dir():
        raise InputError(f"cannot write {out}: no such folder {out.parent}", path="--output")
    if lookups and lookup_cache is None:
        lookup_cache = out.with_name(out.name + ".lookups.sqlite")
    config = _config(policy, fields, details, lookups, lookup_cache)
    workers = workers or default_workers()
    say = note or (lambda _message: None)
    options = {
        "policy": config.policy,
        "fields": [fields.answer, fields.context, fields.id],
        "details": details,
        "batch_size": batch_size,
        "format": output_format(out),
    }
    if engine == "ray":
        from citeverify_core.batch.ray_engine import run_ray  # noqa: PLC0415 - start-up time

        summary = run_ray(
            source,
            config,
            out,
            workers=workers,
            batch_size=batch_size,
            progress=progress,
            note=say,
            options=options,
        )
    elif engine == "local":
        shards = find_shards(source)
        check_input(shards, fields)
        summary = run_local(
            shards,
            config,
            out,
            workers=workers,
            batch_size=batch_size,
            progress=Progress(total_bytes(shards), enabled=progress),
            note=say,
            options=options,
        )
    else:
        raise InputError(f"unknown engine {engine!r} (local or ray)", path="--engine")
    if report is not None:
        from citeverify_core.batch.report import write_report  # noqa: PLC0415 - start-up time

        write_report(Path(report), summary, source=str(source))
    return summary


def verify_records(
    records: Iterable[Any],
    policy: PolicyLike = None,
    *,
    workers: int = 1,
    fields: Fields | None = None,
    details: bool = False,
    lookups: bool = False,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> Iterator[dict[str, Any]]:
    """Verify records (mappings with the answer and context fields), yielding rows in order.

    Each row has the OUTPUT columns plus ``error``: None, or why the record was not verified
    (then the other columns are None). A record without an id gets its position (from 1).
    With ``workers`` > 1 the records are verified by a process pool, ``batch_size`` at a time.

    Example:
        >>> rows = verify_records([{"id": 1, "answer": "It opens at nine.",
        ...                         "context_documents": ["It opens at nine."]}])
        >>> [(r["id"], r["verdict"], r["groundedness"]) for r in rows]
        [('1', 'allow', 1.0)]
    """
    config = _config(policy, fields or Fields(), details, lookups, None)
    return iter_verified(records, config, workers=workers, batch_size=batch_size)


def verify_table(
    table: Any,
    policy: PolicyLike = None,
    *,
    workers: int = 1,
    fields: Fields | None = None,
    details: bool = False,
    lookups: bool = False,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> Any:
    """:func:`verify_records` over a ``pyarrow.Table`` (or anything with ``to_batches``).

    Returns a ``pyarrow.Table`` with the OUTPUT columns and ``error``, one row per input row.
    """
    import pyarrow as pa  # noqa: PLC0415 - the batch extra

    from citeverify_core.batch.output import parquet_schema  # noqa: PLC0415 - start-up time

    def records() -> Iterator[dict[str, Any]]:
        for batch in table.to_batches(max_chunksize=batch_size):
            yield from batch.to_pylist()

    schema = parquet_schema(details).append(pa.field("error", pa.string()))
    rows = verify_records(
        records(),
        policy,
        workers=workers,
        fields=fields,
        details=details,
        lookups=lookups,
        batch_size=batch_size,
    )
    batches = []
    pending: list[dict[str, Any]] = []
    for row in rows:
        pending.append(row)
        if len(pending) >= 8192:
            batches.append(pa.RecordBatch.from_pylist(pending, schema=schema))
            pending = []
    if pending or not batches:
        batches.append(pa.RecordBatch.from_pylist(pending, schema=schema))
    return pa.Table.from_batches(batches, schema=schema)
