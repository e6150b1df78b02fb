"""The policy's credentials: which options are secrets, and how adapters write and read them.

``extensions.lookups`` holds three credentials (NCBI's and Semantic Scholar's API keys,
CourtListener's token). No adapter writes them in clear: reprs hide them (the fields are
``repr=False``); what an adapter serialises or pickles holds :data:`MASKED` in their place
(:func:`mask_credentials`), and the copy that is loaded reads each masked one from its
environment variable (:data:`CREDENTIALS`), in its own process (:func:`restore_credentials`).
LangChain's ``dumpd`` writes secret references instead, which ``loads`` resolves the same way.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any, TypeVar

__all__ = ["CREDENTIALS", "MASKED", "mask_credentials", "restore_credentials"]

#: Each credential of ``extensions.lookups`` and the environment variable it is read from when a
#: serialised or pickled adapter is loaded.
CREDENTIALS: Mapping[str, str] = {
    "ncbi_api_key": "NCBI_API_KEY",
    "semanticscholar_api_key": "SEMANTIC_SCHOLAR_API_KEY",
    "courtlistener_token": "COURTLISTENER_TOKEN",
}

#: What a credential that is set is written as, as pydantic's ``SecretStr`` shows itself.
MASKED = "**********"

_P = TypeVar("_P")


def mask_credentials(policy: _P) -> _P:
    """``policy`` (a ``PolicyConfig`` or ``PolicySettings``) with each credential set masked.

    Adapters serialise, pickle and show this copy; their verifier keeps the real one.
    """
    lookups = policy.extensions.lookups  # type: ignore[attr-defined]
    return _with_lookups(
        policy, {key: MASKED for key in CREDENTIALS if getattr(lookups, key) is not None}
    )


def restore_credentials(policy: _P) -> _P:
    """``policy`` with each masked credential read from its environment variable again.

    ``policy`` is what an adapter is loaded with: a mapping (``from_dict``/``from_json``), a
    ``PolicyConfig`` or ``PolicySettings`` (a pickle), or anything else (a pack path, ``None``),
    returned as it is. A masked credential whose variable is unset becomes ``None``: the lookups
    run without it, at the services' lower anonymous rate limits.
    """
    if isinstance(policy, Mapping):
        ext = policy.get("extensions")
        lookups = ext.get("lookups") if isinstance(ext, Mapping) else None
        if not isinstance(ext, Mapping) or not isinstance(lookups, Mapping):
            return policy
        masked = [key for key in CREDENTIALS if lookups.get(key) == MASKED]
        if not masked:
            return policy
        lookups = {**lookups, **{key: _from_env(key) for key in masked}}
        restored: Any = {**policy, "extensions": {**ext, "lookups": lookups}}
        return restored  # type: ignore[no-any-return]
    lookups = getattr(getattr(policy, "extensions", None), "lookups", None)
    if lookups is None:
        return policy
    return _with_lookups(
        policy, {key: _from_env(key) for key in CREDENTIALS if getattr(lookups, key) == MASKED}
    )


def _from_env(key: str) -> str | None:
    return os.environ.get(CREDENTIALS[key]) or None


def _replaced(obj: Any, **changes: Any) -> Any:
    """A frozen policy part (a settings dataclass or a validating model) with ``changes``."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.replace(obj, **changes)
    return obj.model_copy(update=changes)


def _with_lookups(policy: _P, changes: dict[str, Any]) -> _P:
    if not changes:
        return policy
    ext = policy.extensions  # type: ignore[attr-defined]
    lookups = _replaced(ext.lookups, **changes)
    replaced: _P = _replaced(policy, extensions=_replaced(ext, lookups=lookups))
    return replaced
