"""A real HTTP server on 127.0.0.1 whose answers each test scripts (no mocks of httpx)."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit


@dataclass
class Reply:
    status: int = 200
    body: bytes | str | Any = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before the status line
    trickle: float = 0.0  # seconds between 1 KB body chunks (a slow body)
    # A body generated while it is sent (never held in memory): chunks in turn, announced with
    # ``length`` as Content-Length, or sent chunked when ``length`` is None.
    stream: Callable[[], Iterable[bytes]] | None = None
    length: int | None = None
    raw: bytes | None = None  # written as is instead of a response (a broken protocol)

    def payload(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode()
        self.headers.setdefault("Content-Type", "application/json")
        return json.dumps(self.body).encode()


@dataclass
class Seen:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes


class _Server(ThreadingHTTPServer):
    """A thread per connection, a listen backlog that does not refuse a burst of clients.

    socketserver's default backlog is 5: 20 clients connecting at once overflow the accept
    queue, and the kernel drops their SYNs, to be retried a second later; concurrent lookups
    then look serialised. The socket says it is TCP (``IPPROTO_TCP``) and has ``TCP_NODELAY``,
    which the accepted connections inherit.
    """

    request_queue_size = 128
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler, bind_and_activate=False)
        self.socket.close()
        self.socket = socket.socket(self.address_family, self.socket_type, socket.IPPROTO_TCP)
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            self.server_bind()
            self.server_activate()
        except BaseException:
            self.server_close()
            raise


class Loopback:
    """Routes are ``(method, path) -> Reply`` or a callable returning replies in turn."""

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], Reply | list[Reply] | Callable[[Seen], Reply]] = {}
        self.seen: list[Seen] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body are two writes: with Nagle's algorithm the body waits for the
            # client's delayed ACK of the headers (~40 ms a response on Linux).
            disable_nagle_algorithm = True

            def log_message(self, *args: object) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                parts = urlsplit(self.path)
                seen = Seen(
                    self.command,
                    parts.path,
                    parts.query,
                    dict(self.headers),
                    self.rfile.read(length),
                )
                server.seen.append(seen)
                reply = server._reply(seen)
                time.sleep(reply.delay)
                if reply.raw is not None:
                    self.wfile.write(reply.raw)
                    self.close_connection = True
                    return
                # One writer: a fixed body is sent as a stream of one chunk (1 KB ones to trickle).
                chunks: Callable[[], Iterable[bytes]]
                if reply.stream is None:
                    data = reply.payload()
                    step = 1024 if reply.trickle else max(len(data), 1)
                    chunks = lambda: (data[i : i + step] for i in range(0, len(data), step))  # noqa: E731
                    length: int | None = len(data)
                else:
                    chunks, length = reply.stream, reply.length
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                if length is None:
                    self.send_header("Transfer-Encoding", "chunked")
                else:
                    self.send_header("Content-Length", str(length))
                self.end_headers()
                if self.command == "HEAD":
                    return
                for chunk in chunks():
                    if length is None:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    else:
                        self.wfile.write(chunk)
                    if reply.trickle:
                        self.wfile.flush()
                        time.sleep(reply.trickle)
                if length is None:
                    self.wfile.write(b"0\r\n\r\n")

            def handle_one_request(self) -> None:
                # The client may give up first (timeouts, bounded reads): expected in tests.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError, TimeoutError):
                    super().handle_one_request()

            do_GET = do_HEAD = do_POST = _handle

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )  # shutdown() waits up to one poll interval: 0.5 s by default, per test

    def _reply(self, seen: Seen) -> Reply:
        route = self.routes.get((seen.method, seen.path)) or self.routes.get(("*", seen.path))
        if route is None:
            return Reply(404, "Resource not found.", {"Content-Type": "text/plain"})
        if callable(route):
            return route(seen)
        if isinstance(route, list):
            return route.pop(0) if len(route) > 1 else route[0]
        return route

    def calls(self, path: str) -> int:
        return sum(1 for s in self.seen if s.path == path)

    def __enter__(self) -> Loopback:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def open_connections(port: int) -> int:
    """Established TCP connections to ``port`` on this machine, read from ``/proc/net/tcp*``
    (a client that left must leave no connection to the upstream behind)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if fields[3] == "01" and int(fields[2].rsplit(":", 1)[1], 16) == port:
                count += 1
    return count
