"""``citeverify refs --batch``: many references against the local index (issue 15)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from citeverify.batch._refs import REF_COLUMNS, run_refs_batch
from citeverify.cli import app
from citeverify.references import ReferenceVerifier

from .service import FAKE, KUHN, LECUN_WRONG_YEAR, build_index

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
