"""The request body limit, a pure ASGI middleware: it acts before anything reads the body.

A body over the limit is refused with 413 in the service's error envelope, by its
``Content-Length`` or, when it streams without one, as soon as the bytes read pass the limit.
The guard's endpoints (``/v1/...``) and ``POST /api/check`` carry context documents: they have a
larger limit of their own.

A body must also arrive in time: one that is still coming ``body_timeout`` seconds after the
request began (a client that sends a byte every few seconds, or holds the last bytes back) is
answered 408 ``body_timeout``. An answer given before the body was read whole (413, 408, and
any refusal the app gives first: 402, 429) closes the connection, so that the client cannot go
on sending into it.
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from citeverify_core.service.responses import error_response

__all__ = ["BODY_TIMEOUT", "BodyLimit"]

#: Seconds a request's body may take to arrive, from the request's start.
BODY_TIMEOUT = 60.0
#: What a request cut short by the service's shutdown is told (503 ``shutting_down``).
SHUTTING_DOWN = "the service is shutting down; retry"


class BodyLimit:
    """Refuse bodies over ``limit`` bytes with 413, by Content-Length or while they stream."""

    def __init__(
        self,
        app: ASGIApp,
        limit: int,
        gateway_limit: int,
        body_timeout: float | None = BODY_TIMEOUT,
    ) -> None:
        self.app = app
        self.default_limit = limit
        self.gateway_limit = gateway_limit
        self.body_timeout = body_timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, its body counted against the path's limit."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        gateway = path.startswith("/v1/") or path == "/api/check"
        limit = self.gateway_limit if gateway else self.default_limit
        has_body = False
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and (not value.isdigit() or int(value) > limit):
                await _send_json(send, 413, "body_too_large", self._message(limit), close=True)
                return
            if (name == b"content-length" and int(value) > 0) or name == b"transfer-encoding":
                has_body = True
        received = 0
        started = answered = False
        body_done = not has_body  # a request without a body keeps its connection
        loop = asyncio.get_running_loop()
        deadline = None if self.body_timeout is None else loop.time() + self.body_timeout

        async def refuse(status: int, code: str, message: str) -> Message:
            # Answer at once, and tell the app the client left (it stops reading; whatever it
            # answers then is dropped). Raising here would not do: the framework turns an error
            # while reading the body into its own 400.
            nonlocal answered
            if not started and not answered:
                answered = True
                await _send_json(send, status, code, message, close=True)
            return {"type": "http.disconnect"}

        async def limited() -> Message:
            nonlocal received, body_done
            if body_done or deadline is None:
                message = await receive()  # after the body: the app's disconnect listeners
            else:
                try:
                    message = await asyncio.wait_for(receive(), max(deadline - loop.time(), 0))
                except TimeoutError:
                    return await refuse(408, "body_timeout", self._late(self.body_timeout))
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    return await refuse(413, "body_too_large", self._message(limit))
                if not message.get("more_body", False):
                    body_done = True
            return message

        async def tracking(message: Message) -> None:
            nonlocal started
            if answered:
                return
            if message["type"] == "http.response.start":
                started = True
                if not body_done and not _closes(message):
                    # Answered before the body was read (a 402 or a 429 of the app): close the
                    # connection after the answer, or the client would go on sending into it.
                    headers = [*message.get("headers", []), (b"connection", b"close")]
                    message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, limited, tracking)
        except asyncio.CancelledError:
            # The service's shutdown cancels what its grace period left running (an upload
            # still sending, a document still read): the client is told so in the service's
            # envelope (503, retry), not sent uvicorn's plain-text 500 and a traceback.
            if started or answered:
                raise
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()  # handled here: the rest of this request may await
            await _send_json(send, 503, "shutting_down", SHUTTING_DOWN, close=True)

    @staticmethod
    def _message(limit: int) -> str:
        return f"the request body is larger than {limit:,} bytes"

    @staticmethod
    def _late(timeout: float | None) -> str:
        return f"the request body did not arrive within {timeout:g} s"


def _closes(message: Message) -> bool:
    return any(
        name.lower() == b"connection" and value.lower() == b"close"
        for name, value in message.get("headers", [])
    )


async def _send_json(
    send: Send, status: int, code: str, message: str, *, close: bool = False
) -> None:
    response = error_response(status, code, message)
    headers = [(k.encode(), v.encode()) for k, v in response.headers.items()]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": response.body})
