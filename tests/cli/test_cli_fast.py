"""``citeverify check`` without typer (issue 14): the same bytes and exit codes as the typer app.

The console script starts in ``citeverify_core.cli.fast.main``: ``fast_main`` runs the plain form of
``check`` by hand, and hands anything else (``None``) to the typer application. Each case here
runs both and compares stdout, stderr and the exit code, in-process (the fast path inside the
CliRunner's own stream isolation) and, for a few, as real processes of the installed script.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import textwrap
import threading
import typing
from pathlib import Path

import httpx
import pytest
import typer
from typer.testing import CliRunner

import citeverify_core.cli.fast as _check
from citeverify_core.cli.app import app
from citeverify_core.cli.fast import fast_main

runner = CliRunner()
SCRIPT = Path(sys.executable).with_name("citeverify")
# The typer application as the script ran it before the fast path (its program name included).
TYPER = "import sys; from citeverify_core.cli.app import main; sys.argv[0] = 'citeverify'; main()"

ANSWERS = {
    "verified.txt": "The museum opens at nine.",
    "unverified.txt": "Dragons guard the museum at night.",
    "mixed.txt": "The museum opens at nine. Dragons guard the museum at night.",
    "quote-ok.txt": 'The guide said: "The museum opens at nine." Entry is free on Sundays.',
    "quote-bad.txt": 'The guide said: "The museum closes at noon every day." It opens at nine.',
    "markers.txt": "The museum opens at nine [1]. Entry is free on Sundays [2].",
    "stats.txt": "Entry is free for 45% of the 12,000 visitors on Sundays since 2023.",
    "empty.txt": "",
    "ansi.txt": "The museum \x1b[31mopens\x1b[0m at nine.",
    "doi.txt": "The museum opens at nine (doi:10.1038/nature12373).",
    "case.txt": "Brown v. Board of Education, 347 U.S. 483 (1954) says the museum opens at nine.",
}
CONTEXT = "The museum opens at nine. Entry is free on Sundays."


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # relative paths: the messages name them as given
    for name, text in ANSWERS.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "doc.txt").write_text(CONTEXT, encoding="utf-8")
    (tmp_path / "other.txt").write_text("Dragons are not allowed in.", encoding="utf-8")
    (tmp_path / "docs.json").write_text(json.dumps([{"content": CONTEXT}, "Penguins swim."]))
    (tmp_path / "one.JSON").write_text(json.dumps({"content": CONTEXT, "title": "Hours"}))
    (tmp_path / "broken.json").write_text("[{")
    (tmp_path / "nocontent.json").write_text('[{"text": "x"}]')
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    # Deep enough that json.loads' own RecursionError would depend on the caller's stack (the
    # typer path has a dozen more frames): the depth is bounded before parsing instead.
    nested = "[" * 985 + "]" * 985
    (tmp_path / "deep985.json").write_text(f'{{"content": "{CONTEXT}", "meta": {nested}}}')
    (tmp_path / "bigint.json").write_text("[" + "9" * 5000 + "]")
    (tmp_path / "binary.txt").write_bytes(b"\xff\xfe\x00 not text")
    return tmp_path


def run_fast(args: list[str], stdin: str | None = None) -> tuple[int | None, bytes, bytes]:
    """``fast_main`` inside the same stream isolation as ``CliRunner.invoke``."""
    with runner.isolation(input=stdin) as (out, err, _):
        code = fast_main(args)
        sys.stdout.flush()
        sys.stderr.flush()
        return code, out.getvalue(), err.getvalue()


def run_typer(args: list[str], stdin: str | None = None) -> tuple[int, bytes, bytes]:
    result = runner.invoke(app, args, input=stdin)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout_bytes, result.stderr_bytes


def run_script(args: list[str], stdin: str | None = None) -> tuple[int, bytes, bytes]:
    """What the console script does: the fast path, else (``None``) the typer app."""
    fast = run_fast(args, stdin)
    if fast[0] is None:
        assert fast[1:] == (b"", b"")
        return run_typer(args, stdin)
    return fast  # type: ignore[return-value]


CASES = [
    pytest.param(["check", "--answer", "verified.txt", "--context", "doc.txt"], id="verified"),
    pytest.param(["check", "-a", "unverified.txt", "-c", "doc.txt"], id="unverified-flag"),
    pytest.param(["check", "-a", "mixed.txt", "-c", "doc.txt", "--action", "redact"], id="redact"),
    pytest.param(["check", "-a", "mixed.txt", "-c", "doc.txt", "--action", "block"], id="block"),
    pytest.param(["check", "-a", "mixed.txt", "-c", "doc.txt", "--action=flag"], id="action="),
    pytest.param(["check", "-a", "unverified.txt", "-c", "doc.txt", "--strict"], id="strict"),
    pytest.param(["check", "-a", "verified.txt", "-c", "doc.txt", "--strict"], id="strict-ok"),
    pytest.param(["check", "-a", "unverified.txt", "-c", "doc.txt", "--strict", "--no-strict"], id="no-strict"),
    pytest.param(["check", "-a", "mixed.txt", "-c", "doc.txt", "--json"], id="json"),
    pytest.param(["check", "--json", "-a", "mixed.txt", "-c", "doc.txt", "--action", "redact"], id="json-redact"),
    pytest.param(["check", "-a", "quote-ok.txt", "-c", "doc.txt"], id="quote-matched"),
    pytest.param(["check", "-a", "quote-bad.txt", "-c", "doc.txt", "--json"], id="quote-unmatched"),
    pytest.param(["check", "-a", "markers.txt", "-c", "doc.txt", "-c", "other.txt"], id="markers"),
    pytest.param(["check", "-a", "stats.txt", "-c", "doc.txt"], id="statistics"),
    pytest.param(["check", "-a", "empty.txt", "-c", "doc.txt"], id="empty-answer"),
    pytest.param(["check", "-a", "verified.txt"], id="no-context"),
    pytest.param(["check", "-a", "ansi.txt", "-c", "doc.txt"], id="ansi-stripped"),
    pytest.param(["check", "-a", "verified.txt", "-c", "docs.json"], id="json-list-context"),
    pytest.param(["check", "-a", "verified.txt", "-c", "one.JSON", "--json"], id="json-object-context"),
    pytest.param(["check", "-a", "mixed.txt", "-c", "docs.json", "-c", "other.txt", "-c", "doc.txt"], id="several-contexts"),
    pytest.param(["check", "--answer=verified.txt", "--context=doc.txt", "--context=other.txt"], id="opt=value"),
    pytest.param(["check", "-averified.txt", "-cdoc.txt"], id="short-attached"),
    pytest.param(["check", "-c", "doc.txt", "-a", "./verified.txt"], id="context-first"),
    pytest.param(["check", "-a", "verified.txt/", "-c", ".//doc.txt"], id="paths-as-pathlib-sees-them"),
    pytest.param(["check", "-a", "missing.txt", "-c", "doc.txt"], id="missing-answer"),
    pytest.param(["check", "-a", "verified.txt", "-c", "missing.txt"], id="missing-context"),
    pytest.param(["check", "-a", ".", "-c", "doc.txt"], id="directory"),
    pytest.param(["check", "-a", "binary.txt", "-c", "doc.txt"], id="non-utf8-answer"),
    pytest.param(["check", "-a", "verified.txt", "-c", "binary.txt"], id="non-utf8-context"),
    pytest.param(["check", "-a", "verified.txt", "-c", "broken.json"], id="broken-json"),
    pytest.param(["check", "-a", "verified.txt", "-c", "nocontent.json"], id="doc-without-content"),
    pytest.param(["check", "-a", "verified.txt", "-c", "deep.json"], id="deep-json"),
    pytest.param(["check", "-a", "verified.txt", "-c", "deep985.json"], id="deep-json-985"),
    pytest.param(["check", "-a", "verified.txt", "-c", "bigint.json"], id="huge-int"),
    pytest.param(["check", "-a", "verified.txt", "-c", "doc.txt", "--action", "shout"], id="bad-action"),
    pytest.param(["check", "-a", "missing.txt", "--action", "shout"], id="bad-action-first"),
    pytest.param(["check", "-a", "doi.txt", "-c", "doc.txt", "--no-lookups"], id="doi-no-lookups"),
    pytest.param(["check", "-a", "doi.txt", "-c", "doc.txt", "--lookups", "--no-lookups", "--json"], id="doi-no-lookups-json"),
    pytest.param(["check", "-a", "case.txt", "-c", "doc.txt", "--no-lookups"], id="case-citation"),
]  # fmt: skip


@pytest.mark.parametrize("args", CASES)
def test_fast_path_prints_what_typer_prints(files: Path, args: list[str]) -> None:
    if "shout" in args:  # a bad --action: typer reports it, before reading any file
        assert fast_main(args) is None
    else:
        assert run_fast(args)[0] is not None  # the fast path ran
    assert run_script(args) == run_typer(args)


def test_the_cases_cover_every_exit_code(files: Path) -> None:
    assert {run_script(case.values[0])[0] for case in CASES} == {0, 1, 2}  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["check", "--answer", "-", "-c", "doc.txt"], id="answer-stdin"),
        pytest.param(["check", "-a-", "-c", "doc.txt", "--json"], id="answer-stdin-attached"),
        pytest.param(["check", "-a", "verified.txt", "-c", "-"], id="context-stdin"),
    ],
)
def test_stdin(files: Path, args: list[str]) -> None:
    stdin = "The museum opens at nine. Dragons guard it."
    fast = run_fast(args, stdin)
    assert fast[0] is not None
    assert fast == run_typer(args, stdin)


def test_undecodable_stdin(files: Path) -> None:
    args = ["check", "-a", "-", "-c", "doc.txt"]
    with runner.isolation() as (out, err, _):
        sys.stdin = io.TextIOWrapper(io.BytesIO(b"\xff\xfe bad"), encoding="utf-8")
        code = fast_main(args)
        fast = code, out.getvalue(), err.getvalue()
    assert fast == (2, b"", b"citeverify: error: standard input is not UTF-8 text\n")


@pytest.mark.parametrize("depth", [1, _check.MAX_JSON_DEPTH, _check.MAX_JSON_DEPTH + 1])
def test_json_files_nest_at_most_max_json_depth_levels(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "doc.json"
    meta = "[" * (depth - 1) + "0" + "]" * (depth - 1)  # the object and depth - 1 lists
    path.write_text('{"content": "x", "meta": ' + meta + "}")
    outcome: list[object] = []

    def read() -> None:  # on a fresh thread: the stack of a command, not of pytest
        try:
            outcome.append(_check.read_json(path)["content"])
        except _check.UsageError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=read)
    thread.start()
    thread.join()
    if depth <= _check.MAX_JSON_DEPTH:
        assert outcome == ["x"]
    else:
        assert [str(e) for e in outcome] == [f"{path} is JSON nested too deeply"]


def _crossref(request: httpx.Request) -> httpx.Response:
    body = {
        "status": "ok",
        "message": {
            "DOI": "10.1038/nature12373",
            "title": ["Nanometre-scale thermometry in a living cell"],
            "author": [{"family": "Kucsko", "given": "G."}],
            "issued": {"date-parts": [[2013]]},
            "container-title": ["Nature"],
        },
    }
    stream = httpx.ByteStream(json.dumps(body).encode())
    return httpx.Response(200, headers={"content-type": "application/json"}, stream=stream)


def test_doi_with_lookups_on(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # No network: every lookup client answers from this handler.
    import citeverify_core.lookups.http as lookup

    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return _crossref(request)

    def client() -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(handler))

    monkeypatch.setattr(lookup, "_new_client", client)
    monkeypatch.setattr(lookup, "_shared", None)
    text = ["check", "-a", "doi.txt", "-c", "doc.txt"]
    fast = run_fast(text)
    assert fast[0] is not None
    assert fast == run_typer(text)
    assert b"the DOI resolves to" in fast[1]
    as_json = [*text, "--json", "--lookups"]

    def timeless(run: tuple[int | None, bytes, bytes]) -> tuple[int | None, str, bytes]:
        return run[0], re.sub(r'"elapsed_ms": [0-9.]+', "", run[1].decode()), run[2]

    assert timeless(run_fast(as_json)) == timeless(run_typer(as_json))
    assert seen and all(url.startswith("https://api.crossref.org/works/") for url in seen)


# --- what the fast path leaves to typer ----------------------------------------------------------

UNHANDLED = [
    pytest.param([], id="nothing"),
    pytest.param(["--version"], id="version"),
    pytest.param(["--help"], id="help"),
    pytest.param(["lint", "x.yaml"], id="other-command"),
    pytest.param(["check"], id="check-alone"),
    pytest.param(["check", "--help"], id="check-help"),
    pytest.param(["check", "-a", "verified.txt", "--help"], id="check-help-late"),
    pytest.param(["check", "-c", "doc.txt"], id="no-answer"),
    pytest.param(["check", "-a", "verified.txt", "--policy", "p.yaml"], id="policy"),
    pytest.param(["check", "-a", "verified.txt", "-p", "p.yaml"], id="policy-short"),
    pytest.param(["check", "--request", "q.json", "--response", "r.json"], id="gateway"),
    pytest.param(["check", "-a", "verified.txt", "--request", "q.json"], id="answer-and-request"),
    pytest.param(["check", "-a", "verified.txt", "--nope"], id="unknown-option"),
    pytest.param(["check", "-a", "verified.txt", "--ans", "x"], id="abbreviation"),
    pytest.param(["check", "-a", "verified.txt", "-x"], id="unknown-short"),
    pytest.param(["check", "-a"], id="missing-value"),
    pytest.param(["check", "-a", "verified.txt", "--action"], id="missing-action-value"),
    pytest.param(["check", "-a", "verified.txt", "-c"], id="missing-context-value"),
    pytest.param(["check", "-a", "verified.txt", "-a", "doc.txt"], id="answer-twice"),
    pytest.param(["check", "-a", "verified.txt", "--action", "flag", "--action", "block"], id="action-twice"),
    pytest.param(["check", "-a", "verified.txt", "--action", "BLOCK"], id="action-case"),
    pytest.param(["check", "-a", "verified.txt", "--action", "allow"], id="action-allow"),
    pytest.param(["check", "-a", "verified.txt", "--json=yes"], id="flag-with-value"),
    pytest.param(["check", "-a", "verified.txt", "--no-json"], id="no-json"),
    pytest.param(["check", "-a", "verified.txt", "extra"], id="positional"),
    pytest.param(["check", "-a", "verified.txt", "-"], id="dash-positional"),
    pytest.param(["check", "-a", "verified.txt", "--", "-c", "doc.txt"], id="double-dash"),
    pytest.param(["check", "-a", "--json"], id="value-looks-like-option"),
    pytest.param(["check", "-a", "-c", "doc.txt"], id="value-is-short-option"),
    pytest.param(["check", "--answer="], id="empty-value"),
    pytest.param(["check", "-a", ""], id="empty-value-separate"),
    pytest.param(["--version", "check", "-a", "verified.txt"], id="group-option-first"),
    pytest.param(["Check", "-a", "verified.txt"], id="command-case"),
]  # fmt: skip


class _Untouchable(io.TextIOBase):
    """A stdin that fails the test if anything reads it."""

    def read(self, size: int | None = -1) -> str:
        raise AssertionError("stdin was read")

    def readline(self, size: int | None = -1) -> str:
        raise AssertionError("stdin was read")


@pytest.mark.parametrize("args", UNHANDLED)
def test_unhandled_forms_return_none_untouched(
    files: Path, args: list[str], monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", _Untouchable())
    before = set(sys.modules)
    assert fast_main([a.replace("verified.txt", "-") for a in args]) is None
    assert fast_main(args) is None
    assert capfd.readouterr() == ("", "")
    assert set(sys.modules) == before


def test_unreadable_file_is_typers_to_report(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (files / "secret.txt").write_text("x")
    (files / "secret.txt").chmod(0)
    if os.geteuid() == 0:  # root reads every file (CI): the OS's answer for a user, for this one
        access = os.access
        monkeypatch.setattr(
            _check.os, "access", lambda p, mode: "secret" not in str(p) and access(p, mode)
        )
    assert fast_main(["check", "-a", "verified.txt", "-c", "doc.txt"]) is not None  # the rest: ok
    assert fast_main(["check", "-a", "secret.txt"]) is None
    assert fast_main(["check", "-a", "verified.txt", "-c", "secret.txt"]) is None


def test_completion_requests_and_ascii_streams_are_typers(
    files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["check", "-a", "verified.txt", "-c", "doc.txt"]
    monkeypatch.setenv("_CITEVERIFY_COMPLETE", "bash_complete")
    assert fast_main(args) is None
    monkeypatch.delenv("_CITEVERIFY_COMPLETE")
    with runner.isolation():
        sys.stdout = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
        assert fast_main(args) is None  # click re-wraps such a stream as UTF-8


def test_actions_are_the_policys() -> None:
    from citeverify_core.policy import PolicyConfig
    from citeverify_core.policy.settings import UnverifiedAction

    assert set(typing.get_args(UnverifiedAction)) == _check.ACTIONS
    annotation = PolicyConfig.model_fields["output_action"].annotation
    assert annotation is not None
    field = annotation.model_fields["unverified_action"].annotation
    assert set(typing.get_args(field)) == _check.ACTIONS


@pytest.mark.parametrize("err", [False, True])
@pytest.mark.parametrize(
    "message", ["plain", "", "é ü ✓", "red \x1b[31mtext\x1b[0m and \x1b[2K\x1b[1;32mmore", "a\nb"]
)
def test_echo_writes_what_click_echo_writes(err: bool, message: str) -> None:
    with runner.isolation() as (out, error, _):
        _check.echo(message, err=err)
        ours = out.getvalue(), error.getvalue()
    with runner.isolation() as (out, error, _):
        typer.echo(message, err=err)
        theirs = out.getvalue(), error.getvalue()
    assert ours == theirs


# --- the installed script ------------------------------------------------------------------------


def _run(argv: list[str], stdin: str | None = None) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CITEVERIFY_DEBUG"}
    done = subprocess.run(
        argv, input=stdin, capture_output=True, text=True, check=False, timeout=120, env=env
    )
    return done.returncode, done.stdout, done.stderr


# (arguments, stdin, whether typer's output names the program: "python -m citeverify_core" differs)
SCRIPT_CASES = [
    pytest.param(["check", "-a", "mixed.txt", "-c", "doc.txt", "--strict"], None, False, id="strict"),
    pytest.param(["check", "-a", "mixed.txt", "-c", "docs.json", "--json", "--action", "block"], None, False, id="json-block"),
    pytest.param(["check", "-a", "-", "-c", "doc.txt", "--no-lookups"], "The museum opens at nine.", False, id="stdin"),
    pytest.param(["check", "-a", "ansi.txt", "-c", "doc.txt"], None, False, id="ansi"),
    pytest.param(["check", "-a", "binary.txt", "-c", "doc.txt"], None, False, id="non-utf8"),
    pytest.param(["check", "-a", "verified.txt", "--action", "shout"], None, False, id="bad-action"),
    pytest.param(["check", "--help"], None, True, id="check-help"),
    pytest.param(["check", "-a", "verified.txt", "--nope"], None, True, id="unknown-option"),
    pytest.param(["check", "-a"], None, True, id="missing-value"),
    pytest.param(["--version"], None, False, id="version"),
    pytest.param([], None, True, id="no-arguments"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "stdin", "named"), SCRIPT_CASES)
def test_the_script_behaves_as_the_typer_app(
    files: Path, args: list[str], stdin: str | None, named: bool
) -> None:
    assert SCRIPT.is_file(), SCRIPT
    assert "citeverify_core.cli import main" in SCRIPT.read_text()  # re-installed after the change
    expected = _run([sys.executable, "-c", TYPER, *args], stdin)
    assert _run([str(SCRIPT), *args], stdin) == expected
    if not named:
        assert _run([sys.executable, "-m", "citeverify_core", *args], stdin) == expected


def test_the_script_fast_path_imports_neither_typer_nor_click(files: Path) -> None:
    code = textwrap.dedent(
        """
        import sys
        sys.argv = ["citeverify", "check", "-a", "verified.txt", "-c", "doc.txt", "--no-lookups"]
        from citeverify_core.cli.fast import fast_main
        code = fast_main(sys.argv[1:])
        print(code, sorted({m.split(".")[0] for m in sys.modules} & {"typer", "click", "pydantic"}))
        """
    )
    done = _run([sys.executable, "-c", code])
    assert done[0] == 0, done[2]
    last = done[1].splitlines()[-1]
    assert last.startswith("0 "), done[1]
    assert "typer" not in last and "click" not in last, last


def test_the_fast_path_imports_no_pydantic_without_citations(files: Path) -> None:
    code = textwrap.dedent(
        """
        import sys
        from citeverify_core.cli.fast import fast_main
        code = fast_main(["check", "-a", "verified.txt", "-c", "doc.txt", "--json"])
        print(code, sorted(m for m in sys.modules if m.split(".")[0] in ("typer", "pydantic", "click")))
        """
    )
    done = _run([sys.executable, "-c", code])
    assert done[0] == 0, done[2]
    assert done[1].splitlines()[-1] == "0 []", done[1]


def test_the_script_runs_a_plain_check_without_typer(files: Path) -> None:
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    env.pop("CITEVERIFY_DEBUG", None)
    done = subprocess.run(
        [str(SCRIPT), "check", "-a", "verified.txt", "-c", "doc.txt", "--no-lookups"],
        capture_output=True, text=True, check=False, timeout=120, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Verdict: ALLOW")
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "citeverify_core.cli.fast" in imported
    assert not {"typer", "click", "citeverify_core.cli.app"} & imported


# --- the standard streams misbehaving: the same on both paths, never "please report it" ---------


def _both(args: list[str], **popen: typing.Any) -> list[tuple[int, bytes]]:
    """Exit code and stderr of the script and of the typer app, run with ``popen``'s streams."""
    env = {k: v for k, v in os.environ.items() if k != "CITEVERIFY_DEBUG"}
    out = []
    for argv in ([str(SCRIPT), *args], [sys.executable, "-c", TYPER, *args]):
        done = subprocess.run(
            argv, stderr=subprocess.PIPE, check=False, timeout=120, env=env, **popen
        )
        out.append((done.returncode, done.stderr))
    return out


def test_a_closed_standard_input_is_a_usage_error(files: Path) -> None:
    results = _both(["check", "-a", "-", "-c", "doc.txt"], preexec_fn=lambda: os.close(0))
    assert results == [(2, b"citeverify: error: cannot read standard input: it is closed\n")] * 2


def test_standard_input_must_be_utf8_as_a_file_must(files: Path) -> None:
    # The locale's stdin (surrogateescape under C.UTF-8) would take the bytes as surrogates.
    results = _both(["check", "-a", "-", "-c", "doc.txt"], input=b"The \xff museum.")
    assert results == [(2, b"citeverify: error: standard input is not UTF-8 text\n")] * 2


def test_a_closed_pipe_exits_1_quietly(files: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CITEVERIFY_DEBUG"}
    for argv in ([str(SCRIPT)], [sys.executable, "-c", TYPER]):
        reader, writer = os.pipe()
        os.close(reader)  # whoever reads the report (| head) is gone before it is written
        try:
            done = subprocess.run(
                [*argv, "check", "-a", "mixed.txt", "-c", "doc.txt"],
                stdout=writer, stderr=subprocess.PIPE, check=False, timeout=120, env=env,
            )  # fmt: skip
        finally:
            os.close(writer)
        assert (done.returncode, done.stderr) == (1, b""), argv


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_a_full_disk_is_an_io_error_not_a_bug(files: Path) -> None:
    with open("/dev/full", "wb") as full:
        results = _both(["check", "-a", "mixed.txt", "-c", "doc.txt"], stdout=full)
    message = b"citeverify: error: input/output error: No space left on device\n"
    assert results == [(2, message)] * 2
