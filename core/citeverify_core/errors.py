"""Exceptions raised by citeverify.

The tree::

    CiteVerifyError                 base of everything citeverify raises on purpose
    ├── PolicyError                 a policy is invalid; ``.path`` names the key
    ├── InputError                  an answer, document, request or response is unusable
    ├── CitationUnverifiedError     a guard blocked an answer; ``.result`` holds why
    └── ServiceError                the reference service refused a request (``.status``)
        ├── AuthenticationError     401: no API key, or one the service does not know
        ├── PermissionDeniedError   403: the API key was revoked
        ├── InsufficientTokensError 402: the balance is short (``.needed``, ``.available``)
        ├── RateLimitError          429: too many requests (``.retry_after`` seconds)
        └── ServiceUnavailableError the service cannot be reached, timed out or answered garbage

Lookups (Crossref, PubMed, URLs) never raise into the caller: their failures are data in
``details.external_lookup``.
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = [
    "AuthenticationError",
    "CitationUnverifiedError",
    "CiteVerifyError",
    "InputError",
    "InsufficientTokensError",
    "PermissionDeniedError",
    "PolicyError",
    "RateLimitError",
    "ServiceError",
    "ServiceUnavailableError",
]


class CiteVerifyError(Exception):
    """Base class of every error that citeverify raises on purpose."""


class PolicyError(CiteVerifyError):
    """A policy file or mapping is invalid.

    Not a ``ValueError`` on purpose: pydantic wraps ValueErrors raised during validation into a
    ValidationError, and PolicyConfig raises this from its constructor.

    Attributes:
        path: Dotted key path of the first offending key (``""`` for the whole document).
        problems: Every ``(path, message)`` pair found, in document order.
    """

    def __init__(
        self, message: str, *, path: str = "", problems: list[tuple[str, str]] | None = None
    ):
        super().__init__(message)
        self.path = path
        self.problems: list[tuple[str, str]] = (
            problems if problems is not None else [(path, message)]
        )


class InputError(CiteVerifyError, ValueError):
    """An answer, context document, request or response cannot be verified.

    Attributes:
        path: Where in the input the problem is, e.g. ``context_documents[2].content``.
    """

    def __init__(self, message: str, *, path: str = ""):
        super().__init__(message)
        self.path = path


class _BlockedResult(Protocol):
    """What the error reads of a :class:`~citeverify_core.VerificationResult`.

    A protocol, so that this bottom layer imports nothing of the engine above it.
    """

    @property
    def reason_code(self) -> str | None: ...

    @property
    def details(self) -> Any: ...


class CitationUnverifiedError(CiteVerifyError):
    """An answer was blocked because it is not verified against its sources.

    Raised by the framework guards (LangChain, LlamaIndex) when the policy's
    ``output_action.unverified_action`` is ``block``. The core never raises it from
    ``verify()``: there a block is a result with ``verdict == "block"``.

    Attributes:
        result: The full :class:`~citeverify_core.VerificationResult`.
    """

    def __init__(self, result: _BlockedResult, message: str | None = None):
        if message is None:
            details = result.details
            message = (
                f"answer blocked ({result.reason_code}): groundedness "
                f"{_fmt(details.groundedness)}, claim confidence {_fmt(details.claim_confidence)}, "
                f"{details.unverified_claim_count or 0} unverified claim(s)"
            )
        super().__init__(message)
        self.result = result


class ServiceError(CiteVerifyError):
    """The reference service (``citeverify serve``) refused or could not answer a request.

    Raised by the service's store and by :mod:`citeverify_core.client`; the service turns it into
    its
    HTTP status and a JSON error body ``{"error": {"code": ..., "message": ...}}``.

    Attributes:
        status: The HTTP status that stands for it (0 when no answer came).
        code: A short machine-readable code (``invalid_api_key``, ``insufficient_tokens``, ...).
    """

    status = 500
    code = "service_error"

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None):
        super().__init__(message)
        if status is not None:
            self.status = status
        if code is not None:
            self.code = code


class AuthenticationError(ServiceError):
    """401: the request has no API key, or one that the service does not know."""

    status = 401
    code = "invalid_api_key"


class PermissionDeniedError(ServiceError):
    """403: the API key was revoked."""

    status = 403
    code = "revoked_api_key"


class InsufficientTokensError(ServiceError):
    """402: the key's balance cannot pay for the references (one token each).

    Attributes:
        needed: Tokens the request needs.
        available: Tokens the key has.
    """

    status = 402
    code = "insufficient_tokens"

    def __init__(self, message: str, *, needed: int = 0, available: int = 0):
        super().__init__(message)
        self.needed = needed
        self.available = available


class RateLimitError(ServiceError):
    """429: too many unauthenticated requests from one client address.

    Attributes:
        retry_after: Seconds to wait before the next request.
    """

    status = 429
    code = "rate_limited"

    def __init__(self, message: str, *, retry_after: float = 60.0):
        super().__init__(message)
        self.retry_after = retry_after


class ServiceUnavailableError(ServiceError):
    """The service could not be reached, timed out, or answered something that is not its API."""

    status = 0
    code = "service_unavailable"


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"
