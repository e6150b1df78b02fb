"""``citeverify serve`` in one process or several (``--workers N``) on one port.

uvicorn's multi-process mode starts each worker process from an import string, so the options
travel to the processes as JSON in an environment variable (:data:`OPTIONS_ENV`) and
:func:`app_from_env` builds each process's app from them. Every process opens the same database:
jobs (leases), keys, tokens, the decision log, the unauthenticated rate limit and the idempotency
keys are shared there; each process runs its own reference-job workers and checks the policy
files' modification times itself.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = ["OPTIONS_ENV", "ServeOptions", "app_from_env", "build_app", "default_workers"]

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
        parent_pid: The ``serve`` command's process (the worker processes end with it).
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
    parent_pid: int | None = None

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
    from citeverify.references import JobStore, LocalIndex, ReferenceVerifier  # noqa: PLC0415
    from citeverify.service._app import create_app  # noqa: PLC0415
    from citeverify.service._policies import PolicyPacks  # noqa: PLC0415

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
        from citeverify.service._gateway import GatewayConfig, make_upstream  # noqa: PLC0415

        mode: Any = options.stream
        gateway = GatewayConfig(make_upstream(options.upstream), packs, stream_mode=mode)
    store = JobStore(options.db, verifier, lease=options.lease)
    closers = [store.close] + ([local.close] if local is not None else [])
    app = create_app(
        store,
        workers=options.jobs,
        gateway=gateway,
        policies=packs,
        log_content=options.log_content,
        log_retention_days=options.log_retention_days,
        on_shutdown=closers,
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
