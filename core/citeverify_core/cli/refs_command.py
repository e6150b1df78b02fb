"""``citeverify refs``: verify a reference list, here or on a reference-verification server."""

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from citeverify_core.cli.fast import (
    EXIT_BLOCKED,
)
from citeverify_core.errors import CiteVerifyError

if TYPE_CHECKING:
    pass
from citeverify_core.cli.index_commands import _NO_INDEX, DEFAULT_INDEX, SourceOption
from citeverify_core.cli.shared import _fail, _one_line_errors, _read_text

__all__ = ["refs"]


def _references(file: Path, text: str) -> tuple[list[tuple[int, str]], list[tuple[int, str, str]]]:
    """The references of a file with their numbers, and the lines skipped (number, reason, text).

    A .bib file is BibTeX; any other file has one reference a line (see split_reference_list).
    """
    from citeverify_core.references.parse import split_reference_list  # noqa: PLC0415 - start-up

    return split_reference_list(text, bibtex=file.suffix.lower() == ".bib")


@_one_line_errors
def refs(
    file: Annotated[
        Path | None,
        typer.Argument(help="References, one per line (or a .bib file); - for stdin."),
    ] = None,
    index: Annotated[Path, typer.Option(help="The local index file.")] = DEFAULT_INDEX,
    batch_input: Annotated[
        Path | None,
        typer.Option(
            "--batch",
            help="Many references (a text file, one a line, or JSONL with 'reference'; .gz too) "
            "against the local index, to -o OUTPUT (.jsonl or .parquet), in a process pool.",
        ),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="With --batch: the rows to write.")
    ] = None,
    workers: Annotated[
        int | None, typer.Option(min=1, help="With --batch: processes (default: the cores).")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the full results as JSON.")
    ] = False,
    source: SourceOption = None,
    server: Annotated[
        str | None,
        typer.Option(
            "--server",
            help="Send the references to a reference service (citeverify serve) at this URL "
            "instead of verifying them here; --index and --source are then not used.",
        ),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            help="The service's API key (default: $CITEVERIFY_API_KEY).",
            show_default=False,
        ),
    ] = None,
    wait: Annotated[
        float,
        typer.Option("--wait", help="With --server: seconds to wait for the results in all."),
    ] = 600.0,
) -> None:
    """Verify reference strings: which are real, which are wrong, which do not exist.

    Lines that are not references (headings, rules, page numbers) are skipped and listed. Exit 0
    when every reference is verified, 1 otherwise, 2 on bad input.
    """
    if batch_input is not None:
        if file is not None or output is None or server is not None or source:
            _fail("use --batch INPUT -o OUTPUT (with --index), without FILE, --server or --source")
        from citeverify_core.batch import default_workers  # noqa: PLC0415 - start-up time
        from citeverify_core.batch.refs import run_refs_batch  # noqa: PLC0415 - start-up time

        done = run_refs_batch(
            batch_input,
            output,
            index,
            workers=workers or default_workers(),
            note=lambda message: typer.echo(f"note: {message}", err=True),  # "resuming: N parts"
        )
        counts = ", ".join(f"{n:,} {status}" for status, n in sorted(done.statuses.items()))
        typer.echo(f"{done.output}: {done.rows:,} references ({counts}) in {done.seconds:.1f} s")
        return
    if file is None:
        _fail("give FILE (references, one per line), or --batch INPUT -o OUTPUT")
    from citeverify_core.references import LocalIndex, ReferenceVerifier  # noqa: PLC0415 - start-up

    text = _read_text(file)
    numbered, skipped = _references(file, text)
    if not numbered:
        why = f" ({len(skipped)} lines skipped as not references)" if skipped else ""
        _fail(f"{file} holds no reference{why}")
    if server is not None and source:
        _fail("--source chooses the sources of local verification; the service uses its own")
    sources = source or ["local"]
    local = None
    if server is not None:
        sources = []  # the service verifies
    if "local" in sources:
        if not index.is_file():
            _fail(_NO_INDEX.format(index=index))
        local = LocalIndex(index)
        if local.stats()["records"] == 0:
            local.close()
            _fail(
                f"the index {index} holds no records, so no reference could be verified; "
                "build it with: citeverify index build DUMP.jsonl"
            )
    references = [reference for _, reference in numbered]
    # Built before the progress bar: an unknown --source is one error line, not a bar and a line.
    verifier = ReferenceVerifier(local, sources=sources) if server is None else None
    with typer.progressbar(length=len(references), label="verifying", file=sys.stderr) as bar:
        if verifier is None:
            results = _server_results(server or "", api_key, references, wait, bar.update)
        else:
            results = verifier.verify_references(
                references, progress=lambda done, total: bar.update(1)
            )
    if local is not None:
        local.close()
    if as_json:
        typer.echo(
            json.dumps([r.model_dump(mode="json") for r in results], indent=2, ensure_ascii=False)
        )
        for number, reason, line in skipped:
            typer.echo(f"skipped line {number} ({reason}): {line[:90]}", err=True)
    else:
        rows: list[tuple[int, str]] = []
        for (number, reference), result in zip(numbered, results, strict=True):
            rows.append((number, _result_lines(number, reference, result)))
        for number, reason, line in skipped:
            rows.append((number, f"{number:>3}. {'SKIPPED':<20} {line[:70]}  ({reason})"))
        for _, block in sorted(rows, key=lambda row: row[0]):
            typer.echo(block)
    if any(r.status != "verified" for r in results):
        raise typer.Exit(EXIT_BLOCKED)


def _server_results(
    server: str, api_key: str | None, references: list[str], wait: float, step: Callable[[int], Any]
) -> list[Any]:
    """``refs --server``: the service's results, one per reference, in order.

    A job the service failed (or that was cancelled) becomes a ``needs-human`` result whose
    ``error`` says why, so the table and the JSON have a row for every reference.
    """
    import contextlib  # noqa: PLC0415 - start-up time

    from citeverify_core.client import ReferenceClient  # noqa: PLC0415 - start-up time
    from citeverify_core.references import ReferenceResult  # noqa: PLC0415 - start-up time

    seen = 0

    def progress(done: int, _total: int) -> None:
        nonlocal seen
        step(done - seen)
        seen = done

    with ReferenceClient(server, api_key=api_key) as client:
        submissions = []
        try:
            for start in range(0, len(references), 20):
                submissions.append(client.submit(references[start : start + 20]))
        except CiteVerifyError:
            for submission in submissions:  # nothing half-submitted stays queued (and paid)
                with contextlib.suppress(CiteVerifyError):
                    client.cancel(document_id=submission.document_id)
            raise
        ids = [job_id for submission in submissions for job_id in submission.job_ids]
        jobs = client.wait(ids, timeout=wait, progress=progress)
    results: list[Any] = []
    for job in jobs:
        if job.result is not None:
            results.append(job.result)
            continue
        why = job.error or f"the service answered {job.state} without a result"
        results.append(
            ReferenceResult(
                status="needs-human",
                message=f"The service could not verify this reference: {why}",
                reference="Not checked: the service could not verify it.",
                field_results=dict.fromkeys(
                    ("title", "authors", "year", "venue", "identifier"), "UNCONFIRMED"
                ),
                match_set_size=0,
                contained_set_size=0,
                verificationGraph=None,
                error=f"the service could not verify it: {why}",
            )
        )
    return results


def _result_lines(number: int, reference: str, result: Any) -> str:
    """The table rows of one result: status, corrected reference, differing fields, failures."""
    shown = " ".join(reference.split())  # a BibTeX entry on one line
    lines = [f"{number:>3}. {result.status.upper():<20} {shown[:90]}"]
    if result.error:
        lines.append(f"     {result.error}")
    elif result.status != "unverified":
        lines.append(f"     -> {result.reference}")
    wrong = [
        f
        for f, label in result.field_results.items()
        if label in {"CONTRADICTION", "MATCH_WITH_TYPO", "CONTAINS"}
    ]
    if wrong:
        lines.append(f"     fields that differ: {', '.join(wrong)}")
    failed = ((result.verificationGraph or {}).get("metadata") or {}).get("sourcesFailed")
    if failed:
        lines.append(f"     could not check: {'; '.join(map(str, failed))}")
    return "\n".join(lines)


# --- the reference service (citeverify serve, citeverify keys) ------------------------------------
