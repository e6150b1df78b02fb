"""``citeverify batch``: verify a file of answers locally or on Ray, with a report."""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    pass
from citeverify_core.cli.shared import _fail, _one_line_errors

__all__ = ["batch"]


@_one_line_errors
def batch(
    source: Annotated[
        Path,
        typer.Argument(
            metavar="INPUT", help="JSONL (.jsonl, .jsonl.gz), CSV or Parquet; or a folder of them."
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Rows to write: .jsonl or .parquet.")
    ],
    policy: Annotated[
        Path | None, typer.Option("--policy", "-p", help="Policy pack YAML file.")
    ] = None,
    answer_field: Annotated[str, typer.Option(help="The record's answer.")] = "answer",
    context_field: Annotated[
        str, typer.Option(help="The record's context documents.")
    ] = "context_documents",
    id_field: Annotated[str, typer.Option(help="The record's id.")] = "id",
    engine: Annotated[
        str, typer.Option(help="local (a process pool) or ray (a Ray cluster, the ray extra).")
    ] = "local",
    workers: Annotated[
        int | None,
        typer.Option(min=1, help="Worker processes (or Ray actors); default: the local cores."),
    ] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Records per part.")] = 500,
    details: Annotated[bool, typer.Option(help="Add each result's details as JSON.")] = False,
    lookups: Annotated[
        bool, typer.Option(help="Look DOIs, PubMed IDs and URLs up (off by default in batch).")
    ] = False,
    lookup_cache: Annotated[
        Path | None,
        typer.Option(
            help="SQLite lookup cache shared by the workers (default OUTPUT.lookups.sqlite)."
        ),
    ] = None,
    report: Annotated[Path | None, typer.Option(help="Write an HTML report there.")] = None,
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
) -> None:
    """Verify many logged answers: one row per record, in input order (docs/scale.md).

    Unreadable records go to OUTPUT.errors.jsonl. An interrupted run resumes where it stopped
    when run again with the same OUTPUT.
    """
    from citeverify_core.batch import Fields, run_batch  # noqa: PLC0415 - start-up time

    if engine not in ("local", "ray"):
        _fail(f"unknown engine {engine!r}: use local or ray")
    summary = run_batch(
        source,
        output,
        policy,
        fields=Fields(answer=answer_field, context=context_field, id=id_field),
        engine="ray" if engine == "ray" else "local",
        workers=workers,
        batch_size=batch_size,
        details=details,
        lookups=lookups,
        lookup_cache=lookup_cache,
        report=report,
        progress=not quiet and sys.stderr.isatty(),
        note=lambda message: typer.echo(f"note: {message}", err=True),
    )
    typer.echo(
        f"{summary.output}: {summary.rows:,} rows, {summary.errors:,} errors "
        f"({summary.errors_file.name}) in {summary.seconds:.1f} s "
        f"({summary.records_per_second:,.0f} records/s)"
    )
