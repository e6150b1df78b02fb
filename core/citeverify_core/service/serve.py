"""``citeverify serve`` in one process or several (``--workers N``) on one port.

Each worker process is started from an import string (``spawn``: nothing of the parent's state
is shared by accident), so the options travel to the processes as JSON in an environment
variable (:data:`OPTIONS_ENV`) and :func:`app_from_env` builds each process's app from them.

On Linux each worker listens on its own socket bound with ``SO_REUSEPORT``, and the kernel
spreads the connections evenly over them. With one shared listening socket (uvicorn's own
``--workers``) the process that wakes first accepts a whole burst of connections, and keep-alive
clients then stay on it: in the gateway benchmark one worker served nine requests in ten.
Elsewhere :func:`run_processes` falls back to uvicorn's multi-process mode.

Every process opens the same database: jobs (leases), keys, tokens, the decision log, the
unauthenticated rate limit and the idempotency keys are shared there; each process runs its own
reference-job workers and checks the policy files' modification times itself.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import logging
import multiprocessing
import os
import signal
import socket
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citeverify_core.service.limits import DEFAULT_PER_INSTANCE, DEFAULT_PER_KEY

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = [
    "OPTIONS_ENV",
    "ServeOptions",
    "app_from_env",
    "build_app",
    "default_workers",
    "run_processes",
]

_log = logging.getLogger("citeverify_core.service")
#: uvicorn's exit status for a server that never started (a broken app, a port in use).
_STARTUP_FAILURE = 3

#: The environment variable that carries the serve options (JSON) to the worker processes.
OPTIONS_ENV = "CITEVERIFY_SERVE_OPTIONS"
#: Set to 1 (tests only): each response says which process answered (``X-Citeverify-Process``).
PROCESS_HEADER_ENV = "CITEVERIFY_TEST_PROCESS_HEADER"


@dataclass
class ServeOptions:
    """What one service process needs to build its app (JSON-serialisable).

    Attributes:
        db: The job store (a SQLite file or a database URL).
        index: The local index file; used when ``sources`` has ``local``.
        sources: The reference sources of the verifier.
        jobs: Run reference-verification job workers in each process.
        max_concurrency: References verified at once by each process.
        lease: Seconds a running job stays its process's without a heartbeat.
        upstream: The gateway's upstream (a base URL or ``fixture:FILE``), or None.
        policy: The default policy pack file, or None.
        policy_dir: A folder of policy packs, or None.
        stream: The gateway's stream mode (``passthrough`` or ``buffer``).
        log_content: Log answers and documents with the decisions.
        log_retention_days: Days a decision is kept.
        document_retention_days: Days an uploaded document and its results are kept.
        body_timeout: Seconds a request's body may take to arrive.
        parent_pid: The ``serve`` command's process (the worker processes end with it).
        max_verifications: Answers verified at once by each process (guard and
            ``POST /api/check``); 429 beyond.
        max_verifications_per_caller: Of those, at once for one API key or, without one, one
            client address.
    """

    db: str
    index: str
    sources: list[str] = field(default_factory=lambda: ["local"])
    jobs: bool = True
    max_concurrency: int = 15
    lease: float = 30.0
    upstream: str | None = None
    policy: str | None = None
    policy_dir: str | None = None
    stream: str = "passthrough"
    log_content: bool = False
    log_retention_days: float = 30.0
    document_retention_days: float = 30.0
    body_timeout: float = 60.0
    parent_pid: int | None = None
    max_verifications: int = DEFAULT_PER_INSTANCE
    max_verifications_per_caller: int = DEFAULT_PER_KEY
    max_document_bytes: int | None = None  # None: MAX_DOCUMENT_BYTES (50 MB)

    def to_json(self) -> str:
        """The options as JSON (for :data:`OPTIONS_ENV`)."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ServeOptions:
        """Options from :meth:`to_json`'s text."""
        data: dict[str, Any] = json.loads(text)
        return cls(**data)


def default_workers() -> int:
    """The processes ``serve`` runs by default: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def build_app(options: ServeOptions) -> FastAPI:
    """One process's app: its own store connection, verifier, policy packs and upstream."""
    from citeverify_core.references import LocalIndex, ReferenceVerifier  # noqa: PLC0415 - start-up
    from citeverify_core.service.app import create_app  # noqa: PLC0415 - start-up time
    from citeverify_core.service.jobs import JobStore  # noqa: PLC0415 - start-up time
    from citeverify_core.service.limits import VerificationSlots  # noqa: PLC0415 - start-up time
    from citeverify_core.service.policies import PolicyPacks  # noqa: PLC0415 - start-up time

    local = LocalIndex(Path(options.index)) if "local" in options.sources else None
    verifier = ReferenceVerifier(
        local, sources=options.sources, max_concurrency=options.max_concurrency
    )
    packs = PolicyPacks(
        Path(options.policy) if options.policy else None,
        Path(options.policy_dir) if options.policy_dir else None,
    )
    gateway = None
    if options.upstream is not None:
        from citeverify_core.service.gateway import (  # noqa: PLC0415 - start-up time
            GatewayConfig,
            make_upstream,
        )

        mode: Any = options.stream
        gateway = GatewayConfig(make_upstream(options.upstream), packs, stream_mode=mode)
    store = JobStore(options.db, verifier, lease=options.lease)
    closers = [store.close] + ([local.close] if local is not None else [])
    document_limit: dict[str, Any] = {}
    if options.max_document_bytes is not None:
        document_limit["max_document_bytes"] = options.max_document_bytes
    app = create_app(
        store,
        workers=options.jobs,
        **document_limit,
        gateway=gateway,
        policies=packs,
        log_content=options.log_content,
        log_retention_days=options.log_retention_days,
        document_retention_days=options.document_retention_days,
        body_timeout=options.body_timeout,
        on_shutdown=closers,
        slots=VerificationSlots(
            per_instance=options.max_verifications,
            per_key=options.max_verifications_per_caller,
        ),
    )
    if os.environ.get(PROCESS_HEADER_ENV) == "1":
        app.add_middleware(_ProcessHeader)
    return app


class _ProcessHeader:
    """Adds ``X-Citeverify-Process: <pid>`` to every response (the multi-process tests)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.header = (b"x-citeverify-process", str(os.getpid()).encode())

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def tagged(message: Any) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), self.header]
            await send(message)

        await self.app(scope, receive, tagged)


def app_from_env() -> FastAPI:
    """The app of one worker process, from the options in :data:`OPTIONS_ENV` (uvicorn factory)."""
    options = ServeOptions.from_json(os.environ[OPTIONS_ENV])
    if options.parent_pid is not None:
        _end_with_parent(options.parent_pid)
    return build_app(options)


def _end_with_parent(parent: int) -> None:
    """Have the kernel send this worker SIGTERM when the ``serve`` process dies (even by kill -9).

    uvicorn's parent stops its workers on SIGTERM and Ctrl-C; killed outright, it would leave
    them serving the port with nobody to stop them. Linux only (elsewhere: nothing).
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the call above
        os.kill(os.getpid(), signal.SIGTERM)


def _listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` with ``SO_REUSEPORT`` (not yet listening)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def _worker(host: str, port: int, uvicorn_options: dict[str, Any]) -> None:
    """One worker process: its own SO_REUSEPORT socket, uvicorn, the app from the environment."""
    import uvicorn  # noqa: PLC0415 - the server extra

    sock = _listening_socket(host, port)
    config = uvicorn.Config(
        "citeverify_core.service.serve:app_from_env", factory=True, **uvicorn_options
    )
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
    if not server.started:
        sys.exit(_STARTUP_FAILURE)


def run_processes(
    options: ServeOptions,
    *,
    host: str,
    port: int,
    processes: int,
    uvicorn_options: dict[str, Any],
) -> int:
    """Serve ``host:port`` with ``processes`` worker processes until SIGTERM or SIGINT.

    A worker that dies is started again (one that fails to start stops the service). On SIGTERM
    or SIGINT every worker gets SIGTERM and finishes its requests in flight (uvicorn's
    ``timeout_graceful_shutdown``); one still running 5 seconds after that is killed.

    Returns:
        The exit status: 0, or 3 when a worker could not start.

    Raises:
        OSError: the port cannot be bound.
    """
    os.environ[OPTIONS_ENV] = options.to_json()
    if not hasattr(socket, "SO_REUSEPORT") or not sys.platform.startswith("linux"):
        import uvicorn  # noqa: PLC0415 - the server extra

        uvicorn.run(
            "citeverify_core.service.serve:app_from_env",
            factory=True,
            host=host,
            port=port,
            workers=processes,
            **uvicorn_options,
        )
        return 0
    # Held, not listening, while the service runs: the port is ours (SO_REUSEPORT admits only
    # sockets of the same user), and a port in use fails here, once.
    reserved = _listening_socket(host, port)
    context = multiprocessing.get_context("spawn")
    stop = threading.Event()
    previous = {
        sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGTERM, signal.SIGINT)
    }

    def start() -> multiprocessing.process.BaseProcess:
        child = context.Process(
            target=_worker, args=(host, port, uvicorn_options), name="citeverify-serve"
        )
        child.start()
        return child

    status = 0
    children = [start() for _ in range(processes)]
    _log.info("started %d worker processes: %s", processes, [c.pid for c in children])
    try:
        while not stop.wait(0.5):
            for i, child in enumerate(children):
                if child.is_alive():
                    continue
                if child.exitcode == _STARTUP_FAILURE:
                    _log.error("a worker process could not start: stopping")
                    status = _STARTUP_FAILURE
                    stop.set()
                    break
                _log.warning(
                    "worker process %s ended (%s): starting another", child.pid, child.exitcode
                )
                children[i] = start()
    finally:
        for child in children:
            if child.is_alive() and child.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child.pid, signal.SIGTERM)
        grace = float(uvicorn_options.get("timeout_graceful_shutdown") or 0) + 5
        deadline = time.monotonic() + grace
        for child in children:
            child.join(max(0.0, deadline - time.monotonic()))
            if child.is_alive():
                child.kill()
                child.join()
        reserved.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return status
