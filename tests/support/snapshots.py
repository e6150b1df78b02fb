"""Miniature OpenAlex and Crossref snapshots, written in the shapes they are published in (issue 35).

OpenAlex (https://developers.openalex.org/download/snapshot-format): works in
``updated_date=YYYY-MM-DD/part_NNN.gz`` partitions (JSON Lines, gzip), with a manifest in the
Redshift format (``{"entries": [{"url": ..., "meta": {"content_length": n, "record_count": n}}],
"meta": {...}}``): ``data/works/manifest`` in the layout before 2026, a combined
``data/jsonl/manifest.json`` (and ``data/parquet/manifest.json`` for the Parquet copy) since;
merged works in ``merged_ids/works/YYYY-MM-DD.csv.gz`` (``merge_date,id,merge_into_id``).
Works carry the API's fields (``id``, ``doi``, ``display_name``, ``publication_year``,
``authorships``, ``primary_location``, ``biblio``, ``type``, ``is_retracted``,
``updated_date``).

Crossref's public data file: ``*.json.gz`` files, each one object ``{"items": [...]}`` of works
as the REST API gives them (``DOI``, ``title``, ``author``, ``issued``, ``container-title``,
...); a retraction notice is a work with ``update-to``. Also as a ``.tar`` of those files.

The Retraction Watch CSV has the columns of the file Crossref distributes.

A miniature snapshot: two update dates; on the second, one work changed (new title), one work
new, one work merged into another; one work retracted (OpenAlex ``is_retracted``); in the
Crossref file a retraction notice (``update-to``) of one work and a correction of another.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FIRST, SECOND = "2025-11-03", "2026-01-12"

TITLES = [
    "Soil microbial diversity under long-term nitrogen fertilisation",
    "A randomised trial of early mobilisation after hip fracture surgery",
    "Deep learning for protein contact map prediction",
    "Urban heat islands and mortality in European cities",
    "Glacier retreat in the Andes since the Little Ice Age",
    "Bayesian inference for stochastic epidemic models",
    "Coral bleaching thresholds across the Great Barrier Reef",
    "Measuring social capital in rural development programmes",
]


def openalex_work(
    n: int, title: str | None = None, *, retracted: bool = False, updated: str = FIRST
) -> dict[str, Any]:
    """An OpenAlex work as the snapshot holds it (the API's shape)."""
    return {
        "id": f"https://openalex.org/W{4000000000 + n}",
        "doi": f"https://doi.org/10.5555/snap.{n}",
        "title": title or TITLES[n % len(TITLES)],
        "display_name": title or TITLES[n % len(TITLES)],
        "publication_year": 2000 + n,
        "type": "article",
        "authorships": [
            {"author": {"display_name": f"Maria {chr(65 + n)}. Okafor{n}"}},
            {"author": {"display_name": "Lukas Brandt"}},
        ],
        "primary_location": {"source": {"display_name": "Journal of Miniature Snapshots"}},
        "biblio": {"volume": str(10 + n), "issue": "2", "first_page": "101", "last_page": "117"},
        "is_retracted": retracted,
        "updated_date": updated + "T00:00:00.000000",
    }


def _gz_lines(rows: Iterable[dict[str, Any]]) -> bytes:
    return gzip.compress(b"".join(json.dumps(r).encode() + b"\n" for r in rows))


@dataclass
class OpenAlexSnapshot:
    """Where a miniature was written, and what is in it."""

    root: Path  # what a user passes to `index build`
    works: Path  # the folder of updated_date=... partitions
    first: list[dict[str, Any]]
    second: list[dict[str, Any]]
    merged: list[tuple[str, str]]  # (id, merge_into_id)


def first_works() -> list[dict[str, Any]]:
    """The works of the first date: 0-5, work 3 retracted."""
    return [openalex_work(n, retracted=n == 3) for n in range(6)]


def second_works() -> list[dict[str, Any]]:
    """The second date: work 1 with a new title, a new work 6."""
    return [
        openalex_work(
            1, "Early mobilisation after hip fracture: a randomised trial", updated=SECOND
        ),
        openalex_work(6, updated=SECOND),
    ]


def write_openalex(
    root: Path,
    *,
    layout: str = "legacy",
    dates: tuple[str, ...] = (FIRST, SECOND),
    fmt: str = "jsonl",
) -> OpenAlexSnapshot:
    """A miniature OpenAlex works snapshot under ``root``.

    ``layout``: ``legacy`` (``data/works/`` with ``manifest``) or ``2026`` (``data/jsonl/works/``
    or ``data/parquet/works/`` with a combined ``manifest.json`` beside). ``fmt``: ``jsonl`` or
    ``parquet`` (2026 layout only). Only the partitions of ``dates`` are written, so that a test
    can add the second date later, as a sync of the bucket would.
    """
    if layout == "legacy":
        works = root / "data" / "works"
        merged_dir = root / "data" / "merged_ids" / "works"
        manifest = works / "manifest"
        prefix = "s3://openalex/data/works"
    else:
        works = root / "data" / fmt / "works"
        merged_dir = root / "legacy-data" / "merged_ids" / "works"
        manifest = root / "data" / fmt / "manifest.json"
        prefix = f"s3://openalex/data/{fmt}/works"
    parts = {FIRST: first_works(), SECOND: second_works()}
    merged = [("W4000000004", "W4000000005")] if SECOND in dates else []
    entries = []
    for date in dates:
        folder = works / f"updated_date={date}"
        folder.mkdir(parents=True, exist_ok=True)
        if fmt == "parquet":
            name = "part_0000.parquet"
            _write_parquet(folder / name, parts[date])
        else:
            name = "part_000.gz"
            (folder / name).write_bytes(_gz_lines(parts[date]))
        size = (folder / name).stat().st_size
        entries.append(
            {
                "url": f"{prefix}/updated_date={date}/{name}",
                "meta": {"content_length": size, "record_count": len(parts[date])},
            }
        )
    if layout != "legacy":
        # The combined manifest lists other entities too.
        entries.append(
            {
                "url": f"s3://openalex/data/{fmt}/authors/updated_date={FIRST}/part_000.gz",
                "meta": {"content_length": 10, "record_count": 1},
            }
        )
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(
        json.dumps(
            {
                "entries": entries,
                "meta": {
                    "content_length": sum(e["meta"]["content_length"] for e in entries),
                    "record_count": sum(e["meta"]["record_count"] for e in entries),
                },
            }
        )
    )
    if merged:
        merged_dir.mkdir(parents=True, exist_ok=True)
        text = io.StringIO()
        writer = csv.writer(text)
        writer.writerow(["merge_date", "id", "merge_into_id"])
        for old, new in merged:
            writer.writerow([SECOND, old, new])
        (merged_dir / f"{SECOND}.csv.gz").write_bytes(gzip.compress(text.getvalue().encode()))
    return OpenAlexSnapshot(
        root, works, parts[FIRST] if FIRST in dates else [], parts.get(SECOND, []), merged
    )


def _write_parquet(path: Path, rows: list[dict[str, Any]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(rows), path)


# -- Crossref ----------------------------------------------------------------------------------


def crossref_work(n: int, **extra: Any) -> dict[str, Any]:
    """A Crossref work as the REST API and the public data file give it."""
    work: dict[str, Any] = {
        "DOI": f"10.7777/pdf.{n}",
        "title": [TITLES[n % len(TITLES)] + " revisited"],
        "author": [{"family": f"Haddad{n}", "given": "Samir"}, {"family": "Ito", "given": "Yuki"}],
        "issued": {"date-parts": [[2010 + n % 10, 4, 2]]},
        "container-title": ["Annals of Public Data"],
        "volume": str(n + 1),
        "page": f"{10 * n + 1}-{10 * n + 9}",
        "type": "journal-article",
    }
    work.update(extra)
    return work


def crossref_items() -> list[list[dict[str, Any]]]:
    """Two files of items: works 0-4, a retraction notice of work 1, a correction of work 2."""
    notice = crossref_work(
        90,
        title=["Retraction notice to: " + TITLES[1]],
        type="journal-article",
        **{
            "update-to": [
                {
                    "DOI": "10.7777/pdf.1",
                    "type": "retraction",
                    "label": "Retraction",
                    "updated": {"date-parts": [[2021, 3, 15]]},
                }
            ]
        },
    )
    erratum = crossref_work(
        91,
        title=["Correction to: " + TITLES[2]],
        **{
            "update-to": [
                {
                    "DOI": "10.7777/PDF.2",
                    "type": "correction",
                    "updated": {"date-parts": [[2019, 8, 1]]},
                }
            ]
        },
    )
    return [
        [crossref_work(n) for n in range(3)],
        [crossref_work(3), crossref_work(4), notice, erratum],
    ]


def write_crossref(folder: Path) -> Path:
    """The public data file as its folder of ``N.json.gz`` files."""
    folder.mkdir(parents=True, exist_ok=True)
    for k, items in enumerate(crossref_items()):
        (folder / f"{k}.json.gz").write_bytes(gzip.compress(json.dumps({"items": items}).encode()))
    return folder


def write_crossref_tar(path: Path) -> Path:
    """The public data file as one ``.tar`` archive of those files."""
    with tarfile.open(path, "w") as archive:
        for k, items in enumerate(crossref_items()):
            data = gzip.compress(json.dumps({"items": items}).encode())
            info = tarfile.TarInfo(f"April 2025 Public Data File from Crossref/{k}.json.gz")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


RW_COLUMNS = [
    "Record ID", "Title", "Subject", "Institution", "Journal", "Publisher", "Country", "Author",
    "URLS", "ArticleType", "RetractionDate", "RetractionDOI", "RetractionPubMedID",
    "OriginalPaperDate", "OriginalPaperDOI", "OriginalPaperPubMedID", "RetractionNature",
    "Reason", "Paywalled", "Notes",
]  # fmt: skip


def write_retraction_watch(path: Path) -> Path:
    """A Retraction Watch CSV: a retraction of OpenAlex work 2, a concern about Crossref work 4,
    a reinstatement (no notice) and a row without an original DOI."""
    rows = [
        {
            "Record ID": "51234",
            "Title": TITLES[2],
            "RetractionDate": "5/17/2024 0:00",
            "RetractionDOI": "10.5555/snap.retraction.2",
            "OriginalPaperDOI": "10.5555/snap.2",
            "RetractionNature": "Retraction",
            "Reason": "+Concerns/Issues About Data;",
        },
        {
            "Record ID": "51235",
            "Title": TITLES[4],
            "RetractionDate": "1/9/2023 0:00",
            "RetractionDOI": "10.7777/eoc.4",
            "OriginalPaperDOI": "10.7777/pdf.4",
            "RetractionNature": "Expression of concern",
        },
        {
            "Record ID": "51236",
            "OriginalPaperDOI": "10.7777/pdf.0",
            "RetractionNature": "Reinstatement",
            "RetractionDate": "2/2/2022 0:00",
        },
        {"Record ID": "51237", "OriginalPaperDOI": "unavailable", "RetractionNature": "Retraction"},
    ]
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=RW_COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({c: row.get(c, "") for c in RW_COLUMNS})
    return path
