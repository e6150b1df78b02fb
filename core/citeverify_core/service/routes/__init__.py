"""The REST routes of the reference service, one module per resource.

Each module has a ``router`` (a FastAPI :class:`~fastapi.APIRouter`) that
:func:`citeverify_core.service.app.create_app` includes; the routes read the app's parts
(store, decision log, policy packs, bounds) from ``app.state.service``
(:class:`~citeverify_core.service.routes.dependencies.ServiceState`).
"""

__all__: list[str] = []
