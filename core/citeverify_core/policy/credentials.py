"""The policy's credentials: which options are secrets, and a policy without them.

``extensions.lookups`` holds three credentials (NCBI's and Semantic Scholar's API keys,
CourtListener's token). No adapter writes them in clear: reprs hide them (the fields are
``repr=False``), serialised adapters write a reference to the environment variable instead
(LangChain's ``dumpd`` secret markers, LlamaIndex's ``to_json``), and pickled adapters carry none:
the copy that is loaded reads them from the environment variables below, in its own process.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from citeverify_core.policy.loading import PolicyConfig

__all__ = ["CREDENTIALS", "credentials_from_env", "without_credentials"]

#: Each credential of ``extensions.lookups`` and the environment variable it is read from when a
#: serialised or pickled adapter is loaded.
CREDENTIALS: Mapping[str, str] = {
    "ncbi_api_key": "NCBI_API_KEY",
    "semanticscholar_api_key": "SEMANTIC_SCHOLAR_API_KEY",
    "courtlistener_token": "COURTLISTENER_TOKEN",
}


def without_credentials(policy: PolicyConfig) -> PolicyConfig:
    """``policy`` with its credentials left out (None), the rest unchanged.

    Fields that were not set stay unset, so ``model_dump(exclude_unset=True)`` is what it was,
    less the credentials.
    """
    lookups = policy.extensions.lookups
    if all(getattr(lookups, key) is None for key in CREDENTIALS):
        return policy
    data = policy.model_dump(exclude_unset=True)
    for key in CREDENTIALS:
        data.get("extensions", {}).get("lookups", {}).pop(key, None)
    return type(policy).model_validate(data)


def credentials_from_env(policy: PolicyConfig) -> PolicyConfig:
    """``policy`` with each credential it lacks read from its environment variable, if set."""
    found = {
        key: os.environ[var]
        for key, var in CREDENTIALS.items()
        if getattr(policy.extensions.lookups, key) is None and os.environ.get(var)
    }
    if not found:
        return policy
    data = policy.model_dump(exclude_unset=True)
    data.setdefault("extensions", {}).setdefault("lookups", {}).update(found)
    return type(policy).model_validate(data)
