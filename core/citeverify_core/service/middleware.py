"""The request body limit, a pure ASGI middleware: it acts before anything reads the body.

A body over the limit is refused with 413 in the service's error envelope, by its
``Content-Length`` or, when it streams without one, as soon as the bytes read pass the limit.
The guard's endpoints (``/v1/...``) and ``POST /api/check`` carry context documents: they have a
larger limit of their own.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from citeverify_core.service.responses import error_response

__all__ = ["BodyLimit"]


class BodyLimit:
    """Refuse bodies over ``limit`` bytes with 413, by Content-Length or while they stream."""

    def __init__(self, app: ASGIApp, limit: int, gateway_limit: int) -> None:
        self.app = app
        self.default_limit = limit
        self.gateway_limit = gateway_limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, its body counted against the path's limit."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        gateway = path.startswith("/v1/") or path == "/api/check"
        limit = self.gateway_limit if gateway else self.default_limit
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and (not value.isdigit() or int(value) > limit):
                await _send_json(send, 413, "body_too_large", self._message(limit))
                return
        received = 0
        started = answered = False

        async def limited() -> Message:
            # Over the limit: answer 413 at once, and tell the app the client left (it stops
            # reading; whatever it answers then is dropped). Raising here would not do: the
            # framework turns an error while reading the body into its own 400.
            nonlocal received, answered
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    if not started and not answered:
                        answered = True
                        await _send_json(send, 413, "body_too_large", self._message(limit))
                    return {"type": "http.disconnect"}
            return message

        async def tracking(message: Message) -> None:
            nonlocal started
            if answered:
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await self.app(scope, limited, tracking)

    @staticmethod
    def _message(limit: int) -> str:
        return f"the request body is larger than {limit:,} bytes"


async def _send_json(send: Send, status: int, code: str, message: str) -> None:
    response = error_response(status, code, message)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(k.encode(), v.encode()) for k, v in response.headers.items()],
        }
    )
    await send({"type": "http.response.body", "body": response.body})
