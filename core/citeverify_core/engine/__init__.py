"""The verification engine: claims, quotes, numbers and citations of an answer against its context.

The public entry point is :class:`citeverify_core.CitationVerifier`; the modules here hold its
parts (text matching in :mod:`citeverify_core.text`, the context index, citation extraction and
checks, the semantic tier, the result objects and their renderings).

Public here: :func:`coerce_documents` (context documents as strings: what every adapter accepts)
and :data:`MAX_DOCUMENTS`, imported on first access (PEP 562) so that importing a module of the
engine does not load the context index; :func:`blocked_answer` and its option's type and check
(what the adapters put in place of a blocked answer when asked not to raise); :func:`shown_result`
(the one rule for what an adapter hands back once it has acted: nothing of a blocked answer or
of a redaction's removed claims) and :func:`public_reason`; :func:`field_values` (the text a
structured answer claims, for the adapters' structured outputs).
"""

from typing import TYPE_CHECKING, Any

from citeverify_core.engine.blocked import (
    DEFAULT_BLOCKED_RESPONSE,
    WITHHELD_TEXT,
    BlockedResponse,
    blocked_answer,
    check_blocked_response,
    public_reason,
    shown_result,
)
from citeverify_core.engine.structured import FieldSpan, field_values

if TYPE_CHECKING:
    from citeverify_core.engine.context import MAX_DOCUMENTS, coerce_documents

__all__ = [
    "DEFAULT_BLOCKED_RESPONSE",
    "MAX_DOCUMENTS",
    "WITHHELD_TEXT",
    "BlockedResponse",
    "FieldSpan",
    "blocked_answer",
    "check_blocked_response",
    "coerce_documents",
    "field_values",
    "public_reason",
    "shown_result",
]
_LAZY = {"MAX_DOCUMENTS", "coerce_documents"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        msg = f"module 'citeverify_core.engine' has no attribute {name!r}"
        raise AttributeError(msg)
    from citeverify_core.engine import context  # noqa: PLC0415 - start-up time: on first use

    value = getattr(context, name)
    globals()[name] = value
    return value
