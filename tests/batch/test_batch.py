"""Batch verification (issue 15): readers, rows, errors, resume, the API and the command line."""

from __future__ import annotations

import csv
import gzip
import io
import itertools
import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from citeverify_core import CitationVerifier, InputError, PolicyError
from citeverify_core.batch import COLUMNS, Fields, run_batch, verify_records, verify_table
from citeverify_core.cli.app import app
from tests.lookups.test_lookups import CROSSREF_WORK, DOI
from tests.support.loopback import Loopback, Reply


def allow_unix_sockets(config: pytest.Config) -> None:
    """The local engine reaches its fork server over a Unix socket, which is not the network.

    pytest-socket (``--allow-hosts`` in pyproject.toml) refuses it unless told
    ``--allow-unix-socket``; the hosts stay as configured.
    """
    import pytest_socket

    hosts = config.getoption("--allow-hosts")
    if hosts:
        pytest_socket.socket_allow_hosts(hosts, allow_unix_socket=True)


@pytest.fixture(autouse=True)
def _unix_sockets(request: pytest.FixtureRequest) -> None:
    allow_unix_sockets(request.config)


WORDS = [f"w{i}" for i in range(400)] + ["museum", "opens", "nine", "free", "sundays"]


def make_records(n: int, *, seed: int = 7, docs: int = 4) -> list[dict[str, Any]]:
    """Records with a mix of supported and unsupported claims, quotes and statistics."""
    rng = random.Random(seed)
    pool = [" ".join(rng.choice(WORDS) for _ in range(60)) + "." for _ in range(20)]
    records = []
    for i in range(n):
        context = rng.sample(pool, docs)
        claims = []
        for _ in range(rng.randint(1, 6)):
            source = rng.choice(context).split()
            start = rng.randrange(0, 40)
            claims.append(" ".join(source[start : start + 10]) + ".")
        if i % 4 == 0:
            claims.append("Dragons guard the entrance at night.")
        if i % 5 == 0:
            claims.append(f'It says "{" ".join(context[0].split()[:4])}" and "no such words".')
        if i % 7 == 0:
            claims.append("Revenue rose 21% in 2023.")
        documents: list[Any] = context if i % 2 else [{"content": c} for c in context]
        records.append(
            {"id": f"r{i:05d}", "answer": " ".join(claims), "context_documents": documents}
        )
    return records


def write_jsonl(path: Path, records: list[Any], *, extra: str = "") -> Path:
    opener: Any = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as handle:
        for record in records:
            handle.write((record if isinstance(record, str) else json.dumps(record)) + "\n")
        handle.write(extra)
    return path


def write_csv(path: Path, records: list[dict[str, Any]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, ["id", "answer", "context_documents"])
        writer.writeheader()
        for r in records:
            writer.writerow({**r, "context_documents": json.dumps(r["context_documents"])})
    return path


def write_parquet(path: Path, records: list[dict[str, Any]]) -> Path:
    # Parquet needs one type per column: the documents as a list of strings.
    rows = [
        {
            **r,
            "context_documents": [
                d["content"] if isinstance(d, dict) else d for d in r["context_documents"]
            ],
        }
        for r in records
    ]
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def rows_of(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".parquet":
        return pq.read_table(path).to_pylist()
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def expected_rows(records: list[dict[str, Any]], policy: Any = None) -> list[dict[str, Any]]:
    """What one verifier says, record by record: OUTPUT must agree."""
    verifier = CitationVerifier(policy or {"extensions": {"lookups": {"enabled": False}}})
    out = []
    for r in records:
        result = verifier.verify(r["answer"], r["context_documents"])
        d = result.details
        out.append(
            {
                "id": r["id"],
                "verdict": result.verdict,
                "groundedness": d.groundedness,
                "claims": len(d.claims or []),
                "unsupported_claims": sum(1 for c in d.claims or [] if not c.verified),
                "altered_quotes": sum(1 for q in d.quotes or [] if q.matched is False),
            }
        )
    return out


RECORDS = make_records(120)


@pytest.fixture(scope="module")
def reference(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The single-process run over RECORDS (JSONL), which the other runs must equal."""
    allow_unix_sockets(request.config)
    folder = tmp_path_factory.mktemp("reference")
    source = write_jsonl(folder / "in.jsonl", RECORDS)
    summary = run_batch(source, folder / "out.jsonl", workers=1, batch_size=25)
    assert (summary.rows, summary.errors) == (120, 0)
    return folder / "out.jsonl"


def test_rows_agree_with_the_verifier(reference: Path) -> None:
    rows = rows_of(reference)
    assert [tuple(r) for r in rows] == [COLUMNS] * len(rows)
    got = [{k: r[k] for k in expected_rows(RECORDS[:1])[0]} for r in rows]
    assert got == expected_rows(RECORDS)
    assert {r["action"] for r in rows} == {"allow", "flag"}
    assert sum(r["altered_quotes"] for r in rows) > 0
    assert sum(r["citations_unsupported"] for r in rows) > 0
    assert not (reference.parent / "out.jsonl.parts").exists()  # assembled, then removed
    assert (reference.parent / "out.jsonl.errors.jsonl").read_text() == ""


@pytest.mark.parametrize("fmt", ["jsonl.gz", "csv", "parquet"])
def test_every_input_format_gives_the_same_rows(tmp_path: Path, reference: Path, fmt: str) -> None:
    source = tmp_path / f"in.{fmt}"
    {"jsonl.gz": write_jsonl, "csv": write_csv, "parquet": write_parquet}[fmt](source, RECORDS)
    run_batch(source, tmp_path / "out.jsonl", workers=1, batch_size=33)
    assert (tmp_path / "out.jsonl").read_bytes() == reference.read_bytes()


def test_two_workers_and_a_folder_of_shards_give_the_same_bytes(
    tmp_path: Path, reference: Path
) -> None:
    shards = tmp_path / "shards"
    (shards / "b").mkdir(parents=True)
    write_jsonl(shards / "a.jsonl", RECORDS[:50])
    write_jsonl(shards / "b" / "c.jsonl.gz", RECORDS[50:90])
    write_csv(shards / "d.csv", RECORDS[90:])
    (shards / "_SUCCESS").write_text("")
    (shards / "notes.txt").write_text("not input")
    summary = run_batch(shards, tmp_path / "out.jsonl", workers=2, batch_size=16)
    assert summary.rows == 120
    assert (tmp_path / "out.jsonl").read_bytes() == reference.read_bytes()


def test_parquet_output_holds_the_same_rows(tmp_path: Path, reference: Path) -> None:
    run_batch(reference.parent / "in.jsonl", tmp_path / "out.parquet", workers=1, details=True)
    table = pq.read_table(tmp_path / "out.parquet")
    assert table.column_names == [*COLUMNS, "details"]
    rows = table.to_pylist()
    details = [json.loads(r.pop("details")) for r in rows]
    assert rows == rows_of(reference)
    assert set(details[0]) >= {"verified", "groundedness", "claims", "quotes", "citations"}


def test_unreadable_records_go_to_the_errors_file(tmp_path: Path) -> None:
    lines: list[Any] = [
        RECORDS[0],
        "{not json",
        {"id": "n", "answer": 5, "context_documents": []},
        ["a list"],
        {"answer": "No id here.", "context_documents": ["No id here."]},
        {"id": "d", "answer": "x", "context_documents": [{"title": "no content"}]},
        {"id": 7, "answer": "Seven.", "context_documents": "Seven."},
    ]
    source = write_jsonl(tmp_path / "in.jsonl", lines, extra="\n\n")
    summary = run_batch(source, tmp_path / "out.jsonl", workers=1)
    assert (summary.rows, summary.errors) == (3, 4)
    # Cut into ranges of a line or two, verified by two workers: the same numbers and ids.
    run_batch(source, tmp_path / "small.jsonl", workers=2, batch_size=1)
    for suffix in ("", ".errors.jsonl"):
        small = (tmp_path / f"small.jsonl{suffix}").read_bytes()
        assert small == (tmp_path / f"out.jsonl{suffix}").read_bytes()
    assert [r["id"] for r in rows_of(tmp_path / "out.jsonl")] == ["r00000", "in.jsonl:5", "7"]
    errors = rows_of(tmp_path / "out.jsonl.errors.jsonl")
    assert [(e["id"], e["source"]) for e in errors] == [
        (None, "in.jsonl:2"),
        ("n", "in.jsonl:3"),
        (None, "in.jsonl:4"),
        ("d", "in.jsonl:6"),
    ]
    assert "not valid JSON" in errors[0]["reason"]
    assert errors[1]["reason"] == "field 'answer' must be text, got int"
    assert "must be an object" in errors[2]["reason"]
    assert "content" in errors[3]["reason"]


def test_a_rerun_skips_the_parts_already_written(tmp_path: Path, reference: Path) -> None:
    from citeverify_core.batch.local import parts_dir
    from citeverify_core.batch.read import find_shards, iter_ranges, read_range, signature

    source = reference.parent / "in.jsonl"
    out = tmp_path / "out.jsonl"
    notes: list[str] = []
    run_batch(source, out, workers=1, batch_size=25)
    parts = tmp_path / "out.jsonl.parts"
    assert not parts.exists()  # removed once assembled
    # Parts of the same job are kept and skipped; a forged first part shows they are reused as
    # they are (and that the rows after it keep their numbers).
    parts.mkdir()
    options = {
        "policy": {"extensions": {"lookups": {"enabled": False}}},
        "fields": ["answer", "context_documents", "id"],
        "details": False,
        "batch_size": 25,
        "format": "jsonl",
    }
    shards = find_shards(source)
    manifest = {"version": 2, "input": signature(shards), "options": options}
    (parts / "manifest.json").write_text(json.dumps(manifest))
    ranges = list(iter_ranges(shards[0], 25))
    assert len(ranges) > 3
    size = len(list(read_range(ranges[0])))
    assert 10 <= size <= 40  # about batch_size lines
    first = [json.loads(line) for line in out.read_text().splitlines()[:size]]
    for n, row in enumerate(first, 1):
        row["verdict"], row["_n"] = "forged", n
    (parts / "000000-00000000.jsonl").write_text("".join(json.dumps(r) + "\n" for r in first))
    (parts / "000000-00000001.jsonl.tmp-1234").write_text("half a part")
    summary = run_batch(source, out, workers=1, batch_size=25, note=notes.append)
    assert parts_dir(out) == parts and not parts.exists()
    assert summary.skipped_parts == 1
    assert any("resuming" in n for n in notes)
    rows = rows_of(out)
    assert [r["verdict"] for r in rows[:size]] == ["forged"] * size
    assert rows[size:] == rows_of(reference)[size:]
    # Other options: the parts are not reused.
    parts.mkdir()
    (parts / "manifest.json").write_text(json.dumps({**manifest, "options": {}}))
    (parts / "000000-00000000.jsonl").write_text("".join(json.dumps(r) + "\n" for r in first))
    run_batch(source, out, workers=1, batch_size=25, note=notes.append)
    assert any("starting afresh" in n for n in notes)
    assert out.read_bytes() == reference.read_bytes()


@pytest.mark.parametrize("batch_size", [1, 2, 3, 7, 1000])
def test_byte_ranges_hold_every_line_once(tmp_path: Path, batch_size: int) -> None:
    """Workers read their own ranges: together they are the file's lines, split as before."""
    from citeverify_core.batch.read import find_shards, iter_ranges, read_range

    rng = random.Random(batch_size)
    lines = [b"", b"\r", b"{}", b"x" * 5000, "\u2028 \u00e9 \u2029".encode(), b"\xff\xfe"]
    lines += [json.dumps(r).encode() for r in RECORDS[:40]]
    rng.shuffle(lines)
    data = b"\n".join(lines)  # no newline at the end
    source = tmp_path / "in.jsonl"
    source.write_bytes(data)
    (shard,) = find_shards(source)
    ranges = list(iter_ranges(shard, batch_size))
    assert ranges[0].start == 0 and ranges[-1].end == len(data)
    assert all(a.end == b.start for a, b in itertools.pairwise(ranges))
    got = [line for task in ranges for line in read_range(task)]
    assert got == list(io.BytesIO(data))
    if batch_size <= 3:
        assert len(ranges) > 10  # the long line's range and those inside it are empty


def test_bad_input_fails_the_run_with_one_clear_error(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", RECORDS[:3])
    with pytest.raises(InputError, match="no such file or folder"):
        run_batch(tmp_path / "missing.jsonl", tmp_path / "out.jsonl")
    with pytest.raises(InputError, match=r"no field 'text' \(give --answer-field"):
        run_batch(source, tmp_path / "out.jsonl", fields=Fields(answer="text"))
    with pytest.raises(InputError, match="unknown output format"):
        run_batch(source, tmp_path / "out.txt")
    with pytest.raises(PolicyError):
        run_batch(source, tmp_path / "out.jsonl", {"min_groundedness": 7})
    assert not (tmp_path / "out.jsonl").exists()


def test_verify_records_and_verify_table_for_notebooks(reference: Path) -> None:
    expected = rows_of(reference)
    rows = list(verify_records(iter(RECORDS), workers=2, batch_size=17))
    assert [r.pop("error") for r in rows] == [None] * len(RECORDS)
    assert rows == expected
    table = pa.Table.from_pylist(
        [
            {"q": r["id"], "text": r["answer"], "docs": json.dumps(r["context_documents"])}
            for r in RECORDS
        ]
    )
    result = verify_table(table, fields=Fields(answer="text", context="docs", id="q"))
    assert result.num_rows == len(RECORDS)
    assert result.drop_columns(["error"]).to_pylist() == expected
    bad = verify_table(pa.table({"answer": [None, "Fine."]}))
    assert bad.column("error").to_pylist()[0] == "field 'answer' must be text, got NoneType"
    assert bad.column("id").to_pylist() == ["1", "2"]


def test_lookups_are_off_by_default_and_shared_through_the_sqlite_cache(tmp_path: Path) -> None:
    records = [
        {"id": i, "answer": f"Shown in doi:{DOI} again.", "context_documents": ["Shown again."]}
        for i in range(30)
    ]
    source = write_jsonl(tmp_path / "in.jsonl", records)
    run_batch(source, tmp_path / "off.jsonl")
    assert {r["citations_unchecked"] for r in rows_of(tmp_path / "off.jsonl")} == {1}
    with Loopback() as server:
        server.routes[("GET", f"/works/{DOI}")] = Reply(200, CROSSREF_WORK)
        policy = {"extensions": {"lookups": {"crossref_base_url": server.url, "timeout": 5.0}}}
        out = tmp_path / "on.jsonl"
        run_batch(source, out, policy, lookups=True, workers=2, batch_size=5)
        assert {r["citations_verified"] for r in rows_of(out)} == {1}
        assert 1 <= server.calls(f"/works/{DOI}") <= 2  # at most once per worker
        assert (tmp_path / "on.jsonl.lookups.sqlite").is_file()
        calls = server.calls(f"/works/{DOI}")
        run_batch(source, out, policy, lookups=True, workers=1)
        assert server.calls(f"/works/{DOI}") == calls  # the cache file answered


# --- the command line ----------------------------------------------------------------------------


def test_cli_batch(tmp_path: Path, reference: Path) -> None:
    out = tmp_path / "out.jsonl"
    done = CliRunner().invoke(
        app, ["batch", str(reference.parent / "in.jsonl"), "-o", str(out), "--workers", "1"]
    )
    assert done.exit_code == 0, done.output
    assert out.read_bytes() == reference.read_bytes()
    assert "120 rows, 0 errors" in done.output
    assert "\r" not in done.output  # no progress bar when stderr is not a terminal


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.jsonl", "-o", "out.jsonl"], "no such file or folder: missing.jsonl"),
        (["in.jsonl", "-o", "out.jsonl", "--answer-field", "text"], "no field 'text'"),
        (["in.jsonl", "-o", "out.jsonl", "--policy", "bad.yaml"], "bad.yaml"),
        (["in.jsonl", "-o", "out.jsonl", "--engine", "spark"], "engine"),
    ],
)
def test_cli_batch_errors_are_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    write_jsonl(tmp_path / "in.jsonl", RECORDS[:2])
    (tmp_path / "bad.yaml").write_text("policy: {citation-verifier: {min_groundedness: 7}}\n")
    done = CliRunner().invoke(app, ["batch", *args])
    assert done.exit_code == 2, done.output
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("citeverify: error:"), done.output
    assert message in lines[0]


def test_the_progress_bar_shows_rate_share_and_eta(capsys: pytest.CaptureFixture[str]) -> None:
    from citeverify_core.batch.local import Progress

    bar = Progress(1000, enabled=True)
    bar.update(100, 250, force=True)
    bar.close()
    shown = capsys.readouterr().err
    assert shown.startswith("\r[######") and shown.endswith("\n")
    assert " 25.0%" in shown and "100 records" in shown and "/s" in shown and "ETA 0:" in shown
    quiet = Progress(1000, enabled=False)
    quiet.update(100, 250, force=True)
    quiet.close()
    assert capsys.readouterr().err == ""
