"""The cache of lookups and source answers: in memory with a TTL, optionally in a SQLite file.

Public as ``citeverify_core.LookupCache``: one cache file can serve many processes (the batch
workers), so re-checking a bibliography or an answer makes no new call.
"""

from __future__ import annotations

import importlib
import json
import logging
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citeverify_core.errors import InputError

__all__ = ["LookupCache"]

if TYPE_CHECKING:
    import sqlite3
else:

    class _LazySqlite:
        """sqlite3, imported when a cache first needs it (tens of ms at start-up otherwise)."""

        def __getattr__(self, attr: str) -> Any:
            module = importlib.import_module("sqlite3")
            globals()["sqlite3"] = module
            return getattr(module, attr)

    sqlite3 = _LazySqlite()

_log = logging.getLogger("citeverify_core.lookups")


class LookupCache:
    """Results of lookups, in memory with a TTL, and optionally in a SQLite file.

    Only definitive outcomes are stored: found (``ttl``) and not found (``negative_ttl``, shorter).
    Timeouts and server errors are not cached: the next call tries again.

    The file is a cache, not a record: a row that cannot be read (a corrupted payload, a value of
    the wrong type) is a miss, and a write or read that SQLite refuses later (disk full, a locked
    or damaged file) is logged and skipped, never raised into a verification.

    Memory is bounded by entries and by bytes: the reference sources keep whole API
    answers, up to ``max_response_bytes`` each. Sizes are those of the payloads as JSON; a payload
    over 1/32 of ``max_bytes`` is kept only in the file.

    Pickled or deep-copied (with a verifier, to a process pool or a Ray task), the cache travels
    as its file's path and its limits: the copy opens the file again (the same file on the same
    machine, a new one elsewhere) and its memory starts empty. A cache in memory only arrives
    empty: what it held does not travel.

    Args:
        path: The SQLite file, or None for memory only.
        max_entries: Payloads kept in memory at most (least recently used go first).
        max_bytes: Bytes of payloads (as JSON) kept in memory at most.

    Raises:
        InputError: ``path`` cannot be opened as a lookup cache (not a SQLite database, a
            directory, a database whose ``lookups`` table has other columns).
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        max_entries: int = 10_000,
        max_bytes: int = 32_000_000,
    ) -> None:
        self._memory: OrderedDict[tuple[str, str], tuple[float, dict[str, Any], int]] = (
            OrderedDict()
        )
        self._max = max_entries
        self._max_bytes = max_bytes
        self._bytes = 0
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        #: The SQLite file, or None for memory only.
        self.path = path
        if path is not None:
            self._db = _open_cache(path)

    def __getstate__(self) -> dict[str, Any]:
        # The file and the limits; the memory, the connection and the lock are rebuilt. A closed
        # cache has no file any more.
        path = self.path if self._db is not None else None
        return {"path": path, "max_entries": self._max, "max_bytes": self._max_bytes}

    def __setstate__(self, state: dict[str, Any]) -> None:
        LookupCache.__init__(self, **state)

    def get(self, service: str, key: str) -> dict[str, Any] | None:
        """The stored payload, or None when absent, expired or unreadable."""
        now = time.time()
        with self._lock:
            item = self._memory.get((service, key))
            if item is not None:
                if item[0] > now:
                    self._memory.move_to_end((service, key))
                    return item[1]
                self._forget((service, key))
            if self._db is None:
                return None
            try:
                row = self._db.execute(
                    "SELECT expires, payload FROM lookups WHERE service = ? AND key = ?",
                    (service, key),
                ).fetchone()
            except (sqlite3.Error, UnicodeEncodeError) as exc:  # a key with a lone surrogate
                _log.warning("lookup cache: read skipped (%s)", exc)
                return None
        if row is None:
            return None
        expires, text = row
        if not isinstance(expires, int | float) or expires <= now or not isinstance(text, str):
            return None
        try:
            payload = json.loads(text)
        except (ValueError, RecursionError):  # a corrupted row is a miss
            return None
        if not isinstance(payload, dict):
            return None
        self._remember(service, key, float(expires), payload, len(text))
        return payload

    def put(self, service: str, key: str, payload: dict[str, Any], ttl: float) -> None:
        """Store a payload for ``ttl`` seconds (nothing is stored when ``ttl`` is 0)."""
        if ttl <= 0:
            return
        expires = time.time() + ttl
        text = json.dumps(payload)
        self._remember(service, key, expires, payload, len(text))
        if self._db is not None:
            with self._lock:
                try:
                    self._db.execute(
                        "INSERT OR REPLACE INTO lookups VALUES (?, ?, ?, ?)",
                        (service, key, expires, text),
                    )
                except (sqlite3.Error, UnicodeEncodeError) as exc:
                    _log.warning("lookup cache: write skipped (%s)", exc)

    def _remember(
        self, service: str, key: str, expires: float, payload: dict[str, Any], size: int
    ) -> None:
        with self._lock:
            self._forget((service, key))
            if size > self._max_bytes // 32:
                return
            self._memory[(service, key)] = (expires, payload, size)
            self._bytes += size
            while len(self._memory) > self._max or self._bytes > self._max_bytes:
                self._forget(next(iter(self._memory)))

    def _forget(self, key: tuple[str, str]) -> None:
        item = self._memory.pop(key, None)
        if item is not None:
            self._bytes -= item[2]

    def close(self) -> None:
        """Close the SQLite file, if any."""
        if self._db is not None:
            self._db.close()
            self._db = None


def _open_cache(path: str | Path) -> sqlite3.Connection:
    # Several processes opening one new cache at once (citeverify batch's workers) race to switch
    # it to WAL; SQLite answers "database is locked" at once for that, without its busy handler.
    # The loser waits and tries again.
    for attempt in range(50):
        try:
            return _open_cache_once(path)
        except _CacheLocked:
            time.sleep(0.05 * (1 + attempt % 4))
    return _open_cache_once(path, last=True)


class _CacheLocked(Exception):
    """Another process holds the new cache's lock while it sets it up."""


def _open_cache_once(path: str | Path, *, last: bool = False) -> sqlite3.Connection:
    db: sqlite3.Connection | None = None
    try:
        db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")  # the first read: "file is not a database" here
        db.execute(
            "CREATE TABLE IF NOT EXISTS lookups (service TEXT NOT NULL, key TEXT NOT NULL, "
            "expires REAL NOT NULL, payload TEXT NOT NULL, PRIMARY KEY (service, key))"
        )
        db.execute("SELECT service, key, expires, payload FROM lookups LIMIT 0")
    except (sqlite3.Error, ValueError) as exc:  # ValueError: a NUL byte or lone surrogate
        if db is not None:
            db.close()
        if not last and "locked" in str(exc):
            raise _CacheLocked from None
        msg = (
            f"cannot use {str(path)!r} as the lookup cache ({exc}): give cache_path a new file "
            "or one that citeverify created"
        )
        raise InputError(msg, path="extensions.lookups.cache_path") from None
    return db
