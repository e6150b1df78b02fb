"""``citeverify index build`` and ``index stats``: the local search index of reference metadata."""

import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from citeverify_core.errors import CiteVerifyError

if TYPE_CHECKING:
    pass
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
        typer.Argument(help="OpenAlex or Crossref works JSONL files (.jsonl, .jsonl.gz)."),
    ],
    index: Annotated[
        Path, typer.Option(help="The index file (created when missing).")
    ] = DEFAULT_INDEX,
) -> None:
    """Add the works of bibliographic dumps to the local index (streaming, bounded memory).

    A new index is built in a temporary file next to it and moved into place only when every
    dump was read. An existing index gets each dump in one transaction: a broken dump adds
    nothing, and the dumps before it stay added.
    """
    from citeverify_core.references import LocalIndex  # noqa: PLC0415 - only these commands need it

    # The skipped lines are printed below; the index's own warning would repeat them.
    logging.getLogger("citeverify_core.references.index").setLevel(logging.ERROR)
    if not index.parent.is_dir():
        _fail(f"cannot create the index {index}: no such folder {index.parent}")
    if index.is_dir():
        _fail(f"cannot use {index} as the index: it is a folder")
    fresh = not index.exists()
    # A failed build must not leave an empty index behind (a later `refs` would call every
    # reference unverified): a new index appears only complete.
    target = index.with_name(f".{index.name}.building-{os.getpid()}") if fresh else index
    local = LocalIndex(target)
    current = dumps[0]
    try:
        for dump in dumps:
            current = dump
            count = local.build(dump, progress=lambda n: typer.echo(f"  {n:,} lines", err=True))
            report = local.last_build
            skipped = f", {report.skipped:,} lines skipped" if report and report.skipped else ""
            typer.echo(f"{dump}: {count:,} records{skipped}")
            for example in report.examples if report and report.skipped else []:
                typer.echo(f"  skipped {example}", err=True)
        stats = local.stats()
        local.close()
        if fresh:
            os.replace(target, index)
    except BaseException as exc:
        local.close()
        if fresh:
            for leftover in (target, target.with_name(target.name + "-journal")):
                leftover.unlink(missing_ok=True)
        if isinstance(exc, CiteVerifyError):
            kept = (
                "no index was created"
                if fresh
                else f"nothing of {current} was added; {index} keeps the dumps read before it"
            )
            _fail(f"{exc} ({kept})")
        raise
    typer.echo(f"{index}: {stats['records']:,} records ({stats['with_doi']:,} with a DOI)")


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
