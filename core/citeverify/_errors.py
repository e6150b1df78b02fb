"""Exceptions raised by citeverify.

The tree::

    CiteVerifyError                 base of everything citeverify raises on purpose
    ├── PolicyError                 a policy is invalid; ``.path`` names the key
    ├── InputError                  an answer, document, request or response is unusable
    └── CitationUnverifiedError     a guard blocked an answer; ``.result`` holds why

Lookups (Crossref, PubMed, URLs) never raise into the caller: their failures are data in
``details.external_lookup``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from citeverify._result import VerificationResult

__all__ = ["CitationUnverifiedError", "CiteVerifyError", "InputError", "PolicyError"]


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


class CitationUnverifiedError(CiteVerifyError):
    """An answer was blocked because it is not verified against its sources.

    Raised by the framework guards (LangChain, LlamaIndex) when the policy's
    ``output_action.unverified_action`` is ``block``. The core never raises it from
    ``verify()``: there a block is a result with ``verdict == "block"``.

    Attributes:
        result: The full :class:`~citeverify.VerificationResult`.
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


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"
