"""citeverify: check RAG answers against their sources.

The engine measures how much of an answer its context documents support (word-overlap
groundedness, per claim), matches quotes, finds citations, and decides allow / flag / redact /
block with the reason codes ``citation.verified`` and ``citation.unverified``.

>>> from citeverify import CitationVerifier
>>> result = CitationVerifier().verify("The museum opens at nine.", ["The museum opens at nine."])
>>> result.verdict, result.reason_code
('allow', 'citation.verified')
"""

from citeverify._context import ContextCache
from citeverify._errors import (
    AuthenticationError,
    CitationUnverifiedError,
    CiteVerifyError,
    InputError,
    InsufficientTokensError,
    PermissionDeniedError,
    PolicyError,
    RateLimitError,
    ServiceError,
    ServiceUnavailableError,
)
from citeverify._lookup import LookupCache
from citeverify._policy import PolicyConfig, load_policy_pack
from citeverify._result import (
    Citation,
    ClaimResult,
    LookupRecord,
    QuoteResult,
    VerificationDetails,
    VerificationReport,
    VerificationResult,
)
from citeverify._verifier import CitationVerifier


def _version() -> str:
    # One version number, in pyproject.toml; the installed metadata carries it here.
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    try:
        return version("citeverify-core")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


__version__ = _version()

__all__ = [
    "AuthenticationError",
    "Citation",
    "CitationUnverifiedError",
    "CitationVerifier",
    "CiteVerifyError",
    "ClaimResult",
    "ContextCache",
    "InputError",
    "InsufficientTokensError",
    "LookupCache",
    "LookupRecord",
    "PermissionDeniedError",
    "PolicyConfig",
    "PolicyError",
    "QuoteResult",
    "RateLimitError",
    "ServiceError",
    "ServiceUnavailableError",
    "VerificationDetails",
    "VerificationReport",
    "VerificationResult",
    "__version__",
    "load_policy_pack",
]
