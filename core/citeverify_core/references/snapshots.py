"""The bibliographic snapshots as they are published, read file by file for the local index.

``citeverify index build`` and ``index update`` take any of these (issue 35):

- **an OpenAlex works snapshot**: a folder of ``updated_date=YYYY-MM-DD/part_NNN.gz`` partitions
  (JSON Lines, gzip) or ``part_NNNN.parquet`` (the Parquet copy published since 2026), with its
  manifest (``manifest`` in the layout before 2026, ``manifest.json`` since: entries with the
  file's ``url`` and ``meta.record_count`` / ``meta.content_length``). The folder may be the
  works folder itself, or any folder above it (``openalex-snapshot/``, ``data/``,
  ``data/jsonl/``). Merged works are listed in ``merged_ids/works/YYYY-MM-DD.csv.gz``
  (``merge_date,id,merge_into_id``; kept under ``legacy-data/`` since 2026) and are removed;
- **Crossref's public data file**: its folder of ``*.json.gz`` files (each one JSON object with
  an ``items`` array), or the archive (``.tar``, read in place; a ``.tar.gz`` is refused with
  what to do: each of its files would be decompressed from the archive's start);
- **JSON Lines dumps** (``.jsonl``, ``.jsonl.gz``) of OpenAlex or Crossref works, as before;
- **the Retraction Watch CSV** (``retraction_watch.csv``, as Crossref distributes it): notices only.

A :class:`SnapshotFile` is the unit of work: parsed alone (by one worker process), written in one
transaction, recorded as done in the index, so a build that stops resumes at the first file not
done, and one broken file adds nothing and is named (the dump-safety rules of
:mod:`citeverify_core.references.index`). The manifest is checked before anything is read: a
listed file that is missing or of another size is named, and a file whose record count is not the
manifest's adds nothing.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import tarfile
import unicodedata
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal, cast

from citeverify_core.errors import InputError, MissingExtraError
from citeverify_core.lookups.bibliographic import Notice, Record
from citeverify_core.lookups.notices import notices_of_work, retraction_watch_notice
from citeverify_core.lookups.works import record_from_work

__all__ = [
    "Batch",
    "FileKind",
    "ParsedWork",
    "Snapshot",
    "SnapshotFile",
    "open_snapshot",
    "read_file",
    "row_of",
    "title_keys",
    "title_words",
]

FileKind = Literal[
    "openalex-jsonl", "openalex-parquet", "crossref-json", "jsonl", "retraction-watch", "merged-ids"
]
#: Works per batch handed to the writer.
BATCH = 5000
#: A Crossref data file is one JSON object; one larger than this (decompressed) is refused as
#: broken rather than read into memory (the published files hold about 5,000 works, tens of
#: MB). Its works are decoded one at a time (``_items``): the text is what it costs.
MAX_JSON_FILE_BYTES = 512 * 1024 * 1024
#: A dump line longer than this is skipped, read in chunks (as ``index.MAX_LINE_BYTES``).
MAX_LINE_BYTES = 16 * 1024 * 1024
_PARTITION = re.compile(r"updated_date=(\d{4}-\d{2}-\d{2})")
_MERGED_NAME = re.compile(r"(\d{4}-\d{2}-\d{2})\.csv(?:\.gz)?$")
_OPENALEX_ID = re.compile(r"(?:https?://openalex\.org/)?(W\d{1,15})$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class SnapshotFile:
    """One file of a snapshot: what it is, where, and what its manifest says of it.

    Attributes:
        path: The file on disk (the archive, for a member of a ``.tar``).
        name: Its name relative to the snapshot (``updated_date=2024-01-02/part_000.gz``): what
            the index records as done.
        kind: How it is read.
        updated: The partition's ``updated_date`` (OpenAlex), or a merge file's date.
        expected_records: The manifest's record count, when there is one.
        size: Its size in bytes (compressed), for progress and the manifest check.
        member: The member's name inside a ``.tar`` archive.
        offset: Where the member's data starts in an uncompressed ``.tar`` (read in place).
    """

    path: Path
    name: str
    kind: FileKind
    updated: str | None = None
    expected_records: int | None = None
    size: int = 0
    member: str | None = None
    offset: int | None = None


@dataclass(slots=True)
class Snapshot:
    """The files of one or more snapshots, in the order they must be applied.

    Attributes:
        source: ``openalex``, ``crossref``, ``jsonl``, ``retraction-watch`` or ``mixed``.
        files: Work files in order (OpenAlex partitions oldest first, so that a newer record of
            a work replaces the older one), then merge lists, then notice files.
        problems: What the manifest check found before reading (missing files, other sizes).
    """

    source: str
    files: list[SnapshotFile] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def latest(self) -> str | None:
        """The newest ``updated_date`` among the files (what an index built from it holds)."""
        dates = [f.updated for f in self.files if f.updated and f.kind != "merged-ids"]
        return max(dates) if dates else None

    def newer_than(self, date: str | None) -> Snapshot:
        """The files dated after ``date`` (an update's partitions and merge lists)."""
        if date is None:
            return self
        files = [f for f in self.files if f.updated is None or f.updated > date]
        return Snapshot(self.source, files, self.problems)


@dataclass(slots=True)
class ParsedWork:
    """One work of a file, as the index stores it."""

    row: tuple[Any, ...]  # row_of(record): plain strings, cheap to send between processes
    work_id: str | None


@dataclass(slots=True)
class Batch:
    """Part of one file's content: works, notices, merged ids, and lines skipped."""

    works: list[ParsedWork] = field(default_factory=list)
    notices: list[tuple[str, Notice]] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    lines: int = 0  # records read (manifest count): works + skipped
    skipped: int = 0
    examples: list[str] = field(default_factory=list)

    def skip(self, where: str, reason: str) -> None:
        """Count a record skipped (JSON, but not a work), keeping the first few places."""
        self.skipped += 1
        if len(self.examples) < 5:
            self.examples.append(f"{where}: {reason}")


# -- finding the files ----------------------------------------------------------------------


def open_snapshot(paths: Sequence[Path]) -> Snapshot:
    """The files to read for ``paths`` (snapshot folders, archives, dumps, a CSV), checked.

    Raises:
        InputError: a path is missing, or a folder holds nothing that can be read.
    """
    parts: list[Snapshot] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            msg = f"no such file or folder: {path}"
            raise InputError(msg, path=str(path))
        parts.append(_one(path))
    sources = {p.source for p in parts}
    snapshot = Snapshot(sources.pop() if len(sources) == 1 else "mixed")
    for part in parts:
        snapshot.files += part.files
        snapshot.problems += part.problems
    order = {"merged-ids": 1, "retraction-watch": 2}
    # Stable: works in their snapshot's order, then merges (by date), then notice files.
    snapshot.files.sort(
        key=lambda f: (order.get(f.kind, 0), f.updated or "" if f.kind == "merged-ids" else "")
    )
    return snapshot


def _one(path: Path) -> Snapshot:
    name = path.name.lower()
    if path.is_file():
        if name.endswith((".tar", ".tar.gz", ".tgz")):
            return _crossref_archive(path)
        if name.endswith((".csv", ".csv.gz")):
            return Snapshot(
                "retraction-watch",
                [SnapshotFile(path, path.name, "retraction-watch", size=_size(path))],
            )
        return Snapshot("jsonl", [SnapshotFile(path, path.name, "jsonl", size=_size(path))])
    works = _openalex_works_folder(path)
    if works is not None:
        return _openalex(path, works)
    crossref = sorted(p for p in path.rglob("*.json.gz") if p.is_file())
    if crossref:
        return Snapshot(
            "crossref",
            [
                SnapshotFile(p, p.relative_to(path).as_posix(), "crossref-json", size=_size(p))
                for p in crossref
            ],
        )
    dumps = sorted(
        p for p in path.rglob("*") if p.is_file() and p.name.endswith((".jsonl", ".jsonl.gz"))
    )
    if dumps:
        return Snapshot(
            "jsonl",
            [
                SnapshotFile(p, p.relative_to(path).as_posix(), "jsonl", size=_size(p))
                for p in dumps
            ],
        )
    msg = (
        f"{path} holds no snapshot: no OpenAlex works partitions (updated_date=.../part_*.gz or "
        ".parquet), no Crossref *.json.gz files, no .jsonl dumps"
    )
    raise InputError(msg, path=str(path))


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _openalex_works_folder(root: Path) -> Path | None:
    """The folder holding ``updated_date=...`` works partitions, at or under ``root``."""
    candidates = [root, root / "works"]
    for base in (root, root / "data"):
        candidates += [base / "works", base / "jsonl" / "works", base / "parquet" / "works"]
    if root.name == "data":
        candidates += [root / "jsonl" / "works", root / "parquet" / "works"]
    for folder in dict.fromkeys(candidates):
        if folder.is_dir() and any(
            p.is_dir() and _PARTITION.fullmatch(p.name) for p in folder.iterdir()
        ):
            return folder
    return None


def _openalex(root: Path, works: Path) -> Snapshot:
    files: list[SnapshotFile] = []
    for partition in sorted(
        p for p in works.iterdir() if p.is_dir() and _PARTITION.fullmatch(p.name)
    ):
        date = _PARTITION.fullmatch(partition.name).group(1)  # type: ignore[union-attr]
        for part in sorted(partition.iterdir()):
            if not part.is_file():
                continue
            if part.name.endswith(".parquet"):
                kind: FileKind = "openalex-parquet"
            elif part.name.endswith(".gz"):
                kind = "openalex-jsonl"
            else:
                continue
            files.append(
                SnapshotFile(part, f"{partition.name}/{part.name}", kind, date, size=_size(part))
            )
    snapshot = Snapshot("openalex", files)
    _check_manifest(root, works, snapshot)
    merged = _merged_folder(root, works)
    if merged is not None:
        for p in sorted(merged.iterdir()):
            if m := _MERGED_NAME.search(p.name):
                snapshot.files.append(
                    SnapshotFile(
                        p, f"merged_ids/works/{p.name}", "merged-ids", m.group(1), size=_size(p)
                    )
                )
    return snapshot


def _merged_folder(root: Path, works: Path) -> Path | None:
    bases = [root, works.parent, works.parent.parent, works.parent.parent.parent]
    for base in dict.fromkeys(bases):
        for sub in ("merged_ids/works", "data/merged_ids/works", "legacy-data/merged_ids/works"):
            if (base / sub).is_dir():
                return base / sub
    return None


def _check_manifest(root: Path, works: Path, snapshot: Snapshot) -> None:
    """Compare the files with the manifest: counts to check, missing files and sizes named."""
    manifest = next(
        (
            p
            for p in (
                works / "manifest",
                works / "manifest.json",
                works.parent / "manifest.json",
                root / "manifest.json",
            )
            if p.is_file()
        ),
        None,
    )
    if manifest is None:
        snapshot.problems.append(f"{works}: no manifest; record counts not checked")
        return
    try:
        data = json.loads(manifest.read_bytes()[: 256 * 1024 * 1024])
    except ValueError:
        data = None
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        snapshot.problems.append(f"{manifest}: not a manifest (JSON with entries); not checked")
        return
    by_name = {f.name: f for f in snapshot.files}
    seen: set[str] = set()
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("url"), str):
            continue
        url: str = entry["url"]
        if "/works/" not in url:
            continue  # the combined manifest.json lists every entity
        m = re.search(r"(updated_date=\d{4}-\d{2}-\d{2}/[^/]+)$", url)
        if not m:
            continue
        name = m.group(1)
        seen.add(name)
        meta: dict[str, Any] = entry["meta"] if isinstance(entry.get("meta"), dict) else {}
        count = meta.get("record_count")
        length = meta.get("content_length")
        found = by_name.get(name)
        if found is None:
            snapshot.problems.append(f"{name}: in the manifest, not on disk")
            continue
        if isinstance(length, int) and length != found.size:
            snapshot.problems.append(
                f"{name}: {found.size:,} bytes on disk, {length:,} in the manifest (a partial "
                "download?)"
            )
        if isinstance(count, int) and not isinstance(count, bool):
            index = snapshot.files.index(found)
            snapshot.files[index] = SnapshotFile(
                found.path, found.name, found.kind, found.updated, count, found.size
            )
    extra = [f.name for f in snapshot.files if f.name not in seen]
    if extra:
        snapshot.problems.append(
            f"{len(extra)} file(s) not in the manifest (read, counts not checked): {extra[0]}"
            + (" ..." if len(extra) > 1 else "")
        )


def _crossref_archive(path: Path) -> Snapshot:
    """The ``.json.gz`` members of a Crossref public data file archive."""
    files: list[SnapshotFile] = []
    in_place = path.name.lower().endswith(".tar")
    if not in_place:
        # A compressed archive has no place to seek to: every member would be decompressed
        # from the start (quadratic over thousands of files).
        msg = (
            f"{path}: a compressed archive cannot be read file by file; extract it "
            "(tar -xzf) and build from the folder, or give the uncompressed .tar"
        )
        raise InputError(msg, path=str(path))
    try:
        with tarfile.open(path, "r:" if in_place else "r:*") as archive:
            for member in archive:
                if member.isfile() and member.name.endswith(".json.gz"):
                    files.append(
                        SnapshotFile(
                            path,
                            member.name,
                            "crossref-json",
                            size=member.size,
                            member=member.name,
                            offset=member.offset_data if in_place else None,
                        )
                    )
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        msg = f"{path}: cannot read the archive ({exc or type(exc).__name__})"
        raise InputError(msg, path=str(path)) from None
    if not files:
        msg = f"{path}: no *.json.gz file in the archive (not a Crossref public data file)"
        raise InputError(msg, path=str(path))
    return Snapshot("crossref", files)


def row_of(r: Record) -> tuple[Any, ...]:
    """A record as the index's ``works`` row: ``LocalIndex.store``'s.

    The columns of ``_COLUMNS`` (the ``doi`` to ``url`` of a Record), then the title's
    :func:`title_keys`; computed where the dump is parsed (in the worker processes of a build),
    not by the one writer.
    """
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
        title_keys(r.title, r.year),
    )


STOP_WORDS = frozenset(
    {"a", "an", "and", "are", "as", "at", "by", "for", "from", "in", "into", "is", "of", "on",
     "or", "the", "to", "with"}
)  # fmt: skip

_TITLE_WORD = re.compile(r"[^\W_]+")
#: A title of at most this many searchable words is keyed by year (``keys``) in the index.
KEYED_WORDS = 3


def title_words(text: str) -> list[str]:
    """The searchable words of a title: folded like the FTS tokenizer, no stop words, <= 32.

    Lower case, not ``casefold``: unicode61 keeps "ß" (casefold makes it "ss", and "Schneeweiß"
    was then searched as a word no work has).
    """
    folded = text.lower()
    if not folded.isascii():  # (most titles are: nothing to decompose)
        folded = unicodedata.normalize("NFKD", folded)
        folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    words = dict.fromkeys(w for w in _TITLE_WORD.findall(folded) if w not in STOP_WORDS)
    return list(words)[:32]


def title_keys(title: str | None, year: int | None) -> str | None:
    """The keys of a short title: each searchable word after its year ("2007index"), else None.

    Only short titles are keyed (the generic ones; a longer title has rarer words), so the
    index grows by a few percent.
    """
    if not title or year is None:
        return None
    words = title_words(title)
    if not words or len(words) > KEYED_WORDS:
        return None
    return " ".join(f"{year}{w}" for w in words)


# -- reading one file -------------------------------------------------------------------------


def _work_id(work: dict[str, Any]) -> str | None:
    value = work.get("id")
    if isinstance(value, str) and (m := _OPENALEX_ID.match(value.strip())):
        return m.group(1).upper()
    return None


def _add_work(batch: Batch, work: Any, where: str) -> None:
    batch.lines += 1
    if not isinstance(work, dict):
        batch.skip(where, "not a JSON object")
        return
    record = record_from_work(work)
    batch.notices += notices_of_work(work)
    if record is None:
        batch.skip(where, "not an OpenAlex or Crossref work")
        return
    batch.works.append(ParsedWork(row_of(record), _work_id(work)))


def read_file(file: SnapshotFile) -> Iterator[Batch]:
    """The content of one file in batches of about :data:`BATCH` works.

    Raises:
        InputError: the file is broken (cannot be read, not gzip although named so, truncated,
            not UTF-8, a line that is not JSON, a Crossref file that is not one JSON object);
            the message names it and the place. Nothing of a broken file may be kept.
    """
    try:
        if file.kind in {"openalex-jsonl", "jsonl"}:
            yield from _read_jsonl(file)
        elif file.kind == "openalex-parquet":
            yield from _read_parquet(file)
        elif file.kind == "crossref-json":
            yield from _read_crossref(file)
        elif file.kind == "merged-ids":
            yield from _read_merged(file)
        else:
            yield from _read_retraction_watch(file)
    except InputError:
        raise
    except (OSError, EOFError, zlib.error, tarfile.TarError, csv.Error) as exc:
        msg = f"{file.name}: cannot read the file ({exc or type(exc).__name__})"
        raise InputError(msg, path=str(file.path)) from None


def _open_bytes(file: SnapshotFile) -> BinaryIO:
    """The file's bytes, decompressed when gzip (an archive member read in place)."""
    if file.member is not None:
        if file.offset is not None:
            raw: Any = open(file.path, "rb")  # noqa: SIM115 - closed by the caller's with
            raw.seek(file.offset)
            data: Any = _Limited(raw, file.size)
        else:
            archive = tarfile.open(file.path, "r:*")  # noqa: SIM115
            member = archive.extractfile(file.member)
            if member is None:
                msg = f"{file.name}: not a file in {file.path}"
                raise InputError(msg, path=str(file.path))
            data = member
        return cast(BinaryIO, gzip.GzipFile(fileobj=data, mode="rb"))
    if file.path.name.endswith(".gz"):
        return cast(BinaryIO, gzip.open(file.path, "rb"))
    return open(file.path, "rb")


class _Limited(io.RawIOBase):
    """At most ``size`` bytes of a stream (an archive member read in place)."""

    def __init__(self, raw: Any, size: int) -> None:
        self._raw = raw
        self._left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._left <= 0:
            return 0
        view = memoryview(buffer)[: self._left]
        n = int(self._raw.readinto(view) or 0)
        self._left -= n
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


def _read_jsonl(file: SnapshotFile) -> Iterator[Batch]:
    batch = Batch()
    number = 0
    try:
        with _open_bytes(file) as stream:
            while raw := stream.readline(MAX_LINE_BYTES):
                number += 1
                where = f"line {number}"
                if len(raw) == MAX_LINE_BYTES and not raw.endswith(b"\n"):
                    while (chunk := stream.readline(MAX_LINE_BYTES)) and not chunk.endswith(b"\n"):
                        pass
                    batch.lines += 1
                    batch.skip(where, f"longer than {MAX_LINE_BYTES:,} bytes")
                    continue
                try:
                    line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
                except UnicodeDecodeError as exc:
                    msg = f"{file.name}:{number}: not UTF-8 (byte {exc.start + 1} of the line)"
                    raise InputError(msg, path=f"{file.path}:{number}") from None
                if not line.strip():
                    continue
                try:
                    work = json.loads(line)
                except json.JSONDecodeError as exc:
                    msg = f"{file.name}:{number}: not JSON ({exc.msg})"
                    raise InputError(msg, path=f"{file.path}:{number}") from None
                except RecursionError:
                    batch.lines += 1
                    batch.skip(where, "JSON nested too deeply")
                    continue
                except ValueError:  # a number of more than 4,300 digits (Python's int limit)
                    batch.lines += 1
                    batch.skip(where, "a number too long to read")
                    continue
                _add_work(batch, work, where)
                if len(batch.works) >= BATCH:
                    yield batch
                    batch = Batch()
    except (OSError, EOFError, zlib.error) as exc:
        # gzip.BadGzipFile is an OSError; a truncated gzip file ends in EOFError.
        where = f"{file.name}:{number + 1}" if number else file.name
        msg = f"{where}: cannot read the dump ({exc or type(exc).__name__})"
        raise InputError(msg, path=str(file.path)) from None
    yield batch


def _read_crossref(file: SnapshotFile) -> Iterator[Batch]:
    with _open_bytes(file) as stream:
        data = stream.read(MAX_JSON_FILE_BYTES + 1)
    if len(data) > MAX_JSON_FILE_BYTES:
        msg = f"{file.name}: over {MAX_JSON_FILE_BYTES:,} bytes of JSON (not a Crossref data file)"
        raise InputError(msg, path=str(file.path))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        msg = f"{file.name}: not UTF-8 (byte {exc.start + 1})"
        raise InputError(msg, path=str(file.path)) from None
    del data
    batch = Batch()
    try:
        for k, work in enumerate(_items(text), 1):
            _add_work(batch, work, f"item {k}")
            if len(batch.works) >= BATCH:
                yield batch
                batch = Batch()
    except json.JSONDecodeError as exc:
        msg = f"{file.name}: not JSON ({exc.msg} at line {exc.lineno})"
        raise InputError(msg, path=str(file.path)) from None
    except _NotCrossref as exc:
        msg = f"{file.name}: not a Crossref data file ({exc}: one JSON object with an items array)"
        raise InputError(msg, path=str(file.path)) from None
    except (RecursionError, ValueError):
        msg = f"{file.name}: JSON that cannot be read (nested too deeply, or a huge number)"
        raise InputError(msg, path=str(file.path)) from None
    yield batch


class _NotCrossref(Exception):
    """The JSON is well formed but not one object with an ``items`` array."""


_SPACE = re.compile(r"[ \t\n\r]*")


def _items(text: str) -> Iterator[Any]:
    """The elements of the top-level object's ``items`` array, decoded one at a time.

    A data file is one object of tens of MB; decoding it whole would hold every work's objects
    at once (several times the text). Only the top level is walked here; each work (and any
    other member's value) is decoded by the json module's C decoder. A file broken after some
    items raises after yielding them: the writer's transaction drops what the file gave.
    """
    decoder = json.JSONDecoder()

    def skip(i: int) -> int:
        return _SPACE.match(text, i).end()  # type: ignore[union-attr]

    i = skip(0)
    if text[i : i + 1] != "{":
        raise _NotCrossref("not an object")
    i = skip(i + 1)
    found = False
    if text[i : i + 1] == "}":
        i += 1
    else:
        while True:
            key, i = decoder.raw_decode(text, i)
            if not isinstance(key, str):
                raise _NotCrossref("a key that is not a string")
            i = skip(i)
            if text[i : i + 1] != ":":
                raise json.JSONDecodeError("Expecting ':' delimiter", text, i)
            i = skip(i + 1)
            if key == "items" and text[i : i + 1] == "[" and not found:
                found = True
                i = skip(i + 1)
                if text[i : i + 1] == "]":
                    i += 1
                else:
                    while True:
                        item, i = decoder.raw_decode(text, i)
                        yield item
                        i = skip(i)
                        if text[i : i + 1] == ",":
                            i = skip(i + 1)
                            continue
                        if text[i : i + 1] == "]":
                            i += 1
                            break
                        raise json.JSONDecodeError("Expecting ',' delimiter", text, i)
            else:
                _, i = decoder.raw_decode(text, i)
            i = skip(i)
            if text[i : i + 1] == ",":
                i = skip(i + 1)
                continue
            if text[i : i + 1] == "}":
                i += 1
                break
            raise json.JSONDecodeError("Expecting ',' delimiter", text, i)
    if skip(i) != len(text):
        raise json.JSONDecodeError("Extra data", text, skip(i))
    if not found:
        raise _NotCrossref("no items array")


def _read_parquet(file: SnapshotFile) -> Iterator[Batch]:
    try:
        import pyarrow.parquet as pq  # noqa: PLC0415 - only Parquet snapshots need it
    except ImportError:
        feature = "reading the Parquet copy of an OpenAlex snapshot"
        raise MissingExtraError(feature, "batch", "pyarrow") from None
    try:
        parquet = pq.ParquetFile(file.path)
    except Exception as exc:  # pyarrow raises its own ArrowInvalid and OSError
        msg = f"{file.name}: not a Parquet file ({exc})"
        raise InputError(msg, path=str(file.path)) from None
    row = 0
    try:
        for table in parquet.iter_batches(batch_size=BATCH):
            batch = Batch()
            for work in table.to_pylist():
                row += 1
                _add_work(batch, work, f"row {row}")
            yield batch
    except InputError:
        raise
    except Exception as exc:
        msg = f"{file.name}: cannot read row {row + 1} of the Parquet file ({exc})"
        raise InputError(msg, path=str(file.path)) from None


def _read_merged(file: SnapshotFile) -> Iterator[Batch]:
    batch = Batch()
    with _open_bytes(file) as stream:
        text = io.TextIOWrapper(stream, encoding="utf-8-sig", newline="")
        for k, row in enumerate(csv.DictReader(text), 2):
            batch.lines += 1
            work_id = row.get("id") or ""
            m = _OPENALEX_ID.match(work_id.strip())
            if m is None:
                batch.skip(f"line {k}", "no OpenAlex work id in the id column")
                continue
            batch.merged.append(m.group(1).upper())
    yield batch


def _read_retraction_watch(file: SnapshotFile) -> Iterator[Batch]:
    batch = Batch()
    with _open_bytes(file) as stream:
        text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace", newline="")
        reader = csv.DictReader(text)
        if not reader.fieldnames or "OriginalPaperDOI" not in reader.fieldnames:
            msg = (
                f"{file.name}: not the Retraction Watch CSV (no OriginalPaperDOI column; "
                f"columns: {', '.join((reader.fieldnames or [])[:6])})"
            )
            raise InputError(msg, path=str(file.path))
        for k, row in enumerate(reader, 2):
            batch.lines += 1
            found = retraction_watch_notice(row)
            if found is None:
                batch.skip(f"line {k}", "no original DOI, or not a notice")
            else:
                batch.notices.append(found)
    yield batch
