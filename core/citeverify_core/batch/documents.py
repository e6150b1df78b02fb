"""``citeverify refs --batch FOLDER -o OUTPUT``: every paper in a folder, its references verified.

Every file under FOLDER (recursively; hidden files and folders skipped) whose suffix is a
document's (:data:`DOCUMENT_SUFFIXES`: PDF, Word, LaTeX, .bbl, Markdown, HTML) is read with
``extract_document`` and its references verified against the local index, in the process pool
of the reference batch (:mod:`citeverify_core.batch.refs`: one verifier per worker, parts,
resume). A ``.bbl`` beside a ``.tex`` of the same name is the LaTeX paper's, not a paper.

OUTPUT (JSONL or Parquet) gets one row per reference, documents in path order, references in
list order: :data:`DOCUMENT_COLUMNS` (``document`` is the path under FOLDER, ``number`` the
reference's place in the list, ``label``, ``page`` and ``line`` where it is, then the columns of
the reference batch). A document that cannot be read gets one row with ``status`` "error",
``error`` (the message) and ``error_code`` (a ``DocumentError`` code). ``OUTPUT.documents.jsonl``
gets one row per document: format, title, pages, counts by status, citations, the consistency
findings, notes, or the error.

Resumable: each document becomes a part in ``OUTPUT.parts/``, named after the document's path,
size and modification time; a re-run with the same OUTPUT, FOLDER and index skips the documents
whose parts were written (a document changed since is read again).
"""

from __future__ import annotations

import collections
import datetime
import hashlib
import html
import json
import os
import shutil
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from citeverify_core.batch.config import dumps_entry
from citeverify_core.batch.local import _prepare_parts, parts_dir
from citeverify_core.batch.output import output_format
from citeverify_core.batch.refs import (
    REF_COLUMNS,
    Task,
    assemble_parts,
    check_index,
    result_row,
    run_parts,
    worker_verifier,
    write_rows,
)
from citeverify_core.errors import DocumentError, InputError

__all__ = [
    "DOCUMENT_COLUMNS",
    "DOCUMENT_SUFFIXES",
    "DocumentsSummary",
    "find_documents",
    "run_documents_batch",
]

#: The suffixes read as papers (as ``citeverify refs FILE`` reads them).
DOCUMENT_SUFFIXES = frozenset(
    {".pdf", ".docx", ".tex", ".bbl", ".md", ".markdown", ".html", ".htm"}
)
#: A reference list's columns (``REF_COLUMNS``), with where in which paper the reference is, and
#: the DocumentError code of a paper that could not be read.
DOCUMENT_COLUMNS = (
    REF_COLUMNS[0],
    "document",
    "number",
    "label",
    "page",
    "line",
    *REF_COLUMNS[1:],
    "error_code",
)
_INTEGERS = ("number", "page", "line", "match_set_size", "contained_set_size")
#: The status of a document's row when it could not be read.
ERROR_STATUS = "error"
#: Seconds one document's reading may take in a worker before it is given up ("timeout").
READ_SECONDS = 300
#: Documents listed in the run's HTML page at most (those that need a look first).
REPORT_DOCUMENTS = 500
_PRELOAD = [
    "__main__",
    "citeverify_core.batch.documents",
    "citeverify_core.references.verify",
    "citeverify_core.references.document",
]


@dataclass
class DocumentsSummary:
    """What a batch over a folder of papers did."""

    output: Path
    documents_file: Path
    documents: int
    failed: int
    references: int
    statuses: collections.Counter[str]
    seconds: float
    skipped_parts: int = 0

    def line(self) -> str:
        """The run's summary line."""
        counts = ", ".join(f"{n:,} {status}" for status, n in sorted(self.statuses.items()) if n)
        failed = f" ({self.failed:,} failed)" if self.failed else ""
        return (
            f"{self.output}: {self.documents:,} documents{failed}, {self.references:,} "
            f"references ({counts or 'none'}) in {self.seconds:.1f} s"
        )


def find_documents(folder: Path, *, exclude: tuple[Path, ...] = ()) -> list[tuple[str, Path]]:
    """The papers under ``folder`` as (path under the folder, path), sorted by the former.

    Hidden files and folders (".name") are skipped, and so are the paths in ``exclude`` (the
    run's own output and report). A ``.bbl`` with a ``.tex`` of the same stem beside it is left
    to the LaTeX paper.
    """
    skip = {p.resolve() for p in exclude}
    found: list[tuple[str, Path]] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in files:
            path = Path(root) / name
            suffix = path.suffix.lower()
            if name.startswith(".") or suffix not in DOCUMENT_SUFFIXES:
                continue
            if suffix == ".bbl" and any(path.with_suffix(s).is_file() for s in (".tex", ".TEX")):
                continue
            if path.resolve() in skip or not path.is_file():
                continue
            found.append((path.relative_to(folder).as_posix(), path))
    return sorted(found)


def _part_name(ident: str, path: Path) -> str:
    """A part's name: the document's path, size and modification time (a changed one is new)."""
    stat = path.stat()
    key = json.dumps([ident, stat.st_size, stat.st_mtime_ns])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:24] + ".jsonl"


def _timeout(_signum: int, _frame: FrameType | None) -> None:
    raise TimeoutError


def _extract(path: str, ident: str) -> Any:
    """``extract_document`` bounded in time: past READ_SECONDS a DocumentError ``timeout``."""
    from citeverify_core.references.document import extract_document  # noqa: PLC0415

    if not hasattr(signal, "SIGALRM"):  # Windows: the reader's own bounds only
        return extract_document(Path(path), name=ident)
    # The pool runs a task in the worker's main thread, where a signal handler may be set.
    previous = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(READ_SECONDS)
    try:
        return extract_document(Path(path), name=ident)
    except TimeoutError:
        msg = f"{ident}: reading took over {READ_SECONDS} s; given up"
        raise DocumentError(msg, code="timeout") from None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _document_rows(path: str, ident: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The rows of one document's references, and its row of the documents file."""
    from citeverify_core.references.document.report import (  # noqa: PLC0415 - worker
        verify_document,
    )

    try:
        document = _extract(path, ident)
    except DocumentError as exc:
        return [_error_row(ident, str(exc), exc.code)], _failed_document(ident, str(exc), exc.code)
    except Exception as exc:  # a reader's bug fails this document alone, never the batch
        message = f"{ident}: internal error reading it ({type(exc).__name__}: {exc})"[:500]
        return [_error_row(ident, message, "internal")], _failed_document(
            ident, message, "internal"
        )
    report = verify_document(document, worker_verifier())
    rows = []
    for reference, result in zip(document.references, report.results, strict=True):
        row = {
            "id": f"{ident}#{reference.number}",
            "document": ident,
            "number": reference.number,
            "label": reference.label,
            "page": reference.location.page,
            "line": reference.location.line,
        }
        row.update(result_row(row["id"], reference.text, result))
        row["error_code"] = None
        rows.append({c: row[c] for c in DOCUMENT_COLUMNS})
    summary = {
        "document": ident,
        "format": document.format,
        "title": document.title,
        "pages": document.pages,
        "heading": document.heading,
        "references": len(document.references),
        "counts": report.counts(),
        "citations": len(document.citations),
        "findings": [f.to_dict() for f in document.findings],
        "notes": list(document.notes),
        "error": None,
        "error_code": None,
    }
    return rows, summary


def _error_row(ident: str, message: str, code: str) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(DOCUMENT_COLUMNS)
    row.update(
        id=ident,
        document=ident,
        input="",
        status=ERROR_STATUS,
        reference="",
        error=message,
        error_code=code,
    )
    return row


def _failed_document(ident: str, message: str, code: str) -> dict[str, Any]:
    return {
        "document": ident,
        "format": None,
        "title": None,
        "pages": None,
        "heading": None,
        "references": 0,
        "counts": {},
        "citations": 0,
        "findings": [],
        "notes": [],
        "error": message,
        "error_code": code,
    }


def _write_document(path: str, ident: str, target: str) -> int:
    """Worker: read and verify one document; write its summary, then its part (the marker)."""
    rows, summary = _document_rows(path, ident)
    side = target.removesuffix(".jsonl") + ".document.json"
    tmp = f"{side}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(dumps_entry(summary) + "\n")
    os.replace(tmp, side)
    write_rows(rows, target)
    return len(rows)


def run_documents_batch(
    folder: str | os.PathLike[str],
    output: str | os.PathLike[str],
    index: str | os.PathLike[str],
    *,
    workers: int = 1,
    note: Callable[[str], None] | None = None,
    report: str | os.PathLike[str] | None = None,
) -> DocumentsSummary:
    """Verify the references of every paper under ``folder`` into ``output``.

    ``note`` is told what happens: the documents found, a resumed run, each document done.
    ``report``: also write an HTML page of the run (one self-contained file).

    Raises:
        InputError: no such folder, no paper in it, no index.
        BatchInterruptedError: a worker died; the documents done are kept for a re-run.
    """
    started = time.monotonic()
    src, out, idx = Path(folder), Path(output), Path(index)
    fmt = output_format(out)
    if not src.is_dir():
        raise InputError(f"no such folder: {src}", path="--batch")
    check_index(idx)
    say = note or (lambda _message: None)
    side = out.with_name(out.name + ".documents.jsonl")
    excluded = (out, side, *((Path(report),) if report else ()))
    documents = find_documents(src, exclude=excluded)
    if not documents:
        suffixes = ", ".join(sorted(DOCUMENT_SUFFIXES))
        raise InputError(f"no document ({suffixes}) in {src}", path="--batch")
    folder_parts = parts_dir(out)
    manifest = {
        "version": 1,
        "documents-of": str(src.resolve()),
        "index": _signature(idx),
    }
    _prepare_parts(folder_parts, manifest, say)
    tasks = [
        Task(folder_parts / _part_name(ident, path), _write_document, (str(path), ident))
        for ident, path in documents
    ]
    before = sum(1 for task in tasks if task.target.is_file())
    say(f"{len(documents):,} documents in {src}")
    if before:
        say(f"resuming: {before:,} of {len(tasks):,} documents were done before")
    finished = 0
    todo = len(tasks) - before

    def done(task: Task, rows: int) -> None:
        nonlocal finished
        finished += 1
        ident = task.args[1]
        side_part = task.target.with_name(task.target.stem + ".document.json")
        summary = json.loads(side_part.read_text("utf-8"))
        what = summary["error"] if summary.get("error") else f"{ident}: {rows:,} references"
        say(f"[{finished:,}/{todo:,}] {what}")

    names, skipped = run_parts(
        tasks, folder_parts, idx, workers=workers, preload=_PRELOAD, done=done
    )
    rows, statuses = assemble_parts(
        folder_parts, names, out, fmt, DOCUMENT_COLUMNS, integers=_INTEGERS
    )
    summaries = []
    for name in names:
        side_part = folder_parts / (name.removesuffix(".jsonl") + ".document.json")
        summaries.append(json.loads(side_part.read_text("utf-8")))
    _write_whole(side, "".join(dumps_entry(s) + "\n" for s in summaries))
    failed = statuses.pop(ERROR_STATUS, 0)
    summary = DocumentsSummary(
        out,
        side,
        len(names),
        failed,
        rows - failed,
        statuses,
        time.monotonic() - started,
        skipped,
    )
    if report is not None:
        _write_whole(Path(report), report_html(summary, summaries, source=str(src)))
    shutil.rmtree(folder_parts, ignore_errors=True)
    return summary


def _signature(path: Path) -> list[Any]:
    stat = path.stat()
    return [str(path.resolve()), stat.st_size, stat.st_mtime_ns]


def _write_whole(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all."""
    tmp = path.with_name(f".{path.name}.writing-{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def report_html(
    summary: DocumentsSummary, documents: list[dict[str, Any]], *, source: str = ""
) -> str:
    """The run's HTML page: figures, references by status, and a row for each document."""
    from citeverify_core.references.document.report import STATUSES  # noqa: PLC0415
    from citeverify_core.text.htmlpage import bars, kpis, page, table  # noqa: PLC0415

    statuses = [*STATUSES, *sorted(set(summary.statuses) - set(STATUSES))]
    figures = [
        ("documents", f"{summary.documents:,}"),
        ("failed", f"{summary.failed:,}"),
        ("references", f"{summary.references:,}"),
        *((s, f"{summary.statuses.get(s, 0):,}") for s in statuses),
        ("findings", f"{sum(len(d.get('findings') or []) for d in documents):,}"),
    ]
    rows: list[list[object]] = []

    # The documents that need a look first: unreadable ones, then by their worst references.
    def worst(d: dict[str, Any]) -> tuple[Any, ...]:
        counts = d.get("counts") or {}
        return (
            not d.get("error"),
            *(-int(counts.get(s, 0)) for s in ("unverified", "needs-human", "verified-with-error")),
            -len(d.get("findings") or []),
            d["document"],
        )

    shown = sorted(documents, key=worst)[:REPORT_DOCUMENTS]
    for d in shown:
        counts = d.get("counts") or {}
        rows.append(
            [
                d["document"],
                d.get("title") or "",
                d["references"],
                *(int(counts.get(s, 0)) for s in STATUSES),
                len(d.get("findings") or []),
                d.get("error") or "",
            ]
        )
    colors = ["#2f9e44", "#f08c00", "#7048e8", "#e03131"]
    sections = [
        f'<section class="wide">{kpis(figures)}</section>',
        "<section><h2>References by status</h2>"
        + bars(
            statuses,
            [summary.statuses.get(s, 0) for s in statuses],
            title="references by status",
            colors=[*colors, *["#4263eb"] * (len(statuses) - len(colors))],
        )
        + "</section>",
        '<section class="wide"><h2>Documents, those that need a look first</h2>'
        + table(
            ["document", "title", "references", *STATUSES, "findings", "error"],
            rows,
            {2, 3, 4, 5, 6, 7},
        )
        + (
            f"<p class='sub'>the {REPORT_DOCUMENTS:,} that need a look most of "
            f"{len(documents):,}</p>"
            if len(documents) > len(shown)
            else ""
        )
        + f"<p class='sub'>each reference's row is in {html.escape(summary.output.name)}; "
        f"each document's findings in {html.escape(summary.documents_file.name)}</p>"
        "</section>",
    ]
    generated = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    title = f"citeverify references: {Path(source).name or source or summary.output.name}"
    subtitle = f"{summary.output.name}, {generated}, {summary.seconds:,.1f} s"
    return page(title, subtitle, sections)
