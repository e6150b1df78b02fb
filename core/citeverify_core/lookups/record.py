"""What one external lookup found: :class:`LookupRecord`, a frozen dataclass.

The lookups make these records and the engine reads them (``details.external_lookup``); they sit
here, below the engine, because the lookups make them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["LookupRecord"]


@dataclass(frozen=True, slots=True)
class LookupRecord:
    """One external lookup (Crossref, PubMed, URL) made for a citation.

    Attributes:
        service: crossref, pubmed, url, ...
        target: What was looked up: a DOI, a PubMed ID, a URL.
        ok: Whether the lookup confirmed the citation.
        status_code: HTTP status, when one came back.
        elapsed_ms: Wall time of the lookup.
        cached: Served from the cache.
        error: Why it failed, for people.
        metadata: What the service said.
    """

    service: str
    target: str
    ok: bool
    status_code: int | None = None
    elapsed_ms: float = 0.0
    cached: bool = False
    error: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping of every field."""
        return {
            "service": self.service,
            "target": self.target,
            "ok": self.ok,
            "status_code": self.status_code,
            "elapsed_ms": self.elapsed_ms,
            "cached": self.cached,
            "error": self.error,
            "metadata": _json(self.metadata),
        }

    @classmethod
    def from_dict(cls, data: Any) -> LookupRecord:
        """A record from :meth:`to_dict`'s mapping (a cache entry, a service's JSON), checked.

        Raises:
            ValueError: ``data`` is not such a mapping (a key missing or unknown, a value of the
                wrong type).
        """
        if not isinstance(data, dict):
            msg = f"a lookup record is a mapping, got {type(data).__name__}"
            raise ValueError(msg)  # noqa: TRY004 - one error type for every bad shape
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown keys in a lookup record: {sorted(unknown)}")
        checks: dict[str, tuple[type, ...]] = {
            "service": (str,),
            "target": (str,),
            "ok": (bool,),
            "status_code": (int, type(None)),
            "elapsed_ms": (int, float),
            "cached": (bool,),
            "error": (str, type(None)),
            "metadata": (dict,),
        }
        for name, types in checks.items():
            if name in data and (
                not isinstance(data[name], types)
                or (isinstance(data[name], bool) and bool not in types)
            ):
                msg = f"lookup record {name}: {type(data[name]).__name__} is not allowed"
                raise ValueError(msg)
        for name in ("service", "target", "ok"):
            if name not in data:
                raise ValueError(f"lookup record without {name}")
        values = dict(data)
        if "elapsed_ms" in values:
            values["elapsed_ms"] = float(values["elapsed_ms"])
        return cls(**values)


def _json(value: Any) -> Any:
    """``value`` with tuples as lists, recursively (what JSON holds)."""
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    return value
