"""``citeverify serve``: seed 004's reference-verification REST API as a self-hosted service.

Needs the ``server`` extra (FastAPI, uvicorn). :func:`create_app` builds the ASGI app around a
:class:`citeverify.references.JobStore` (SQLite by default, PostgreSQL for several instances);
workers inside the app verify up to ``max_concurrency`` references at once (the seed's 15).
Deployment notes: ``docs/service.md``.
"""

from citeverify.service._app import MAX_BODY_BYTES, UNAUTHENTICATED_PER_MINUTE, create_app

__all__ = ["MAX_BODY_BYTES", "UNAUTHENTICATED_PER_MINUTE", "create_app"]
