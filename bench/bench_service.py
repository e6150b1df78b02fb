"""The reference service (``citeverify serve``) under load, on two instances, and killed.

1. One instance on SQLite: 50 concurrent clients submit 1,000 references (batches of 1-20) and
   poll ``/results`` until every job is done. Checked: no job lost, every reference verified
   exactly once (the store's verifier counts its calls), the tokens balance (available = initial
   - references, pending = 0), no 5xx.
2. The same with two instances on one fresh PostgreSQL database, the clients spread over both
   (skipped when CITEVERIFY_TEST_POSTGRES_URL is unset; ``.ci/postgres start`` prints one).
3. kill -9: ``python -m citeverify_core serve`` as a subprocess on SQLite, ~200 references submitted,
   the process killed while they run, restarted on the same files; every job must end completed
   once (SQLite query on the jobs table), and the time to recovery is measured. The service's
   lease is 30 s (``citeverify serve`` has no option for it): a killed instance's running jobs
   run again only when their lease has expired.

The instances of 1 and 2 run in this process (uvicorn in a thread, ``tests/service.py``) so that
their verifier can be counted; the clients run in a separate process (asyncio, httpx), so they do
not compete with the service for this process's GIL. Everything is on 127.0.0.1 and the references
are verified against a small local index (``tests/data/works-crossref.jsonl``): no network.

Run: ``python -m uv run --frozen --all-extras python bench/bench_service.py`` (``--references``,
``--clients``, ``--kill-references``, ``--skip-kill``).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import multiprocessing
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.support.service

from citeverify_core.references import ReferenceVerifier
from tests.support.service import FAKE, KUHN, LECUN_WRONG_YEAR, Service, bearer, build_index

ROOT = Path(__file__).resolve().parents[1]
BASES = [KUHN, LECUN_WRONG_YEAR, FAKE]
TERMINAL = {"completed", "failed", "not-found"}


class CountingVerifier(ReferenceVerifier):
    """Counts how often each reference is verified, across every instance of this process."""

    calls: ClassVar[collections.Counter[str]] = collections.Counter()
    lock = threading.Lock()

    async def averify_or_error(self, reference: str, **options: Any) -> Any:
        with self.lock:
            self.calls[reference] += 1
        return await super().averify_or_error(reference, **options)


def references(count: int, tag: str) -> list[str]:
    """``count`` distinct reference strings: the tests' three, each with a numbered suffix."""
    return [f"{BASES[n % 3]} [{tag}-{n}]" for n in range(count)]


def batches_of(refs: Sequence[str], seed: int = 12) -> list[list[str]]:
    rng = random.Random(seed)
    out, start = [], 0
    while start < len(refs):
        size = rng.randint(1, 20)
        out.append(list(refs[start : start + size]))
        start += size
    return out


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# --- the clients (run in a child process) ------------------------------------------------------


def load(urls: list[str], key: str, batches: list[list[str]], clients: int, poll: float) -> dict:
    """Run the clients; their measurements. Top-level so that a spawned process can run it."""
    return asyncio.run(_load(urls, key, batches, clients, poll))


async def _load(
    urls: list[str], key: str, batches: list[list[str]], clients: int, poll: float
) -> dict:
    queue = list(reversed(batches))
    submit_ms: list[float] = []
    results_ms: list[float] = []
    codes: collections.Counter[str] = collections.Counter()
    jobs: dict[str, dict[str, Any]] = {}  # job id -> its last terminal poll
    terminal_seen: collections.Counter[str] = collections.Counter()
    submitted: list[str] = []
    problems: list[str] = []

    async def post(http: httpx.AsyncClient, path: str, body: dict, into: list[float]) -> Any:
        for attempt in range(5):
            start = time.perf_counter()
            try:
                response = await http.post(path, json=body)
            except httpx.HTTPError as exc:
                codes[f"{path.rsplit('/', 1)[-1]} {type(exc).__name__}"] += 1
                problems.append(f"{path}: {exc!r}")
                await asyncio.sleep(0.5 * (attempt + 1))
                continue
            into.append((time.perf_counter() - start) * 1000)
            codes[f"{path.rsplit('/', 1)[-1]} {response.status_code}"] += 1
            if response.status_code == 200:
                return response.json()
            problems.append(f"{path}: {response.status_code} {response.text[:200]}")
            await asyncio.sleep(0.5 * (attempt + 1))
        raise RuntimeError(f"{path} failed 5 times: {problems[-1]}")

    async def client(n: int) -> None:
        limits = httpx.Limits(max_connections=1)
        async with httpx.AsyncClient(
            base_url=urls[n % len(urls)], timeout=60, headers=bearer(key), limits=limits
        ) as http:
            while queue:
                batch = queue.pop()
                body = await post(http, "/api/verify-reference", {"references": batch}, submit_ms)
                ids = body["jobIds"]
                if len(ids) != len(batch) or len(set(ids)) != len(ids):
                    problems.append(f"{len(batch)} references gave job ids {ids}")
                submitted.extend(ids)
                pending = list(ids)
                while pending:
                    await asyncio.sleep(poll)
                    polled = await post(
                        http, "/api/verify-reference/results", {"jobIds": pending}, results_ms
                    )
                    still = []
                    for job in polled["jobs"]:
                        if job["state"] in TERMINAL:
                            jobs[job["id"]] = job
                            terminal_seen[job["id"]] += 1
                        else:
                            still.append(job["id"])
                    pending = still

    start = time.perf_counter()
    await asyncio.gather(*(client(n) for n in range(clients)))
    wall = time.perf_counter() - start
    return {
        "wall": wall,
        "submit_ms": submit_ms,
        "results_ms": results_ms,
        "codes": dict(codes),
        "submitted": submitted,
        "states": dict(collections.Counter(j["state"] for j in jobs.values())),
        "statuses": dict(
            collections.Counter(
                (j.get("result") or {}).get("status", "-")
                for j in jobs.values()
                if j["state"] == "completed"
            )
        ),
        "ended": list(jobs),
        "seen_twice": sum(1 for v in terminal_seen.values() if v > 1),
        "problems": problems[:20],
    }


def run_clients(urls: list[str], key: str, refs: list[str], clients: int, poll: float) -> dict:
    """The clients in a spawned process (a fresh interpreter: no threads of ours forked)."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(load, urls, key, batches_of(refs), clients, poll).result()


# --- 1 and 2: load on one SQLite instance, on two PostgreSQL instances ------------------------


def check_load(
    name: str,
    refs: list[str],
    initial: int,
    run: dict,
    balance: dict,
    workers: dict[str, int] | None = None,
) -> dict:
    """Print the checks and figures of a load run; its row for the table."""
    n = len(refs)
    calls = CountingVerifier.calls
    submitted = run["submitted"]
    lost = len(set(submitted) - set(run["ended"])) + (n - len(set(submitted)))
    completed = run["states"].get("completed", 0)
    once = sorted(calls) == sorted(refs) and set(calls.values()) == {1}
    twice = sum(1 for v in calls.values() if v > 1)
    tokens_ok = (balance["totalAvailable"], balance["pendingTokens"]) == (initial - n, 0)
    requests = sum(run["codes"].values())
    server_errors = sum(v for k, v in run["codes"].items() if not k.endswith(" 200"))
    print(f"\n== {name}: {n} references, {len(batches_of(refs))} batches of 1-20 ==")
    print(f"  job ids: {len(submitted)} submitted, {len(set(submitted))} distinct")
    print(f"  job states at the end: {run['states']}; result statuses: {run['statuses']}")
    print(f"  lost (submitted, never ended): {lost}")
    print(
        f"  verifications counted: {sum(calls.values())} of {len(calls)} distinct references; "
        f"verified more than once: {twice}; not verified: {len(set(refs) - set(calls))}"
    )
    print(
        f"  tokens: totalAvailable {balance['totalAvailable']} (expected {initial} - {n} = "
        f"{initial - n}), pendingTokens {balance['pendingTokens']} (expected 0): "
        f"{'OK' if tokens_ok else 'WRONG'}"
    )
    print(f"  responses: {run['codes']}")
    if workers is not None:
        print(f"  jobs run per instance (jobs.worker): {workers}")
    if run["problems"]:
        print("  problems:", *run["problems"], sep="\n    ")
    wall = run["wall"]
    row = {
        "name": name,
        "refs": n,
        "wall": wall,
        "refs_s": n / wall,
        "requests": requests,
        "req_s": requests / wall,
        "submit": (percentile(run["submit_ms"], 0.5), percentile(run["submit_ms"], 0.99)),
        "results": (percentile(run["results_ms"], 0.5), percentile(run["results_ms"], 0.99)),
        "lost": lost,
        "once": once and completed == n,
        "tokens": tokens_ok,
        "errors": server_errors,
    }
    print(
        f"  wall {wall:.2f} s, {row['refs_s']:.0f} references/s; {requests} requests, "
        f"{row['req_s']:.0f} requests/s; submit p50 {row['submit'][0]:.1f} ms p99 "
        f"{row['submit'][1]:.1f} ms; results p50 {row['results'][0]:.1f} ms p99 "
        f"{row['results'][1]:.1f} ms"
    )
    return row


def bench_sqlite(folder: Path, index: Any, count: int, clients: int, poll: float) -> dict:
    CountingVerifier.calls.clear()
    refs = references(count, "sqlite")
    initial = count + 200
    service = Service(folder / "jobs.sqlite", index)
    service.store.verifier = CountingVerifier(index)
    with service:
        key = service.key(tokens=initial, name="bench")
        run = run_clients([service.url], key, refs, clients, poll)
        balance = httpx.get(
            service.url + "/api/verify-reference/balance", headers=bearer(key), timeout=30
        ).json()
    return check_load("1 instance, SQLite", refs, initial, run, balance)


def fresh_database(url: str) -> tuple[str, Callable[[], None]]:
    """A new database on the server of ``url`` (as tests/pg.py does); its URL and its drop."""
    import psycopg
    from psycopg import sql

    base = urlsplit(url)
    name = f"cv_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))

    def drop() -> None:
        with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )

    return urlunsplit(base._replace(scheme="postgresql+psycopg", path=f"/{name}")), drop


def bench_postgres(
    index: Any, count: int, clients: int, poll: float, instances: int
) -> dict | None:
    name = f"{instances} instance{'s' if instances > 1 else ''}, PostgreSQL"
    url = os.environ.get("CITEVERIFY_TEST_POSTGRES_URL")
    if not url:
        print(
            f"\n== {name}: skipped (CITEVERIFY_TEST_POSTGRES_URL is unset; "
            '`export CITEVERIFY_TEST_POSTGRES_URL="$(bash .ci/postgres start)"`) =='
        )
        return None
    import sqlalchemy as sa

    from citeverify_core.service.store import JOBS

    CountingVerifier.calls.clear()
    refs = references(count, f"pg{instances}")
    initial = count + 200
    db, drop = fresh_database(url)
    try:
        services = [Service(db, index) for _ in range(instances)]
        with contextlib.ExitStack() as stack:
            for service in services:
                service.store.verifier = CountingVerifier(index)
                stack.enter_context(service)
            key = services[0].key(tokens=initial, name="bench")
            run = run_clients([s.url for s in services], key, refs, clients, poll)
            balance = httpx.get(
                services[-1].url + "/api/verify-reference/balance",
                headers=bearer(key),
                timeout=30,
            ).json()
            with services[0].store.engine.connect() as conn:
                per_worker = conn.execute(
                    sa.select(JOBS.c.worker, sa.func.count()).group_by(JOBS.c.worker)
                ).all()
            names = {s.store.worker_id: f"instance {n + 1}" for n, s in enumerate(services)}
            workers = {names.get(str(w), str(w)): int(c) for w, c in per_worker}
        return check_load(name, refs, initial, run, balance, workers)
    finally:
        drop()


# --- baselines: the verifier alone, the job store without HTTP -----------------------------------


def bench_baselines(folder: Path, index: Any, count: int = 300) -> dict[str, float]:
    """References/s of the verifier alone (15 at a time) and of ``JobStore.process`` (no HTTP)."""
    import sqlalchemy as sa

    from citeverify_core.service.jobs import JobStore

    refs = references(count, "base")
    verifier = ReferenceVerifier(index)
    asyncio.run(verifier.averify_or_error(refs[0]))  # warm: imports, the index's first query

    async def alone() -> float:
        semaphore = asyncio.Semaphore(verifier.max_concurrency)

        async def one(reference: str) -> None:
            async with semaphore:
                await verifier.averify_or_error(reference)

        start = time.perf_counter()
        await asyncio.gather(*(one(r) for r in refs))
        return time.perf_counter() - start

    out = {"verifier alone": count / asyncio.run(alone())}

    def store_rate(store: JobStore) -> float:
        for i in range(0, count, 20):
            store.submit(refs[i : i + 20])
        start = time.perf_counter()
        done = store.process()
        elapsed = time.perf_counter() - start
        store.close()
        return done / elapsed

    out["JobStore.process, SQLite as the service opens it (WAL, synchronous=NORMAL)"] = store_rate(
        JobStore(folder / "base.sqlite", ReferenceVerifier(index))
    )
    full = JobStore(folder / "base-full.sqlite", ReferenceVerifier(index))
    full.engine.dispose()

    @sa.event.listens_for(full.engine, "connect")
    def _full(dbapi: Any, _record: Any) -> None:
        dbapi.execute("PRAGMA synchronous=FULL")  # the earlier default, for the comparison

    out["JobStore.process, SQLite with synchronous=FULL (the earlier default)"] = store_rate(full)
    url = os.environ.get("CITEVERIFY_TEST_POSTGRES_URL")
    if url:
        import psycopg

        with psycopg.connect(url, connect_timeout=10) as conn:
            fsync = [
                conn.execute(f"SHOW {n}").fetchone()[0] for n in ("fsync", "synchronous_commit")
            ]
        db, drop = fresh_database(url)
        try:
            name = f"JobStore.process, PostgreSQL (fsync {fsync[0]}, synchronous_commit {fsync[1]})"
            out[name] = store_rate(JobStore(db, ReferenceVerifier(index)))
        finally:
            drop()
    print(f"\n== baselines: {count} references, one process, no HTTP ==")
    for name, rate in out.items():
        print(f"  {name}: {rate:.0f} references/s")
    return out


# --- 3: kill -9 and restart -----------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve(port: int, db: Path, index_file: Path, log: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "citeverify_core", "serve", "--port", str(port)]
    command += ["--db", str(db), "--index", str(index_file)]
    with log.open("ab") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)


def wait_healthy(url: str, proc: subprocess.Popen[bytes], timeout: float = 60) -> float:
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        if proc.poll() is not None:
            raise RuntimeError(f"citeverify serve exited with {proc.returncode}")
        try:
            if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                return time.perf_counter() - start
        except httpx.HTTPError:
            pass
        time.sleep(0.02)
    raise RuntimeError("citeverify serve did not answer /healthz")


def table_states(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT state, count(*) FROM jobs GROUP BY state").fetchall())


def bench_kill(folder: Path, index_file: Path, count: int) -> dict:
    db, log = folder / "kill.sqlite", folder / "serve.log"
    initial = count + 100
    key = subprocess.run(
        [
            *(sys.executable, "-m", "citeverify_core", "keys", "create", "--name", "bench"),
            *("--tokens", str(initial), "--db", str(db)),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout.strip()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = serve(port, db, index_file, log)
    first_start = wait_healthy(url, proc)
    refs = references(count, "kill")
    chunks = [refs[i : i + 20] for i in range(0, count, 20)]

    def submit(chunk: list[str]) -> list[str]:
        response = httpx.post(
            url + "/api/verify-reference",
            json={"references": chunk},
            headers=bearer(key),
            timeout=30,
        )
        response.raise_for_status()
        return response.json()["jobIds"]

    with ThreadPoolExecutor(len(chunks)) as pool:
        ids = [i for batch in pool.map(submit, chunks) for i in batch]
    # Kill as soon as the workers have started: some jobs done, some running, some waiting.
    with httpx.Client(base_url=url, headers=bearer(key), timeout=30) as http:
        while True:
            states = collections.Counter(
                job["state"]
                for start in range(0, count, 50)
                for job in http.post(
                    "/api/verify-reference/results", json={"jobIds": ids[start : start + 50]}
                ).json()["jobs"]
            )
            if states["completed"] or states["active"]:
                break
    proc.send_signal(signal.SIGKILL)
    killed_at = time.perf_counter()
    proc.wait()
    at_kill = table_states(db)
    with sqlite3.connect(db) as conn:
        was_active = {str(r[0]) for r in conn.execute("SELECT id FROM jobs WHERE state = 'active'")}
    print(f"\n== kill -9: {count} references, 1 instance (subprocess), SQLite ==")
    print(f"  polled just before the kill: {dict(states)}")
    print(f"  jobs table right after kill -9: {at_kill}")

    restarted = time.perf_counter()
    proc = serve(port, db, index_file, log)
    try:
        healthy = wait_healthy(url, proc)
        others_done = active_done = None
        with httpx.Client(base_url=url, headers=bearer(key), timeout=30) as http:
            deadline = time.perf_counter() + 300
            while time.perf_counter() < deadline:
                jobs = [
                    job
                    for start in range(0, count, 50)
                    for job in http.post(
                        "/api/verify-reference/results", json={"jobIds": ids[start : start + 50]}
                    ).json()["jobs"]
                ]
                now = time.perf_counter()
                ended = {j["id"] for j in jobs if j["state"] in TERMINAL}
                if others_done is None and set(ids) - was_active <= ended:
                    others_done = now
                if active_done is None and was_active <= ended:
                    active_done = now
                if len(ended) == count:
                    break
                time.sleep(0.1)
            balance = http.get("/api/verify-reference/balance").json()
        done = time.perf_counter()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    with sqlite3.connect(db) as conn:
        states_after = dict(conn.execute("SELECT state, count(*) FROM jobs GROUP BY state"))
        total, distinct, with_result, errors = conn.execute(
            "SELECT count(*), count(DISTINCT raw_text), sum(result IS NOT NULL), "
            "sum(error IS NOT NULL) FROM jobs"
        ).fetchone()
        attempts = dict(conn.execute("SELECT attempts, count(*) FROM jobs GROUP BY attempts"))
        rerun = {
            str(r[0]) for r in conn.execute("SELECT id FROM jobs WHERE attempts > 1").fetchall()
        }
        tokens, pending = conn.execute("SELECT tokens, pending FROM api_keys").fetchone()
        raw = {r[0] for r in conn.execute("SELECT raw_text FROM jobs")}
    ok = (
        states_after == {"completed": count}
        and total == distinct == with_result == count
        and raw == set(refs)
        and (tokens, pending) == (initial - count, 0)
    )
    print(f"  jobs table after the restart: {states_after}; attempts: {attempts}")
    print(
        f"  rows {total}, distinct references {distinct}, with a result {with_result}, with an "
        f"error {errors or 0}; the references submitted: {raw == set(refs)}"
    )
    print(
        f"  re-run jobs (attempts > 1): {len(rerun)}, the jobs active at the kill: "
        f"{len(was_active)}, the same: {rerun == was_active}"
    )
    print(
        f"  tokens (api_keys): {tokens} available (expected {initial - count}), {pending} pending"
        f"; balance endpoint: {balance['totalAvailable']} / {balance['pendingTokens']}"
    )
    print(f"  every job completed once, tokens right: {'OK' if ok else 'WRONG'}")
    row = {
        "first_start": first_start,
        "at_kill": at_kill,
        "restart_healthy": healthy,
        "others": None if others_done is None else others_done - restarted,
        "active": None if active_done is None else active_done - killed_at,
        "kill_to_done": done - killed_at,
        "restart_to_done": done - restarted,
        "rerun": len(rerun),
        "ok": ok,
    }
    print(
        f"  restart -> healthy {healthy:.2f} s; restart -> the jobs not running at the kill done "
        f"{row['others'] or float('nan'):.2f} s; kill -> the jobs running at the kill done "
        f"{row['active'] or float('nan'):.2f} s (lease 30 s); kill -> all done "
        f"{row['kill_to_done']:.2f} s"
    )
    return row


def print_table(rows: list[dict], kill: dict | None, baselines: dict[str, float]) -> None:
    print("\n| baseline (no HTTP) | references/s |\n| --- | ---: |")
    for name, rate in baselines.items():
        print(f"| {name} | {rate:.0f} |")
    print("\n| run | references | wall | references/s | requests/s | submit p50 / p99 |"
          " results p50 / p99 | lost | exactly once | tokens | non-200 |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: |")
    for r in rows:
        print(
            f"| {r['name']} | {r['refs']:,} | {r['wall']:.1f} s | {r['refs_s']:.0f} | "
            f"{r['req_s']:.0f} | {r['submit'][0]:.0f} / {r['submit'][1]:.0f} ms | "
            f"{r['results'][0]:.0f} / {r['results'][1]:.0f} ms | {r['lost']} | "
            f"{'yes' if r['once'] else 'NO'} | {'balance' if r['tokens'] else 'WRONG'} | "
            f"{r['errors']} |"
        )
    if kill is not None:
        print("\n| kill -9 (SQLite, lease 30 s) | figure |\n| --- | ---: |")
        print(f"| jobs table at the kill | {kill['at_kill']} |")
        print(f"| first start -> /healthz 200 | {kill['first_start']:.2f} s |")
        print(f"| restart -> /healthz 200 | {kill['restart_healthy']:.2f} s |")
        if kill["others"] is not None:
            print(f"| restart -> jobs not running at the kill done | {kill['others']:.2f} s |")
        if kill["active"] is not None:
            print(f"| kill -> jobs running at the kill done (re-run: {kill['rerun']}) |"
                  f" {kill['active']:.1f} s |")  # fmt: skip
        print(f"| kill -> every job completed | {kill['kill_to_done']:.1f} s |")
        print(f"| every job completed once, tokens right | {'yes' if kill['ok'] else 'NO'} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--references", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--poll", type=float, default=0.25, help="seconds between polls")
    parser.add_argument("--kill-references", type=int, default=200)
    parser.add_argument("--skip-kill", action="store_true")
    parser.add_argument(
        "--tmpdir", help="folder for the index and the SQLite files (e.g. /dev/shm: no fsync cost)"
    )
    args = parser.parse_args()
    print(
        f"{args.clients} clients, {args.references} references, poll every {args.poll} s; "
        f"{os.cpu_count()} cores, CPython {sys.version.split()[0]}; files in "
        f"{args.tmpdir or tempfile.gettempdir()}"
    )
    with tempfile.TemporaryDirectory(dir=args.tmpdir) as tmp:
        folder = Path(tmp)
        index = build_index(folder)
        baselines = bench_baselines(folder, index)
        rows = [bench_sqlite(folder, index, args.references, args.clients, args.poll)]
        for instances in (1, 2):
            pg = bench_postgres(index, args.references, args.clients, args.poll, instances)
            if pg is not None:
                rows.append(pg)
        kill = None
        if not args.skip_kill:
            kill = bench_kill(folder, folder / "index.sqlite", args.kill_references)
        index.close()
        print_table(rows, kill, baselines)
    if not all(r["lost"] == 0 and r["once"] and r["tokens"] and not r["errors"] for r in rows):
        print("\nDEFECT: see the checks above")
    if kill is not None and not kill["ok"]:
        print("\nDEFECT (kill -9): see the checks above")


if __name__ == "__main__":
    main()
