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

__all__ = ["DOCUMENT_SUFFIXES", "refs"]


def _references(file: Path, text: str) -> tuple[list[tuple[int, str]], list[tuple[int, str, str]]]:
    """The references of a file with their numbers, and the lines skipped (number, reason, text).

    A .bib file is BibTeX; any other file has one reference a line (see split_reference_list).
    """
    from citeverify_core.references.parse import split_reference_list  # noqa: PLC0415 - start-up

    return split_reference_list(text, bibtex=file.suffix.lower() == ".bib")


#: Suffixes read as whole documents (``extract_document``): the bibliography is found in them.
#: A .txt or .bib file keeps its older meaning: one reference a line, or BibTeX entries.
DOCUMENT_SUFFIXES = frozenset(
    {".pdf", ".docx", ".tex", ".bbl", ".md", ".markdown", ".html", ".htm"}
)


@_one_line_errors
def refs(
    file: Annotated[
        Path | None,
        typer.Argument(
            help="A paper (.pdf, .docx, .tex, .bbl, .md, .html): its reference list is found and "
            "checked; or references one per line (.txt, or a .bib file); - for stdin."
        ),
    ] = None,
    index: Annotated[Path, typer.Option(help="The local index file.")] = DEFAULT_INDEX,
    batch_input: Annotated[
        Path | None,
        typer.Option(
            "--batch",
            help="Many references (a text file, one a line, or JSONL with 'reference'; .gz too), "
            "or a folder of papers (every document in it and below), against the local index, "
            "to -o OUTPUT (.jsonl or .parquet), in a process pool.",
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
    report: Annotated[
        Path | None,
        typer.Option(
            "--report",
            help="Also write the results as one self-contained HTML page to this file.",
        ),
    ] = None,
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
    """Verify references: which are real, which are wrong, which do not exist.

    A paper (PDF, Word, LaTeX, Markdown, HTML): its reference list is found, every reference
    verified and shown with where it is, and the citations in the text are checked against the
    list. A reference list (one a line, or BibTeX): lines that are not references (headings,
    rules, page numbers) are skipped and listed. Exit 0 when every reference is verified, 1
    otherwise, 2 on bad input (a document that cannot be read, or has no reference list).
    """
    if batch_input is not None:
        if file is not None or output is None or server is not None or source:
            _fail("use --batch INPUT -o OUTPUT (with --index), without FILE, --server or --source")
        _batch(batch_input, output, index, workers, report)
        return
    if file is None:
        _fail("give FILE (a paper, or references one per line), or --batch INPUT -o OUTPUT")
    if server is not None and source:
        _fail("--source chooses the sources of local verification; the service uses its own")
    if file.suffix.lower() in DOCUMENT_SUFFIXES:
        _document(
            file, index, source, server, as_json=as_json, report=report, api_key=api_key, wait=wait
        )
        return
    from citeverify_core.references import LocalIndex, ReferenceVerifier  # noqa: PLC0415 - start-up

    text = _read_text(file)
    numbered, skipped = _references(file, text)
    if not numbered:
        why = f" ({len(skipped)} lines skipped as not references)" if skipped else ""
        _fail(f"{file} holds no reference{why}")
    sources = source or ["local"]
    local = None
    if server is not None:
        sources = []  # the service verifies
    if "local" in sources:
        local = _open_index(index, LocalIndex)
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
            typer.echo(f"skipped line {number} ({reason}): {_clean(line)[:90]}", err=True)
    else:
        rows: list[tuple[int, str]] = []
        for (number, reference), result in zip(numbered, results, strict=True):
            rows.append((number, _result_lines(number, reference, result)))
        for number, reason, line in skipped:
            rows.append((number, f"{number:>3}. {'SKIPPED':<20} {_clean(line)[:70]}  ({reason})"))
        for _, block in sorted(rows, key=lambda row: row[0]):
            typer.echo(block)
    if report is not None:
        _write_report(report, _list_report(file, numbered, skipped, results).to_html())
    if any(r.status != "verified" for r in results):
        raise typer.Exit(EXIT_BLOCKED)


def _open_index(index: Path, local_index: Any) -> Any:
    """The local index, opened; one error line (exit 2) when it is missing or empty."""
    if not index.is_file():
        _fail(_NO_INDEX.format(index=index))
    local = local_index(index)
    if local.stats()["records"] == 0:
        local.close()
        _fail(
            f"the index {index} holds no records, so no reference could be verified; "
            "build it with: citeverify index build DUMP.jsonl"
        )
    return local


def _document(
    file: Path,
    index: Path,
    source: list[str] | None,
    server: str | None,
    *,
    as_json: bool,
    report: Path | None,
    api_key: str | None = None,
    wait: float = 600.0,
) -> None:
    """``citeverify refs paper.pdf``: find the paper's references, verify them, report.

    A document that cannot be read (encrypted, no text layer, corrupt, too large) or has no
    reference list raises DocumentError: one line naming the file and the reason, exit 2.
    """
    from citeverify_core.references import LocalIndex, ReferenceVerifier  # noqa: PLC0415 - start-up
    from citeverify_core.references.document import extract_document  # noqa: PLC0415 - start-up
    from citeverify_core.references.document.report import verify_document  # noqa: PLC0415

    if not file.is_file():
        _fail(f"no such file: {file}" if not file.exists() else f"{file} is not a file")
    if server is not None:
        done = _server_document(file, server, api_key, wait)
    else:
        sources = source or ["local"]
        local = _open_index(index, LocalIndex) if "local" in sources else None
        verifier = ReferenceVerifier(local, sources=sources)
        try:
            document = extract_document(file)
            with typer.progressbar(
                length=len(document.references), label="verifying", file=sys.stderr
            ) as bar:
                done = verify_document(
                    document, verifier, progress=lambda _done, _total: bar.update(1)
                )
        finally:
            if local is not None:
                local.close()
    if as_json:
        typer.echo(json.dumps(done.to_dict(), indent=2, ensure_ascii=False))
    else:
        typer.echo(done.to_text())
    if report is not None:
        _write_report(report, done.to_html())
    if not done.all_verified:
        raise typer.Exit(EXIT_BLOCKED)


def _server_document(file: Path, server: str, api_key: str | None, wait: float) -> Any:
    """``refs paper.pdf --server URL``: the service reads the paper and verifies its references.

    The service's answer holds the document as extracted (``to_dict``) and one job per
    reference; the report is the one made here, from the jobs' results.
    """
    from citeverify_core.client import ReferenceClient  # noqa: PLC0415 - start-up time
    from citeverify_core.references.document.report import (  # noqa: PLC0415 - start-up
        DocumentReport,
        document_from_dict,
    )

    with ReferenceClient(server, api_key=api_key) as client:
        # The service's document route is another part of issue 26: a client without it says so.
        submit = getattr(client, "submit_document", None)
        if submit is None:
            _fail(
                f"{file.name}: this version's client cannot send a paper to a service; "
                "check it here (with --index)"
            )
        submission = submit(file)
        try:
            document = document_from_dict(submission.document)
        except ValueError as exc:
            _fail(f"{file.name}: the service's answer is not a document: {exc}")
        seen = 0
        with typer.progressbar(
            length=len(submission.jobIds), label="verifying", file=sys.stderr
        ) as bar:

            def progress(done: int, _total: int) -> None:
                nonlocal seen
                bar.update(done - seen)
                seen = done

            jobs = client.wait(submission.jobIds, timeout=wait, progress=progress)
    return DocumentReport(document, [_job_result(job) for job in jobs])


def _list_report(
    file: Path,
    numbered: list[tuple[int, str]],
    skipped: list[tuple[int, str, str]],
    results: list[Any],
) -> Any:
    """A reference list's results as a DocumentReport (for ``--report``): lines as locations."""
    from citeverify_core.references.document import (  # noqa: PLC0415 - start-up
        ExtractedDocument,
        ExtractedReference,
        Location,
    )
    from citeverify_core.references.document.report import DocumentReport  # noqa: PLC0415

    references = [
        ExtractedReference(text=" ".join(text.split()), number=n, location=Location(line=line))
        for n, (line, text) in enumerate(numbered, 1)
    ]
    document = ExtractedDocument(
        name="standard input" if str(file) == "-" else file.name,
        format="bib" if file.suffix.lower() == ".bib" else "txt",
        references=references,
        heading="one reference a line" if file.suffix.lower() != ".bib" else "BibTeX entries",
        notes=[f"line {n} skipped ({reason}): {line[:90]}" for n, reason, line in skipped],
    )
    return DocumentReport(document, results)


def _write_report(path: Path, page: str) -> None:
    """Write the HTML report (whole, or not at all) and say where it is on stderr."""
    tmp = path.with_name(f".{path.name}.writing")
    try:
        tmp.write_text(page, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        _fail(f"cannot write the report {path}: {exc.strerror or exc}")
    typer.echo(f"report: {path}", err=True)


def _batch(
    batch_input: Path, output: Path, index: Path, workers: int | None, report: Path | None
) -> None:
    """``refs --batch``: a reference list file, or a folder of papers, into OUTPUT."""
    from citeverify_core.batch import default_workers  # noqa: PLC0415 - start-up time

    def note(message: str) -> None:
        typer.echo(f"note: {message}", err=True)  # "resuming: N parts", a document's progress

    if batch_input.is_dir():
        from citeverify_core.batch.documents import run_documents_batch  # noqa: PLC0415

        documents = run_documents_batch(
            batch_input,
            output,
            index,
            workers=workers or default_workers(),
            note=note,
            report=report,
        )
        typer.echo(documents.line())
        return
    if report is not None:
        _fail("--report with --batch takes a folder of papers; a reference list has none")
    from citeverify_core.batch.refs import run_refs_batch  # noqa: PLC0415 - start-up time

    done = run_refs_batch(
        batch_input, output, index, workers=workers or default_workers(), note=note
    )
    counts = ", ".join(f"{n:,} {status}" for status, n in sorted(done.statuses.items()))
    typer.echo(f"{done.output}: {done.rows:,} references ({counts}) in {done.seconds:.1f} s")


def _server_results(
    server: str, api_key: str | None, references: list[str], wait: float, step: Callable[[int], Any]
) -> list[Any]:
    """``refs --server``: the service's results, one per reference, in order.

    A job the service failed (or that was cancelled) becomes a ``needs-human`` result whose
    ``error`` says why, so the table and the JSON have a row for every reference.
    """
    import contextlib  # noqa: PLC0415 - start-up time

    from citeverify_core.client import ReferenceClient  # noqa: PLC0415 - start-up time

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
    return [_job_result(job) for job in jobs]


def _job_result(job: Any) -> Any:
    """A job's result; a job the service failed (or cancelled) becomes ``needs-human``."""
    from citeverify_core.references import ReferenceResult  # noqa: PLC0415 - start-up time

    if job.result is not None:
        return job.result
    why = job.error or f"the service answered {job.state} without a result"
    return ReferenceResult(
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


def _clean(text: str) -> str:
    """``text`` on one line without control characters (they would drive the terminal)."""
    from citeverify_core.references.document.report import one_line  # noqa: PLC0415 - start-up

    return one_line(text, 10_000)


def _result_lines(number: int, reference: str, result: Any) -> str:
    """The table rows of one result: status, corrected reference, differing fields, failures."""
    shown = _clean(reference)  # a BibTeX entry on one line; no escape sequence of a file
    lines = [f"{number:>3}. {result.status.upper():<20} {shown[:90]}"]
    if result.error:
        lines.append(f"     {_clean(result.error)}")
    elif result.status != "unverified":
        lines.append(f"     -> {_clean(result.reference)}")
    wrong = [
        f
        for f, label in result.field_results.items()
        if label in {"CONTRADICTION", "MATCH_WITH_TYPO", "CONTAINS"}
    ]
    if wrong:
        lines.append(f"     fields that differ: {', '.join(wrong)}")
    from citeverify_core.references.document.report import notice_text  # noqa: PLC0415

    lines += [f"     !! {notice_text(n)}" for n in result.notices]
    failed = ((result.verificationGraph or {}).get("metadata") or {}).get("sourcesFailed")
    if failed:
        lines.append(f"     could not check: {'; '.join(map(str, failed))}")
    return "\n".join(lines)


# --- the reference service (citeverify serve, citeverify keys) ------------------------------------
