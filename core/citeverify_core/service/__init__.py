"""``citeverify serve``: the reference-verification REST API and the guard gateway, self-hosted.

Needs the ``server`` extra (FastAPI, uvicorn). :func:`create_app` builds the ASGI app around a
:class:`citeverify_core.service.jobs.JobStore` (SQLite by default, PostgreSQL for several
instances); workers inside the app verify up to ``max_concurrency`` references at once.
Deployment notes: ``docs/service.md``.

The names below are imported on first access, so that the modules of this package that need no
FastAPI (the store, the wire schema) import without it.
"""

from typing import TYPE_CHECKING, Any

from citeverify_core.errors import require_extra

if TYPE_CHECKING:
    from citeverify_core.service.app import MAX_BODY_BYTES, UNAUTHENTICATED_PER_MINUTE, create_app

__all__ = ["MAX_BODY_BYTES", "UNAUTHENTICATED_PER_MINUTE", "create_app"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        msg = f"module 'citeverify_core.service' has no attribute {name!r}"
        raise AttributeError(msg)
    # Deferred for the optional extra: FastAPI only when the app is asked for.
    require_extra("server", "the reference-verification service")
    from citeverify_core.service import app  # noqa: PLC0415 - start-up time

    value = getattr(app, name)
    globals()[name] = value
    return value
