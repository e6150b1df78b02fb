"""Exceptions raised by citeverify.

The tree::

    CiteVerifyError                 base of everything citeverify raises on purpose
    ├── PolicyError                 a policy is invalid; ``.path`` names the key
    ├── InputError                  an answer, document, request or response is unusable
    │   └── DocumentError           a paper cannot be read (``.code`` says why)
    ├── CitationUnverifiedError     a guard blocked an answer; ``.result`` holds why
    ├── MissingExtraError           an optional part is not installed (also a ModuleNotFoundError)
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

TYPE_CHECKING = False  # typing costs a tenth of the package's import time: not at run time

if TYPE_CHECKING:
    from citeverify_core.engine.results import VerificationResult

__all__ = [
    "DOCUMENT_ERROR_CODES",
    "EXTRA_MODULES",
    "AuthenticationError",
    "CitationUnverifiedError",
    "CiteVerifyError",
    "DocumentError",
    "InputError",
    "InsufficientTokensError",
    "MissingExtraError",
    "MissingExtraWarning",
    "PermissionDeniedError",
    "PolicyError",
    "RateLimitError",
    "ServiceError",
    "ServiceUnavailableError",
    "install_hint",
    "missing_extra_message",
    "require_extra",
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


class DocumentError(InputError):
    """A document (PDF, Word, LaTeX, ...) cannot be read, or holds no reference list.

    The message is one line a user can act on ("no text layer: run OCR first"); ``code`` is the
    machine-readable reason, one of :data:`DOCUMENT_ERROR_CODES`.

    Attributes:
        code: ``unsupported-format``, ``encrypted``, ``no-text-layer``, ``corrupt``,
            ``too-large``, ``timeout``, ``no-reference-list``, or ``unavailable`` (no reader
            process could be started: the document is not at fault, try again).
    """

    def __init__(self, message: str, *, code: str, path: str = ""):
        super().__init__(message, path=path)
        self.code = code


#: Every ``DocumentError.code``.
DOCUMENT_ERROR_CODES = (
    "unsupported-format",
    "encrypted",
    "no-text-layer",
    "corrupt",
    "too-large",
    "timeout",
    "no-reference-list",
    "unavailable",
)


class CitationUnverifiedError(CiteVerifyError):
    """An answer was blocked because it is not verified against its sources.

    Raised by the framework guards (LangChain, LlamaIndex) when the policy's
    ``output_action.unverified_action`` is ``block``. The core never raises it from
    ``verify()``: there a block is a result with ``verdict == "block"``.

    Attributes:
        result: The full :class:`~citeverify_core.VerificationResult`.
    """

    def __init__(self, result: VerificationResult, message: str | None = None):
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


#: The modules that citeverify imports from each extra of ``citeverify-core`` (pyproject.toml's
#: optional-dependencies; tests/packaging/test_extras.py keeps the two in step).
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "references": ("rapidfuzz", "bibtexparser"),
    "caselaw": ("eyecite",),
    "cli": ("typer",),
    "server": ("fastapi", "uvicorn", "sqlalchemy", "prometheus_client", "aiohttp", "platformdirs"),
    "documents": ("pdfminer", "docx"),
    "batch": ("pyarrow",),
    "ray": ("ray",),
}


def install_hint(extra: str) -> str:
    """The command that installs ``extra``: the one wording of every missing-extra message."""
    return (
        f"python -m pip install 'citeverify-core[{extra}]' "
        f"(from a clone of the repository: python -m pip install '.[{extra}]')"
    )


def missing_extra_message(feature: str, extra: str) -> str:
    """``"<feature> needs the <extra> extra: <command>"``."""
    return f"{feature} needs the {extra} extra: {install_hint(extra)}"


class MissingExtraError(CiteVerifyError, ModuleNotFoundError):
    """A feature needs an extra of ``citeverify-core`` that is not installed.

    Also a ``ModuleNotFoundError`` (``name`` is the missing module), so that code written for a
    plain failed import still catches it.

    Attributes:
        feature: What was asked for ("reference verification").
        extra: The extra that brings it (``references``).
    """

    def __init__(self, feature: str, extra: str, module: str | None = None):
        super().__init__(missing_extra_message(feature, extra), name=module)
        self.feature = feature
        self.extra = extra

    def __reduce__(self) -> tuple[type[MissingExtraError], tuple[str, str, str | None]]:
        return type(self), (self.feature, self.extra, self.name)


class MissingExtraWarning(UserWarning):
    """A check was skipped because an extra is not installed (the result says which)."""


def require_extra(extra: str, feature: str) -> None:
    """Raise :class:`MissingExtraError` unless every module of ``extra`` can be found.

    Nothing is imported: the modules are only looked up on ``sys.path``.

    Raises:
        MissingExtraError: A module of the extra is not installed.
    """
    from importlib.util import find_spec  # noqa: PLC0415 - start-up time

    for module in EXTRA_MODULES[extra]:
        try:
            found = find_spec(module) is not None
        except (ImportError, ValueError):  # ValueError: in sys.modules without a spec
            found = False
        if not found:
            raise MissingExtraError(feature, extra, module)


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"
