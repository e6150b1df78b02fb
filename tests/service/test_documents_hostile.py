"""Hostile uploads against a real ``citeverify serve --workers 2`` on loopback (issue 33).

The probe's approach: the service in its own processes, hostile documents and clients sent to
``POST /api/verify-document``, and meanwhile the worker processes' RSS (and that of their reader
children, apart) sampled every 50 ms from ``/proc`` and ``GET /healthz`` timed every 50 ms.

- A 20 MB ``.txt`` of ``a\\n``, a 20 MB ``.md`` whose references are all over 1,200 characters,
  a deeply nested ``.html`` and a huge ``.bib``: each worker grows by at most 300 MB while the
  document is in flight, is back within 50 MB of where it was after the answer, no 500, and
  ``/healthz`` p99 under 1 s (the issue's target is 250 ms: ``bench/bench_documents_hostile.py``
  measures that on a quiet machine; this suite runs on a loaded 2-core CI machine).
- A key with 0 tokens uploading each format: 402 before the body is read, nothing stored.
- 8 connections of one key, each sending 1 MB of a 40 MB body and holding the rest: one is
  admitted across both processes, the others are told 429 while their body is unsent.
- A body dripping one byte every 0.5 s: 408 at the body timeout (3 s here).

The ``.md`` missed both memory targets at first (about +300 MB at its peak, 150-190 MB held
after the answer); it holds them since references too long to verify are cut in the reader,
a refused reading's traceback no longer keeps the bytes, and the store's insert no longer
caches its values (bench/README.md has the figures before and after).

``bench/bench_documents_hostile.py`` runs the same scenarios (it imports them from here).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa

from tests.support.service import build_index, free_port, stop_serve, wait_up

MB = 1024 * 1024
DOCUMENT_PATH = "/api/verify-document"
#: The issue's targets.
GROWTH_LIMIT = 300 * MB  # worker RSS growth per document in flight
SETTLED_LIMIT = 50 * MB  # worker RSS over its baseline once the answer is given
HEALTHZ_P99_TEST = 1.0  # seconds, on a loaded CI machine
HEALTHZ_P99_TARGET = 0.25  # seconds: the target, checked by the bench
#: The service's body timeout in these runs (``serve --body-timeout``).
BODY_TIMEOUT = 3.0
#: Every 50 ms: the RSS samples and the /healthz calls.
PERIOD = 0.05
HAS_PROC = Path("/proc/self/status").is_file() and sys.platform.startswith("linux")
needs_proc = pytest.mark.skipif(not HAS_PROC, reason="reads /proc (Linux)")


# --- the hostile documents -----------------------------------------------------------------------


def lines_of_a(size: int) -> bytes:
    """``a\\n`` over and over: ten million lines in 20 MB, no reference list."""
    return b"a\n" * (size // 2)


def long_references(size: int, per: int = 10_000) -> bytes:
    """Markdown with a reference list of up to 2,000 references, each ``per`` characters (all
    over the 1,200 the verifier takes: "not verifiable", stored as failed jobs)."""
    count = max(1, min(2000, size // per))
    words = "paradigm science structure revolution normal crisis anomaly " * (per // 50 + 1)
    out = [
        "# Long references",
        "",
        "Each of them is cited: " + " ".join(f"[{i}]" for i in range(1, count + 1)) + ".",
        "",
        "## References",
        "",
    ]
    for i in range(1, count + 1):
        out.append(f"[{i}] Kuhn, T. S. ({1900 + i % 100}). {words[: per - 60]}. Chicago, {i}.")
        out.append("")
    return "\n".join(out).encode()


def nested_html(size: int) -> bytes:
    """``<div>`` inside ``<div>``, ``size`` bytes of them, and a reference list at the bottom."""
    depth = max(1, size // 11)
    return b"".join(
        [
            b"<html><body>",
            b"<div>" * depth,
            b"<p>Normal science works inside a paradigm [1].</p><h2>References</h2><ol><li>",
            b"Kuhn, T. S. (1962). The Structure of Scientific Revolutions. University of ",
            b"Chicago Press.</li></ol>",
            b"</div>" * depth,
            b"</body></html>",
        ]
    )


def huge_bib(size: int) -> bytes:
    """BibTeX entries (about 170 bytes each) up to ``size`` bytes: far over 2,000 references."""
    entry = (
        "@article{{k{i}, author = {{Doe, Jane and Roe, Richard}}, title = {{A study of things "
        "number {i}}}, journal = {{Journal of Studies}}, year = {{2020}}, volume = {{{i}}}, "
        "pages = {{1--10}}}}\n"
    )
    out: list[str] = []
    total = i = 0
    while total < size:
        text = entry.format(i=i)
        out.append(text)
        total += len(text)
        i += 1
    return "".join(out).encode()


@dataclass(frozen=True)
class Hostile:
    """A hostile document: its file name, how it is made, what the service should answer."""

    name: str
    make: Callable[[int], bytes]
    size: int
    expect: tuple[int, ...]  # the statuses allowed
    code: str | None = None  # the error code expected, when it is certain


#: The documents of the memory runs (the bench makes the .bib as large as the others).
HOSTILE = (
    Hostile("lines.txt", lines_of_a, 20 * MB, (413,), "too-large"),
    Hostile("long-references.md", long_references, 20 * MB, (200, 413, 422)),
    Hostile("nested.html", nested_html, 20 * MB, (200, 413, 422)),
    Hostile("huge.bib", huge_bib, 4 * MB, (200, 413, 422)),
)


# --- the service ---------------------------------------------------------------------------------


@dataclass
class Served:
    """``citeverify serve --workers 2`` on a free loopback port, with its keys."""

    url: str
    port: int
    db: Path
    process: subprocess.Popen[bytes]
    keys: dict[str, str]
    log: Path


@contextlib.contextmanager
def serve(
    folder: Path,
    tokens: dict[str, int],
    *,
    workers: int = 2,
    body_timeout: float = BODY_TIMEOUT,
    start_timeout: float = 120,
) -> Iterator[Served]:
    """The service started with ``tokens`` keys created beforehand (name -> tokens)."""
    from citeverify_core.service.tenants import TenantStore

    index = build_index(folder)
    index.close()
    db = folder / "service.sqlite"
    store = TenantStore(db)
    keys = {name: store.create_key(name, tokens=n)[0] for name, n in tokens.items()}
    store.close()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = folder / "serve.log"
    log = log_path.open("wb")
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "CITEVERIFY_TEST_PROCESS_HEADER": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "citeverify_core", "serve", "--port", str(port), "--db", str(db),
         "--index", str(folder / "index.sqlite"), "--workers", str(workers),
         "--body-timeout", f"{body_timeout:g}", "--shutdown-timeout", "2"],
        stdout=subprocess.DEVNULL, stderr=log, env=env,
    )  # fmt: skip
    try:
        wait_up(url, process, timeout=start_timeout)
        served = Served(url, port, db, process, keys, log_path)
        if HAS_PROC:  # both processes up (each imports the app on its own)
            deadline = time.monotonic() + start_timeout
            while len(worker_pids(process.pid)) < workers and time.monotonic() < deadline:
                time.sleep(0.1)
        yield served
    finally:
        stop_serve(process)
        log.close()


def stored_documents(db: Path) -> int:
    """Documents in the service's store."""
    engine = sa.create_engine(f"sqlite:///{db}")
    try:
        with engine.connect() as connection:
            return int(connection.execute(sa.text("SELECT count(*) FROM documents")).scalar_one())
    finally:
        engine.dispose()


def key_record(db: Path, name: str) -> dict[str, Any]:
    from citeverify_core.service.tenants import TenantStore

    store = TenantStore(db)
    try:
        return next(k for k in store.list_keys() if k["name"] == name)
    finally:
        store.close()


# --- processes and their memory (/proc) ----------------------------------------------------------


def children(pid: int) -> list[int]:
    """The processes ``pid`` started (every thread's children)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                found += [int(p) for p in (task / "children").read_text().split()]
    return found


def worker_pids(serve_pid: int) -> list[int]:
    """The processes of ``serve`` that answer: its spawned workers (not multiprocessing's
    resource tracker), or ``serve`` itself when it runs one process (``--workers 1``)."""
    pids = []
    for pid in children(serve_pid):
        with contextlib.suppress(OSError):
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                pids.append(pid)
    return sorted(pids) or [serve_pid]


def rss(pid: int) -> int:
    """A process's resident memory in bytes (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


@dataclass
class Window:
    """What one measured run saw: per worker, its baseline and peak; readers; /healthz."""

    baseline: dict[int, int] = field(default_factory=dict)
    peak: dict[int, int] = field(default_factory=dict)
    readers_baseline: int = 0
    readers_peak: int = 0
    healthz: list[float] = field(default_factory=list)
    healthz_failures: list[str] = field(default_factory=list)

    @property
    def growth(self) -> int:
        """The largest growth of one worker's RSS over its baseline (bytes)."""
        return max((self.peak.get(p, 0) - b for p, b in self.baseline.items()), default=0)

    def p(self, q: float) -> float:
        """The q-quantile of the /healthz times (seconds; 0 without samples)."""
        if not self.healthz:
            return 0.0
        ordered = sorted(self.healthz)
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Monitor:
    """Samples the workers' RSS (and their children's) and times ``GET /healthz``, each every
    50 ms, in two threads, into the current :class:`Window`."""

    def __init__(self, served: Served) -> None:
        self.served = served
        self.window = Window()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._sample, daemon=True),
            threading.Thread(target=self._health, daemon=True),
        ]

    def __enter__(self) -> Monitor:
        self.start()
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=15)

    def workers(self) -> list[int]:
        return worker_pids(self.served.process.pid) if HAS_PROC else []

    def memory(self) -> tuple[dict[int, int], int]:
        """Each worker's RSS, and the sum of their children's (the readers and warm spares)."""
        workers = self.workers()
        readers = sum(rss(c) for w in workers for c in children(w))
        return {w: rss(w) for w in workers}, readers

    def start(self) -> Window:
        """A new window from now: the baselines are the current RSS."""
        memory, readers = self.memory()
        window = Window(dict(memory), dict(memory), readers, readers)
        with self._lock:
            self.window = window
        return window

    def settle(self, window: Window, timeout: float = 20.0) -> tuple[bool, int, float]:
        """Wait (bounded) until every worker is within SETTLED_LIMIT of its baseline; the window
        then takes no more samples.

        Returns whether it was, the largest growth over the baseline left, and the seconds taken.
        """
        try:
            return self._settle(window, timeout)
        finally:
            with self._lock:
                if self.window is window:  # later samples go to a window nobody reads
                    self.window = Window()

    def _settle(self, window: Window, timeout: float) -> tuple[bool, int, float]:
        started = time.monotonic()
        while True:
            memory, _ = self.memory()
            left = max((memory.get(p, b) - b for p, b in window.baseline.items()), default=0)
            waited = time.monotonic() - started
            if left <= SETTLED_LIMIT or waited > timeout:
                return left <= SETTLED_LIMIT, left, waited
            time.sleep(0.1)

    def _sample(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            if HAS_PROC:
                memory, readers = self.memory()
                with self._lock:
                    window = self.window
                    for pid, value in memory.items():
                        window.peak[pid] = max(window.peak.get(pid, 0), value)
                        window.baseline.setdefault(pid, value)  # a worker started meanwhile
                    window.readers_peak = max(window.readers_peak, readers)
            self._stop.wait(max(0.0, PERIOD - (time.monotonic() - started)))

    def _health(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            failure = None
            # A new connection each time: the kernel spreads them over both processes.
            connection = http.client.HTTPConnection("127.0.0.1", self.served.port, timeout=10)
            try:
                connection.request("GET", "/healthz")
                answer = connection.getresponse()
                answer.read()
                if answer.status != 200:
                    failure = f"/healthz {answer.status}"
            except OSError as exc:
                failure = f"/healthz {type(exc).__name__}"
            finally:
                connection.close()
            took = time.monotonic() - started
            with self._lock:
                self.window.healthz.append(took)
                if failure:
                    self.window.healthz_failures.append(failure)
            self._stop.wait(max(0.0, PERIOD - took))


# --- uploads -------------------------------------------------------------------------------------


@dataclass
class Answer:
    """An upload's answer: status, error code, seconds to the answer, the process's pid."""

    status: int
    code: str | None
    seconds: float
    pid: str | None = None
    sent: int = 0  # body bytes the client had sent when the answer came (raw sockets)
    closed: bool = False  # the service closed the connection after the answer


def upload(served: Served, key: str, name: str, data: bytes, timeout: float = 180) -> Answer:
    """A multipart upload through httpx (the whole body sent)."""
    started = time.monotonic()
    with httpx.Client(timeout=timeout) as client:
        answer = client.post(
            served.url + DOCUMENT_PATH,
            files={"file": (name, data, "application/octet-stream")},
            headers={"Authorization": f"Bearer {key}"},
        )
        took = time.monotonic() - started
    code = None
    if answer.status_code >= 400:
        with contextlib.suppress(ValueError, KeyError, TypeError):
            code = answer.json()["error"]["code"]
    return Answer(answer.status_code, code, took, answer.headers.get("x-citeverify-process"))


BOUNDARY = "hostile-boundary"


def multipart_head(name: str) -> bytes:
    """The start of a multipart body: the ``file`` part's headers."""
    return (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()


def request_head(port: int, key: str, length: int) -> bytes:
    return (
        f"POST {DOCUMENT_PATH} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Bearer {key}\r\n"
        f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


class RawUpload:
    """An upload on a socket of its own that sends only part of its body (or drips it)."""

    def __init__(self, served: Served, key: str, name: str, length: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", served.port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.started = time.monotonic()
        self.sock.sendall(request_head(served.port, key, length))
        self.sent = 0
        self.head = multipart_head(name)
        self.raw = b""
        self.answered_at: float | None = None
        self.closed = False

    def close(self) -> None:
        self.sock.close()

    def pump(self, data: bytes, until: float) -> bool:
        """Send ``data`` while watching for an answer; True when one came first (or during)."""
        view = memoryview(data)
        done = 0
        while done < len(view) and time.monotonic() < until:
            readable, writable, _ = select.select([self.sock], [self.sock], [], 0.05)
            if readable:
                self.receive(until)
                return True
            if writable:
                try:
                    n = self.sock.send(view[done : done + 65536])
                except OSError:  # the service closed it: the answer is in the socket
                    self.receive(until)
                    return True
                done += n
                self.sent += n
        return False

    def receive(self, until: float) -> None:
        """Read the answer (to its end, or the connection's)."""
        self.sock.settimeout(max(0.1, until - time.monotonic()))
        while True:
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                return
            except OSError:  # a reset after the answer: the answer read so far stands
                self.closed = True
                break
            if self.answered_at is None and chunk:
                self.answered_at = time.monotonic()
            if not chunk:
                self.closed = True
                break
            self.raw += chunk
            head, sep, body = self.raw.partition(b"\r\n\r\n")
            if sep:
                length = _content_length(head)
                if length is not None and len(body) >= length:
                    self.closed = b"connection: close" in head.lower()
                    break
        self.sock.settimeout(30)

    def answer(self) -> Answer:
        """The answer read (status 0: none came)."""
        head, _, body = self.raw.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1]) if lines[0].startswith("HTTP/1.1 ") else 0
        headers = {
            k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])
        }
        code = None
        with contextlib.suppress(ValueError, KeyError, TypeError):
            code = json.loads(body)["error"]["code"]
        at = self.answered_at if self.answered_at is not None else time.monotonic()
        return Answer(
            status,
            code,
            at - self.started,
            headers.get("x-citeverify-process"),
            sent=self.sent,
            closed=self.closed,
        )


def _content_length(head: bytes) -> int | None:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and value.strip().isdigit():
            return int(value)
    return None


def refused_uploads(served: Served, key: str, names: list[str], length: int) -> list[Answer]:
    """One raw upload per name, each declaring ``length`` bytes and sending up to 1 MB."""
    answers = []
    for name in names:
        raw = RawUpload(served, key, name, length)
        try:
            until = time.monotonic() + 30
            if not raw.pump(raw.head + b"a\n" * (MB // 2), until):
                raw.receive(until)
            answers.append(raw.answer())
        finally:
            raw.close()
    return answers


def held_uploads(served: Served, key: str, count: int, length: int) -> list[Answer]:
    """``count`` connections of one key, each sending 1 MB of a ``length`` body and holding the
    rest; every answer, once all came (the admitted one at the body timeout)."""
    uploads = [RawUpload(served, key, f"held-{i}.txt", length) for i in range(count)]
    try:
        until = time.monotonic() + BODY_TIMEOUT + 30
        waiting = []
        for raw in uploads:
            if not raw.pump(raw.head + b"a\n" * (MB // 2), until):
                waiting.append(raw)
        while waiting and time.monotonic() < until:
            readable, _, _ = select.select([r.sock for r in waiting], [], [], 0.1)
            for raw in [r for r in waiting if r.sock in readable]:
                raw.receive(until)
                waiting.remove(raw)
        return [raw.answer() for raw in uploads]
    finally:
        for raw in uploads:
            raw.close()


def drip(served: Served, key: str, every: float = 0.5, limit: float = 70.0) -> Answer:
    """An upload whose body comes one byte every ``every`` seconds; its answer."""
    body = b"a" * 100_000
    head = multipart_head("drip.txt")
    raw = RawUpload(served, key, "drip.txt", len(head) + len(body))
    try:
        raw.sock.sendall(head)
        until = raw.started + limit
        for byte in body:
            if raw.pump(bytes([byte]), until):
                break
            readable, _, _ = select.select([raw.sock], [], [], every)
            if readable:
                raw.receive(until)
                break
            if time.monotonic() > until:
                break
        return raw.answer()
    finally:
        raw.close()


@dataclass
class DocumentRun:
    """One hostile document's upload, measured."""

    name: str
    size: int
    answer: Answer
    window: Window
    settled: bool  # every worker back within SETTLED_LIMIT of its baseline
    left: int  # the largest growth left over a worker's baseline (bytes)
    waited: float  # seconds waited for it
    documents: int  # documents the store gained
    store_bytes: int  # bytes the store's files gained

    @property
    def met(self) -> bool:
        """The issue's targets: growth, freed after, /healthz p99 under 250 ms, no 5xx."""
        return (
            self.answer.status < 500
            and self.window.growth <= GROWTH_LIMIT
            and self.settled
            and not self.window.healthz_failures
            and self.window.p(0.99) < HEALTHZ_P99_TARGET
        )

    def figures(self) -> str:
        w = self.window
        return (
            f"{self.name} ({self.size / MB:.0f} MB): {self.answer.status} {self.answer.code} in "
            f"{self.answer.seconds:.2f} s; worker growth {w.growth / MB:.0f} MB, readers "
            f"{w.readers_baseline / MB:.0f} -> {w.readers_peak / MB:.0f} MB; after "
            f"{self.left / MB:+.0f} MB ({self.waited:.1f} s); /healthz p50 "
            f"{w.p(0.5) * 1000:.0f} ms p99 {w.p(0.99) * 1000:.0f} ms ({len(w.healthz)} calls); "
            f"store +{self.documents} documents, {self.store_bytes / MB:+.1f} MB"
        )


def store_size(db: Path) -> int:
    """Bytes of the SQLite store's files (the database and its write-ahead log)."""
    return sum(p.stat().st_size for p in (db, db.with_name(db.name + "-wal")) if p.exists())


def run_document(
    served: Served,
    monitor: Monitor,
    hostile: Hostile,
    key: str,
    *,
    size: int | None = None,
    settle_timeout: float = 10.0,
) -> DocumentRun:
    """Upload ``hostile`` (``size`` bytes of it) under ``key`` while ``monitor`` measures."""
    size = hostile.size if size is None else size
    data = hostile.make(size)
    documents, store_bytes = stored_documents(served.db), store_size(served.db)
    window = monitor.start()
    answer = upload(served, key, hostile.name, data)
    del data
    time.sleep(2 * PERIOD)  # the sampler's last look at the peak
    settled, left, waited = monitor.settle(window, settle_timeout)
    return DocumentRun(
        hostile.name,
        size,
        answer,
        window,
        settled,
        left,
        waited,
        stored_documents(served.db) - documents,
        store_size(served.db) - store_bytes,
    )


# --- the tests -----------------------------------------------------------------------------------

#: The keys: name -> tokens.
KEYS = {"reader": 100, "broke": 0, "holder": 5, "dripper": 5}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("hostile-serve")
    with serve(folder, KEYS) as running:
        yield running
        log = running.log.read_text(errors="replace")
    assert "Traceback" not in log, log[-4000:]
    assert 'HTTP/1.1" 500' not in log, log[-4000:]  # no 500 anywhere (uvicorn's access log)


@pytest.fixture(scope="module")
def monitor(served: Served) -> Iterator[Monitor]:
    with Monitor(served) as running:
        yield running


#: Targets not met yet (the test says so until they are).
@needs_proc
@pytest.mark.parametrize(
    "hostile",
    HOSTILE,
    ids=[h.name for h in HOSTILE],
)
def test_a_hostile_document_is_read_within_the_memory_bound_and_freed(
    served: Served, monitor: Monitor, hostile: Hostile
) -> None:
    run = run_document(served, monitor, hostile, served.keys["reader"])
    figures = run.figures()
    print(figures)
    assert run.answer.status in hostile.expect, figures
    if hostile.code:
        assert run.answer.code == hostile.code, figures
    assert run.window.growth <= GROWTH_LIMIT, figures
    assert run.settled, figures
    assert not run.window.healthz_failures, run.window.healthz_failures
    assert run.window.p(0.99) < HEALTHZ_P99_TEST, figures


def test_a_key_without_tokens_is_refused_before_its_body_is_read_in_every_format(
    served: Served,
) -> None:
    from citeverify_core.service.routes.documents import UPLOAD_SUFFIXES

    before = stored_documents(served.db)
    names = [f"paper{suffix}" for suffix in UPLOAD_SUFFIXES]
    answers = refused_uploads(served, served.keys["broke"], names, 20 * MB)
    for name, answer in zip(names, answers, strict=True):
        assert (answer.status, answer.code) == (402, "insufficient_tokens"), (name, answer)
        assert answer.seconds < 5, (name, answer)  # at once (a loaded CI machine)
        assert answer.sent <= MB + 1024, (name, answer)  # of 20 MB: the body was not read
        assert answer.closed, (name, answer)  # the connection closed behind the answer
    assert stored_documents(served.db) == before
    record = key_record(served.db, "broke")
    assert (record["tokens"], record["pendingTokens"]) == (0, 0)


def test_eight_held_uploads_of_one_key_admit_one_across_both_processes(served: Served) -> None:
    seen: set[str] = set()
    for _ in range(3):  # until the connections landed on both processes (the kernel chooses)
        answers = held_uploads(served, served.keys["holder"], 8, 40 * MB)
        assert all(a.status and a.status < 500 for a in answers), answers
        refused = [a for a in answers if a.status == 429]
        admitted = [a for a in answers if a.status != 429]
        assert len(admitted) <= 1, answers
        assert len(refused) >= 7, answers
        for answer in refused:
            assert answer.code == "rate_limited", answer
            assert answer.sent <= MB + 1024, answer  # answered with 39 MB of the body unsent
            assert answer.closed, answer
        for answer in admitted:  # held its body back: 408 at the body timeout
            assert (answer.status, answer.code) == (408, "body_timeout"), answer
            assert answer.seconds < BODY_TIMEOUT + 10, answer
        seen |= {a.pid for a in answers if a.pid}
        if len(seen) >= 2:
            break
    assert len(seen) == 2, answers
    # Refunded (nothing was read): the admitted upload ends just after its 408 is sent.
    deadline = time.monotonic() + 10
    while (record := key_record(served.db, "holder"))["pendingTokens"]:
        assert time.monotonic() < deadline, record
        time.sleep(0.1)
    assert (record["tokens"], record["pendingTokens"]) == (5, 0)


def test_a_dripping_body_is_answered_408_at_the_body_timeout(served: Served) -> None:
    answer = drip(served, served.keys["dripper"])
    assert (answer.status, answer.code) == (408, "body_timeout"), answer
    assert BODY_TIMEOUT - 0.5 < answer.seconds < BODY_TIMEOUT + 10, answer  # not 60 s
    assert answer.closed, answer
