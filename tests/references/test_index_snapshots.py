"""The local index from whole snapshots, as published: built, resumed, updated (issue 35).

Miniature OpenAlex snapshots (both layouts, JSON Lines and Parquet, two update dates, a merged
work, a retracted work) and a miniature Crossref public data file (folder and ``.tar``, with a
retraction notice and a correction) are written by ``tests/support/snapshots.py`` in the
published shapes, then read by the real build: SQLite files, worker processes, the CLI.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from citeverify_core import InputError
from citeverify_core.lookups.bibliographic import Author, Record
from citeverify_core.references import LocalIndex
from citeverify_core.references.index_build import IngestProgress, ingest
from citeverify_core.references.snapshots import open_snapshot
from tests.support.snapshots import (
    FIRST,
    SECOND,
    write_crossref,
    write_crossref_tar,
    write_openalex,
    write_retraction_watch,
)

NEW_TITLE = "Early mobilisation after hip fracture: a randomised trial"


def _content(path: Path) -> list[tuple[object, ...]]:
    """Every work of an index (without row ids), sorted: what two builds must agree on."""
    with sqlite3.connect(path) as db:
        return sorted(
            db.execute("SELECT doi, title, authors, year, venue, volume, pages, work_id FROM works")
        )


def _fts_titles(path: Path, word: str) -> list[str]:
    with sqlite3.connect(path) as db:
        return [
            t
            for (t,) in db.execute(
                "SELECT w.title FROM works_fts JOIN works w ON w.id = works_fts.rowid "
                "WHERE works_fts MATCH ?",
                (f'title : "{word}"',),
            )
        ]


def _build(snapshot_paths: list[Path], index: Path, **kw: object) -> object:
    local = LocalIndex(index)
    try:
        return ingest(local, open_snapshot(snapshot_paths), **kw)  # type: ignore[arg-type]
    finally:
        local.close()


@pytest.mark.parametrize(
    ("layout", "fmt"), [("legacy", "jsonl"), ("2026", "jsonl"), ("2026", "parquet")]
)
def test_an_openalex_snapshot_is_built_as_published(tmp_path, layout, fmt):
    if fmt == "parquet":
        pytest.importorskip("pyarrow", reason="the batch extra (pyarrow) reads Parquet")
    snap = write_openalex(tmp_path / "openalex-snapshot", layout=layout, fmt=fmt)
    snapshot = open_snapshot([snap.root])
    assert snapshot.source == "openalex" and snapshot.problems == []
    assert [f.updated for f in snapshot.files] == [FIRST, SECOND, SECOND]  # works, then merges
    assert all(f.expected_records for f in snapshot.files[:2])  # counts from the manifest
    index = tmp_path / "lit.sqlite"
    report = _build([snap.root], index)
    assert (report.records, report.removed, report.broken) == (8, 1, [])
    local = LocalIndex(index)
    # Work 1 changed on the second date: one record, the new title; work 4 was merged: gone.
    assert local.by_doi("10.5555/snap.1").title == NEW_TITLE
    assert local.by_doi("10.5555/snap.4") is None
    assert local.by_doi("10.5555/snap.6") is not None
    assert local.stats()["records"] == 6
    assert local.meta("openalex_updated") == SECOND
    # The retracted work says so, with where it comes from; the others say nothing.
    retracted = local.by_doi("10.5555/snap.3")
    assert [(n.kind, n.source) for n in retracted.notices] == [("retraction", "openalex")]
    assert all(not local.by_doi(f"10.5555/snap.{n}").notices for n in (0, 1, 2, 5, 6))
    local.close()
    assert _fts_titles(index, "hip") == [NEW_TITLE]  # the old title left the full-text index


def test_the_parquet_and_json_lines_copies_give_the_same_index(tmp_path):
    pytest.importorskip("pyarrow", reason="the batch extra (pyarrow) reads Parquet")
    for fmt in ("jsonl", "parquet"):
        snap = write_openalex(tmp_path / fmt, layout="2026", fmt=fmt)
        _build([snap.root], tmp_path / f"{fmt}.sqlite")
    assert _content(tmp_path / "jsonl.sqlite") == _content(tmp_path / "parquet.sqlite")


def test_an_update_applies_only_the_newer_partitions(tmp_path):
    root = tmp_path / "openalex-snapshot"
    write_openalex(root, dates=(FIRST,))
    index = tmp_path / "lit.sqlite"
    first = _build([root], index)
    assert first.records == 6 and LocalIndex(index).meta("openalex_updated") == FIRST
    # The bucket synced: the second date's partition and merge list arrive.
    write_openalex(root, dates=(FIRST, SECOND))
    local = LocalIndex(index)
    # Change the first partition behind the index's back: an update must not read it again.
    old = local.by_doi("10.5555/snap.0")
    report = ingest(local, open_snapshot([root]), update=True)
    assert (report.records, report.removed, report.files_read) == (2, 1, 2)
    assert local.by_doi("10.5555/snap.0") == old
    assert local.by_doi("10.5555/snap.1").title == NEW_TITLE
    assert local.by_doi("10.5555/snap.4") is None
    assert local.meta("openalex_updated") == SECOND
    again = ingest(local, open_snapshot([root]), update=True)
    assert (again.records, again.files_read) == (0, 0)  # nothing newer
    local.close()
    clean = tmp_path / "clean.sqlite"
    _build([root], clean)
    assert _content(index) == _content(clean)


def test_a_stopped_build_resumes_without_losing_or_repeating_a_record(tmp_path):
    root = tmp_path / "openalex-snapshot"
    write_openalex(root)
    write_crossref(tmp_path / "crossref")
    paths = [root, tmp_path / "crossref"]
    index = tmp_path / "lit.sqlite"

    def stop(progress: IngestProgress) -> None:
        if progress.files_done == 2:  # after two files, in the middle of the third
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _build(paths, index, progress=stop)
    with sqlite3.connect(index) as db:
        assert db.execute("SELECT count(*) FROM build_files").fetchone() == (2,)
    resumed = _build(paths, index)
    assert resumed.files_already_done == 2 and resumed.broken == []
    clean = tmp_path / "clean.sqlite"
    _build(paths, clean)
    assert _content(index) == _content(clean)
    with sqlite3.connect(index) as db, sqlite3.connect(clean) as other:
        notices = "SELECT * FROM notices ORDER BY 1, 2, 3, 4, 5"
        assert db.execute(notices).fetchall() == other.execute(notices).fetchall()
        fts = "SELECT count(*) FROM works_fts"
        assert db.execute(fts).fetchone() == other.execute(fts).fetchone()


_KILLED_BUILD = """
import os, sys
from pathlib import Path
from citeverify_core.references import LocalIndex
from citeverify_core.references import index_build
from citeverify_core.references.snapshots import open_snapshot

# The miniature's files hold 6, 2, 3 and 4 works: a commit after the second file, none after
# the third, and the process is killed then.
index_build.TRANSACTION_WORKS = 7

def crash(progress):
    if progress.files_done == 3:
        os._exit(9)  # killed: no exception, no commit, no clean-up

index_build.ingest(
    LocalIndex(sys.argv[1]), open_snapshot([Path(p) for p in sys.argv[2:]]), progress=crash
)
"""


def test_a_killed_build_loses_at_most_its_last_transaction_and_resumes(tmp_path):
    root = tmp_path / "openalex-snapshot"
    write_openalex(root)
    write_crossref(tmp_path / "crossref")
    paths = [root, tmp_path / "crossref"]
    index = tmp_path / "lit.sqlite"
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_BUILD, str(index), *map(str, paths)],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == 9, killed.stderr
    with sqlite3.connect(index) as db:  # what was committed before the kill, and only that
        (files,) = db.execute("SELECT count(*) FROM build_files").fetchone()
    assert files == 2  # the third file was written, not committed: lost, and read again
    resumed = _build(paths, index)
    assert resumed.files_already_done == files and resumed.broken == []
    clean = tmp_path / "clean.sqlite"
    _build(paths, clean)
    assert _content(index) == _content(clean)
    _integrity(index)


def test_parsing_in_worker_processes_gives_the_same_index(tmp_path):
    root = tmp_path / "openalex-snapshot"
    write_openalex(root)
    write_crossref_tar(tmp_path / "crossref.tar")
    paths = [root, tmp_path / "crossref.tar"]
    one = _build(paths, tmp_path / "one.sqlite", workers=1)
    two = _build(paths, tmp_path / "two.sqlite", workers=2)
    assert (one.records, one.removed, one.notices) == (two.records, two.removed, two.notices)
    assert _content(tmp_path / "one.sqlite") == _content(tmp_path / "two.sqlite")


def test_a_file_whose_count_is_not_the_manifests_adds_nothing_and_is_named(tmp_path):
    snap = write_openalex(tmp_path / "openalex-snapshot")
    second = snap.works / f"updated_date={SECOND}" / "part_000.gz"
    lines = gzip.decompress(second.read_bytes()).splitlines(keepends=True)
    second.write_bytes(gzip.compress(b"".join(lines[:1])))  # one work lost in a download
    snapshot = open_snapshot([snap.root])
    assert any("bytes on disk" in p for p in snapshot.problems)  # the size differs too
    index = tmp_path / "lit.sqlite"
    local = LocalIndex(index)
    report = ingest(local, snapshot)
    assert len(report.broken) == 1 and f"updated_date={SECOND}/part_000.gz" in report.broken[0]
    assert "1 records read, 2 in the manifest" in report.broken[0]
    assert local.by_doi("10.5555/snap.6") is None  # nothing of the broken file
    assert local.by_doi("10.5555/snap.1").title != NEW_TITLE
    assert local.meta("openalex_updated") is None  # not up to date while a file is missing
    local.close()
    # Downloaded again: the same command reads only that file.
    second.write_bytes(gzip.compress(b"".join(lines)))
    again = _build([snap.root], index)
    assert again.broken == [] and (again.files_read, again.files_already_done) == (1, 2)
    assert LocalIndex(index).by_doi("10.5555/snap.1").title == NEW_TITLE


def test_a_broken_file_among_others_is_named_and_the_others_are_read(tmp_path):
    folder = write_crossref(tmp_path / "crossref")
    (folder / "2.json.gz").write_bytes(b"not gzip at all")
    (folder / "3.json.gz").write_bytes(gzip.compress(b'{"items": "no list"}'))
    # Works first, then the file breaks: the works it gave are dropped with it.
    cut = json.dumps({"items": [{"DOI": "10.1/cut", "title": ["Cut short"]}] * 3})[:-10]
    (folder / "4.json.gz").write_bytes(gzip.compress(cut.encode()))
    index = tmp_path / "lit.sqlite"
    report = _build([folder], index)
    assert report.records == 7
    assert [b.split(":")[0] for b in report.broken] == ["2.json.gz", "3.json.gz", "4.json.gz"]
    assert "not a Crossref data file" in report.broken[1] and "not JSON" in report.broken[2]
    assert LocalIndex(index).by_doi("10.1/cut") is None


def test_crossref_and_retraction_watch_notices_reach_the_works_they_concern(tmp_path):
    write_crossref(tmp_path / "crossref")
    write_openalex(tmp_path / "openalex", dates=(FIRST,))
    write_retraction_watch(tmp_path / "retraction_watch.csv")
    index = tmp_path / "lit.sqlite"
    report = _build(
        [tmp_path / "crossref", tmp_path / "openalex", tmp_path / "retraction_watch.csv"], index
    )
    assert report.broken == []
    local = LocalIndex(index)
    notices = {
        doi: [n.to_dict() for n in local.notices(doi)]
        for doi in ("10.7777/pdf.1", "10.7777/pdf.2", "10.7777/pdf.4", "10.5555/snap.2")
    }
    assert notices == {
        "10.7777/pdf.1": [
            {
                "kind": "retraction",
                "date": "2021-03-15",
                "doi": "10.7777/pdf.90",
                "source": "crossref",
            }
        ],
        "10.7777/pdf.2": [
            {
                "kind": "correction",
                "date": "2019-08-01",
                "doi": "10.7777/pdf.91",
                "source": "crossref",
            }
        ],
        "10.7777/pdf.4": [
            {
                "kind": "expression-of-concern",
                "date": "2023-01-09",
                "doi": "10.7777/eoc.4",
                "source": "retraction-watch",
            }
        ],
        "10.5555/snap.2": [
            {
                "kind": "retraction",
                "date": "2024-05-17",
                "doi": "10.5555/snap.retraction.2",
                "source": "retraction-watch",
            }
        ],
    }
    # Every other work has none: the reinstatement and the row without a DOI give nothing.
    with sqlite3.connect(index) as db:
        concerned = {d for (d,) in db.execute("SELECT DISTINCT doi FROM notices")}
    assert concerned == {*notices, "10.5555/snap.3"}  # and OpenAlex's is_retracted work
    # A search finds the notice with the work.
    found = local.search(
        "Randomised trial of early mobilisation after hip fracture surgery revisited"
    )
    assert found[0].doi == "10.7777/pdf.1" and found[0].notices[0].kind == "retraction"
    local.close()


def test_readers_keep_answering_while_an_update_writes(tmp_path):
    root = tmp_path / "openalex-snapshot"
    write_openalex(root, dates=(FIRST,))
    index = tmp_path / "lit.sqlite"
    _build([root], index)
    write_openalex(root, dates=(FIRST, SECOND))
    reader = LocalIndex(index)
    answers: list[str | None] = []

    def read_meanwhile(progress: IngestProgress) -> None:
        # Called by the writer inside its transaction: another connection reads at once
        # (SQLite WAL: the last committed state), it is not locked out.
        done = threading.Event()

        def read() -> None:
            record = reader.by_doi("10.5555/snap.1")
            answers.append(record.title if record else None)
            done.set()

        threading.Thread(target=read).start()
        assert done.wait(30)

    writer = LocalIndex(index)
    ingest(writer, open_snapshot([root]), update=True, progress=read_meanwhile)
    writer.close()
    assert answers and all(a is not None for a in answers)
    assert answers[0] != NEW_TITLE  # the old record until the partition is committed
    assert reader.by_doi("10.5555/snap.1").title == NEW_TITLE
    reader.close()


def test_what_is_not_a_snapshot_is_refused_clearly(tmp_path):
    with pytest.raises(InputError, match="no such file or folder"):
        open_snapshot([tmp_path / "missing"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="holds no snapshot"):
        open_snapshot([tmp_path / "empty"])
    (tmp_path / "x.tar").write_bytes(b"not a tar")
    with pytest.raises(InputError, match="cannot read the archive"):
        open_snapshot([tmp_path / "x.tar"])
    (tmp_path / "x.tar.gz").write_bytes(gzip.compress(b"anything"))
    with pytest.raises(InputError, match="extract it"):
        open_snapshot([tmp_path / "x.tar.gz"])
    snap = write_openalex(tmp_path / "oa", dates=(FIRST,))
    (snap.works / "manifest").write_text("{not json")
    assert any("not a manifest" in p for p in open_snapshot([snap.root]).problems)
    csv_file = tmp_path / "other.csv"
    csv_file.write_text("a,b\n1,2\n")
    report = _build([csv_file], tmp_path / "i.sqlite")
    assert "not the Retraction Watch CSV" in report.broken[0]


def test_the_cli_builds_resumes_and_updates(tmp_path, monkeypatch):
    from tests.cli.test_cli import invoke

    monkeypatch.chdir(tmp_path)
    write_openalex(Path("oa"), dates=(FIRST,))
    write_retraction_watch(Path("rw.csv"))
    built = invoke("index", "build", "oa", "rw.csv", "--index", "lit.sqlite", "--workers", "2")
    assert built.exit_code == 0, built.output
    assert "6 works written" in built.output and "data up to 2025-11-03" in built.output
    write_openalex(Path("oa"), dates=(FIRST, SECOND))
    updated = invoke("index", "update", "oa", "--index", "lit.sqlite")
    assert updated.exit_code == 0, updated.output
    assert "2 works written, 1 removed (merged)" in updated.output
    stats = json.loads(invoke("index", "stats", "--index", "lit.sqlite").output)
    assert stats["openalex_updated"] == SECOND and stats["records"] == 6
    assert stats["notices"] == {"retraction": 2, "expression-of-concern": 1}
    missing = invoke("index", "update", "oa", "--index", "none.sqlite")
    assert missing.exit_code == 2 and "no index at" in missing.output


def test_a_verified_reference_to_a_retracted_work_says_so_everywhere(tmp_path):
    from citeverify_core.references import ReferenceVerifier
    from citeverify_core.references.document.report import notice_text

    write_crossref(tmp_path / "crossref")
    index = tmp_path / "lit.sqlite"
    _build([tmp_path / "crossref"], index)
    local = LocalIndex(index)
    verifier = ReferenceVerifier(local)
    retracted = verifier.verify(
        "Haddad1, S., & Ito, Y. (2011). A randomised trial of early mobilisation after hip "
        "fracture surgery revisited. Annals of Public Data, 2, 11-19."
    )
    assert retracted.status == "verified"  # the work exists: the reference is right
    assert retracted.retracted
    assert retracted.model_dump(mode="json")["notices"] == [
        {"kind": "retraction", "date": "2021-03-15", "doi": "10.7777/pdf.90", "source": "crossref"}
    ]
    assert "**Retracted:** retraction (2021-03-15)" in retracted.message
    graph_candidate = retracted.verificationGraph["nodes"][1]
    assert graph_candidate["notices"][0]["kind"] == "retraction"
    assert notice_text(retracted.notices[0]) == (
        "RETRACTED (2021-03-15), notice https://doi.org/10.7777/pdf.90, source: crossref"
    )
    clean = verifier.verify(
        "Haddad0, S., & Ito, Y. (2010). Soil microbial diversity under long-term nitrogen "
        "fertilisation revisited. Annals of Public Data, 1, 1-9."
    )
    assert clean.status == "verified" and clean.notices == [] and not clean.retracted
    fabricated = verifier.verify("Nobody, A. (2011). A work that does not exist. Nowhere, 1, 1-2.")
    assert fabricated.status == "unverified" and fabricated.notices == []
    local.close()


def test_an_index_built_before_notices_is_still_read_from_a_read_only_file(tmp_path, monkeypatch):
    import citeverify_core.references.index as index_module
    from tests.conftest import DATA

    path = tmp_path / "old.sqlite"
    old = LocalIndex(path)
    old.build(DATA / "works-crossref.jsonl")
    old.close()
    with sqlite3.connect(path) as db:  # as an index of the version before issue 35 was
        for table in ("notices", "build_files", "index_meta", "term_df"):
            db.execute(f"DROP TABLE {table}")
    real_connect = sqlite3.connect

    def read_only(name: object, *, what: str) -> sqlite3.Connection:
        return real_connect(f"file:{name}?mode=ro", uri=True, check_same_thread=False)

    monkeypatch.setattr(index_module, "connect_sqlite", read_only)
    local = LocalIndex(path)  # a copy on a read-only mount: nothing can be created
    kuhn = local.search("The Structure of Scientific Revolutions", author="Kuhn")
    assert kuhn and kuhn[0].title == "The Structure of Scientific Revolutions"
    assert kuhn[0].notices == () and local.notices(kuhn[0].doi or "") == ()
    stats = local.stats()
    assert stats["records"] == 8 and stats["notices"] == {} and stats["openalex_updated"] is None
    local.close()


def _integrity(path: Path) -> None:
    """FTS5's own check: the full-text index holds exactly what the works table says."""
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO works_fts (works_fts, rank) VALUES ('integrity-check', 1)")


def test_a_generic_title_is_found_among_thousands_by_its_year(tmp_path):
    # 2,000 works called "Index" (book back matter), 20 a year: ranking them all is what made
    # a search cost 100 ms at 5M works. The cited year (give or take one) finds its 60.
    path = tmp_path / "generic.sqlite"
    local = LocalIndex(path)
    local.add(
        Record(source="LOCAL", title="Index", authors=(), year=1900 + i % 100, doi=f"10.9/ix.{i}")
        for i in range(2000)
    )
    local.add(
        [Record(source="LOCAL", title="Index of plants", authors=(), year=1987, doi="10.9/p")]
    )
    found = local.search("Index", year=1987)
    assert {r.year for r in found} <= {1986, 1987, 1988}
    assert "10.9/ix.87" in {r.doi for r in found}  # 1987, the 4th "Index" of that year
    assert local.search("Index of plants", year=1987)[0].doi == "10.9/p"
    # Replaced (a newer record of the same DOI) and removed: the keys follow the rows.
    local.add([Record(source="LOCAL", title="Index", authors=(), year=2001, doi="10.9/ix.87")])
    assert "10.9/ix.87" not in {r.doi for r in local.search("Index", year=1987)}
    assert "10.9/ix.87" in {r.doi for r in local.search("Index", year=2001)}
    local.close()
    _integrity(path)


def test_an_index_built_before_title_keys_is_searched_and_updated(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:  # the schema before keys: two indexed columns
        db.executescript(
            """
            CREATE TABLE works (id INTEGER PRIMARY KEY, doi TEXT UNIQUE, title TEXT,
                authors TEXT NOT NULL, year INTEGER, venue TEXT, volume TEXT, issue TEXT,
                pages TEXT, kind TEXT, url TEXT);
            CREATE VIRTUAL TABLE works_fts USING fts5(title, authors, content='works',
                content_rowid='id', tokenize='unicode61 remove_diacritics 2');
            CREATE VIRTUAL TABLE works_vocab USING fts5vocab(works_fts, 'row');
            INSERT INTO works (doi, title, authors, year) VALUES
                ('10.9/old', 'Index', '[["Roe", "P."]]', 1987);
            INSERT INTO works_fts (rowid, title, authors) SELECT id, title, authors FROM works;
            """
        )
    local = LocalIndex(path)
    assert [r.doi for r in local.search("Index", year=1987)] == ["10.9/old"]
    local.add([Record(source="LOCAL", title="Index", authors=(), year=1990, doi="10.9/old")])
    assert [r.year for r in local.search("Index", year=1987)] == [1990]
    local.close()
    _integrity(path)


def test_a_name_with_a_sharp_s_is_searched_as_the_index_holds_it(tmp_path):
    # unicode61 keeps "ß"; a search that folded it to "ss" looked for an author no work has,
    # and the cited work was one of 31 of the same title and year.
    local = LocalIndex(tmp_path / "de.sqlite")
    others = [
        Record(source="LOCAL", title="Planung", authors=(Author(f"Other{i}", "A."),), year=1994)
        for i in range(30)
    ]
    cited = Record(
        source="LOCAL", title="Planung", authors=(Author("Schneeweiß", "C."),), year=1994
    )
    local.add([*others[:15], cited, *others[15:]])
    found = local.search("Planung", author="Schneeweiß", year=1994)
    assert found[0].authors[0].family == "Schneeweiß"
    local.close()


SHARED_API = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "api"


@pytest.mark.skipif(
    not SHARED_API.is_dir(),
    reason=f"the shared API fixtures are not at {SHARED_API} (outside this repository)",
)
def test_a_real_crossref_work_with_a_correction_notice_is_built_and_reported(tmp_path):
    # A real recorded Crossref record (PLOS ONE, 2012) whose `updated-by` lists the publisher's
    # correction: written as a public data file, built, and cited.
    from citeverify_core.references import ReferenceVerifier, apa7, record_from_work

    answer = json.loads(
        (SHARED_API / "crossref-works-doi-10.1371_journal.pone.0033693.json").read_text()
    )
    folder = tmp_path / "crossref"
    folder.mkdir()
    (folder / "0.json.gz").write_bytes(
        gzip.compress(json.dumps({"items": [answer["message"]]}).encode())
    )
    index = tmp_path / "lit.sqlite"
    report = _build([folder], index)
    assert (report.records, report.notices) == (1, 1)
    local = LocalIndex(index)
    record = record_from_work(answer)
    result = ReferenceVerifier(local).verify(apa7(record))
    assert result.status == "verified" and not result.retracted
    assert result.notices == [
        {
            "kind": "correction",
            "date": "2012-05-08",
            "doi": "10.1371/annotation/c76da2c1-ccb8-4797-94c1-359d3ceceeda",
            "source": "crossref",
        }
    ]
    local.close()
