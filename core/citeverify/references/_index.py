"""The local index: bibliographic records in SQLite with FTS5, the embedded default source.

Built by streaming OpenAlex works or Crossref works JSONL (optionally gzipped, the formats of
their public snapshots) in batches, so memory stays flat whatever the dump size. Queried by DOI
(exact) and by title (FTS5 with bm25 ranking).
"""

from __future__ import annotations

import gzip
import json
import re
import sqlite3
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from citeverify._errors import InputError
from citeverify.references._compare import CANDIDATE_MIN_TITLE
from citeverify.references._model import Author, Record
from citeverify.references._text import norm

__all__ = ["LocalIndex", "record_from_esummary", "record_from_work"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS works (
    id INTEGER PRIMARY KEY,
    doi TEXT UNIQUE,
    title TEXT,
    authors TEXT NOT NULL,      -- JSON list of [family, given]
    year INTEGER,
    venue TEXT,
    volume TEXT, issue TEXT, pages TEXT, kind TEXT, url TEXT
);
CREATE VIRTUAL TABLE IF NOT EXISTS works_fts USING fts5(
    title, authors, content='works', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS works_vocab USING fts5vocab(works_fts, 'row');
"""
#: Title words used in a search: the rarest ones (by document frequency) find the work with the
#: shortest posting lists. Benchmark if changing (bench/bench_references.py: p50 <= 10 ms at 1M).
_SEARCH_TERMS = 4
_BATCH = 5000
_STOP = frozenset(
    {"a", "an", "and", "are", "as", "at", "by", "for", "from", "in", "into", "is", "of", "on",
     "or", "the", "to", "with"}
)  # fmt: skip


class LocalIndex:
    """A SQLite FTS5 index of bibliographic records.

    Args:
        path: The database file (created when missing). ``":memory:"`` for a throwaway index.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    # --- building ---------------------------------------------------------------------------

    def add(self, records: Iterable[Record]) -> int:
        """Insert records (a DOI already present is replaced); returns how many were added."""
        count = 0
        rows: list[tuple[Any, ...]] = []
        with self._lock:
            for record in records:
                rows.append(_row(record))
                if len(rows) >= _BATCH:
                    count += self._insert(rows)
                    rows = []
            count += self._insert(rows)
            self._db.execute("INSERT INTO works_fts(works_fts) VALUES ('rebuild')")
            self._db.commit()
        return count

    def _insert(self, rows: list[tuple[Any, ...]]) -> int:
        if rows:
            self._db.executemany(
                "INSERT OR REPLACE INTO works (doi, title, authors, year, venue, volume, issue, "
                "pages, kind, url) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        return len(rows)

    def build(self, dump: str | Path, *, progress: Callable[[int], None] | None = None) -> int:
        """Add every work of an OpenAlex or Crossref JSONL dump (``.jsonl`` or ``.jsonl.gz``).

        Raises:
            InputError: the file is missing or a line is not JSON (with its line number).
        """
        return self.add(_read_dump(Path(dump), progress))

    def stats(self) -> dict[str, Any]:
        """Record counts for ``citeverify index stats``."""
        with self._lock:
            total, dois, first, last = self._db.execute(
                "SELECT count(*), count(doi), min(year), max(year) FROM works"
            ).fetchone()
        return {"path": self.path, "records": total, "with_doi": dois, "years": [first, last]}

    # --- querying ---------------------------------------------------------------------------

    def by_doi(self, doi: str) -> Record | None:
        """The record with this DOI (case-insensitive), or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT doi, title, authors, year, venue, volume, issue, pages, kind, url "
                "FROM works WHERE doi = ?",
                (doi.lower(),),
            ).fetchone()
        return _record(row) if row else None

    def search(self, title: str, *, limit: int = 5) -> list[Record]:
        """Records whose title best matches ``title`` (bm25), best first."""
        folded = unicodedata.normalize("NFKD", title.casefold())
        folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
        words = list(dict.fromkeys(w for w in re.findall(r"[^\W_]+", folded) if w not in _STOP))[
            :32
        ]
        if not words:
            return []
        with self._lock:
            marks = ",".join("?" * len(words))
            counts = dict(
                self._db.execute(
                    f"SELECT term, doc FROM works_vocab WHERE term IN ({marks})", words
                )
            )
        rare = sorted((w for w in words if counts.get(w)), key=lambda w: counts[w])[:_SEARCH_TERMS]
        if not rare:
            return []
        # First all of the 3 rarest words (a correct title has them: tiny posting-list
        # intersections, ~0.2 ms at 1M records); when that finds nothing like the title (a
        # typo, a wrong word), any of the 4 rarest (~2 ms). Benchmark if changing.
        wanted = norm(title)
        for joiner, terms in ((" AND ", rare[:3]), (" OR ", rare)):
            query = joiner.join(f'"{w}"' for w in terms)
            with self._lock:
                rows = self._db.execute(
                    "SELECT w.doi, w.title, w.authors, w.year, w.venue, w.volume, w.issue, "
                    "w.pages, w.kind, w.url FROM works_fts JOIN works w ON w.id = works_fts.rowid "
                    "WHERE works_fts MATCH ? ORDER BY bm25(works_fts, 10.0, 1.0) LIMIT ?",
                    (f"title : ({query})", limit),
                ).fetchall()
            records = [_record(r) for r in rows]
            if any(
                fuzz.token_set_ratio(wanted, norm(r.title or "")) >= CANDIDATE_MIN_TITLE
                for r in records
            ):
                return records
        return records


def _row(r: Record) -> tuple[Any, ...]:
    authors = json.dumps([[a.family, a.given] for a in r.authors], ensure_ascii=False)
    return (
        r.doi.lower() if r.doi else None,
        r.title,
        authors,
        r.year,
        r.venue,
        r.volume,
        r.issue,
        r.pages,
        r.kind,
        r.url,
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


def _read_dump(path: Path, progress: Callable[[int], None] | None) -> Iterator[Record]:
    if not path.is_file():
        msg = f"no such dump file: {path}"
        raise InputError(msg, path=str(path))
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                work = json.loads(line)
            except json.JSONDecodeError as exc:
                msg = f"{path}:{number}: not JSON ({exc.msg})"
                raise InputError(msg, path=f"{path}:{number}") from None
            record = record_from_work(work)
            if record is not None:
                yield record
            if progress is not None and number % 10_000 == 0:
                progress(number)


def record_from_work(work: Any) -> Record | None:
    """A Record from an OpenAlex work or a Crossref work (``message`` or bare), else None."""
    if not isinstance(work, dict):
        return None
    if "message" in work and isinstance(work["message"], dict):
        work = work["message"]
    try:
        if "authorships" in work or "display_name" in work or "publication_year" in work:
            return _from_openalex(work)
        if "DOI" in work or "container-title" in work:
            return _from_crossref(work)
    except (AttributeError, TypeError, ValueError):
        # Dumps and API answers are untrusted: a work whose fields have the wrong types is
        # skipped, like a work of neither format.
        return None
    return None


def _str(value: Any) -> str | None:
    """A non-empty string field, or None (payloads are untrusted: a title may be a number)."""
    return value if isinstance(value, str) and value else None


def _doi(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    return re.sub(r"^https?://(?:dx\.)?doi\.org/", "", value.strip()).lower()


def _from_openalex(w: dict[str, Any]) -> Record:
    authors = []
    for a in w.get("authorships") or []:
        name = (a.get("author") or {}).get("display_name") or a.get("raw_author_name") or ""
        if name:
            parts = name.split()
            authors.append(Author(parts[-1], " ".join(parts[:-1])))
    location = w.get("primary_location") or {}
    source = (location.get("source") or {}) if isinstance(location, dict) else {}
    biblio = w.get("biblio") or {}
    pages = "-".join(p for p in (biblio.get("first_page"), biblio.get("last_page")) if p) or None
    year = w.get("publication_year")
    return Record(
        source="OPENALEX",
        title=_str(w.get("title")) or _str(w.get("display_name")),
        authors=tuple(authors),
        year=int(year) if isinstance(year, int | str) and str(year).isdigit() else None,
        venue=_str(source.get("display_name")) or _str(source.get("host_organization_name")),
        doi=_doi(w.get("doi")),
        volume=biblio.get("volume"),
        issue=biblio.get("issue"),
        pages=pages,
        kind=w.get("type"),
    )


def _from_crossref(w: dict[str, Any]) -> Record:
    authors = tuple(
        Author(a.get("family") or a.get("name") or "", a.get("given") or "")
        for a in w.get("author") or []
        if isinstance(a, dict) and (a.get("family") or a.get("name"))
    )
    year = None
    for key in ("issued", "published", "published-print", "published-online"):
        parts = (w.get(key) or {}).get("date-parts") or [[None]]
        if parts and parts[0] and parts[0][0]:
            year = int(parts[0][0])
            break
    titles = w.get("title") or []
    containers = w.get("container-title") or []
    venue = _str(containers[0]) if containers else _str(w.get("publisher"))
    return Record(
        source="CROSSREF",
        title=_str(titles[0]) if titles else None,
        authors=authors,
        year=year,
        venue=venue,
        doi=_doi(w.get("DOI")),
        volume=w.get("volume"),
        issue=w.get("issue"),
        pages=w.get("page"),
        kind=w.get("type"),
    )


def record_from_esummary(entry: dict[str, Any]) -> Record:
    """A Record from one NCBI E-utilities esummary entry (``result[uid]``)."""
    authors = []
    for a in entry.get("authors") or []:
        name = str(a.get("name") or "")
        family, _, initials = name.rpartition(" ")
        authors.append(Author(family or name, initials if family else ""))
    year = str(entry.get("pubdate") or "")[:4]
    doi = next(
        (i.get("value") for i in entry.get("articleids") or [] if i.get("idtype") == "doi"), None
    )
    return Record(
        source="PUBMED",
        title=_str(entry.get("title")),
        authors=tuple(authors),
        year=int(year) if year.isdigit() else None,
        venue=entry.get("fulljournalname") or entry.get("source"),
        doi=doi.lower() if isinstance(doi, str) else None,
        volume=entry.get("volume") or None,
        issue=entry.get("issue") or None,
        pages=entry.get("pages") or None,
    )
