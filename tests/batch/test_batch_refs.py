"""``citeverify refs --batch``: many references against the local index (issue 15).

It resumes as ``citeverify batch`` does: a worker killed mid-run loses and duplicates nothing on
the re-run, and parts of another input or index are not reused.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from citeverify_core.batch.refs import REF_COLUMNS, run_refs_batch
from citeverify_core.cli.app import app
from citeverify_core.references import ReferenceVerifier
from tests.batch.test_batch import _unix_sockets  # noqa: F401 - an autouse fixture: the fork server's socket
from tests.batch.test_batch_engines import kill_a_worker_mid_run
from tests.support.service import FAKE, KUHN, LECUN_WRONG_YEAR, build_index

REFERENCES = [KUHN, FAKE, LECUN_WRONG_YEAR] * 7


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("refs-index")
    build_index(folder).close()
    return folder / "index.sqlite"


def test_refs_batch_rows_agree_with_the_verifier(tmp_path: Path, index: Path) -> None:
    source = tmp_path / "refs.txt.gz"
    with gzip.open(source, "wt", encoding="utf-8") as handle:
        handle.write("\n".join(REFERENCES[:10]) + "\n\n" + "\n".join(REFERENCES[10:]) + "\n")
    summary = run_refs_batch(source, tmp_path / "out.jsonl", index, workers=2, batch_size=4)
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert summary.rows == len(rows) == len(REFERENCES)
    assert [tuple(r) for r in rows] == [REF_COLUMNS] * len(rows)
    expected = ReferenceVerifier(index, sources=["local"]).verify_references(REFERENCES)
    assert [r["status"] for r in rows] == [e.status for e in expected]
    assert [r["reference"] for r in rows] == [e.reference for e in expected]
    assert [r["input"] for r in rows] == REFERENCES
    assert rows[10]["id"] == "12"  # line numbers: the blank line counts
    assert {"verified", "unverified"} <= set(summary.statuses)


def test_refs_batch_jsonl_in_parquet_out_and_the_command(tmp_path: Path, index: Path) -> None:
    source = tmp_path / "refs.jsonl"
    source.write_text(
        "".join(
            json.dumps({"id": f"k{i}", "reference": r}) + "\n" for i, r in enumerate(REFERENCES)
        )
    )
    out = tmp_path / "out.parquet"
    done = CliRunner().invoke(
        app,
        ["refs", "--batch", str(source), "-o", str(out), "--index", str(index), "--workers", "1"],
    )
    assert done.exit_code == 0, done.output
    assert f"{len(REFERENCES)} references" in done.output
    table = pq.read_table(out)
    assert table.column_names == list(REF_COLUMNS)
    assert table.column("id").to_pylist() == [f"k{i}" for i in range(len(REFERENCES))]
    bad = CliRunner().invoke(app, ["refs", "--batch", str(source), "--index", str(index)])
    assert bad.exit_code == 2 and "use --batch INPUT -o OUTPUT" in bad.output
    none = CliRunner().invoke(app, ["refs"])
    assert none.exit_code == 2 and "give FILE" in none.output


def test_refs_batch_reuses_the_parts_of_the_same_job_only(tmp_path: Path, index: Path) -> None:
    source = tmp_path / "refs.txt"
    source.write_text("\n".join(REFERENCES) + "\n")
    out = tmp_path / "out.jsonl"
    first = run_refs_batch(source, out, index, workers=1, batch_size=4)
    assert first.skipped_parts == 0 and not (tmp_path / "out.jsonl.parts").exists()
    expected = out.read_bytes()
    # A run that stopped after its first part: the part (forged here) is reused as it is.
    parts = tmp_path / "out.jsonl.parts"
    parts.mkdir()
    manifest = {
        "version": 1,
        "input": [str(source.resolve()), source.stat().st_size, source.stat().st_mtime_ns],
        "index": [str(index.resolve()), index.stat().st_size, index.stat().st_mtime_ns],
        "batch_size": 4,
    }
    (parts / "manifest.json").write_text(json.dumps(manifest))
    rows = [json.loads(line) for line in expected.decode().splitlines()]
    forged = [{**row, "status": "forged"} for row in rows[:4]]
    (parts / "00000000.jsonl").write_text("".join(json.dumps(r) + "\n" for r in forged))
    notes: list[str] = []
    again = run_refs_batch(source, out, index, workers=2, batch_size=4, note=notes.append)
    assert again.skipped_parts == 1 and notes == [f"resuming: 1 parts of {out} were written before"]
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["status"] for r in got[:4]] == ["forged"] * 4
    assert got[4:] == rows[4:]
    assert again.statuses["forged"] == 4
    # Another batch size (or input, or index): the parts are not reused.
    parts.mkdir()
    (parts / "manifest.json").write_text(json.dumps({**manifest, "batch_size": 5}))
    (parts / "00000000.jsonl").write_text("".join(json.dumps(r) + "\n" for r in forged))
    run_refs_batch(source, out, index, workers=1, batch_size=4, note=notes.append)
    assert "starting afresh" in notes[-1]
    assert out.read_bytes() == expected


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc (Linux)")
def test_refs_batch_a_killed_worker_loses_and_duplicates_no_row(
    tmp_path: Path, index: Path
) -> None:
    source = tmp_path / "refs.jsonl"
    references = [
        {"id": f"k{i}", "reference": REFERENCES[i % len(REFERENCES)]} for i in range(1500)
    ]
    source.write_text("".join(json.dumps(r) + "\n" for r in references))
    expected = tmp_path / "expected.jsonl"
    run_refs_batch(source, expected, index, workers=1, batch_size=10)

    out = tmp_path / "out.jsonl"
    command = [
        sys.executable,
        "-m",
        "citeverify_core",
        "refs",
        "--batch",
        str(source),
        "-o",
        str(out),
    ]
    command += ["--index", str(index), "--workers", "2"]
    parts = tmp_path / "out.jsonl.parts"
    # The command's batch size is 200: 8 parts, of which the first is written before the kill.
    returncode, stderr = kill_a_worker_mid_run(command, parts)
    assert returncode == 2, stderr
    assert "a worker process died" in stderr and "run the same command again" in stderr
    written = len(list(parts.glob("*.jsonl")))
    assert 0 < written < 8
    assert not out.exists()

    again = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert again.returncode == 0, again.stderr
    assert f"{len(references):,} references" in again.stdout
    assert f"note: resuming: {written} parts of {out} were written before" in again.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == [r["id"] for r in references]  # every row once, in order
    by_id = {r["id"]: r for r in (json.loads(x) for x in expected.read_text().splitlines())}
    assert rows == [by_id[r["id"]] for r in references]
    assert not parts.exists()
