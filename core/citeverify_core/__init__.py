"""citeverify: check RAG answers against their sources.

The engine measures how much of an answer its context documents support (word-overlap
groundedness, per claim), matches quotes, finds citations, and decides allow / flag / redact /
block with the reason codes ``citation.verified`` and ``citation.unverified``.

>>> from citeverify_core import CitationVerifier
>>> result = CitationVerifier().verify("The museum opens at nine.", ["The museum opens at nine."])
>>> result.verdict, result.reason_code
('allow', 'citation.verified')
"""

from __future__ import annotations

# The exceptions are cheap (no third-party import) and what callers catch: imported now.
from citeverify_core.errors import (
    AuthenticationError,
    CitationUnverifiedError,
    CiteVerifyError,
    DocumentError,
    InputError,
    InsufficientTokensError,
    MissingExtraError,
    PermissionDeniedError,
    PolicyError,
    RateLimitError,
    ServiceError,
    ServiceUnavailableError,
)

# Not ``typing.TYPE_CHECKING``: importing typing (with re and collections) is most of what
# ``import citeverify_core`` would cost.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

    from citeverify_core.engine.context import ContextCache
    from citeverify_core.engine.results import (
        Citation,
        ClaimResult,
        QuoteResult,
        VerificationDetails,
        VerificationReport,
        VerificationResult,
    )
    from citeverify_core.engine.semantic import SemanticScorer
    from citeverify_core.engine.verifier import CitationVerifier
    from citeverify_core.lookups.cache import LookupCache
    from citeverify_core.lookups.record import LookupRecord
    from citeverify_core.policy.loading import PolicyConfig, load_policy_pack
    from citeverify_core.policy.settings import PolicySettings

    __version__: str

# Everything else is imported on first access: ``import citeverify_core`` stays a few
# milliseconds, and a process pays pydantic, httpx, idutils or eyecite only when it uses them.
# ``from citeverify_core import CitationVerifier`` works as before (PEP 562, module __getattr__).
_LAZY = {
    "CitationVerifier": "citeverify_core.engine.verifier",
    "ContextCache": "citeverify_core.engine.context",
    "LookupCache": "citeverify_core.lookups.cache",
    "PolicyConfig": "citeverify_core.policy.loading",
    "PolicySettings": "citeverify_core.policy.settings",
    "load_policy_pack": "citeverify_core.policy.loading",
    "Citation": "citeverify_core.engine.results",
    "ClaimResult": "citeverify_core.engine.results",
    "LookupRecord": "citeverify_core.lookups.record",
    "QuoteResult": "citeverify_core.engine.results",
    "VerificationDetails": "citeverify_core.engine.results",
    "VerificationReport": "citeverify_core.engine.results",
    "VerificationResult": "citeverify_core.engine.results",
    "SemanticScorer": "citeverify_core.engine.semantic",
}


def _version() -> str:
    # One version number, in pyproject.toml; the installed metadata carries it here.
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415 - start-up time

    try:
        return version("citeverify-core")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value: Any = _version()  # importlib.metadata costs 10-20 ms: only when asked
    elif name in _LAZY:
        from importlib import import_module  # noqa: PLC0415 - start-up time

        value = getattr(import_module(_LAZY[name]), name)
    else:
        msg = f"module 'citeverify' has no attribute {name!r}"
        raise AttributeError(msg)
    globals()[name] = value  # the next access is a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "AuthenticationError",
    "Citation",
    "CitationUnverifiedError",
    "CitationVerifier",
    "CiteVerifyError",
    "ClaimResult",
    "ContextCache",
    "DocumentError",
    "InputError",
    "InsufficientTokensError",
    "LookupCache",
    "LookupRecord",
    "MissingExtraError",
    "PermissionDeniedError",
    "PolicyConfig",
    "PolicyError",
    "PolicySettings",
    "QuoteResult",
    "RateLimitError",
    "SemanticScorer",
    "ServiceError",
    "ServiceUnavailableError",
    "VerificationDetails",
    "VerificationReport",
    "VerificationResult",
    "__version__",
    "load_policy_pack",
]
