"""Hostile inputs (issue 9): nothing a model writes can crash, hang or leak through the verifier.

Every generator of ``tests/hostile.py`` runs at 10k and 100k characters (the cheap ones at 1M too)
through ``CitationVerifier.verify`` (and ``render_text``, ``to_dict``), and at 100k through
``gateway.verify_exchange`` and ``to_http``. Each case runs in a forked child, two at a time, with
a limit that the test enforces: CPU seconds (the kernel stops the child past it, SIGXCPU) and a
wall-clock backstop, so a hang fails the case instead of hanging the suite. Only
``CiteVerifyError`` subclasses may come out. Memory: the peak RSS of one verification (the child's
high-water mark, reset after the fork) against the answer's size. The CLI, through its real entry
point with its real stdout and stderr: hostile files give exit code 2 and one line on stderr,
never a traceback. The policy loaders raise only ``PolicyError``. A block or a redact does not
hand back what it removed.
"""

from __future__ import annotations

import contextlib
import gc
import json
import math
import multiprocessing
import os
import resource
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

import pytest

from citeverify_core import (
    CitationVerifier,
    CiteVerifyError,
    PolicyConfig,
    PolicyError,
    load_policy_pack,
)
from citeverify_core.engine.exchange import verify_exchange
from citeverify_core.engine.results import render_text
from tests.support.hostile import BY_NAME, CASES, POLICY, english, english_context

#: The gateway blocks (the 400 body is built and serialized).
GATEWAY_POLICY: dict[str, Any] = {
    "output_action": {"unverified_action": "block"},
    "extensions": {"lookups": {"enabled": False}},
}
GATEWAY_POLICY_EXTENSIONS: dict[str, Any] = {"extensions": {"lookups": {"enabled": False}}}
#: Context of the cases that do not bring their own (the bench uses 1 MB).
CONTEXT_CHARS = 100_000
#: Seconds one verification may take. The target is 1 s for any answer against 1 MB of context;
#: these contexts are smaller, and the margin is for a noisy 2-core machine running two cases.
#: The 2,000,000-character cases get 2.5 s: the issue's target there is 1 s of CPU, which
#: bench/bench_hostile.py measures and reports (these take 0.5-1.2 s on a loaded 2-core machine);
#: a unit test cannot hold a noisy machine to 1 s, but a super-linear path costs 10x and more.
LIMIT = {10_000: 1.5, 100_000: 1.5, 1_000_000: 3.0, 2_000_000: 2.5}
#: At the answer limit (2,000,000 characters), the generators that cost the most per character
#: (here against 100 KB of context, not 1 MB).
AT_THE_LIMIT = [
    "dot_space",
    "crlf_flood",
    "v_repeated",
    "ligatures_nfkc",
    "email_many_ats",
    "whitespace_only",
    "usc_repeated",
    "one_long_sentence",
]
#: Cases with their own limit and the reason. The known miss of the 1 s target: NFKC expands
#: "ﷺ" 18x, so a 2M-character answer is ~9M characters to normalize and tokenize, 1.0-1.1 s of CPU
#: in two C calls (unicodedata.normalize, re.findall); linear, and within the 2.5 s above
#: (reported in bench/README.md, "Hostile inputs").
NOT_MET: dict[str, float] = {}
WORKERS = 2

ROOT = Path(__file__).resolve().parents[3]


# --- the runner: forked children, two at a time, each with its deadline --------------------------


@dataclass
class Outcome:
    seconds: float | None  # CPU seconds of the call; None: killed
    error: str  # "" when nothing escaped; else "Type: message @ file:function"
    traceback: str = ""
    value: Any = None  # what the call returned
    wall: float | None = None  # wall-clock seconds of the call
    prepare: float | None = None  # wall-clock seconds to build the input

    def describe(self) -> str:
        took = "killed" if self.seconds is None else f"{self.seconds:.2f} s CPU, {self.wall:.2f} s"
        return f"{took}: {self.error}\n{self.traceback}"

    def check(self, limit: float) -> None:
        """Fail unless nothing escaped and the call took at most ``limit`` CPU seconds."""
        assert not self.error, self.describe()
        assert self.seconds is not None
        assert self.seconds <= limit, f"too slow: {self.describe()} (limit {limit:g} s)"


def where(exc: BaseException) -> str:
    """``file:function`` of the innermost citeverify frame of a traceback."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "citeverify" in f.filename]
    frame = ours[-1] if ours else (frames[-1] if frames else None)
    return "?" if frame is None else f"{Path(frame.filename).name}:{frame.name}"


#: A job: ``prepare()`` builds the input (not timed) and returns the call to time.
Job = Callable[[], Callable[[], object]]


def _child(job: Job, limit: float, conn: Connection, fresh_loop: bool = True) -> None:
    # The child inherits the whole test session's heap: keep the garbage collector out of it, or
    # every collection walks the parent's objects and the case is charged for them.
    gc.freeze()
    if fresh_loop:
        # The sync API's background loop thread does not survive a fork (see
        # test_the_sync_api_works_in_a_forked_child): other cases must not hang on that bug.
        import citeverify_core.sync as runner

        runner._loop = runner._thread = None
    prep = time.perf_counter()
    call = job()
    prep = time.perf_counter() - prep
    # The limit is on CPU time (other processes on a 2-core machine do not make a case fail);
    # the kernel stops the child (SIGXCPU) a little after it, the parent kills it on wall-clock.
    cpu = time.process_time()
    soft = math.ceil(cpu + limit) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 5))
    conn.send("start")
    wall = time.perf_counter()
    value = None
    try:
        value = call()
    except CiteVerifyError:
        pass
    except BaseException as exc:  # reported to the parent
        error = f"{type(exc).__name__}: {str(exc)[:200]} @ {where(exc)}"
        took = time.process_time() - cpu
        tb = traceback.format_exc()[-3000:]
        conn.send(Outcome(took, error, tb, wall=time.perf_counter() - wall, prepare=prep))
        return
    took = time.process_time() - cpu
    conn.send(Outcome(took, "", value=value, wall=time.perf_counter() - wall, prepare=prep))


def run_all(
    jobs: dict[str, tuple[Job, float]], workers: int = WORKERS, *, fresh_loop: bool = True
) -> dict[str, Outcome]:
    """Run each job in a forked child, ``workers`` at a time, with its limit in seconds.

    The limit counts from the moment the child has built its input and says ``start``: CPU time
    (the kernel stops the child past it) and, for a child that waits instead of working, ten
    times the limit plus 5 s of wall-clock time (a loaded machine stretches wall-clock time).
    """
    ctx = multiprocessing.get_context("fork")
    pending = list(jobs.items())
    # connection -> [name, process, limit, start time or None, spawn time]
    running: dict[Connection, list[Any]] = {}
    outcomes: dict[str, Outcome] = {}
    while pending or running:
        while pending and len(running) < workers:
            name, (job, limit) = pending.pop(0)
            parent, child = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_child, args=(job, limit, child, fresh_loop), daemon=True)
            proc.start()
            child.close()
            running[parent] = [name, proc, limit, None, time.monotonic()]
        now = time.monotonic()
        deadline = min(
            (started + 10 * limit + 5) if started is not None else spawned + 120
            for _, _, limit, started, spawned in running.values()
        )
        ready = wait(list(running), timeout=max(0.01, deadline - now))
        now = time.monotonic()
        for conn in list(running):
            name, proc, limit, started, spawned = running[conn]
            if conn in ready:
                try:
                    msg = conn.recv()
                except EOFError:
                    proc.join(5)
                    signal_name = (
                        "SIGXCPU: over the CPU limit"
                        if proc.exitcode == -signal.SIGXCPU
                        else f"exit code {proc.exitcode}"
                    )
                    msg = Outcome(None, f"killed ({signal_name}, {limit:g} s)")
                if msg == "start":
                    running[conn][3] = now
                    continue
                outcomes[name] = msg
            elif started is not None and now > started + 10 * limit + 5:
                outcomes[name] = Outcome(None, f"timeout: over {10 * limit + 5:g} s wall-clock")
            elif started is None and now > spawned + 120:
                outcomes[name] = Outcome(None, "input not built in 120 s")
            else:
                continue
            proc.kill()
            proc.join(5)
            conn.close()
            del running[conn]
    return outcomes


# --- the cases -----------------------------------------------------------------------------------

VERIFIER = CitationVerifier(POLICY)
GATEWAY_VERIFIER = CitationVerifier(GATEWAY_POLICY)


def inputs(name: str, n: int) -> tuple[str, list[str]]:
    case = BY_NAME[name]
    answer = case.gen(n)
    context = case.context(n) if case.context is not None else english_context(CONTEXT_CHARS)
    return answer, context


def verify_job(name: str, n: int) -> Callable[[], object]:
    answer, context = inputs(name, n)

    def call() -> object:
        result = VERIFIER.verify(answer, context)
        render_text(result)  # what the CLI prints
        return len(json.dumps(result.to_dict()))

    return call


def gateway_job(name: str, n: int) -> Callable[[], object]:
    answer, context = inputs(name, n)
    request = {
        "model": "m",
        "messages": [{"role": "user", "content": "q"}],
        "verdictan": {"context_documents": [{"content": d} for d in context]},
    }
    response = {
        "id": "x",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}}],
    }

    def call() -> object:
        _, body = verify_exchange(request, response, verifier=GATEWAY_VERIFIER).to_http()
        return json.dumps(body)

    return call


def _warm_up() -> None:
    # Import eyecite, idutils and the rest before forking: a child pays only for its case.
    text = 'See 5 U.S. 137 (1803), doi:10.1234/x, PMID: 1, http://a.com, "q", 5%, $4 [1].'
    VERIFIER.verify(text, ["x 5%"])
    GATEWAY_VERIFIER.verify(text, ["x"])
    english_context(CONTEXT_CHARS)


CASE_IDS = [
    *(f"verify-{c.name}-{n // 1000}k" for c in CASES for n in (10_000, 100_000)),
    *(f"verify-{c.name}-1000k" for c in CASES if c.cheap),
    *(f"verify-{name}-2000k" for name in AT_THE_LIMIT),
    # The gateway adds the exchange's shape and the 400 body: at 100k (10k is covered above).
    *(f"gateway-{c.name}-100k" for c in CASES),
]


def job_of(case_id: str) -> tuple[Job, float]:
    kind, rest = case_id.split("-", 1)
    name, size = rest.rsplit("-", 1)
    n = int(size[:-1]) * 1000
    make = verify_job if kind == "verify" else gateway_job
    return (lambda: make(name, n)), NOT_MET.get(case_id, LIMIT[n])


def selected(request: pytest.FixtureRequest, test_name: str, param: str) -> list[Any]:
    """The parameters of ``test_name`` that this session runs (after -k and the like)."""
    return [
        item.callspec.params[param]
        for item in request.session.items
        if isinstance(item, pytest.Function)
        and item.originalname == test_name
        and item.module is not None
        and item.module.__name__ == __name__
    ]


@pytest.fixture(scope="module")
def outcomes(request: pytest.FixtureRequest) -> dict[str, Outcome]:
    """Run every selected case once, two at a time, before the first test looks."""
    cases = selected(request, "test_hostile_text", "case_id")
    if cases:
        _warm_up()
    return run_all({case_id: job_of(case_id) for case_id in cases})


@pytest.mark.parametrize("case_id", CASE_IDS)
def test_hostile_text(case_id: str, outcomes: dict[str, Outcome]) -> None:
    outcomes[case_id].check(job_of(case_id)[1])


# --- memory: peak RSS of one verification in a fresh process -------------------------------------

#: Peak RSS growth of one verification may be at most this many bytes per answer character (a
#: str of a million characters is 1-4 MB; the claims, words and result objects come on top).
RSS_BYTES_PER_CHAR = 150
MEMORY_CHARS = 500_000
MEMORY_CASES = [
    "english",
    "claims_at_limit",
    "crlf_words",
    "ligatures_nfkc",
    "lone_surrogates",
    "stats_per_claim",
    "case_citations",
]


def _status(key: str) -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    raise AssertionError(key)  # pragma: no cover


def memory_job(name: str, n: int) -> Job:
    def prepare() -> Callable[[], object]:
        answer = english(n, 9) if name == "english" else BY_NAME[name].gen(n)
        context = english_context(CONTEXT_CHARS)
        gc.collect()
        # The child inherits the parent's pages: reset the high-water mark to the current RSS.
        Path("/proc/self/clear_refs").write_text("5", encoding="ascii")
        base = _status("VmRSS")

        def call() -> int:
            with contextlib.suppress(CiteVerifyError):  # refused (e.g. too many claims): fine
                VERIFIER.verify(answer, context)
            return _status("VmHWM") - base

        return call

    return prepare


@pytest.fixture(scope="module")
def memory(request: pytest.FixtureRequest) -> dict[str, Outcome]:
    names = selected(request, "test_memory_of_a_large_answer", "name")
    if names:
        _warm_up()
    return run_all({name: (memory_job(name, MEMORY_CHARS), 30.0) for name in names})


@pytest.mark.parametrize("name", MEMORY_CASES)
def test_memory_of_a_large_answer(name: str, memory: dict[str, Outcome]) -> None:
    n = MEMORY_CHARS
    outcome = memory[name]
    outcome.check(30.0)
    limit = RSS_BYTES_PER_CHAR * n
    assert outcome.value <= limit, (
        f"{name}: peak RSS grew {outcome.value / 2**20:.0f} MB for a {n:,}-character answer "
        f"(limit {limit / 2**20:.0f} MB, {RSS_BYTES_PER_CHAR} bytes per character; "
        f"{outcome.seconds:.1f} s)"
    )


# --- the CLI: hostile files -> exit 2, one line on stderr ------------------------------------------

BILLION_LAUGHS = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
policy:
  citation-verifier:
    external_resolver: *i
"""
BILLION_LAUGHS_KEYS = """\
pack: {name: x}
policies: &p {chain: [citation-verifier]}
policy:
  citation-verifier: &cv
    output_action: {unverified_action: block}
  x1: &x1 [*cv,*cv,*cv,*cv,*cv,*cv,*cv,*cv,*cv,*cv]
  x2: &x2 [*x1,*x1,*x1,*x1,*x1,*x1,*x1,*x1,*x1,*x1]
  x3: &x3 [*x2,*x2,*x2,*x2,*x2,*x2,*x2,*x2,*x2,*x2]
  x4: &x4 [*x3,*x3,*x3,*x3,*x3,*x3,*x3,*x3,*x3,*x3]
  x5: &x5 [*x4,*x4,*x4,*x4,*x4,*x4,*x4,*x4,*x4,*x4]
  x6: &x6 [*x5,*x5,*x5,*x5,*x5,*x5,*x5,*x5,*x5,*x5]
  x7: &x7 [*x6,*x6,*x6,*x6,*x6,*x6,*x6,*x6,*x6,*x6]
  x8: &x8 [*x7,*x7,*x7,*x7,*x7,*x7,*x7,*x7,*x7,*x7]
"""
SEED_INNER = "    output_action: {unverified_action: block}\n"


def _pack(inner: str) -> str:
    return "pack: {name: x}\npolicy:\n  citation-verifier:\n" + inner


#: name -> the policy file's bytes (hostile YAML).
POLICY_FILES: dict[str, bytes] = {
    "billion_laughs": BILLION_LAUGHS.encode(),
    "billion_laughs_notes": BILLION_LAUGHS_KEYS.encode(),
    "nested_600_lists": (_pack("    external_resolver: " + "[" * 600 + "]" * 600 + "\n")).encode(),
    "nested_600_maps": (
        _pack("    external_resolver: " + "{a: " * 600 + "1" + "}" * 600 + "\n")
    ).encode(),
    "nested_600_top": ("[" * 600 + "]" * 600 + "\n").encode(),
    "nested_5000": ("[" * 5000 + "]" * 5000 + "\n").encode(),
    "integer_keys": _pack("    1: 2\n    output_action: {3: block}\n").encode(),
    "integer_top_keys": b"1: 2\npolicy: {citation-verifier: {}}\n",
    "null_keys": _pack("    ~: 1\n").encode(),
    "list_key": b"? [a, b]\n: 1\n",
    "bool_keys": b"true: 1\npolicy: {citation-verifier: {true: 1}}\n",
    "float_values": _pack("    min_confidence: .nan\n    min_groundedness: .inf\n").encode(),
    "huge_int": _pack("    min_confidence: " + "9" * 5000 + "\n").encode(),
    "huge_int_max_lookups": _pack(
        "    extensions: {lookups: {max_lookups: " + "9" * 5000 + "}}\n"
    ).encode(),
    "empty": b"",
    "only_comment": b"# nothing\n",
    "scalar": b"just a string\n",
    "list_top": b"- 1\n- 2\n",
    "not_utf8": b"\xff\xfe\x00p\x00o\x00l",
    "nul_bytes": b"pack: {name: \x00}\n",
    "python_tag": b"!!python/object/apply:os.system ['echo hi']\n",
    "binary_tag": _pack("    redaction: !!binary aGVsbG8=\n").encode(),
    "merge_keys": b"x: &x {citation-verifier: {}}\npolicy:\n  <<: *x\n",
    "timestamp_keys": _pack("    2001-12-14: 1\n").encode(),
    "surrogate_escape": _pack('    extensions: {redaction_marker: "\\ud800"}\n').encode(),
    "allow_hosts_garbage": _pack(
        '    extensions: {lookups: {url_allow_hosts: ["999.1.1.1/99", "::/-1", "\\ud800", ""]}}\n'
    ).encode(),
    "cache_path_dir": _pack("    extensions: {lookups: {cache_path: /}}\n").encode(),
    "long_string": _pack("    extensions: {redaction_marker: " + "x" * 200_000 + "}\n").encode(),
    "tabs": b"policy:\n\tcitation-verifier: {}\n",
    "duplicate_keys": _pack(SEED_INNER + SEED_INNER).encode(),
}


def _cap_memory(extra: int = 2 * 2**30) -> None:
    # A hard cap on the forked child: a billion-laughs file must fail, not take the machine.
    limit = _status("VmSize") + extra
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run_cli(args: list[str]) -> dict[str, Any]:
    """``citeverify ARGS`` through the console entry point, in this (forked) process.

    stdout and stderr are the process's file descriptors 1 and 2, set up as the interpreter sets
    them up for pipes; an exception that escapes ``main()`` is printed as the interpreter would.
    """
    from citeverify_core import cli

    _cap_memory()
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()  # noqa: SIM115
    os.dup2(out.fileno(), 1)
    os.dup2(err.fileno(), 2)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
    sys.argv = ["citeverify", *args]
    code: int = 0
    try:
        cli.main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # what the interpreter prints for an uncaught exception
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # the exit status says it
            code = 120  # what the interpreter does when stdout cannot be flushed at exit
    err.seek(0)
    return {"code": code, "stderr": err.read().decode("utf-8", "backslashreplace")}


def cli_job(args: list[str]) -> Job:
    return lambda: lambda: run_cli(args)


def _assert_one_line_exit_2(outcome: Outcome) -> None:
    outcome.check(20.0)
    code, stderr = outcome.value["code"], outcome.value["stderr"]
    lines = stderr.splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in stderr, (
        f"exit {code}, stderr:\n{stderr[-3000:]}"
    )
    assert lines[0].startswith("citeverify: error: "), lines[0]


def _assert_no_traceback(outcome: Outcome) -> None:
    """Exit 0 or 1 (a valid input after all): no traceback; else exit 2 and one line."""
    outcome.check(20.0)
    if outcome.value["code"] in (0, 1):
        assert "Traceback" not in outcome.value["stderr"], outcome.value["stderr"][-3000:]
    else:
        _assert_one_line_exit_2(outcome)


@pytest.fixture
def answer_file(tmp_path: Path) -> Path:
    path = tmp_path / "answer.txt"
    path.write_text("The museum opens at nine.", encoding="utf-8")
    return path


LINT_CASES = ["billion_laughs", "nested_600_lists", "integer_keys", "empty"]


@pytest.fixture(scope="module")
def cli(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Outcome]:
    """Every selected CLI case, run through ``main()`` in forked children, two at a time."""
    root = tmp_path_factory.mktemp("cli")
    answer = root / "answer.txt"
    answer.write_text("The museum opens at nine.", encoding="utf-8")
    jobs: dict[str, tuple[Job, float]] = {}
    for name in selected(request, "test_cli_check_hostile_policy", "name"):
        policy = _write(root, f"check-{name}.yaml", POLICY_FILES[name])
        args = ["check", "-a", str(answer), "-c", str(answer), "-p", str(policy), "--no-lookups"]
        jobs[f"check-{name}"] = (cli_job(args), 20.0)
    for name in selected(request, "test_cli_lint_hostile_policy", "name"):
        policy = _write(root, f"lint-{name}.yaml", POLICY_FILES[name])
        jobs[f"lint-{name}"] = (cli_job(["lint", str(policy)]), 20.0)
    for name in selected(request, "test_cli_hostile_files", "name"):
        files, argv = CLI_CASES[name]
        folder = root / name
        folder.mkdir()
        paths = {"{answer}": str(answer), "{dir}": str(folder)}
        for file_name, content in files.items():
            paths["{" + file_name + "}"] = str(_write(folder, file_name, content))
        args = []
        for arg in argv:
            for key, value in paths.items():
                arg = arg.replace(key, value)  # noqa: PLW2901
            args.append(arg)
        jobs[f"files-{name}"] = (cli_job(args), 20.0)
    if jobs:
        _warm_up()
    return run_all(jobs)


@pytest.mark.parametrize("name", sorted(POLICY_FILES))
def test_cli_check_hostile_policy(name: str, cli: dict[str, Outcome]) -> None:
    _assert_no_traceback(cli[f"check-{name}"])


@pytest.mark.parametrize("name", LINT_CASES)
def test_cli_lint_hostile_policy(name: str, cli: dict[str, Outcome]) -> None:
    outcome = cli[f"lint-{name}"]
    if name == "empty":
        _assert_one_line_exit_2(outcome)
    else:
        _assert_no_traceback(outcome)


def _write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    path = tmp_path / name
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8", errors="surrogatepass")
    else:
        path.write_bytes(data)
    return path


def _chat(content: Any) -> str:
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]})


def _request(docs: Any) -> str:
    return json.dumps({"messages": [], "verdictan": {"context_documents": docs}})


NESTED_JSON = "[" * 200_000 + "]" * 200_000
NESTED_OBJECT = '{"a":' * 100_000 + "1" + "}" * 100_000

#: name -> (files to write: {file name: content}, argv with {file} placeholders).
CLI_CASES: dict[str, tuple[dict[str, bytes | str], list[str]]] = {
    "context_nested_json": (
        {"ctx.json": NESTED_JSON},
        ["check", "-a", "{answer}", "-c", "{ctx.json}"],
    ),
    "context_nested_object": (
        {"ctx.json": NESTED_OBJECT},
        ["check", "-a", "{answer}", "-c", "{ctx.json}"],
    ),
    "context_json_not_a_document": (
        {"ctx.json": '[1, null, {"content": 5}, ["x"]]'},
        ["check", "-a", "{answer}", "-c", "{ctx.json}"],
    ),
    "context_json_surrogate": (
        {"ctx.json": '["\\ud800 museum"]'},
        ["check", "-a", "{answer}", "-c", "{ctx.json}"],
    ),
    "context_json_huge_number": (
        {"ctx.json": "[" + "9" * 5000 + "]"},
        ["check", "-a", "{answer}", "-c", "{ctx.json}"],
    ),
    "context_json_nan": (
        {"ctx.json": "[NaN, Infinity]"},
        ["check", "-a", "{answer}", "-c", "{ctx.json}"],
    ),
    "context_not_utf8": (
        {"ctx.txt": b"\xff\xfe\xfa"},
        ["check", "-a", "{answer}", "-c", "{ctx.txt}"],
    ),
    "context_json_not_utf8": (
        {"ctx.json": b'["\xff"]'},
        ["check", "-a", "{answer}", "-c", "{ctx.json}"],
    ),
    "context_is_directory": ({}, ["check", "-a", "{answer}", "-c", "{dir}"]),
    "context_missing": ({}, ["check", "-a", "{answer}", "-c", "{dir}/nope.txt"]),
    "answer_not_utf8": (
        {"bad.txt": b"caf\xe9 \xff"},
        ["check", "-a", "{bad.txt}", "-c", "{answer}"],
    ),
    "answer_lone_surrogate_bytes": (
        {"bad.txt": "x \ud800 y"},
        ["check", "-a", "{bad.txt}", "-c", "{answer}"],
    ),
    "answer_is_directory": ({}, ["check", "-a", "{dir}", "-c", "{answer}"]),
    "answer_too_long": (
        {"big.txt": "word " * 500_000},
        ["check", "-a", "{big.txt}", "--no-lookups"],
    ),
    "answer_nul_bytes": (
        {"nul.txt": b"a\x00b. \x00"},
        ["check", "-a", "{nul.txt}", "-c", "{answer}"],
    ),
    "policy_is_directory": ({}, ["check", "-a", "{answer}", "-p", "{dir}"]),
    "action_unknown": ({}, ["check", "-a", "{answer}", "--action", "\ud800"]),
    "response_lone_surrogate": (
        {
            "req.json": _request([{"content": "The museum opens at nine."}]),
            "resp.json": _chat("The museum \\ud800 opens. See http://a:b:c/ now."),
        },
        ["check", "--request", "{req.json}", "--response", "{resp.json}", "--no-lookups"],
    ),
    "response_lone_surrogate_json": (
        {
            "req.json": _request([{"content": "The museum opens at nine."}]),
            "resp.json": _chat("The museum \\ud800 opens."),
        },
        ["check", "--request", "{req.json}", "--response", "{resp.json}", "--no-lookups", "--json"],
    ),
    "response_nested": (
        {"req.json": _request([]), "resp.json": NESTED_OBJECT},
        ["check", "--request", "{req.json}", "--response", "{resp.json}"],
    ),
    "response_not_object": (
        {"req.json": "[]", "resp.json": '"x"'},
        ["check", "--request", "{req.json}", "--response", "{resp.json}"],
    ),
    "response_content_parts_garbage": (
        {"req.json": _request([]), "resp.json": _chat([1, {"type": "text"}, None])},
        ["check", "--request", "{req.json}", "--response", "{resp.json}", "--no-lookups"],
    ),
    "request_docs_not_list": (
        {"req.json": _request({"content": "x"}), "resp.json": _chat("x")},
        ["check", "--request", "{req.json}", "--response", "{resp.json}"],
    ),
    "refs_not_a_database": (
        {
            "refs.txt": "Kuhn, T. S. (1962). The Structure of Scientific Revolutions.",
            "index.sqlite": b"this is not a database" * 100,
        },
        ["refs", "{refs.txt}", "--index", "{index.sqlite}"],
    ),
    "refs_lone_surrogate": (
        {"refs.txt": "Kuhn, T. \ud800 (1962). The Structure.", "index.sqlite": b""},
        ["refs", "{refs.txt}", "--index", "{index.sqlite}"],
    ),
    "refs_unknown_source": (
        {"refs.txt": "Kuhn (1962). X."},
        ["refs", "{refs.txt}", "--source", "nope"],
    ),
    "index_stats_not_a_database": (
        {"index.sqlite": b"this is not a database" * 100},
        ["index", "stats", "--index", "{index.sqlite}"],
    ),
    "index_build_bad_gzip": (
        {"dump.jsonl.gz": b"\x1f\x8b\x08\x00garbage"},
        ["index", "build", "{dump.jsonl.gz}", "--index", "{dir}/i.sqlite"],
    ),
    "index_build_not_utf8": (
        {"dump.jsonl": b'{"DOI": "10.1/x", "title": ["\xff"]}\n'},
        ["index", "build", "{dump.jsonl}", "--index", "{dir}/i.sqlite"],
    ),
    "index_build_nested_line": (
        {"dump.jsonl": NESTED_JSON + "\n"},
        ["index", "build", "{dump.jsonl}", "--index", "{dir}/i.sqlite"],
    ),
    "index_build_dict_volume": (
        {
            "dump.jsonl": json.dumps(
                {
                    "DOI": "10.1/x",
                    "title": ["T"],
                    "volume": {"a": 1},
                    "issued": {"date-parts": [[1e400]]},
                }
            ).replace("1e+400", "1e400")
            + "\n"
        },
        ["index", "build", "{dump.jsonl}", "--index", "{dir}/i.sqlite"],
    ),
    "index_build_into_not_a_database": (
        {"dump.jsonl": "{}\n", "index.sqlite": b"this is not a database" * 100},
        ["index", "build", "{dump.jsonl}", "--index", "{index.sqlite}"],
    ),
    "index_build_directory": ({}, ["index", "build", "{dir}", "--index", "{dir}/i.sqlite"]),
}


@pytest.mark.parametrize("name", sorted(CLI_CASES))
def test_cli_hostile_files(name: str, cli: dict[str, Outcome]) -> None:
    _assert_no_traceback(cli[f"files-{name}"])


# --- the policy loaders: only PolicyError ----------------------------------------------------------


def _only_policy_error(fn: Callable[[], object]) -> None:
    message = "no error"
    try:
        fn()
    except PolicyError as exc:
        message = str(exc)
    except CiteVerifyError as exc:  # a library error, but the wrong one
        pytest.fail(f"{type(exc).__name__} instead of PolicyError: {exc}")
    assert message, "a PolicyError without a message"


@pytest.mark.parametrize(
    "name", sorted(set(POLICY_FILES) - {"billion_laughs", "billion_laughs_notes"})
)
def test_policy_loaders_hostile_files(name: str, tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_bytes(POLICY_FILES[name])
    _only_policy_error(lambda: PolicyConfig.from_yaml(path))
    _only_policy_error(lambda: load_policy_pack(path))
    _only_policy_error(lambda: load_policy_pack(str(path)))


@pytest.mark.parametrize("name", ["billion_laughs", "billion_laughs_notes"])
def test_policy_loaders_billion_laughs(name: str, tmp_path: Path) -> None:
    # In a child with its own deadline: an unbounded expansion fails the case, not the suite.
    path = tmp_path / "policy.yaml"
    path.write_bytes(POLICY_FILES[name])

    def job() -> Callable[[], object]:
        _cap_memory()
        return lambda: (PolicyConfig.from_yaml(path), load_policy_pack(path))

    run_all({name: (job, 5.0)}, workers=1)[name].check(5.0)


@pytest.mark.parametrize(
    "arg",
    [
        None,
        5,
        b"policy.yaml",
        "",
        "/",
        "/nonexistent/x.yaml",
        "\ud800.yaml",
        "x\x00.yaml",
        "a" * 5000,
    ],
    ids=["none", "int", "bytes", "empty", "root", "missing", "surrogate", "nul", "long_name"],
)
def test_policy_loaders_hostile_paths(arg: Any) -> None:
    _only_policy_error(lambda: PolicyConfig.from_yaml(arg))
    _only_policy_error(lambda: load_policy_pack(arg))


def _nested(depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {"a": 1}
    for _ in range(depth):
        out = {"a": out}
    return out


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        "x",
        {1: 2},
        {None: 1},
        {("a",): 1},
        {"output_action": {1: "block"}},
        {"min_confidence": float("nan")},
        {"min_confidence": 10**400},
        {"min_confidence": "9" * 5000},
        {"extensions": {"lookups": {"max_lookups": "9" * 5000}}},
        {"extensions": {"lookups": {"timeout": "1e400"}}},
        {"extensions": {"lookups": {"url_allow_hosts": ["999.1.1.1/99", "::/-1", "\ud800"]}}},
        {"extensions": {"lookups": {"url_allow_hosts": "10.0.0.0/8"}}},
        {"extensions": {"redaction_marker": "\ud800"}},
        {"extensions": _nested(50)},
        _nested(900),
        {"external_resolver": _nested(900)},
        {"extract_patterns": ["doi", "\ud800", None]},
        {"extract_patterns": "quote"},
        {"rag_context": {"min_context_overlap": -0.0}},
        {"response": {"include_verification_report": "yes"}},
        {"\ud800": 1},
    ],
    ids=lambda d: repr(d)[:40],
)
def test_policy_model_validate_hostile(data: Any) -> None:
    _only_policy_error(lambda: PolicyConfig.model_validate(data))
    _only_policy_error(lambda: CitationVerifier(data) if data is not None else None)


# --- leaks: a block or a redact does not hand back what it removed -------------------------------

SECRET = "zqxsecret"
GROUNDED = "The museum opens at nine. "
LEAKS = {
    "claim": f"{SECRET.capitalize()} dragons guard the vault at night.",
    "quote": f'The guide said "{SECRET} dragons guard the vault".',
    "statistic": f"{SECRET.capitalize()} attendance rose 987654321% last year.",
    "url": f"Dragons guard it, see https://{SECRET}.example/vault now.",
    "doi": f"Dragons guard it (doi:10.9999/{SECRET}).",
    "case": f"Dragons guard it, {SECRET.capitalize()} v. Museum, 5 Ab. 137 (1999).",
    "marker": f"{SECRET.capitalize()} dragons guard the vault [7].",
}
#: The hostile cases' policy: redact, strict quotes and statistics, lookups off.
LEAK_POLICY: dict[str, Any] = POLICY


def _everything(result: Any) -> str:
    return "\n".join([json.dumps(result.to_dict()), str(result), result.answer, *result.reasons])


@pytest.mark.parametrize("kind", sorted(LEAKS))
def test_redact_does_not_hand_back_the_removed_text(kind: str) -> None:
    answer = GROUNDED + LEAKS[kind]
    result = CitationVerifier(LEAK_POLICY).verify(answer, [GROUNDED])
    assert result.action == "redact"
    assert SECRET not in _everything(result).casefold()
    assert "987654321" not in _everything(result)
    kept = CitationVerifier(LEAK_POLICY, include_original=True).verify(answer, [GROUNDED])
    assert SECRET in kept.original_answer.casefold()  # asked for explicitly


@pytest.mark.parametrize("kind", sorted(LEAKS))
def test_block_body_does_not_carry_the_blocked_text(kind: str) -> None:
    policy = {
        **LEAK_POLICY,
        "output_action": {"unverified_action": "block"},
        "response": {"include_verification_report": False},
    }
    request = {"messages": [], "verdictan": {"context_documents": [{"content": GROUNDED}]}}
    response = {"choices": [{"message": {"role": "assistant", "content": GROUNDED + LEAKS[kind]}}]}
    status, body = verify_exchange(request, response, policy).to_http()
    assert status == 400
    text = json.dumps(body)
    assert SECRET not in text.casefold() and "987654321" not in text, text
    assert body["verdictan"]["decision"]["verdict"] == "BLOCK"


def test_redaction_marker_cannot_amplify_the_answer() -> None:
    # Every unverified claim becomes one marker: a long marker times many short claims must not
    # turn a 14 KB answer into hundreds of megabytes (either the policy refuses the marker, or
    # the output stays within a bounded multiple of the answer).
    policy = {
        "output_action": {"unverified_action": "redact"},
        "extensions": {"redaction_marker": "X" * 100_000, "lookups": {"enabled": False}},
    }
    try:
        verifier = CitationVerifier(policy)
    except PolicyError:
        return
    answer = "Qq zz. " * 2000
    result = verifier.verify(answer, ["The museum opens at nine."])
    assert len(result.answer) <= 100 * len(answer), (
        f"a {len(answer):,}-character answer redacted to {len(result.answer):,} characters"
    )


# --- the reference verifier: a hostile record in the index ----------------------------------------


def test_a_huge_index_record_costs_bounded_time(tmp_path: Path) -> None:
    # A dump (or a source's answer) is untrusted too: one record with a 2-million-character title
    # and 100,000 authors must not make every verification that meets it slow or huge.
    from citeverify_core.references import LocalIndex, ReferenceVerifier

    dump = tmp_path / "works.jsonl"
    work = {
        "DOI": "10.1/huge",
        "title": ["x " * 1_000_000],
        "author": [{"family": "Doe", "given": "J"}] * 100_000,
        "issued": {"date-parts": [[2020]]},
    }
    dump.write_text(json.dumps(work) + "\n", encoding="utf-8")
    index = LocalIndex(tmp_path / "index.sqlite")
    try:
        index.build(dump)
    except CiteVerifyError:
        return  # refused at build time: fine
    finally:
        index.close()

    verifier = ReferenceVerifier(LocalIndex(tmp_path / "index.sqlite"))
    start = time.process_time()  # every thread: the sync API runs on a background loop
    size = len(verifier.verify("Doe, J. (2020). X x x x x x x x. J.").model_dump_json())
    took = time.process_time() - start
    assert took <= 2.0, f"{took:.2f} s of CPU for one reference against one huge record"
    assert size < 1_000_000, f"a {size:,}-byte result"


# --- small answers found by the properties -------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "x\n[1]",  # a marker alone on its line: a claim with no word left
        "0\r[0]",
        "a.\n[1] [2]",
        "The museum opens at nine.\n[1]\n",
        "The museum opens at nine.\n【1】",
        "[1]\n[2]",
        "x\n[Source 1]",
    ],
)
def test_claims_made_of_markers_only(answer: str) -> None:
    for policy in (POLICY, GATEWAY_POLICY, {"extensions": {"lookups": {"enabled": False}}}):
        try:
            result = CitationVerifier(policy).verify(answer, ["The museum opens at nine.", ""])
        except CiteVerifyError:
            continue
        json.dumps(result.to_dict())
        render_text(result)


def _deep(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("depth", [600, 900])
def test_gateway_redact_of_a_deeply_nested_response(depth: int, tmp_path: Path) -> None:
    # json.loads reads these (Python's parser goes deeper than 900); under redact the gateway
    # rewrites the answer in a copy of the provider's response, which must not recurse into it.
    request = {"messages": [], "verdictan": {"context_documents": [{"content": GROUNDED}]}}
    message = {"role": "assistant", "content": GROUNDED + "Dragons guard it."}
    response = {"choices": [{"message": message, "logprobs": _deep(depth)}]}
    assert json.loads(json.dumps(response)) == response
    policy = {"output_action": {"unverified_action": "redact"}, **GATEWAY_POLICY_EXTENSIONS}
    status, body = verify_exchange(request, response, policy).to_http()
    assert status == 200
    assert "Dragons" not in body["choices"][0]["message"]["content"]
    req = _write(tmp_path, "req.json", json.dumps(request))
    resp = _write(tmp_path, "resp.json", json.dumps(response))
    args = ["check", "--request", str(req), "--response", str(resp), "--action", "redact"]
    outcome = run_all({"cli": (cli_job([*args, "--no-lookups", "--json"]), 20.0)})["cli"]
    _assert_no_traceback(outcome)
    assert outcome.value["code"] in (0, 1), outcome.value


# --- database paths: the lookup cache, the local index, the job store ------------------------------

HOSTILE_PATHS = {
    "nul": "x\x00y.sqlite",
    "surrogate": "\ud800.sqlite",
    "root": "/",
    "missing_dir": "/nonexistent/dir/x.sqlite",
    "not_a_database": "{not_a_db}",
    "directory": "{dir}",
}


@pytest.mark.parametrize("name", sorted(HOSTILE_PATHS))
def test_database_paths(name: str, tmp_path: Path) -> None:
    from citeverify_core import LookupCache
    from citeverify_core.references import LocalIndex, ReferenceVerifier
    from citeverify_core.service.jobs import JobStore

    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not a database" * 100)
    path = HOSTILE_PATHS[name].format(not_a_db=bad, dir=tmp_path)
    policy = {"extensions": {"lookups": {"cache_path": path}}}
    for make in (
        lambda: LookupCache(path),
        lambda: CitationVerifier(policy),
        lambda: LocalIndex(path).stats(),
        lambda: ReferenceVerifier(path),
        lambda: JobStore(path, ReferenceVerifier(LocalIndex(tmp_path / "ok.sqlite"))),
    ):
        with contextlib.suppress(CiteVerifyError):
            make()


def test_gateway_redact_of_read_only_mappings() -> None:
    # verify_exchange takes any Mapping: a read-only one (a proxy, a frozen dict) must be
    # redacted too, not crash on the copy nor pass the removed text through unchanged.
    from types import MappingProxyType as Frozen

    request = {"messages": [], "verdictan": {"context_documents": [{"content": GROUNDED}]}}
    policy = {"output_action": {"unverified_action": "redact"}, **GATEWAY_POLICY_EXTENSIONS}
    text = GROUNDED + f"{SECRET.capitalize()} dragons guard it."
    chat = {"choices": [Frozen({"message": Frozen({"role": "assistant", "content": text})})]}
    responses_api = {
        "output": [
            Frozen({"type": "message", "content": [Frozen({"type": "output_text", "text": text})]})
        ]
    }
    for response in (chat, responses_api, Frozen(chat)):
        try:
            _, body = verify_exchange(request, response, policy).to_http()
        except CiteVerifyError:
            continue
        assert SECRET not in json.dumps(body, default=dict).casefold()


def test_gateway_does_not_pass_unchecked_choices() -> None:
    # Only choices[0] is verified: under block, a second choice that no source supports must not
    # reach the client with a 200 (verify every choice, or refuse/block responses with several).
    request = {"messages": [], "verdictan": {"context_documents": [{"content": GROUNDED}]}}
    response = {
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": GROUNDED}},
            {"index": 1, "message": {"role": "assistant", "content": LEAKS["claim"]}},
        ]
    }
    policy = {"output_action": {"unverified_action": "block"}, **GATEWAY_POLICY_EXTENSIONS}
    try:
        status, body = verify_exchange(request, response, policy).to_http()
    except CiteVerifyError:
        return
    assert not (status == 200 and SECRET in json.dumps(body).casefold()), (
        "an unchecked choice passed"
    )


def test_the_sync_api_works_in_a_forked_child(tmp_path: Path) -> None:
    # A pre-forking server (gunicorn --preload, multiprocessing, Celery) forks after the parent
    # used the sync API: the background event loop's thread does not exist in the child, and a
    # sync call there must not wait forever for it.
    from citeverify_core.references import LocalIndex, ReferenceVerifier

    index = LocalIndex(tmp_path / "index.sqlite")
    index.build(Path(__file__).parents[1] / "data" / "works-crossref.jsonl")
    verifier = ReferenceVerifier(index)
    kuhn = "Kuhn, T. S. (1962). The Structure of Scientific Revolutions."
    assert verifier.verify(kuhn).status == "verified"  # starts the loop in this process

    def job() -> Callable[[], object]:
        return lambda: verifier.verify(kuhn).status

    outcome = run_all({"fork": (job, 0.5)}, workers=1, fresh_loop=False)["fork"]
    outcome.check(0.5)
    assert outcome.value == "verified"
