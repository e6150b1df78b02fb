"""Writing OUTPUT (JSONL or Parquet) and its errors file from entries, and the report's figures.

Both engines hand their entries, in input order, to one :class:`Assembler`: the bytes of OUTPUT
depend on the entries only, never on the engine or on timing (the elapsed times go to the report,
not to OUTPUT).
"""

from __future__ import annotations

import heapq
import json
import math
import os
from collections import Counter
from pathlib import Path
from typing import IO, Any

from citeverify_core.batch.config import CITATION_STATUSES, COLUMNS, dumps_entry
from citeverify_core.errors import InputError

_PARQUET_ROWS = 8192
_BINS = 10
_TOP = 15
#: Distinct texts counted for "most frequent" before the rarest are dropped (bounded memory).
_MAX_TEXTS = 50_000


def errors_path(output: Path) -> Path:
    """``OUTPUT.errors.jsonl`` next to OUTPUT."""
    return output.with_name(output.name + ".errors.jsonl")


def output_format(output: Path) -> str:
    """``jsonl`` or ``parquet``, from OUTPUT's extension."""
    name = output.name.lower()
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    if name.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    msg = f"{output}: unknown output format (use .jsonl or .parquet)"
    raise InputError(msg, path="--output")


def parquet_schema(details: bool) -> Any:
    """The Parquet columns, fixed whatever the rows hold (an empty OUTPUT has them too)."""
    import pyarrow as pa  # noqa: PLC0415 - the batch extra

    fields = [
        pa.field("id", pa.string()),
        pa.field("verdict", pa.string()),
        pa.field("reason_code", pa.string()),
        pa.field("action", pa.string()),
        pa.field("groundedness", pa.float64()),
        pa.field("claim_confidence", pa.float64()),
    ]
    fields += [pa.field(name, pa.int64()) for name in COLUMNS[6:]]
    if details:
        fields.append(pa.field("details", pa.string()))
    return pa.schema(fields)


def _histogram(value: float | None, bins: list[int]) -> None:
    if value is None or math.isnan(value):
        return
    bins[min(int(value * _BINS), _BINS - 1)] += 1


class Stats:
    """What the report shows, gathered row by row in bounded memory."""

    def __init__(self) -> None:
        self.rows = 0
        self.errors = 0
        self.verdicts: Counter[str] = Counter()
        self.actions: Counter[str] = Counter()
        self.groundedness = [0] * _BINS
        self.groundedness_null = 0
        self.confidence = [0] * _BINS
        self.citations: Counter[str] = Counter()
        self.unsupported: Counter[str] = Counter()
        self.unmatched: Counter[str] = Counter()
        self.claims = 0
        self.unsupported_claims = 0
        self.quotes = 0
        self.altered_quotes = 0
        self._slowest: list[tuple[float, str, int]] = []
        self.total_ms = 0.0
        self.error_reasons: Counter[str] = Counter()

    def add(self, row: dict[str, Any], hidden: dict[str, Any]) -> None:
        """Count one output row."""
        self.rows += 1
        self.verdicts[row["verdict"]] += 1
        self.actions[row["action"]] += 1
        if row["groundedness"] is None:
            self.groundedness_null += 1
        _histogram(row["groundedness"], self.groundedness)
        _histogram(row["claim_confidence"], self.confidence)
        for status in CITATION_STATUSES:
            if count := row[f"citations_{status}"]:
                self.citations[status] += count
        self.claims += row["claims"]
        self.unsupported_claims += row["unsupported_claims"]
        self.quotes += row["quotes"]
        self.altered_quotes += row["altered_quotes"]
        _count(self.unsupported, hidden.get("_unsupported") or [])
        _count(self.unmatched, hidden.get("_unmatched") or [])
        ms = float(hidden.get("_ms") or 0.0)
        self.total_ms += ms
        item = (ms, str(row["id"]), int(row["claims"]))
        if len(self._slowest) < _TOP:
            heapq.heappush(self._slowest, item)
        elif item > self._slowest[0]:
            heapq.heapreplace(self._slowest, item)

    def add_error(self, reason: str) -> None:
        """Count one unreadable record."""
        self.errors += 1
        self.error_reasons[reason.split(":", maxsplit=1)[0][:80]] += 1

    @property
    def slowest(self) -> list[tuple[float, str, int]]:
        """The slowest records: (milliseconds, id, claims), slowest first."""
        return sorted(self._slowest, reverse=True)


def _count(counter: Counter[str], texts: list[str]) -> None:
    counter.update(" ".join(t.split()) for t in texts)
    if len(counter) > _MAX_TEXTS:
        # Keep the most frequent half: a text seen often early stays; the counts of the rest
        # become lower bounds (the report says "at least").
        keep = counter.most_common(_MAX_TEXTS // 2)
        counter.clear()
        counter.update(dict(keep))


class Assembler:
    """Entries in input order -> OUTPUT rows, the errors file and :class:`Stats`.

    Writes to temporary files next to OUTPUT and moves them into place on :meth:`finish`, so
    that OUTPUT is either complete or absent.
    """

    def __init__(self, output: Path, *, details: bool) -> None:
        self.output = output
        self.details = details
        self.columns = (*COLUMNS, "details") if details else COLUMNS
        self.format = output_format(output)
        self.stats = Stats()
        self._tmp = output.with_name(f".{output.name}.writing-{os.getpid()}")
        self._errors_tmp = output.with_name(f".{output.name}.errors-{os.getpid()}")
        self._errors: IO[str] = self._errors_tmp.open("w", encoding="utf-8")
        self._jsonl: IO[str] | None = None
        self._parquet: Any = None
        self._pending: list[dict[str, Any]] = []
        if self.format == "parquet":
            import pyarrow.parquet as pq  # noqa: PLC0415 - the batch extra

            self._schema = parquet_schema(details)
            self._parquet = pq.ParquetWriter(str(self._tmp), self._schema)
        else:
            self._jsonl = self._tmp.open("w", encoding="utf-8")

    def add(self, entry: dict[str, Any], shard: str, number: int) -> None:
        """One entry of record ``number`` (from 1) of shard ``shard``."""
        if entry.get("_blank"):
            return
        error = entry.get("_error")
        if error is not None:
            line = {"id": error.get("id"), "source": f"{shard}:{number}", "reason": error["reason"]}
            self._errors.write(dumps_entry(line) + "\n")
            self.stats.add_error(str(error["reason"]))
            return
        if entry.get("id") is None:
            entry["id"] = f"{shard}:{number}"
        row = {name: entry.get(name) for name in self.columns}
        self.stats.add(row, entry)
        if self._jsonl is not None:
            self._jsonl.write(dumps_entry(row) + "\n")
        else:
            self._pending.append(row)
            if len(self._pending) >= _PARQUET_ROWS:
                self._flush()

    def _flush(self) -> None:
        import pyarrow as pa  # noqa: PLC0415 - the batch extra

        if self._pending:
            table = pa.Table.from_pylist(self._pending, schema=self._schema)
            self._parquet.write_table(table)
            self._pending = []

    def finish(self) -> None:
        """Close and move OUTPUT and its errors file into place."""
        self._close()
        os.replace(self._tmp, self.output)
        os.replace(self._errors_tmp, errors_path(self.output))

    def abort(self) -> None:
        """Close and remove the temporary files."""
        try:
            self._close()
        finally:
            self._tmp.unlink(missing_ok=True)
            self._errors_tmp.unlink(missing_ok=True)

    def _close(self) -> None:
        if self._parquet is not None:
            try:
                self._flush()
            finally:
                self._parquet.close()
                self._parquet = None
        if self._jsonl is not None:
            self._jsonl.close()
            self._jsonl = None
        self._errors.close()


def read_entries(path: Path) -> list[dict[str, Any]]:
    """The entries of a part file."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]
