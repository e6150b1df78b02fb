"""``citeverify refs --batch FOLDER``: every paper of a folder, its references verified (issue 26).

Real papers (Markdown, and PDFs drawn with reportlab), a real index, the real process pool. It
resumes as the reference batch does: the documents done before an interruption are not read
again, and a killed worker loses and duplicates no row.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from citeverify_core.batch.documents import DOCUMENT_COLUMNS, run_documents_batch
from citeverify_core.cli.app import app
from citeverify_core.references import LocalIndex
from tests.batch.test_batch import _unix_sockets  # noqa: F401 - an autouse fixture: the fork server's socket
from tests.batch.test_batch_engines import kill_a_worker_mid_run
from tests.cli.test_refs_documents import (
    HOSTILE,
    IOANNIDIS,
    KUHN,
    LECUN_WRONG_YEAR,
    _pdf_paper,
    markdown_paper,
)
from tests.conftest import DATA

runner = CliRunner()


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("documents-batch-index") / "index.sqlite"
    built = LocalIndex(path)
    built.build(DATA / "works-crossref.jsonl")
    built.close()
    return path


@pytest.fixture
def papers(tmp_path: Path) -> Path:
    """3 papers (one cannot be read) and files the batch leaves alone."""
    folder = tmp_path / "papers"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text(markdown_paper([KUHN, LECUN_WRONG_YEAR, HOSTILE]), "utf-8")
    _pdf_paper(folder / "sub" / "b.pdf", [IOANNIDIS, KUHN])
    (folder / "sub" / "broken.pdf").write_bytes(b"%PDF-1.7\n" + b"\x00garbage" * 50)
    (folder / "notes.txt").write_text(KUHN + "\n", "utf-8")  # a list, not a paper
    (folder / ".hidden.md").write_text(markdown_paper([KUHN]), "utf-8")
    return folder


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_a_folder_gives_a_row_per_reference_and_one_per_failed_document(
    tmp_path: Path, papers: Path, index: Path
) -> None:
    out = tmp_path / "out.jsonl"
    page = tmp_path / "batch.html"
    args = ["refs", "--batch", str(papers), "-o", str(out), "--index", str(index)]
    done = runner.invoke(app, [*args, "--workers", "2", "--report", str(page)])
    assert done.exit_code == 0, done.output
    assert done.stdout.strip().startswith(f"{out}: 3 documents (1 failed), 5 references")
    assert "note: 3 documents in" in done.stderr
    rows = _rows(out)
    assert all(tuple(row) == DOCUMENT_COLUMNS for row in rows)
    assert [(r["document"], r["number"]) for r in rows] == [
        ("a.md", 1),
        ("a.md", 2),
        ("a.md", 3),
        ("sub/b.pdf", 1),
        ("sub/b.pdf", 2),
        ("sub/broken.pdf", None),
    ]
    # The same statuses, labels and locations as the command gives for each paper alone.
    for name in ("a.md", "sub/b.pdf"):
        alone = runner.invoke(app, ["refs", str(papers / name), "--index", str(index), "--json"])
        expected = [
            (r["label"], r["location"]["page"], r["location"]["line"], r["status"], r["text"])
            for r in json.loads(alone.stdout)["references"]
        ]
        got = [
            (r["label"], r["page"], r["line"], r["status"], r["input"])
            for r in rows
            if r["document"] == name
        ]
        assert got == expected
    assert [r["status"] for r in rows[:5]] == [
        "verified",
        "verified-with-error",
        "unverified",
        "verified",
        "verified",
    ]
    failed = rows[5]
    assert (failed["status"], failed["error_code"]) == ("error", "corrupt")
    assert "sub/broken.pdf" in str(failed["error"])
    documents = _rows(tmp_path / "out.jsonl.documents.jsonl")
    assert [d["document"] for d in documents] == ["a.md", "sub/b.pdf", "sub/broken.pdf"]
    assert documents[0]["counts"] == {
        "verified": 1,
        "verified-with-error": 1,
        "needs-human": 0,
        "unverified": 1,
    }
    assert documents[1]["format"] == "pdf" and documents[1]["pages"] == 2
    assert documents[2]["error_code"] == "corrupt"
    shown = page.read_text("utf-8")
    assert "<script" not in shown and "src=" not in shown and "href=" not in shown
    # The documents that need a look first: the unreadable one, then the one with problems.
    order = [shown.index(f"<td>{name}</td>") for name in ("sub/broken.pdf", "a.md", "sub/b.pdf")]
    assert order == sorted(order)
    assert not (tmp_path / "out.jsonl.parts").exists()


def test_parquet_output(tmp_path: Path, papers: Path, index: Path) -> None:
    out = tmp_path / "out.parquet"
    summary = run_documents_batch(papers, out, index, workers=1)
    table = pq.read_table(out)
    assert table.column_names == list(DOCUMENT_COLUMNS)
    assert table.column("number").to_pylist() == [1, 2, 3, 1, 2, None]
    assert table.column("status").to_pylist()[-1] == "error"
    assert (summary.documents, summary.failed, summary.references) == (3, 1, 5)


class _Interrupted(Exception):
    """Stands for Ctrl-C after the first document."""


def test_an_interrupted_run_resumes_without_reading_the_documents_done(
    tmp_path: Path, papers: Path, index: Path
) -> None:
    expected = tmp_path / "expected.jsonl"
    run_documents_batch(papers, expected, index, workers=1)
    out = tmp_path / "out.jsonl"

    def stop_after_the_first(message: str) -> None:
        if message.startswith("[1/"):
            raise _Interrupted

    with pytest.raises(_Interrupted):
        run_documents_batch(papers, out, index, workers=1, note=stop_after_the_first)
    assert not out.exists()
    written = len(list((tmp_path / "out.jsonl.parts").glob("*.jsonl")))
    assert 1 <= written < 3
    notes: list[str] = []
    again = run_documents_batch(papers, out, index, workers=1, note=notes.append)
    assert f"resuming: {written} of 3 documents were done before" in notes
    read_again = [n for n in notes if n.startswith("[")]
    assert len(read_again) == 3 - written  # the documents done before are not read again
    assert again.skipped_parts == written
    assert out.read_bytes() == expected.read_bytes()


def test_bad_batch_input_is_one_line_and_exit_2(tmp_path: Path, index: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "refs.txt").write_text(KUHN + "\n", "utf-8")
    out = tmp_path / "out.jsonl"
    done = runner.invoke(
        app, ["refs", "--batch", str(empty), "-o", str(out), "--index", str(index)]
    )
    assert done.exit_code == 2 and "no document (" in done.stderr
    done = runner.invoke(
        app, ["refs", "--batch", str(empty), "-o", str(out), "--index", str(tmp_path / "x")]
    )
    assert done.exit_code == 2 and "no index at" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc (Linux)")
def test_a_killed_worker_loses_and_duplicates_no_row(tmp_path: Path, index: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    works = [KUHN, LECUN_WRONG_YEAR, IOANNIDIS, HOSTILE]
    for n in range(40):
        (folder / f"paper-{n:02d}.md").write_text(markdown_paper(works * 4), "utf-8")
    expected = tmp_path / "expected.jsonl"
    run_documents_batch(folder, expected, index, workers=1)

    out = tmp_path / "out.jsonl"
    command = [sys.executable, "-m", "citeverify_core", "refs", "--batch", str(folder)]
    command += ["-o", str(out), "--index", str(index), "--workers", "2"]
    parts = tmp_path / "out.jsonl.parts"
    returncode, stderr = kill_a_worker_mid_run(command, parts)
    assert returncode == 2, stderr
    assert "a worker process died" in stderr and "run the same command again" in stderr
    written = len(list(parts.glob("*.jsonl")))
    assert 0 < written < 40
    assert not out.exists()

    again = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert again.returncode == 0, again.stderr
    assert f"note: resuming: {written} of 40 documents were done before" in again.stderr
    assert again.stderr.count("references\n") == 40 - written
    assert "40 documents, 640 references" in again.stdout
    assert out.read_bytes() == expected.read_bytes()
    assert not parts.exists()
