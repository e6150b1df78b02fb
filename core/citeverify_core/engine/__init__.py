"""The verification engine: claims, quotes, numbers and citations of an answer against its context.

The public entry point is :class:`citeverify_core.CitationVerifier`; the modules here hold its
parts (text matching in :mod:`citeverify_core.text`, the context index, citation extraction and
checks, the semantic tier, the result objects and their renderings).

Public here: :func:`coerce_documents` (context documents as strings: what every adapter accepts)
and :data:`MAX_DOCUMENTS`, imported on first access (PEP 562) so that importing a module of the
engine does not load the context index.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from citeverify_core.engine.context import MAX_DOCUMENTS, coerce_documents

__all__ = ["MAX_DOCUMENTS", "coerce_documents"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        msg = f"module 'citeverify_core.engine' has no attribute {name!r}"
        raise AttributeError(msg)
    from citeverify_core.engine import context  # noqa: PLC0415 - start-up time: on first use

    value = getattr(context, name)
    globals()[name] = value
    return value
