"""``citeverify serve``'s app on a real loopback socket (uvicorn in a thread), for the tests."""

from __future__ import annotations

import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from citeverify_core.references import LocalIndex, ReferenceVerifier
from citeverify_core.service import create_app
from citeverify_core.service.jobs import JobStore

# The job store tests' references: verified, verified with a wrong year, fabricated.
from tests.service.test_jobs import FAKE, KUHN, LECUN_WRONG_YEAR

__all__ = [
    "FAKE",
    "KUHN",
    "LECUN_WRONG_YEAR",
    "Service",
    "bearer",
    "build_index",
    "free_port",
    "stop_serve",
    "wait_done",
    "wait_up",
]

DATA = Path(__file__).parents[1] / "data"


def build_index(folder: Path) -> LocalIndex:
    index = LocalIndex(folder / "index.sqlite")
    if index.stats()["records"] == 0:
        index.build(DATA / "works-crossref.jsonl")
    return index


class Service:
    """One service instance: ``with Service(db, index) as s: httpx.get(s.url + "/healthz")``."""

    def __init__(self, db: str | Path, index: LocalIndex, *, lease: float = 30.0, **options: Any):
        self.store = JobStore(db, ReferenceVerifier(index), lease=lease)
        self.app = create_app(self.store, **options)
        # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP;
        # without it every response waits for the client's delayed ACK (~40 ms a request).
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        # ws="none": no websockets here (and the lowest uvicorn imports a deprecated websockets API).
        config = uvicorn.Config(
            self.app, log_level="warning", lifespan="on", backlog=256, ws="none"
        )
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        self.server.run(sockets=[self._sock])

    def __enter__(self) -> Service:
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the service did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=30)
        self._sock.close()
        self.store.close()

    def key(self, tokens: int = 100, name: str = "test") -> str:
        key, _ = self.store.create_key(name, tokens=tokens)
        return key


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def wait_done(client: httpx.Client, key: str, ids: list[str], timeout: float = 60) -> list[Any]:
    """Poll until no job is waiting or active; the jobs."""
    deadline = time.monotonic() + timeout
    while True:
        jobs: list[Any] = client.post(
            "/api/verify-reference/results", json={"jobIds": ids}, headers=bearer(key)
        ).json()["jobs"]
        if all(j["state"] not in {"waiting", "active"} for j in jobs):
            return jobs
        if time.monotonic() > deadline:
            raise AssertionError(f"jobs still running: {jobs}")
        time.sleep(0.05)


def serve_refusal(tmp_path: Path, *flags: str) -> Any:
    """``citeverify serve FLAGS`` (a gateway without an index) as the CLI answers it at once.

    The result of typer's CliRunner: a refused flag is exit code 2 with the flag named.
    """
    from typer.testing import CliRunner

    from citeverify_core.cli.app import app

    return CliRunner().invoke(
        app,
        ["serve", "--db", str(tmp_path / "jobs.sqlite"), "--index", str(tmp_path / "none"),
         "--upstream", "http://127.0.0.1:9/v1", *flags],
    )  # fmt: skip


# --- a real `citeverify serve` process --------------------------------------------------------


def free_port() -> int:
    """A loopback port nobody listens on (for a ``serve --port`` of a test)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_up(url: str, process: subprocess.Popen[Any], timeout: float = 120) -> None:
    """Wait until ``serve`` at ``url`` answers ``/healthz``; fail at once if it exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            err = process.stderr.read() if process.stderr else b""
            text = err.decode() if isinstance(err, bytes) else str(err)
            raise AssertionError(f"citeverify serve exited: {text}")
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("citeverify serve did not come up")


def stop_serve(process: subprocess.Popen[Any], timeout: float = 30) -> None:
    """SIGTERM, then SIGKILL if it has not exited within ``timeout`` seconds."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
