"""What every lookup module shares about failing: the failure we can state, and safe text.

A leaf of the lookups package: the address guard and the HTTP core both raise
:class:`LookupFailure`, so it lives below both.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LookupFailure", "clean_text", "text_or_none"]


class LookupFailure(Exception):
    """A call that failed for a reason we can state (blocked address, bad shape, ...)."""


def clean_text(text: str, limit: int) -> str:
    """Text from a service made safe to serialize: lone surrogates replaced, length capped."""
    text = text[: limit + 1].encode("utf-8", "replace").decode("utf-8")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def text_or_none(value: Any, limit: int = 1000) -> str | None:
    """A non-empty string field of an untrusted payload, cleaned; anything else is None."""
    return clean_text(value, limit) if isinstance(value, str) and value.strip() else None
