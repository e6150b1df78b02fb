"""``citeverify index build`` and ``index stats``: the local search index of reference metadata."""

import json
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from citeverify_core.references.index_build import IngestProgress
from citeverify_core.cli.shared import _fail, _one_line_errors

__all__ = ["index_app"]

index_app = typer.Typer(
    help="Build and inspect the local bibliographic index.", no_args_is_help=True
)

DEFAULT_INDEX = Path("citeverify-index.sqlite")
#: ``--source``, as ``refs`` and ``serve`` take it.
SourceOption = Annotated[
    list[str] | None,
    typer.Option(
        "--source",
        help="A source to ask: local, openalex, crossref, pubmed, semanticscholar. "
        "Repeat for several. Default: local.",
    ),
]


@index_app.command("build")
@_one_line_errors
def index_build(
    dumps: Annotated[
        list[Path],
        typer.Argument(
            help="What to read: an OpenAlex works snapshot folder (JSON Lines or Parquet, with "
            "its manifest), Crossref's public data file (its folder of .json.gz files, or the "
            ".tar), OpenAlex or Crossref JSONL dumps (.jsonl, .jsonl.gz), the Retraction Watch "
            "CSV."
        ),
    ],
    index: Annotated[
        Path, typer.Option(help="The index file (created when missing).")
    ] = DEFAULT_INDEX,
    workers: Annotated[
        int | None,
        typer.Option(help="Processes that parse files (default: every core).", min=1),
    ] = None,
) -> None:
    """Build the local index from snapshots and dumps: in parallel, resumable, one file at a time.

    Each file is written in one transaction and recorded as done: a build that stops (a crash,
    Ctrl-C) goes on where it was when the same command is run again. A broken file adds nothing
    and is named; the others are read. A new index is built in ".NAME.building" next to it and
    moved into place only when every file was read.
    """
    _ingest(dumps, index, workers, update=False)


@index_app.command("update")
@_one_line_errors
def index_update(
    snapshot: Annotated[
        list[Path],
        typer.Argument(help="The OpenAlex works snapshot folder, synced since the last build."),
    ],
    index: Annotated[Path, typer.Option(help="The index file.")] = DEFAULT_INDEX,
    workers: Annotated[
        int | None,
        typer.Option(help="Processes that parse files (default: every core).", min=1),
    ] = None,
) -> None:
    """Apply the snapshot's partitions newer than the index's last one (changed and merged works).

    Readers of the index (a running service, a batch) keep answering while it is updated.
    """
    if not index.is_file():
        _fail(_NO_INDEX.format(index=index))
    _ingest(snapshot, index, workers, update=True)


def _ingest(paths: list[Path], index: Path, workers: int | None, *, update: bool) -> None:
    from citeverify_core.references import LocalIndex  # noqa: PLC0415 - only these commands need it
    from citeverify_core.references.index_build import ingest  # noqa: PLC0415
    from citeverify_core.references.snapshots import open_snapshot  # noqa: PLC0415

    # The skipped lines are printed below; the index's own warning would repeat them.
    logging.getLogger("citeverify_core.references.index").setLevel(logging.ERROR)
    if not index.parent.is_dir():
        _fail(f"cannot create the index {index}: no such folder {index.parent}")
    if index.is_dir():
        _fail(f"cannot use {index} as the index: it is a folder")
    snapshot = open_snapshot(paths)
    for problem in snapshot.problems:
        typer.echo(f"warning: {problem}", err=True)
    fresh = not index.exists()
    # A new index appears only complete (a later `refs` would call every reference unverified
    # in a half-built one); a stopped build of a new index is resumed from this file.
    target = index.with_name(f".{index.name}.building") if fresh else index
    if fresh and target.exists():
        typer.echo(f"resuming the build in {target}", err=True)
    local = LocalIndex(target)
    last = [0.0]

    def show(progress: "IngestProgress") -> None:
        now = time.monotonic()
        if now - last[0] >= 2.0 or progress.files_done == progress.files_total:
            last[0] = now
            typer.echo(f"  {progress.line()}", err=True)

    try:
        report = ingest(
            local, snapshot, workers=workers or os.cpu_count() or 1, update=update, progress=show
        )
        stats = local.stats()
    except KeyboardInterrupt:
        local.close()
        typer.echo(
            f"stopped: the files written are kept in {target}; run the same command again to go on",
            err=True,
        )
        raise typer.Exit(130) from None
    except BaseException:
        local.close()
        raise
    local.close()
    skipped = f", {report.skipped:,} records skipped" if report.skipped else ""
    typer.echo(
        f"{report.records:,} works written, {report.removed:,} removed (merged), "
        f"{report.notices:,} notices, from {report.files_read:,} files"
        + (f" ({report.files_already_done:,} done before)" if report.files_already_done else "")
        + skipped
    )
    for example in report.examples if report.skipped else []:
        typer.echo(f"  skipped {example}", err=True)
    if report.broken:
        # One line (what scripts and the hostile-input tests expect of an error).
        named = "; ".join(report.broken[:5]) + (
            f"; and {len(report.broken) - 5} more" if len(report.broken) > 5 else ""
        )
        kept = (
            f"no index was created at {index}; the files read are kept in {target}"
            if fresh
            else f"nothing of them was added; {index} keeps everything else"
        )
        _fail(
            f"{len(report.broken)} file(s) could not be read: {named} ({kept}); fix or download "
            "them again and run the same command"
        )
    if fresh:
        os.replace(target, index)
    fresh_note = f", data up to {stats['openalex_updated']}" if stats["openalex_updated"] else ""
    typer.echo(
        f"{index}: {stats['records']:,} records ({stats['with_doi']:,} with a DOI){fresh_note}"
    )


_NO_INDEX = "no index at {index}; build one with: citeverify index build DUMP.jsonl"


@index_app.command("stats")
@_one_line_errors
def index_stats(
    index: Annotated[Path, typer.Option(help="The index file.")] = DEFAULT_INDEX,
) -> None:
    """Show how many records the local index holds."""
    from citeverify_core.references import LocalIndex  # noqa: PLC0415 - start-up time

    if not index.is_file():
        _fail(_NO_INDEX.format(index=index))
    local = LocalIndex(index)
    try:
        stats = local.stats()
    finally:
        local.close()
    typer.echo(json.dumps(stats, indent=2))
