"""The guard gateway against hostile clients and upstreams: what one bad request costs the others.

Targets:

- slow lookups: with 20 requests in flight whose answers cite a DOI that Crossref answers in 5 s
  (20 tenants, one key each), another tenant's ``GET /healthz`` and a grounded gateway request
  are delayed by at most 50 ms (p99, against the same calls on an idle service);
- a compression bomb: an upstream answer of 1 MB gzip that inflates to 1 GiB is a 502 within
  5 s, the service's peak RSS grows by less than 100 MB, and its RSS is back within 20 MB of
  where it started;
- shutdown: SIGTERM with 50 requests hung in the upstream exits within ``--shutdown-timeout``.

Also printed: a 300 MB upstream answer (plain JSON, chunked) and 30 clients that give up on an
upstream that never finishes (the gateway's connections to the upstream left open afterwards).

The service is ``citeverify serve --upstream URL`` in its own process (its RSS is its own). The
upstream model and Crossref are ``tests/loopback.py`` servers in this process, scripted per
request; the policy's lookups go to the loopback Crossref (``crossref_base_url``).

Run: ``python -m uv run --frozen --all-extras python bench/bench_gateway_hostile.py``
(``--samples`` per measured call, ``--slow`` requests in flight, ``--lookup-delay`` seconds,
``--rounds`` of each big answer, ``--hung`` requests at SIGTERM, ``--only slow|big|sigterm``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.loopback import Loopback, Reply, Seen, open_connections  # noqa: E402

MB = 1024 * 1024
MUSEUM = "The museum opens at nine."
CHAT = "/v1/chat/completions"


# --- the upstream and Crossref ---------------------------------------------------------------------


def completion(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
    }


def gzip_bomb(total: int) -> bytes:
    """``total`` spaces, gzip-compressed (1 GiB: about 1 MB)."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b" " * MB
    parts = [c.compress(block) for _ in range(total // MB)]
    parts.append(c.flush())
    return b"".join(parts)


def plain(total: int) -> Iterator[bytes]:
    block = b" " * MB
    for _ in range(total // MB):
        yield block


class Upstream(Loopback):
    """Echoes the last user message as the answer, unless it names a misbehaviour."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.bomb = gzip_bomb(1024 * MB)
        self.routes[("POST", CHAT)] = self.answer

    def answer(self, seen: Seen) -> Reply:
        text = json.loads(seen.body)["messages"][-1]["content"]
        json_type = {"Content-Type": "application/json"}
        if text == "bomb":
            return Reply(200, self.bomb, {**json_type, "Content-Encoding": "gzip"})
        if text == "300mb":
            return Reply(200, stream=lambda: plain(300 * MB), length=None, headers=json_type)
        if text == "hang":
            self.gate.wait(120)
            return Reply(200, completion(MUSEUM))
        if text == "never-ends":
            return Reply(200, stream=self.never_ends, length=None, headers=json_type)
        return Reply(200, completion(text))

    def never_ends(self) -> Iterator[bytes]:
        while not self.gate.is_set():
            yield b" "
            time.sleep(1.0)


def chat(text: str) -> dict[str, Any]:
    return {
        "model": "m",
        "messages": [{"role": "user", "content": text}],
        "verdictan": {"context_documents": [{"content": MUSEUM}]},
    }


# --- the service (a child process) -----------------------------------------------------------------


class Serve:
    """``citeverify serve --upstream URL`` on a free port, with ``keys`` created beforehand."""

    def __init__(self, folder: Path, upstream: str, crossref: str, keys: int = 0) -> None:
        from citeverify_core.references import ReferenceVerifier
        from citeverify_core.service.jobs import JobStore

        db = folder / "service.sqlite"
        store = JobStore(db, ReferenceVerifier(None, sources=[]))
        self.keys = [store.create_key(f"tenant-{i}", tokens=0)[0] for i in range(keys)]
        store.close()
        policy = folder / "policy.yaml"
        lookups = {"crossref_base_url": crossref, "timeout": 30.0, "retries": 0}
        pack = {"policy": {"citation-verifier": {"require_sources": False}}}
        pack["policy"]["citation-verifier"]["extensions"] = {"lookups": lookups}
        policy.write_text(json.dumps(pack))
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = (folder / "serve.log").open("wb")
        self.shutdown_timeout = 3
        self.process = subprocess.Popen(
            [sys.executable, "-m", "citeverify_core", "serve", "--port", str(self.port),
             "--db", str(db), "--index", str(folder / "no-index.sqlite"), "--upstream", upstream,
             "--policy", str(policy), "--shutdown-timeout", str(self.shutdown_timeout)],
            stdout=subprocess.DEVNULL, stderr=self.log,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while True:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"citeverify serve did not start (see {self.log.name})")
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)

    def status(self, field: str) -> int:
        """A /proc/PID/status figure, in bytes (VmRSS, VmHWM)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
        raise KeyError(field)

    def reset_peak(self) -> bool:
        """Reset VmHWM to the current RSS (Linux 4.0+); False when not allowed."""
        try:
            Path(f"/proc/{self.process.pid}/clear_refs").write_text("5")
        except OSError:
            return False
        return True

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


# --- the scenarios ---------------------------------------------------------------------------------


async def latencies(client: httpx.AsyncClient, samples: int, key: str) -> dict[str, list[float]]:
    """``samples`` of GET /healthz and of a grounded guard request, one after the other."""
    out: dict[str, list[float]] = {"healthz": [], "grounded": []}
    headers = {"X-Citeverify-Key": key}
    for _ in range(samples):
        start = time.perf_counter()
        health = await client.get("/healthz")
        out["healthz"].append(time.perf_counter() - start)
        start = time.perf_counter()
        grounded = await client.post(CHAT, json=chat(MUSEUM), headers=headers)
        out["grounded"].append(time.perf_counter() - start)
        assert health.status_code == 200, health.text
        assert grounded.status_code == 200, grounded.text
    return out


def slow_lookups(
    folder: Path, upstream: Upstream, slow: int, delay: float, samples: int, rounds: int
) -> None:
    """``rounds`` times: ``samples`` idle, then ``samples`` with ``slow`` slow requests in flight
    (new DOIs each round: a DOI looked up once is cached)."""
    with Loopback() as crossref:
        dois = [[f"10.5555/slow.{r}.{i}" for i in range(slow)] for r in range(rounds)]
        for doi in (d for group in dois for d in group):
            crossref.routes[("GET", f"/works/{doi}")] = Reply(404, "no such work", delay=delay)
        serve = Serve(folder, upstream.url + "/v1", crossref.url, keys=slow + 1)
        try:

            async def main() -> None:
                limits = httpx.Limits(max_connections=slow + 10)
                idle: dict[str, list[float]] = {"healthz": [], "grounded": []}
                loaded: dict[str, list[float]] = {"healthz": [], "grounded": []}
                async with httpx.AsyncClient(
                    base_url=serve.url, timeout=60, limits=limits
                ) as client:
                    await latencies(client, 10, serve.keys[-1])  # warm up
                    for group in dois:
                        for name, values in (
                            await latencies(client, samples, serve.keys[-1])
                        ).items():
                            idle[name] += values
                        seen = len(crossref.seen)
                        in_flight = [
                            asyncio.ensure_future(
                                client.post(
                                    CHAT,
                                    json=chat(f"The museum opens at nine (doi:{doi})."),
                                    headers={"X-Citeverify-Key": key},
                                )
                            )
                            for doi, key in zip(group, serve.keys, strict=False)
                        ]
                        while len(crossref.seen) < seen + slow:
                            await asyncio.sleep(0.01)
                        started = time.monotonic()
                        for name, values in (
                            await latencies(client, samples, serve.keys[-1])
                        ).items():
                            loaded[name] += values
                        measured = time.monotonic() - started
                        still = sum(not t.done() for t in in_flight)
                        answers = await asyncio.gather(*in_flight)
                        print(
                            f"  round: measured for {measured:.2f} s, {still} of {slow} still in "
                            f"flight at the end; their answers "
                            f"{sorted({a.status_code for a in answers})}"
                        )
                print(
                    f"slow lookups: {slow} requests in flight whose DOI lookup takes {delay:g} s, "
                    f"{len(loaded['healthz'])} samples of each call idle and loaded"
                )
                for name in ("healthz", "grounded"):
                    a, b = idle[name], loaded[name]
                    print(
                        f"  {name:9s} idle p50 {ms(pct(a, 0.5))} p99 {ms(pct(a, 0.99))}; "
                        f"loaded p50 {ms(pct(b, 0.5))} p99 {ms(pct(b, 0.99))}; "
                        f"added at p99 {ms(pct(b, 0.99) - pct(a, 0.99))} (target <= 50 ms)"
                    )

            asyncio.run(main())
        finally:
            serve.stop()


def big_answers(folder: Path, upstream: Upstream, rounds: int) -> None:
    serve = Serve(folder, upstream.url + "/v1", "http://127.0.0.1:9")
    try:
        with httpx.Client(base_url=serve.url, timeout=60) as client:
            client.post(CHAT, json=chat(MUSEUM))  # warm up: imports, first verification
            for what, label in (("bomb", "1 GiB gzip bomb (1 MB sent)"), ("300mb", "300 MB JSON")):
                for i in range(rounds):
                    time.sleep(0.5)
                    start_rss = serve.status("VmRSS")
                    exact = serve.reset_peak()
                    start = time.perf_counter()
                    answer = client.post(CHAT, json=chat(what))
                    took = time.perf_counter() - start
                    peak = serve.status("VmHWM")
                    time.sleep(1.0)
                    after = serve.status("VmRSS")
                    code = answer.json()["error"]["code"] if answer.status_code >= 400 else ""
                    print(
                        f"{label}, run {i + 1}: {answer.status_code} {code} in {ms(took)}; "
                        f"RSS {start_rss / MB:.0f} MB, peak {(peak - start_rss) / MB:+.1f} MB"
                        f"{'' if exact else ' (peak since start)'}, "
                        f"after {(after - start_rss) / MB:+.1f} MB"
                    )
            # Clients that give up on an upstream that never finishes.
            gave_up = 0
            for _ in range(30):
                try:
                    client.post(CHAT, json=chat("never-ends"), timeout=0.5)
                except httpx.ReadTimeout:
                    gave_up += 1
            time.sleep(1.0)
            print(
                f"{gave_up} clients gave up on a never-ending upstream answer: "
                f"{open_connections(upstream.port)} connections to the upstream still open 1 s later"
            )
    finally:
        serve.stop()


def sigterm(folder: Path, upstream: Upstream, hung: int) -> None:
    upstream.gate.clear()
    serve = Serve(folder, upstream.url + "/v1", "http://127.0.0.1:9")
    before = upstream.calls(CHAT)
    try:

        async def main() -> list[Any]:
            limits = httpx.Limits(max_connections=hung + 10)
            async with httpx.AsyncClient(base_url=serve.url, timeout=60, limits=limits) as client:
                requests = [
                    asyncio.ensure_future(client.post(CHAT, json=chat("hang"))) for _ in range(hung)
                ]
                while upstream.calls(CHAT) - before < hung:
                    await asyncio.sleep(0.01)
                start = time.monotonic()
                serve.process.send_signal(signal.SIGTERM)
                while serve.process.poll() is None and time.monotonic() - start < 60:
                    await asyncio.sleep(0.01)
                took = time.monotonic() - start
                answers = await asyncio.gather(*requests, return_exceptions=True)
                print(
                    f"SIGTERM with {hung} requests hung in the upstream, --shutdown-timeout "
                    f"{serve.shutdown_timeout}: exited in {took:.2f} s (code "
                    f"{serve.process.returncode}); clients got "
                    f"{sorted({getattr(a, 'status_code', type(a).__name__) for a in answers}, key=str)}"
                )
                return answers

        asyncio.run(main())
    finally:
        upstream.gate.set()
        serve.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument("--slow", type=int, default=20)
    parser.add_argument("--lookup-delay", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=2, help="of each big answer (+1: slow)")
    parser.add_argument("--hung", type=int, default=50)
    parser.add_argument("--only", choices=["slow", "big", "sigterm"], help="one scenario")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp, Upstream() as upstream:
        scenarios = {
            "slow": lambda f: slow_lookups(
                f, upstream, args.slow, args.lookup_delay, args.samples, args.rounds + 1
            ),
            "big": lambda f: big_answers(f, upstream, args.rounds),
            "sigterm": lambda f: sigterm(f, upstream, args.hung),
        }
        for i, (name, run) in enumerate(scenarios.items()):
            if args.only not in (None, name):
                continue
            folder = Path(tmp) / str(i)
            folder.mkdir()
            run(folder)
        upstream.gate.set()


if __name__ == "__main__":
    main()
