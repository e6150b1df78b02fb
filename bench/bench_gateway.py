"""Gateway overhead (issue 13): the guard endpoint against a direct call to the upstream.

Target: with a 300-word answer and 10 documents of 1 KB against a loopback upstream that answers
in 50 ms, the gateway adds at most 5 ms to the p50, with 50 concurrent clients.

Three processes on 127.0.0.1:

- the upstream: a bare asyncio HTTP/1.1 server (keep-alive, no framework) that answers every POST
  after 50 ms (``loop.call_later``, so 50 clients wait at once) with one precomputed Chat
  Completions body: a 300-word answer made of sentences of the 10 documents (grounded, allowed);
- the gateway: the app ``citeverify serve --upstream URL`` builds (``create_app`` with a
  ``GatewayConfig``: ``HTTPUpstream`` to the upstream, ``CitationVerifier(policy,
  context_cache=True)``, the default policy with lookups off, or ``--policy seed`` for
  ``tests/data/seed-policy-config.yaml``), under uvicorn (access log off), no reference workers;
- the load generator (this process): ``httpx.AsyncClient``, N clients each sending its requests
  one after another on its own keep-alive connection, the same request bytes every time (10
  documents in the prompt and in ``verdictan.context_documents``, ~22 KB).

Each phase runs direct (load -> upstream) and through the gateway (load -> gateway ->
upstream), in the same run: 1 client (the per-request cost, no queueing), then 50 clients.
For every phase the CPU time of each process is read (``/proc/PID/stat``), to show whether
the 2 cores are saturated. Then the gateway's own costs without HTTP (``verify_exchange``, the
JSON), and one profiled run (cProfile in the gateway process; its time grouped by package).

The load generator's client is a minimal asyncio HTTP/1.1 client: ``httpx.AsyncClient`` costs
~2.5 ms of CPU a request, so 50 httpx clients need more than the 2 cores of this machine and the
direct calls would measure the load generator (``--client httpx`` shows it).

Run: ``python -m uv run --frozen --all-extras python bench/bench_gateway.py`` (``--clients``,
``--requests`` per client, ``--single`` requests of the 1-client phase, ``--policy seed``,
``--pin``: the gateway on CPU 1, the upstream and the load on CPU 0, ``--gateway-processes N``:
N gateway processes on one port, ``--no-profile``, ``--keep-profile FILE``, ``--core DIR``: the
gateway imports ``citeverify`` from DIR, a patched copy, for experiments).

``--workers N`` adds, in the same run, the real command: ``citeverify serve --upstream URL
--workers 1`` and then ``--workers N`` (uvicorn's processes on one port, one SQLite job store),
``--clients`` clients each, with the CPU of every process (the serve parent, each worker, the
upstream, the load) and the throughput ratio (target: N=2 at least 1.4x one worker).
``--workers-only`` runs just that comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import json
import os
import pstats
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _corpus

ROOT = Path(__file__).resolve().parents[1]
SEED_POLICY = ROOT / "tests" / "data" / "seed-policy-config.yaml"
#: The default policy, offline (the issue's "lookups off").
DEFAULT_POLICY: dict[str, Any] = {"extensions": {"lookups": {"enabled": False}}}
UPSTREAM_DELAY = 0.050
PATH = "/v1/chat/completions"


# --- the exchange ---------------------------------------------------------------------------------


def exchange(seed: int = 13) -> tuple[dict[str, Any], dict[str, Any], list[str], str]:
    """The request, the upstream's response, the 10 documents of 1 KB and the 300-word answer."""
    vocab = _corpus.vocabulary()
    documents = [_corpus.text(1024, vocab, seed=100 + i) for i in range(10)]
    sentences = [
        s.strip()
        for doc in documents
        for s in re.split(r"(?<=[.?!])\s+", doc)
        if s.strip().endswith((".", "?", "!")) and len(s.split()) >= 6
    ]
    rng = random.Random(seed)
    words: list[str] = []
    while len(words) < 300:
        words.extend(rng.choice(sentences).split())
    answer = " ".join(words[:300]).rstrip(".?!,") + "."
    request = {
        "model": "bench-model",
        "messages": [
            {
                "role": "system",
                "content": "Answer from these sources:\n\n" + "\n\n".join(documents),
            },
            {"role": "user", "content": "What do the sources say?"},
        ],
        "verdictan": {"context_documents": [{"content": d} for d in documents]},
    }
    response = {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "bench-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": answer},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 2600, "completion_tokens": 400, "total_tokens": 3000},
    }
    return request, response, documents, answer


def policy_of(name: str) -> Any:
    return SEED_POLICY if name == "seed" else DEFAULT_POLICY


# --- the upstream (a child process) ----------------------------------------------------------------


class _UpstreamProtocol(asyncio.Protocol):
    """HTTP/1.1 with keep-alive: every complete request is answered after the delay."""

    reply = b""
    delay = UPSTREAM_DELAY

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport: Any = transport
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        loop = asyncio.get_running_loop()
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            match = re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", self.buffer[:end])
            size = int(match.group(1)) if match else 0
            if len(self.buffer) < end + 4 + size:
                return
            self.buffer = self.buffer[end + 4 + size :]
            loop.call_later(self.delay, self._answer)

    def _answer(self) -> None:
        if not self.transport.is_closing():
            self.transport.write(self.reply)


def serve_upstream(port: int) -> None:
    _, response, _, _ = exchange()
    body = json.dumps(response).encode()
    _UpstreamProtocol.reply = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )

    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(
            _UpstreamProtocol, "127.0.0.1", port, backlog=1024
        )
        async with server:
            await server.serve_forever()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())


# --- the gateway (a child process) -----------------------------------------------------------------


def serve_gateway(port: int, upstream: str, policy: str, profile: str | None) -> None:
    import uvicorn

    from citeverify_core import CitationVerifier
    from citeverify_core.references import ReferenceVerifier
    from citeverify_core.service import create_app
    from citeverify_core.service.gateway import GatewayConfig, HTTPUpstream
    from citeverify_core.service.jobs import JobStore

    with tempfile.TemporaryDirectory() as tmp:
        # As `citeverify serve --upstream URL` without an index: the reference API is there,
        # its workers are not.
        store = JobStore(Path(tmp) / "service.sqlite", ReferenceVerifier(None, sources=[]))
        verifier = CitationVerifier(policy_of(policy), context_cache=True)
        config = GatewayConfig(HTTPUpstream(upstream, timeout=60), verifier)
        if hasattr(config, "slots"):  # not in a --core copy from before the bound existed
            from citeverify_core.service.limits import VerificationSlots

            # The load's clients are one address without a key: one caller, whose bound (8
            # verifications at once) would refuse most of 50 clients' requests with 429s.
            config.slots = VerificationSlots(per_key=config.slots.per_instance)
        app = create_app(store, workers=False, gateway=config)
        server = uvicorn.Server(
            uvicorn.Config(
                app,
                host="127.0.0.1",
                port=port,
                log_level="warning",
                access_log=False,
                ws="none",
                lifespan="on",
                backlog=1024,
            )
        )
        # SO_REUSEPORT: several gateway processes (--gateway-processes) share the port, as
        # uvicorn's own --workers would.
        # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says TCP;
        # with proto 0 Nagle's algorithm stays on and a response written in two parts waits
        # for the client's delayed ACK (~40 ms).
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(("127.0.0.1", port))
        # CPU time of the event loop's thread, not wall time: on a loaded machine a wall-clock
        # profile charges the time the process waits for a core to whatever call it was in.
        profiler = cProfile.Profile(time.thread_time) if profile else None
        if profiler is not None:
            profiler.enable()
        try:
            # SIGINT: uvicorn's graceful shutdown, then it re-raises the signal: KeyboardInterrupt
            # here (SIGTERM would end the process before the profile is written).
            server.run(sockets=[sock])
        except KeyboardInterrupt:
            pass
        finally:
            if profiler is not None:
                profiler.disable()
                profiler.dump_stats(profile)
            store.close()


# --- processes -------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(args: list[str], cpu: int | None, env: dict[str, str]) -> subprocess.Popen[bytes]:
    command = [sys.executable, str(Path(__file__).resolve()), *args]
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    if cpu is not None:
        os.sched_setaffinity(proc.pid, {cpu})
    return proc


def wait_ready(url: str, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: the process exited with {proc.returncode}")
        try:
            with socket.create_connection(urlparts(url), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{url} did not start")


def urlparts(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


_TICK = os.sysconf("SC_CLK_TCK")


def descendants(pid: int) -> list[int]:
    """The processes under ``pid`` (uvicorn's workers), from /proc."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found.append(child)
            todo.append(child)
    return found


def serve_workers(
    upstream_url: str, body: bytes, args: argparse.Namespace, upstream_pid: int
) -> dict[int, dict]:
    """``citeverify serve --workers 1`` against ``--workers N``: throughput and CPU by process."""
    rows: dict[int, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        # The same policies as the in-process gateway, as pack files for --policy.
        policy = Path(tmp) / "policy.json"
        pack = {"policy": {"citation-verifier": DEFAULT_POLICY}}
        policy.write_text(json.dumps(pack))
        if args.policy == "seed":
            policy = SEED_POLICY
        for count in (1, args.workers):
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            command = [
                sys.executable, "-m", "citeverify_core", "serve", "--port", str(port),
                "--db", str(Path(tmp) / f"service-{count}.sqlite"),
                "--index", str(Path(tmp) / "none"), "--upstream", upstream_url + "/v1",
                "--policy", str(policy), "--workers", str(count),
                # The 50 clients are one address without a key: one caller for the bound.
                "--max-verifications-per-caller", "64",
            ]  # fmt: skip
            proc = subprocess.Popen(
                command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            try:
                wait_ready(url, proc)
                deadline = time.monotonic() + 60
                while len(descendants(proc.pid)) < count and time.monotonic() < deadline:
                    time.sleep(0.1)
                time.sleep(1.0)  # every worker has imported the app and listens
                children = descendants(proc.pid)
                pids: dict[str, list[int] | None] = {
                    "load": None,
                    "upstream": [upstream_pid],
                    "serve parent": [proc.pid],
                }
                workers = 0
                for child in children:
                    try:
                        cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
                    except OSError:
                        continue
                    if b"resource_tracker" in cmdline:
                        continue  # multiprocessing's helper, idle
                    workers += 1
                    pids[f"worker {workers}"] = [child]
                label = f"serve --workers {count}, {args.clients} clients"
                rows[count] = phase(
                    label, url, body, args.clients, args.requests, pids, args.client
                )
            finally:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    one, many = rows[1], rows[args.workers]
    ratio = many["rps"] / one["rps"]
    verdict = "met" if ratio >= 1.4 or args.workers == 1 else "NOT met"
    print(
        f"serve --workers {args.workers}: {many['rps']:.0f} requests/s against {one['rps']:.0f} "
        f"with one worker: {ratio:.2f}x (target >= 1.4x for 2 workers: {verdict})"
    )
    return rows


def cpu_seconds(pids: list[int] | None) -> float:
    """User + system CPU time of processes (this one when ``pids`` is None)."""
    if pids is None:
        times = os.times()
        return times.user + times.system
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / _TICK


# --- the load --------------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class RawConnection:
    """A minimal HTTP/1.1 keep-alive client (a few microseconds a request, unlike httpx)."""

    def __init__(self, url: str) -> None:
        self.host, self.port = urlparts(url)
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        lines = [f"POST {path} HTTP/1.1", f"Host: {self.host}:{self.port}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        lines.append(f"Content-Length: {len(body)}")
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        match = re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", head)
        if match is not None:
            return status, await self.reader.readexactly(int(match.group(1)))
        chunks = []  # chunked
        while size := int((await self.reader.readuntil(b"\r\n")).strip(), 16):
            chunks.append(await self.reader.readexactly(size))
            await self.reader.readexactly(2)
        await self.reader.readexactly(2)
        return status, b"".join(chunks)

    async def aclose(self) -> None:
        if self.writer is not None:
            self.writer.close()


class HttpxConnection:
    """The same through ``httpx.AsyncClient`` (one connection)."""

    def __init__(self, url: str) -> None:
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        self.http = httpx.AsyncClient(base_url=url, timeout=120, limits=limits)

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        response = await self.http.post(path, content=body, headers=headers)
        return response.status_code, response.content

    async def aclose(self) -> None:
        await self.http.aclose()


async def load(
    url: str,
    body: bytes,
    clients: int,
    requests: int,
    kind: str,
    on_start: Any = None,
    warm: int = 3,
) -> dict:
    """``clients`` concurrent clients, ``requests`` each (after ``warm`` unmeasured ones)."""
    latencies: list[float] = []
    problems: list[str] = []
    headers = {"Content-Type": "application/json", "Authorization": "Bearer sk-bench"}
    barrier = asyncio.Barrier(clients + 1)

    async def client() -> None:
        connection = RawConnection(url) if kind == "raw" else HttpxConnection(url)
        try:
            for n in range(warm + requests):
                if n == warm:
                    await barrier.wait()
                began = time.perf_counter()
                status, answer = await connection.post(PATH, body, headers)
                elapsed = time.perf_counter() - began
                if status != 200:
                    problems.append(f"{status} {answer[:200]!r}")
                elif n == 0:
                    decision = json.loads(answer).get("verdictan", {}).get("decision")
                    if decision is not None and decision["verdict"] != "ALLOW":
                        problems.append(f"not allowed: {decision}")
                if n >= warm:
                    latencies.append(elapsed * 1000)
        finally:
            await connection.aclose()

    tasks = [asyncio.create_task(client()) for _ in range(clients)]
    await barrier.wait()
    if on_start is not None:
        on_start()
    began = time.perf_counter()
    await asyncio.gather(*tasks)
    wall = time.perf_counter() - began
    return {"ms": latencies, "wall": wall, "problems": problems}


def phase(
    name: str,
    url: str,
    body: bytes,
    clients: int,
    requests: int,
    pids: dict[str, list[int] | None],
    kind: str,
) -> dict:
    before: dict[str, float] = {}

    def snapshot() -> None:  # after the warm-up
        before.update({k: cpu_seconds(pid) for k, pid in pids.items()})

    run = asyncio.run(load(url, body, clients, requests, kind, snapshot))
    cpu = {k: cpu_seconds(pid) - before[k] for k, pid in pids.items()}
    ms = run["ms"]
    row = {
        "name": name,
        "clients": clients,
        "n": len(ms),
        "rps": len(ms) / run["wall"],
        "p50": percentile(ms, 0.5),
        "p99": percentile(ms, 0.99),
        "mean": statistics.fmean(ms),
        "cpu": cpu,
        "wall": run["wall"],
    }
    shares = ", ".join(
        f"{k} {v / run['wall']:.2f} cores ({v / len(ms) * 1000:.2f} ms/request)"
        for k, v in cpu.items()
    )
    print(
        f"  {name:<28} {row['n']:>5} requests  {row['rps']:7.1f} requests/s  "
        f"p50 {row['p50']:7.2f} ms  p99 {row['p99']:7.2f} ms  mean {row['mean']:7.2f} ms"
    )
    print(f"  {'':<28} CPU: {shares}")
    if run["problems"]:
        print("  PROBLEMS:", *run["problems"][:5], sep="\n    ")
    return row


# --- the gateway's own costs, without HTTP --------------------------------------------------------


def costs_without_http(policy: str) -> dict[str, float]:
    from citeverify_core import CitationVerifier
    from citeverify_core.engine.exchange import extract_context, verify_exchange

    request, response, _, _ = exchange()
    raw = json.dumps(request).encode()
    verifier = CitationVerifier(policy_of(policy), context_cache=True)
    decision = verify_exchange(request, response, verifier=verifier)
    _, out = decision.to_http()
    cold = CitationVerifier(policy_of(policy))
    forwarded = {k: v for k, v in request.items() if k != "verdictan"}
    figures = {
        "verify_exchange (warm context cache, as served)": _corpus.best_of(
            lambda: verify_exchange(request, response, verifier=verifier), 100
        ),
        "verify_exchange (no context cache)": _corpus.best_of(
            lambda: verify_exchange(request, response, verifier=cold), 50
        ),
        "json.loads of the request (~22 KB)": _corpus.best_of(lambda: json.loads(raw), 300),
        "json.dumps of the forwarded request": _corpus.best_of(
            lambda: json.dumps(forwarded).encode(), 300
        ),
        "json.loads of the upstream answer": _corpus.best_of(
            lambda: json.loads(json.dumps(response)), 300
        ),
        "JSON render of the allowed answer + decision": _corpus.best_of(
            lambda: json.dumps(out, ensure_ascii=False, separators=(",", ":")).encode(), 300
        ),
        "extract_context": _corpus.best_of(lambda: extract_context(request), 300),
    }
    print(f"\n== the gateway's work without HTTP (best of runs), verdict {decision.verdict} ==")
    for name, seconds in figures.items():
        print(f"  {name:<48} {seconds * 1000:6.3f} ms")
    print(f"  decision body: {len(json.dumps(out))} bytes")
    return figures


# --- the profile ----------------------------------------------------------------------------------

_GROUPS = [
    ("citeverify (verify, gateway)", ("/citeverify/",)),
    ("httpx/httpcore (the upstream call)", ("/httpx/", "/httpcore/", "/httpx2/")),
    ("h11 (HTTP parsing, both sides)", ("/h11/",)),
    ("uvicorn", ("/uvicorn/",)),
    ("starlette/fastapi", ("/starlette/", "/fastapi/")),
    ("anyio", ("/anyio/",)),
    ("asyncio + selectors + socket", ("/asyncio/", "selectors.py", "socket.py", "ssl.py")),
    ("json", ("/json/",)),
]


def profile_report(path: str, requests: int, top: int = 18) -> None:
    stats = pstats.Stats(path)
    entries: Any = stats.stats  # type: ignore[attr-defined]
    total = sum(tt for (_cc, _nc, tt, _ct, _callers) in entries.values())
    groups: dict[str, float] = {}
    for (file, _line, func), (_cc, _nc, tt, _ct, _callers) in entries.items():
        group = "other"
        if file == "~":
            group = "builtins (C: " + func.strip("<>").split(" of ")[0].split(".")[-1] + ")"
            if any(k in func for k in ("json", "encode", "decode")):
                group = "json"
            elif any(k in func for k in ("select", "epoll", "recv", "send", "socket")):
                group = "asyncio + selectors + socket"
            else:
                group = "builtins (C functions: str, re, dict, ...)"
        else:
            for name, keys in _GROUPS:
                if any(k in file for k in keys):
                    group = name
                    break
        groups[group] = groups.get(group, 0.0) + tt
    print(f"\n== profile of the gateway process (cProfile, {requests} requests) ==")
    print(
        f"  profiled: {total:.2f} s of the event loop thread's CPU, "
        f"{total / requests * 1000:.2f} ms/request (inflated by the profiler)"
    )
    for name, tt in sorted(groups.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<46} {tt / total * 100:5.1f}%  {tt / requests * 1000:6.3f} ms/request")
    key_functions = {
        "verify_exchange": "verify_exchange",
        "HTTPUpstream.send": "send",
        "json.loads (all)": "loads",
        "JSONResponse.render": "render",
        "_check_request": "_check_request",
    }
    print("  cumulative, per request:")
    for label, func in key_functions.items():
        cum = sum(
            ct
            for (file, _l, f), (_cc, _nc, _tt, ct, _callers) in entries.items()
            if f == func and (func != "send" or file.endswith("_gateway.py"))
            and (func != "render" or "starlette" in file)
        )  # fmt: skip
        print(f"    {label:<28} {cum / requests * 1000:6.3f} ms")
    print(f"  top {top} functions by own time:")
    ranked = sorted(entries.items(), key=lambda kv: -kv[1][2])[:top]
    for (file, line, func), (_cc, nc, tt, ct, _callers) in ranked:
        where = f"{Path(file).parent.name}/{Path(file).name}:{line}" if file != "~" else "~"
        print(
            f"    {tt / requests * 1000:6.3f} ms/req own  {ct / requests * 1000:6.3f} cum  "
            f"{nc / requests:5.1f} calls/req  {func} ({where})"
        )


# --- main ------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=40, help="per client")
    parser.add_argument("--single", type=int, default=200, help="requests of the 1-client phase")
    parser.add_argument("--policy", choices=["default", "seed"], default="default")
    parser.add_argument("--pin", action="store_true", help="gateway on CPU 1, the rest on 0")
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--keep-profile", help="also write the gateway's cProfile stats here")
    parser.add_argument(
        "--client",
        choices=["raw", "httpx"],
        default="raw",
        help="the load generator's HTTP client (httpx costs ~2.5 ms of CPU a request)",
    )
    parser.add_argument(
        "--gateway-processes",
        type=int,
        default=1,
        help="gateway processes sharing the port (SO_REUSEPORT), as uvicorn --workers would",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=0,
        help="also compare citeverify serve --workers 1 with --workers N (the real command)",
    )
    parser.add_argument(
        "--workers-only", action="store_true", help="run only the --workers comparison"
    )
    parser.add_argument("--core", help="run the gateway with the citeverify package in this folder")
    parser.add_argument("--serve-upstream", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--serve-gateway", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--upstream", help=argparse.SUPPRESS)
    parser.add_argument("--profile", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_upstream:
        serve_upstream(args.serve_upstream)
        return
    if args.serve_gateway:
        serve_gateway(args.serve_gateway, args.upstream, args.policy, args.profile)
        return

    request, _, documents, answer = exchange()
    body = json.dumps(request).encode()
    cores = len(os.sched_getaffinity(0))
    pin = args.pin and cores >= 2 and args.gateway_processes == 1
    placement = (
        "pinned: the gateway on CPU 1, the upstream and the load generator on CPU 0"
        if pin
        else f"not pinned: the OS spreads the processes over {cores} cores"
    )
    print(
        f"{os.cpu_count()} cores, CPython {sys.version.split()[0]}, load average "
        f"{os.getloadavg()[0]:.2f}; policy {args.policy}; processes: the load generator (this "
        f"one), the upstream, {args.gateway_processes} gateway; {placement}"
    )
    print(
        f"answer {len(answer.split())} words, {len(documents)} documents of "
        f"{min(map(len, documents))}-{max(map(len, documents))} characters, request "
        f"{len(body):,} bytes; upstream answers after {UPSTREAM_DELAY * 1000:.0f} ms"
    )
    if pin:
        os.sched_setaffinity(0, {0})
    env = dict(os.environ)
    if args.core:  # a patched copy of the package, for experiments
        env["PYTHONPATH"] = os.pathsep.join([args.core, env.get("PYTHONPATH", "")])
        print(f"the gateway runs the citeverify package of {args.core}")
    up_port = free_port()
    upstream_url = f"http://127.0.0.1:{up_port}"
    upstream = start(["--serve-upstream", str(up_port)], 0 if pin else None, env)
    try:
        wait_ready(upstream_url, upstream)
        if args.workers_only:
            print("\n== citeverify serve --workers ==")
            serve_workers(upstream_url, body, args, upstream.pid)
            return

        def gateway(
            profile: str | None = None, processes: int = 1
        ) -> tuple[list[subprocess.Popen[bytes]], str]:
            port = free_port()
            options = ["--serve-gateway", str(port), "--upstream", upstream_url + "/v1"]
            options += ["--policy", args.policy]
            if profile:
                options += ["--profile", profile]
            cpu = 1 if pin and processes == 1 else None
            procs = [start(options, cpu, env) for _ in range(processes)]
            url = f"http://127.0.0.1:{port}"
            for proc in procs:
                wait_ready(url, proc)
            time.sleep(0.5 if processes > 1 else 0)  # every process listening
            return procs, url

        rows: dict[str, dict] = {}
        served, gateway_url = gateway(processes=args.gateway_processes)
        try:
            pids = {
                "load": None,
                "upstream": [upstream.pid],
                "gateway": [proc.pid for proc in served],
            }
            print("\n== load ==")
            for clients, requests in ((1, args.single), (args.clients, args.requests)):
                for name, url in (("direct", upstream_url), ("gateway", gateway_url)):
                    label = f"{name}, {clients} client{'s' if clients > 1 else ''}"
                    rows[f"{name}{clients}"] = phase(
                        label, url, body, clients, requests, pids, args.client
                    )
        finally:
            for proc in served:
                stop(proc)
        if args.workers:
            print("\n== citeverify serve --workers ==")
            serve_workers(upstream_url, body, args, upstream.pid)
        costs_without_http(args.policy)
        if not args.no_profile:
            with tempfile.TemporaryDirectory() as tmp:
                profile = str(Path(tmp) / "gateway.prof")
                (profiled,), gateway_url = gateway(profile)
                try:
                    print("\n== the gateway under cProfile (timings inflated by the profiler) ==")
                    pids = {"load": None, "upstream": [upstream.pid], "gateway": [profiled.pid]}
                    label = f"gateway, {args.clients} clients"
                    phase(label, gateway_url, body, args.clients, args.requests, pids, args.client)
                finally:
                    stop(profiled)
                profile_report(profile, args.clients * (args.requests + 3))  # and the warm-up
                if args.keep_profile:
                    shutil.copyfile(profile, args.keep_profile)
    finally:
        stop(upstream)
    summary(rows, args.clients)


def summary(rows: dict[str, dict], clients: int) -> None:
    print("\n| run | requests/s | p50 | p99 |\n| --- | ---: | ---: | ---: |")
    for key in ("direct1", "gateway1", f"direct{clients}", f"gateway{clients}"):
        r = rows[key]
        label = r["name"]
        print(f"| {label} | {r['rps']:.0f} | {r['p50']:.2f} ms | {r['p99']:.2f} ms |")
    for n in (1, clients):
        d, g = rows[f"direct{n}"], rows[f"gateway{n}"]
        added50, added99 = g["p50"] - d["p50"], g["p99"] - d["p99"]
        verdict = "met" if added50 <= 5 else "NOT met"
        target = f" (target <= 5 ms: {verdict})" if n == clients else ""
        print(
            f"{n} client{'s' if n > 1 else ''}: added p50 {added50:+.2f} ms{target}, added p99 "
            f"{added99:+.2f} ms; p50 ratio {g['p50'] / d['p50']:.2f}x, requests/s ratio "
            f"{g['rps'] / d['rps']:.2f}x"
        )
    d, g = rows[f"direct{clients}"], rows[f"gateway{clients}"]
    per_request = g["cpu"]["gateway"] / g["n"] * 1000
    offered = clients / ((d["p50"] + 5) / 1000)
    print(
        f"capacity: the gateway spent {per_request:.2f} ms of CPU a request; {clients} clients at "
        f"the target's latency ({d['p50'] + 5:.1f} ms) send {offered:.0f} requests/s, which "
        f"needs {offered * per_request / 1000:.2f} cores of gateway CPU; the gateway got "
        f"{g['cpu']['gateway'] / g['wall']:.2f} cores in this run (the machine is shared)"
    )


if __name__ == "__main__":
    main()
