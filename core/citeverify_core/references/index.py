"""The local index: bibliographic records in SQLite with FTS5, the embedded default source.

Built by streaming OpenAlex works or Crossref works JSONL (optionally gzipped, the formats of
their public snapshots) in batches, so memory stays flat whatever the dump size. Queried by DOI
(exact) and by title (FTS5 with bm25 ranking).

Dumps are untrusted, and one rule decides what a bad line does:

- a file that cannot be read as JSON Lines (missing, not gzip although named ``.gz``, truncated,
  not UTF-8, a line that is not JSON) stops the build with an :class:`InputError` naming the file
  and the line: the file is broken, and an index built from part of it would look complete;
- a line that is JSON but not a work we can read (not an object, neither format, nested deeper
  than the JSON reader goes, a number of more than 4,300 digits, a line over 16 MiB) is skipped
  and counted in :attr:`LocalIndex.last_build`;
- a work with a field of the wrong type keeps its other fields (see
  :func:`~citeverify_core.lookups.works.record_from_work`, which reads both formats).
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz, process

from citeverify_core.errors import InputError
from citeverify_core.lookups.bibliographic import (
    LONE_SURROGATE,
    Author,
    Notice,
    Record,
    year_field,
)
from citeverify_core.lookups.notices import sort_notices
from citeverify_core.references.compare import CANDIDATE_MIN_TITLE
from citeverify_core.references.folding import fold
from citeverify_core.references.snapshots import (
    KEYED_WORDS,
    SnapshotFile,
    read_file,
    row_of,
    title_words,
)

__all__ = [
    "DumpReport",
    "LocalIndex",
    "connect_sqlite",
    "encodable",
    "require_columns",
    "row_of",
]

_log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS works (
    id INTEGER PRIMARY KEY,
    doi TEXT UNIQUE,
    title TEXT,
    authors TEXT NOT NULL,      -- JSON list of [family, given]
    year INTEGER,
    venue TEXT,
    volume TEXT, issue TEXT, pages TEXT, kind TEXT, url TEXT,
    keys TEXT                   -- year-word keys of a short title (snapshots.title_keys)
);
CREATE VIRTUAL TABLE IF NOT EXISTS works_fts USING fts5(
    title, authors, keys, content='works', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS works_vocab USING fts5vocab(works_fts, 'row');
"""
#: The tables of issue 35, created on open when the file is writable. An index built before
#: them and opened read-only (a copy on a read-only mount) is still read: without notices,
#: build records or word counts (``_has_v2``).
_SCHEMA_V2 = """
CREATE TABLE IF NOT EXISTS notices (
    doi TEXT NOT NULL,          -- the work the notice is about (lower case)
    kind TEXT NOT NULL,         -- retraction, expression-of-concern, correction
    date TEXT NOT NULL,         -- '' when unknown (NULLs would defeat the UNIQUE below)
    notice_doi TEXT NOT NULL,   -- '' when unknown
    source TEXT NOT NULL,       -- openalex, crossref, retraction-watch
    UNIQUE (doi, kind, notice_doi, source)
);
CREATE INDEX IF NOT EXISTS notices_doi ON notices (doi);
-- The snapshot files written whole (one transaction each): a build resumes after them.
CREATE TABLE IF NOT EXISTS build_files (
    name TEXT PRIMARY KEY, size INTEGER, records INTEGER, skipped INTEGER, updated TEXT,
    done_at TEXT
);
CREATE TABLE IF NOT EXISTS index_meta (key TEXT PRIMARY KEY, value TEXT);
-- How many works hold each word (a copy of works_vocab's counts, refreshed after a build): the
-- search picks a title's rarest words by it. fts5vocab computes a count by reading the word's
-- whole posting list, a cost that grows with the index (0.7 ms a title at 1M works, p99 7 ms).
CREATE TABLE IF NOT EXISTS term_df (term TEXT PRIMARY KEY, doc INTEGER NOT NULL) WITHOUT ROWID;
"""
#: OpenAlex's work id (``W2741809807``): what an update replaces a work without a DOI by, and
#: what a merged work is removed by. Added on open to an index built before it (once).
_WORK_ID = (
    "ALTER TABLE works ADD COLUMN work_id TEXT",
    "CREATE UNIQUE INDEX IF NOT EXISTS works_work_id ON works (work_id)",
)
#: Added on open to an index built before keys were (its works_fts keeps two columns: searched
#: without keys, see ``_keyed``).
_KEYS_COLUMN = "ALTER TABLE works ADD COLUMN keys TEXT"
#: Titleless references (ACS, AIP, Elsevier) are found by year and volume. Created on
#: open, so an index built before it gets it too (once: seconds at a million records; not on a
#: read-only file, where the query still works, by scanning).
_NUMBERS_INDEX = "CREATE INDEX IF NOT EXISTS works_year_volume ON works (year, volume)"
#: Title words used in a search: the rarest ones (by document frequency) find the work with the
#: shortest posting lists. Benchmark if changing (bench/bench_references.py: p50 <= 10 ms at 1M).
_SEARCH_TERMS = 4
_BATCH = 5000
_READ_MMAP_BYTES = 16 * 2**30
_READ_CACHE_KIB = 64 * 1024
#: A dump line longer than this is skipped, read in chunks (the largest OpenAlex works are a few
#: hundred KB), so one line never costs more memory than this.
MAX_LINE_BYTES = 16 * 1024 * 1024
#: The columns a Record is read from, in :func:`_record`'s order; a works table without them
#: all is not ours.
_COLUMNS = ("doi", "title", "authors", "year", "venue", "volume", "issue", "pages", "kind", "url")
_FIELDS = ", ".join(_COLUMNS)
#: The same, from ``works w`` in a join with ``works_fts`` (which has a title and authors too).
_W_FIELDS = ", ".join(f"w.{c}" for c in _COLUMNS)


class LocalIndex:
    """A SQLite FTS5 index of bibliographic records.

    Args:
        path: The database file (created when missing). ``":memory:"`` for a throwaway index.

    Pickled or deep-copied (with a reference verifier, to a process pool or a Ray task), an
    index travels as its file's path and opens it again where it lands: the file must be there
    (the same machine or a shared disk). An index in memory cannot travel (a ``TypeError``): its
    records are in this process only.
    """

    def __init__(self, path: str | Path) -> None:
        self._db = connect_sqlite(path, what="index")
        self.path = str(path)
        try:
            self._db.executescript(_SCHEMA)
            require_columns(
                self._db, "works", set(_COLUMNS), what="citeverify index", path=self.path
            )
            try:
                self._db.executescript(_SCHEMA_V2)
                self._db.execute(_NUMBERS_INDEX)
                have = require_columns(
                    self._db, "works", set(), what="citeverify index", path=self.path
                )
                if "work_id" not in have:
                    self._db.execute(_WORK_ID[0])
                if "keys" not in have:
                    self._db.execute(_KEYS_COLUMN)
                self._db.execute(_WORK_ID[1])
                self._db.commit()
            except sqlite3.OperationalError:
                # A read-only index built before: by_numbers scans the year's rows instead,
                # and it is not updated (update needs a writable file).
                self._db.rollback()
        except InputError:
            self._db.close()
            raise
        except sqlite3.Error as exc:
            self._db.close()
            msg = f"{path} cannot be used as an index: {exc}"
            raise InputError(msg, path=self.path) from None
        # A search reads posting lists and each match's length at random places of a file of
        # gigabytes: pages mapped (up to SQLite's build limit, often 2 GiB) and a larger page
        # cache for the rest cost a third less than reads into the default 2 MB cache
        # (bench_index_scale.py at 5M works). Both hold file pages, shared and reclaimable.
        with contextlib.suppress(sqlite3.Error):
            self._db.execute(f"PRAGMA mmap_size={_READ_MMAP_BYTES}")
            self._db.execute(f"PRAGMA cache_size={-_READ_CACHE_KIB}")
        self._lock = threading.Lock()
        #: The issue-35 tables exist (False: an older index opened read-only).
        self._has_v2 = {
            name
            for (name,) in self._db.execute(
                "SELECT name FROM sqlite_master WHERE name IN ('notices', 'term_df', "
                "'index_meta', 'build_files')"
            )
        } == {"notices", "term_df", "index_meta", "build_files"}
        #: The full-text index has the year-word keys of short titles (built since they were):
        #: a generic title with its year is found among a handful of works, not thousands.
        self._keyed = "keys" in {row[1] for row in self._db.execute("PRAGMA table_info(works_fts)")}
        #: What the last :meth:`build` read (None before the first).
        self.last_build: DumpReport | None = None

    def __getstate__(self) -> dict[str, str]:
        if self.path == ":memory:" or self.path.startswith("file::memory:"):
            msg = (
                "cannot pickle a LocalIndex in memory: its records are in this process only; "
                "build it into a file (LocalIndex(path).build(...)) to send it elsewhere"
            )
            raise TypeError(msg)
        return {"path": self.path}

    def __setstate__(self, state: dict[str, str]) -> None:
        # Opening a missing path would create an empty index, and every reference would then be
        # "unverified" without a word: the file must be there.
        if not Path(state["path"]).exists():
            msg = f"the index {state['path']} is not on this machine: copy it, or share its disk"
            raise InputError(msg, path="index")
        LocalIndex.__init__(self, state["path"])

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    # --- building ---------------------------------------------------------------------------

    def add(self, records: Iterable[Record]) -> int:
        """Insert records (a DOI already present is replaced); returns how many were added."""
        count = 0
        batch: list[Record] = []
        with self._lock:
            try:
                for record in records:
                    batch.append(record)
                    if len(batch) >= _BATCH:
                        count += self.store([row_of(r) for r in batch], [None] * len(batch))
                        batch = []
                count += self.store([row_of(r) for r in batch], [None] * len(batch))
                self._db.commit()
            except BaseException:
                # A dump that turns out broken halfway adds nothing: no index that looks complete.
                self._db.rollback()
                raise
        return count

    # The writer's steps, for a caller that holds the transaction (``add``, ``build``,
    # ``index_build.ingest``): nothing here commits.

    def store(self, rows: Sequence[tuple[Any, ...]], work_ids: Sequence[str | None]) -> int:
        """Write records (:func:`row_of` rows): one of the same DOI or OpenAlex id is replaced.

        The full-text index follows row by row (FTS5's external-content ``delete`` with the old
        values, then the new rows): a file of an update costs its own rows, not a rebuild of
        the whole index.
        """
        if not rows:
            return 0
        dois = [r[0] for r in rows if r[0]]
        ids = [w for w in work_ids if w]
        old: dict[int, tuple[Any, ...]] = {}
        for column, values in (("doi", dois), ("work_id", ids)):
            old.update(self._indexed(column, values))
        self._forget(old)
        (start,) = self._db.execute("SELECT coalesce(max(id), 0) FROM works").fetchone()
        self._db.executemany(
            "INSERT OR REPLACE INTO works (doi, title, authors, year, venue, volume, issue, "
            "pages, kind, url, work_id, keys) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(*r[:10], w, r[10]) for r, w in zip(rows, work_ids, strict=True)],
        )
        # New rows have ids above ``start`` (rowids grow from the largest); a row of this batch
        # replaced by a later one of the same DOI is gone from works and never reaches the FTS.
        columns = self._fts_columns
        self._db.execute(
            f"INSERT INTO works_fts (rowid, {columns}) "
            f"SELECT id, {columns} FROM works WHERE id > ?",
            (start,),
        )
        return len(rows)

    @property
    def _fts_columns(self) -> str:
        return "title, authors, keys" if self._keyed else "title, authors"

    def _indexed(self, column: str, values: Sequence[str]) -> dict[int, tuple[Any, ...]]:
        """The rows whose ``column`` is one of ``values``, with the columns the FTS indexed."""
        found: dict[int, tuple[Any, ...]] = {}
        for k in range(0, len(values), 500):
            chunk = list(values[k : k + 500])
            marks = ",".join("?" * len(chunk))
            for rowid, *indexed in self._db.execute(
                f"SELECT id, {self._fts_columns} FROM works WHERE {column} IN ({marks})", chunk
            ):
                found[rowid] = tuple(indexed)
        return found

    def _forget(self, old: dict[int, tuple[Any, ...]]) -> None:
        if not old:
            return
        # FTS5's external-content delete takes the values it indexed, exactly.
        columns = self._fts_columns
        marks = ", ".join("?" * (columns.count(",") + 1))
        self._db.executemany(
            f"INSERT INTO works_fts (works_fts, rowid, {columns}) VALUES ('delete', ?, {marks})",
            [(rowid, *indexed) for rowid, indexed in old.items()],
        )
        self._db.executemany("DELETE FROM works WHERE id = ?", [(rowid,) for rowid in old])

    def remove_works(self, work_ids: Sequence[str]) -> int:
        """Remove the works of these OpenAlex ids (merged into others); returns how many."""
        old = self._indexed("work_id", work_ids)
        self._forget(old)
        return len(old)

    def store_notices(self, notices: Sequence[tuple[str, Notice]]) -> int:
        """Keep retraction, concern and correction notices (a repeat is kept once)."""
        before = self._db.total_changes
        self._db.executemany(
            "INSERT OR IGNORE INTO notices (doi, kind, date, notice_doi, source) "
            "VALUES (?, ?, ?, ?, ?)",
            [
                (doi.lower(), n.kind, n.date or "", (n.doi or "").lower(), n.source)
                for doi, n in notices
                if encodable(doi) and encodable(n.date or "") and encodable(n.doi or "")
            ],
        )
        return self._db.total_changes - before

    def notices(self, doi: str) -> tuple[Notice, ...]:
        """The notices of the work with this DOI, most serious first."""
        if not encodable(doi):
            return ()
        with self._lock:
            return self._notices([doi.lower()]).get(doi.lower(), ())

    def _notices(self, dois: Sequence[str]) -> dict[str, tuple[Notice, ...]]:
        found: dict[str, list[Notice]] = {}
        if not self._has_v2:
            return {}
        wanted = [d for d in dict.fromkeys(dois) if d and encodable(d)]
        for k in range(0, len(wanted), 500):
            chunk = wanted[k : k + 500]
            marks = ",".join("?" * len(chunk))
            for doi, kind, date, notice_doi, source in self._db.execute(
                f"SELECT doi, kind, date, notice_doi, source FROM notices WHERE doi IN ({marks})",
                chunk,
            ):
                found.setdefault(doi, []).append(
                    Notice(kind, date or None, notice_doi or None, source)
                )
        return {doi: sort_notices(ns) for doi, ns in found.items()}

    def with_notices(self, records: list[Record]) -> list[Record]:
        """The records with the notices the index holds for their DOIs (the caller locks)."""
        if not records:
            return records
        by_doi = self._notices([r.doi for r in records if r.doi])
        if not by_doi:
            return records
        return [
            replace(r, notices=sort_notices((*r.notices, *by_doi[r.doi]))) if r.doi in by_doi else r
            for r in records
        ]

    def meta(self, key: str) -> str | None:
        """A value the index keeps about itself (``openalex_updated``, ``built_at``...)."""
        if not self._has_v2:
            return None
        with self._lock:
            row = self._db.execute("SELECT value FROM index_meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Set a value about the index (inside the caller's transaction)."""
        self._db.execute(
            "INSERT OR REPLACE INTO index_meta (key, value) VALUES (?, ?)", (key, value)
        )

    def build(self, dump: str | Path, *, progress: Callable[[int], None] | None = None) -> int:
        """Add every work of an OpenAlex or Crossref JSONL dump (``.jsonl`` or ``.jsonl.gz``).

        Lines that are JSON but not works are skipped: :attr:`last_build` counts them and gives
        the first few line numbers and reasons. Nothing is added when the file is broken.

        Returns:
            How many records were added.

        Raises:
            InputError: the file is missing or cannot be read as JSON Lines (not gzip although
                named ``.gz``, truncated, not UTF-8, a line that is not JSON); the message names
                the file and the line.
        """
        if not isinstance(dump, str | Path):
            msg = f"a dump is a file path, got {type(dump).__name__}"
            raise InputError(msg, path="dump")
        path = Path(dump)
        report = DumpReport(path=str(dump))
        self.last_build = report
        if not path.is_file():
            msg = f"no such dump file: {path}"
            raise InputError(msg, path=str(path))
        file = SnapshotFile(path, path.name, "jsonl", size=path.stat().st_size)
        lines = 0
        with self._lock:
            try:
                for batch in read_file(file):
                    works = batch.works
                    report.records += self.store([w.row for w in works], [w.work_id for w in works])
                    self.store_notices(batch.notices)
                    report.skipped += batch.skipped
                    report.examples += batch.examples[: 5 - len(report.examples)]
                    lines += batch.lines
                    if progress is not None:
                        progress(lines)
                self.refresh_term_counts()
                self._db.commit()
            except BaseException:
                # A dump that turns out broken halfway adds nothing: no index that looks complete.
                self._db.rollback()
                raise
        if report.skipped:
            _log.warning(
                "%s: %d line(s) skipped (%s)", dump, report.skipped, "; ".join(report.examples)
            )
        return report.records

    def stats(self) -> dict[str, Any]:
        """Record counts for ``citeverify index stats``, and how fresh the data is."""
        with self._lock:
            total, dois, first, last = self._db.execute(
                "SELECT count(*), count(doi), min(year), max(year) FROM works"
            ).fetchone()
            kinds: dict[str, int] = {}
            meta: dict[str, str] = {}
            files = 0
            if self._has_v2:
                kinds = dict(self._db.execute("SELECT kind, count(*) FROM notices GROUP BY kind"))
                meta = dict(self._db.execute("SELECT key, value FROM index_meta"))
                (files,) = self._db.execute("SELECT count(*) FROM build_files").fetchone()
        return {
            "path": self.path,
            "records": total,
            "with_doi": dois,
            "years": [first, last],
            "notices": kinds,
            "snapshot_files": files,
            "openalex_updated": meta.get("openalex_updated"),
            "updated_at": meta.get("updated_at"),
        }

    # --- querying ---------------------------------------------------------------------------

    def by_doi(self, doi: str) -> Record | None:
        """The record with this DOI (case-insensitive), or None."""
        if not encodable(doi):
            return None
        with self._lock:
            row = self._db.execute(
                f"SELECT {_FIELDS} FROM works WHERE doi = ?",
                (doi.lower(),),
            ).fetchone()
            return self.with_notices([_record(row)])[0] if row else None

    def by_numbers(
        self,
        *,
        year: int,
        volume: str | None,
        first_page: str | None = None,
        author: str | None = None,
        limit: int = 50,
    ) -> list[Record]:
        """Records of this year and volume, for references without a title.

        ACS, AIP and Elsevier strings give first author, venue, year, volume and first page but
        no title; the comparison decides among these candidates. Records without a volume are
        candidates too (books and chapters; a string's "2004, 171" may be a page), after those
        of the volume; with ``first_page``, only records whose pages start there or that have
        no pages; records with ``author`` (the first author's family name) in their author list
        come first. One volume of one year holds thousands of works in a full index, so the
        order matters: the ``(year, volume)`` index finds the rows, benchmark if changing.
        """
        texts = (volume, first_page, author)
        if year_field(year) is None or not all(encodable(t or "") for t in texts):
            return []
        where, params = "year = ?", list[Any]([year])
        order: list[str] = []
        order_params: list[Any] = []
        if volume is not None:
            where += " AND (volume = ? OR volume IS NULL)"
            params.append(volume)
            order.append("volume IS NULL")
        if first_page is not None:
            # "766-770", and as deposited "30(7), 766-770" (see _compare._first_page).
            starts = (
                "(pages = ? OR instr(pages, ?) = 1 OR instr(pages, ?) = 1 OR instr(pages, ?) > 0)"
            )
            where += f" AND (pages IS NULL OR {starts})"
            page_params = [first_page, f"{first_page}-", f"{first_page}\u2013", f", {first_page}"]
            params += page_params
            order.append(f"coalesce(NOT {starts}, 1)")  # no pages (NULL) after a match
            order_params += page_params
        if author:
            order.append("instr(authors, ?) = 0")
            order_params.append(json.dumps(author, ensure_ascii=False)[1:-1])
        sql = f"SELECT {_FIELDS} FROM works WHERE {where}"  # constant fragments; values bound
        if order:
            sql += " ORDER BY " + ", ".join(order)
        with self._lock:
            rows = self._db.execute(f"{sql} LIMIT ?", (*params, *order_params, limit)).fetchall()
            return self.with_notices([_record(r) for r in rows])

    def search(
        self, title: str, *, limit: int = 5, author: str | None = None, year: int | None = None
    ) -> list[Record]:
        """Records whose title best matches ``title`` (bm25), best first.

        A title word the index has never seen (a typo) is replaced by the index's words that
        look like it. A short title ("Introduction", "Editorial": shared by many works) is
        searched with ``author``, the cited first author's family name, as well, and with
        ``year``, the cited year (give or take one), so that the cited work is among the
        candidates.
        """
        if not encodable(title) or (author is not None and not encodable(author)):
            return []
        words = title_words(title)
        if not words:
            return []
        with self._lock:
            counts = self._term_counts(words)
        wanted = fold(title)
        found: dict[str | None, Record] = {}
        alternatives: dict[str, list[str]] = {}

        def typos() -> dict[str, list[str]]:
            # Unknown words may be typos of words the index has ("repsonse" for "response").
            # Only looked for when needed, so a correct title costs no fuzzy search.
            if not alternatives:
                unknown = [w for w in words if not counts.get(w)][:_TYPO_WORDS]
                alternatives.update((w, self._close_terms(w)) for w in unknown)
            return alternatives

        if len(words) <= _SHORT_TITLE:
            # Generic titles: thousands of records are called "Introduction". The cited
            # author's is looked for first, and more of the others are compared.
            limit = max(limit, _SHORT_TITLE_LIMIT)
            if author and (names := title_words(author)):
                groups = [
                    " OR ".join(f'"{t}"' for t in ([w] if counts.get(w) else typos().get(w, [])))
                    for w in words
                ]
                if all(groups):
                    title_part = " AND ".join(f"({g})" for g in groups)
                    phrase = " ".join(names)
                    query = f'title : ({title_part}) AND authors : "{phrase}"'
                    for r in self._match(query, limit, wanted):
                        found.setdefault(r.doi or r.title, r)
        rare = sorted((w for w in words if counts.get(w)), key=lambda w: counts[w])[:_SEARCH_TERMS]
        year_found = False
        if (
            self._keyed
            and rare
            and len(words) <= KEYED_WORDS
            and (cited := year_field(year)) is not None
        ):
            # A short title of common words ("Index", "Oral contraceptives") is in thousands of
            # works, and ranking them all costs ~2 microseconds each (100 ms at 5M works); the
            # works of the cited year hold each of its words as a key of their own ("2007index"),
            # a posting list as short as one year's share of the word's.
            # Keys only: short posting lists, and bm25 (which counts every work of each word
            # it is given) ranks by them cheaply, the shortest title first.
            keys = {w: [f"{y}{w}" for y in (cited - 1, cited, cited + 1)] for w in rare}
            near = " AND ".join(
                "(" + " OR ".join(f'"{k}"' for k in ks) + ")" for ks in keys.values()
            )
            with self._lock:
                held = sum(self._term_counts([k for ks in keys.values() for k in ks]).values())
            keyed = self._match(f"keys : {near}", limit, wanted, cost=held, ranked=(0.0, 0.0, 1.0))
            for r in keyed:
                found.setdefault(r.doi or r.title, r)
            # Still asked with the cited author next (cheap): the year's works of that title
            # may be others' (a generic title, or one repeated by another work).
            year_found = _close(wanted, keyed)
        if author and rare and (names := [n for n in title_words(author) if len(n) > 1]):
            # The cited first author with the title's rarest words: in a large index many works
            # share a title's words (and whole titles), and bm25 alone ranks the cited work
            # below them; its author finds it among a handful (issue 35, at 300,000 works of
            # the realistic generator: 87.7% -> see bench/README.md).
            phrase = " ".join(names)
            # All of the 3 rarest words first (the works of a common name, "Kim", with one
            # word of the title are many), then any of the rarest (a typo in one of them).
            author_found = False
            for title_part in (
                " AND ".join(f'"{w}"' for w in rare[:3]),
                " OR ".join(f'"{w}"' for w in _bounded(rare, counts)),
            ):
                by_author = self._match(
                    f'title : ({title_part}) AND authors : "{phrase}"',
                    _AUTHOR_LIMIT,
                    wanted,
                    cost=sum(counts[w] for w in rare[:3]),
                )
                for r in by_author:
                    found.setdefault(r.doi or r.title, r)
                if _close(wanted, by_author):
                    author_found = True
                    break
        else:
            author_found = False
        # First all of the 3 rarest words (a correct title has them: tiny posting-list
        # intersections, ~0.2 ms at 1M records); when that finds nothing like the title (a
        # typo, a wrong word), any of the 4 rarest (~2 ms). Benchmark if changing.
        passes: dict[str, int] = {}  # query: the works bm25 would count to rank it
        # A one-word title alone (no author found, no year key): bounded like an OR, or, in an
        # index without keys (built before them), by what it was then.
        alone = _OR_MAX_DF if self._keyed else _ALONE_MAX_DF
        settled = author_found or year_found
        if rare and not settled and (len(rare) > 1 or counts[rare[0]] <= alone):
            # (A title of one common word, "Editorial" without its author: scoring every work
            # that has it costs tens of ms at 1M works, and finds no one work among them.)
            passes[" AND ".join(f'"{w}"' for w in rare[:3])] = sum(counts[w] for w in rare[:3])
            # Any of the rarest words, as many as hold at most _OR_MAX_DF works together: an
            # OR of common words scores every work holding one (20-50 ms at 1M works, growing
            # with the index).
            bounded = _bounded(rare, counts)
            if counts[bounded[0]] <= _OR_MAX_DF:
                passes[" OR ".join(f'"{w}"' for w in bounded)] = sum(counts[w] for w in bounded)
        records: list[Record] = []
        for query, cost in passes.items():
            records = self._match(f"title : ({query})", limit, wanted, cost=cost)
            if _close(wanted, records):
                break
        else:
            if settled:
                return self._finish(found, records)
            close = [t for terms in typos().values() for t in terms]
            if close:
                with self._lock:
                    counts.update(self._term_counts(close))
                # The rarest of the known words and the typos' look-alikes, bounded like any OR
                # ("beneit" looks like "benefits", in a hundred thousand works).
                either = sorted(
                    dict.fromkeys([*rare, *(t for t in close if counts.get(t))]),
                    key=lambda w: counts[w],
                )
                bounded = _bounded(either, counts) if either else []
                if bounded and counts[bounded[0]] <= _OR_MAX_DF:
                    query = " OR ".join(f'"{w}"' for w in bounded)
                    records = self._match(f"title : ({query})", limit, wanted)
        return self._finish(found, records)

    def _term_counts(self, terms: Sequence[str]) -> dict[str, int]:
        """How many works hold each term (the caller locks).

        From ``term_df``, and for terms not counted there yet (added since the last refresh, or
        in no work: a typo's empty posting list costs nothing to count) from the full-text
        index's own vocabulary.
        """
        counts: dict[str, int] = {}
        if self._has_v2 and terms:
            marks = ",".join("?" * len(terms))
            counts.update(
                self._db.execute(f"SELECT term, doc FROM term_df WHERE term IN ({marks})", terms)
            )
        if missing := [t for t in terms if t not in counts]:
            marks = ",".join("?" * len(missing))
            counts.update(
                self._db.execute(
                    f"SELECT term, doc FROM works_vocab WHERE term IN ({marks})", missing
                )
            )
        return counts

    @property
    def _counts(self) -> str:
        """The table to scan for the words of a prefix (typos).

        ``term_df`` when refreshed, else the FTS's own vocabulary (which counts each word it
        lists: slower).
        """
        if self._has_v2 and self._db.execute("SELECT 1 FROM term_df LIMIT 1").fetchone():
            return "term_df"
        return "works_vocab"

    def _finish(self, found: dict[str | None, Record], records: list[Record]) -> list[Record]:
        for r in records:
            found.setdefault(r.doi or r.title, r)
        with self._lock:
            return self.with_notices(list(found.values()))

    def refresh_term_counts(self) -> None:
        """Copy the words' counts from the full-text index into ``term_df`` (after a build).

        A full scan of the vocabulary: 0.7 s at 1,000,000 works. Words added later are counted
        on demand until the next refresh, and the counts of others may lag: they only choose
        which words a search asks for first.
        """
        self._db.execute("DELETE FROM term_df")
        self._db.execute("INSERT INTO term_df (term, doc) SELECT term, doc FROM works_vocab")

    def _match(
        self,
        query: str,
        limit: int,
        wanted: str,
        *,
        cost: int = 0,
        ranked: tuple[float, ...] = (10.0, 1.0, 0.0),
    ) -> list[Record]:
        """The ``limit`` works that match ``query`` whose titles are most like ``wanted``.

        FTS5's bm25 first counts, for each word of the query, every work that holds it (its
        idf): a cost of the words' counts, not of the matches (65 ms for an author and three
        title words that match one work at 20M works). So the matches are listed first,
        unranked (a walk of the posting lists); when there are at most ``_RANK_CAP``, they are
        ranked here by title likeness. Only a larger match set is ranked by bm25 (``ranked``:
        the columns' weights), and only when ``cost`` (the words' counts) is at most
        ``_BM25_MAX_COUNTS``; else the first ``_RANK_CAP`` matches are ranked here.
        """
        with self._lock:
            ids = [
                rowid
                for (rowid,) in self._db.execute(
                    "SELECT rowid FROM works_fts WHERE works_fts MATCH ? LIMIT ?",
                    (query, _RANK_CAP + 1),
                )
            ]
            if len(ids) > _RANK_CAP and cost <= _BM25_MAX_COUNTS:
                weights = ", ".join(map(str, ranked if self._keyed else ranked[:2]))
                rows = self._db.execute(
                    f"SELECT {_W_FIELDS} FROM works_fts JOIN works w ON w.id = works_fts.rowid "
                    f"WHERE works_fts MATCH ? ORDER BY bm25(works_fts, {weights}) LIMIT ?",
                    (query, limit),
                ).fetchall()
                return [_record(r) for r in rows]
            ids = ids[:_RANK_CAP]
            marks = ",".join("?" * len(ids))
            records = [
                _record(r)
                for r in self._db.execute(f"SELECT {_FIELDS} FROM works WHERE id IN ({marks})", ids)
            ]
        return sorted(records, key=lambda r: _likeness(wanted, r.title), reverse=True)[:limit]

    def _close_terms(self, word: str) -> list[str]:
        """Index words that look like ``word`` (rapidfuzz ratio >= 80), the closest first.

        Looked for among the words that start like it: its first two letters, or its first and
        third (a typo in the second letter). Benchmark if changing.
        """
        if len(word) < _TYPO_MIN_CHARS:
            return []
        terms: set[str] = set()
        with self._lock:
            # term_df (a B-tree) when it was refreshed: fts5vocab counts each word it lists by
            # reading its posting list, 20 ms for a scan at 1M works.
            table = self._counts
            for prefix in dict.fromkeys((word[:2], word[0] + word[2])):
                rows = self._db.execute(
                    f"SELECT term FROM {table} WHERE term >= ? AND term < ? LIMIT ?",
                    (prefix, prefix + "\U0010ffff", _TYPO_SCAN),
                )
                terms.update(t for (t,) in rows if abs(len(t) - len(word)) <= 2 and not t.isdigit())
        close = process.extract(
            word, list(terms), scorer=fuzz.ratio, score_cutoff=_TYPO_RATIO, limit=_TYPO_TERMS
        )
        return [term for term, _, _ in close]


#: A title of at most this many words (after stop words) is searched with its first author too,
#: and for at least _SHORT_TITLE_LIMIT candidates (generic titles).
_SHORT_TITLE = 2
_SHORT_TITLE_LIMIT = 50
#: Matches ranked here by title likeness (more are ranked by bm25, or cut to this many).
_RANK_CAP = 40
#: bm25 ranks a query only when the works holding its words number at most this many in all:
#: it counts them all first, then scores each match (5-15 microseconds a work at 20M works).
_BM25_MAX_COUNTS = 2_000
#: Candidates found by the cited first author and the title's rarest words.
_AUTHOR_LIMIT = 10
#: An OR of title words asks only for words that hold at most this many works together (each
#: match is scored: 2-5 microseconds a work at 5M works, the cost of a search's slowest passes).
_OR_MAX_DF = 2_000
#: A title of one searchable word is looked for without its author or year in an index without
#: keys only when the word holds at most this many works.
_ALONE_MAX_DF = 50_000
#: Typo search: at most this many unknown words per title, of at least this many letters, each
#: replaced by at most _TYPO_TERMS index words at least _TYPO_RATIO similar, found among at most
#: _TYPO_SCAN words of the same beginning.
_TYPO_WORDS = 3
_TYPO_MIN_CHARS = 4
_TYPO_TERMS = 3
_TYPO_RATIO = 80
_TYPO_SCAN = 20_000


def _bounded(rare: list[str], counts: dict[str, int]) -> list[str]:
    """The rarest words (``rare``, rarest first) that hold at most ``_OR_MAX_DF`` works together.

    At least the rarest one, whatever its count.
    """
    out = rare[:1]
    total = counts[rare[0]]
    for word in rare[1:]:
        total += counts[word]
        if total > _OR_MAX_DF:
            break
        out.append(word)
    return out


def _likeness(wanted: str, title: str | None) -> tuple[float, float]:
    """How like the cited title a work's is: its words (set), then its whole (order, length)."""
    have = fold(title or "")
    return fuzz.token_set_ratio(wanted, have), fuzz.ratio(wanted, have)


def _close(wanted: str, records: list[Record]) -> bool:
    """Whether one of the records has a title like ``wanted`` (a candidate at all)."""
    return any(
        fuzz.token_set_ratio(wanted, fold(r.title or "")) >= CANDIDATE_MIN_TITLE for r in records
    )


def _record(row: tuple[Any, ...]) -> Record:
    doi, title, authors, year, venue, volume, issue, pages, kind, url = row
    return Record(
        source="LOCAL",
        title=title,
        authors=tuple(Author(f, g) for f, g in json.loads(authors)),
        year=year,
        venue=venue,
        doi=doi,
        volume=volume,
        issue=issue,
        pages=pages,
        kind=kind,
        url=url,
    )


@dataclass
class DumpReport:
    """What :meth:`LocalIndex.build` read from one dump.

    Attributes:
        path: The dump file.
        records: Records added.
        skipped: Lines skipped because they are JSON but not works.
        examples: The first few skipped lines, as ``"line 12: not a JSON object"``.
    """

    path: str
    records: int = 0
    skipped: int = 0
    examples: list[str] = field(default_factory=list)

    def skip(self, number: int, reason: str) -> None:
        """Count a skipped line."""
        self.skipped += 1
        if len(self.examples) < 5:
            self.examples.append(f"line {number}: {reason}")


def connect_sqlite(path: Any, *, what: str) -> sqlite3.Connection:
    """A connection to a SQLite file, or an InputError that says why it cannot be opened.

    SQLite opens lazily: a file that is not a database fails at the first statement, so one is
    run here.
    """
    if not isinstance(path, str | Path):
        msg = f"the {what} path must be a string or a Path, got {type(path).__name__}"
        raise InputError(msg, path=what)
    name = str(path)
    if name != ":memory:":
        folder = Path(name).parent
        if not folder.is_dir():
            msg = f"cannot open the {what} {name}: no such folder {folder}"
            raise InputError(msg, path=name)
        if Path(name).is_dir():
            msg = f"cannot open the {what} {name}: it is a folder, not a file"
            raise InputError(msg, path=name)
    try:
        db = sqlite3.connect(name, check_same_thread=False, timeout=30.0)
    except (sqlite3.Error, ValueError) as exc:  # ValueError: a NUL in the path
        msg = f"cannot open the {what} {name}: {exc}"
        raise InputError(msg, path=name) from None
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        db.close()
        msg = f"{name} is not a SQLite database, so not a citeverify {what} ({exc})"
        raise InputError(msg, path=name) from None
    return db


def require_columns(
    db: sqlite3.Connection, table: str, columns: set[str], *, what: str, path: str
) -> set[str]:
    """The columns ``table`` has, or an InputError when some of ``columns`` are missing.

    A SQLite file with a table of our name but not our columns is someone else's database.
    """
    have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}  # our names only
    if missing := columns - have:
        msg = (
            f"{path} is a SQLite database but not a {what} "
            f"(its {table} table has no {', '.join(sorted(missing))})"
        )
        raise InputError(msg, path=path)
    return have


def encodable(text: Any) -> bool:
    """A string SQLite can bind: lone surrogates cannot be encoded as UTF-8."""
    return isinstance(text, str) and (text.isascii() or LONE_SURROGATE.search(text) is None)
