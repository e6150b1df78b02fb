"""``citeverify check`` without typer: the console script's fast path.

``citeverify check --answer A --context C`` must start in about 150 ms. Typer alone costs about
60 ms to import and, since 0.2x, pydantic (about 120 ms) to coerce the options, before any of
our code runs. The console script therefore starts here (:func:`main`): :func:`fast_main` parses
the plain form of ``check`` (``--answer``, ``--context``, ``--action``, ``--json``,
``--strict``, ``--lookups/--no-lookups``) by hand and runs it; anything else (``--help``,
``--policy``, the gateway shape, a typo, another command) goes to the typer application in
:mod:`citeverify_core.cli.app`, which prints its own messages.

Both paths share what a check prints (:func:`run_check`), how a file is read
(:func:`read_text`, :func:`read_json`, :func:`read_documents`) and how an error becomes one line
(:func:`error_message`), so their stdout, stderr and exit codes are the same byte for byte
(tests/cli/test_cli_fast.py). This module imports nothing beyond the standard library until it runs
a check.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Protocol, TextIO, cast

from citeverify_core.errors import CiteVerifyError, MissingExtraError, install_hint, require_extra

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from citeverify_core.engine.verifier import PolicyLike

__all__ = [
    "EXIT_ALLOWED",
    "EXIT_BAD_INPUT",
    "EXIT_BLOCKED",
    "UsageError",
    "echo",
    "error_line",
    "error_message",
    "fast_main",
    "needed_extras",
    "plain_main",
    "read_documents",
    "read_json",
    "read_text",
    "reconfigure_output",
    "run_check",
    "run_demo",
]

EXIT_ALLOWED, EXIT_BLOCKED, EXIT_BAD_INPUT = 0, 1, 2

#: ``output_action.unverified_action``'s values (``policy.settings.UnverifiedAction``; a test
#: keeps the two in step). Another value goes to the policy's validation, which reports it.
ACTIONS = frozenset({"flag", "redact", "block"})


#: The deepest JSON a file of the command line may nest (documents, requests, responses).
#: ``json.loads`` takes a frame per level against the interpreter's limit of 1,000, so where it
#: gives up depends on how deep the caller's stack is; a command's stack is under 50 frames.
#: Providers' responses nest deeply in places (logprobs: tests/robustness/test_hostile.py
#: reads 900).
MAX_JSON_DEPTH = 950


class UsageError(Exception):
    """A file of the command line cannot be used: its message is the one line to print."""


class Echo(Protocol):
    """What prints a line: :func:`echo`, or ``typer.echo`` on the typer path."""

    def __call__(self, message: str, *, err: bool = False) -> None: ...


# click.echo strips these (colours, cursor moves) from what goes to a file or a pipe.
_ANSI = r"\033\[[;?0-9]*[a-zA-Z]"


def echo(message: str, *, err: bool = False) -> None:
    """Print ``message`` and a newline as ``click.echo`` does on a POSIX system.

    That is: to ``sys.stdout`` (``sys.stderr`` with ``err``), without ANSI escape sequences when
    the stream is not a terminal, flushed. :func:`fast_main` leaves to typer the cases where
    click would do more (Windows consoles, an ASCII-configured stream).
    """
    stream = sys.stderr if err else sys.stdout
    if stream is None:  # pythonw: no stream to write to
        return
    out = message + "\n"
    if "\033" in out and not _isatty(stream):
        import re  # noqa: PLC0415 - start-up time

        out = re.sub(_ANSI, "", out)
    stream.write(out)
    stream.flush()


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except Exception:  # click's isatty: a stream that cannot tell is not a tty
        return False


def reconfigure_output() -> None:
    """Escape what the output streams cannot encode (a lone surrogate) instead of crashing."""
    import io  # noqa: PLC0415 - already imported by the interpreter

    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def error_message(exc: Exception) -> str | None:
    """The one line that a command's failure prints; ``None``: re-raise it (CITEVERIFY_DEBUG).

    Library errors carry their own message; anything else is a bug of ours, named as such (set
    ``CITEVERIFY_DEBUG=1`` to see the traceback).
    """
    if isinstance(exc, CiteVerifyError | UsageError):
        return str(exc)
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply"
    if isinstance(exc, MemoryError):
        return "out of memory"
    if isinstance(exc, OSError):  # e.g. writing the output to a full disk: not a bug of ours
        where = f": {exc.filename}" if exc.filename else ""
        return f"input/output error: {exc.strerror or exc}{where}"
    if os.environ.get("CITEVERIFY_DEBUG"):
        return None
    return (
        f"internal error ({type(exc).__name__}: {exc}); please report it "
        "(CITEVERIFY_DEBUG=1 shows the traceback)"
    )


def error_line(message: str) -> str:
    """``message`` as the error line on stderr: one line, whatever the message holds."""
    return f"citeverify: error: {' '.join(message.split())}"


def read_text(path: Path) -> str:
    """The UTF-8 text of ``path``, or standard input for ``-``.

    Raises:
        UsageError: The file cannot be read or is not UTF-8.
    """
    stdin = str(path) == "-"
    try:
        if not stdin:
            return path.read_text(encoding="utf-8")
        if sys.stdin is None:
            raise UsageError("cannot read standard input: it is closed")
        # Bytes decoded as a file is: the locale's stdin would keep invalid UTF-8 as surrogates.
        buffer = getattr(sys.stdin, "buffer", None)
        return sys.stdin.read() if buffer is None else buffer.read().decode("utf-8")
    except OSError as exc:
        name = "standard input" if stdin else path
        raise UsageError(f"cannot read {name}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{'standard input' if stdin else path} is not UTF-8 text") from None


def read_json(path: Path) -> Any:
    """The JSON value in ``path`` (``-``: standard input).

    Raises:
        UsageError: The file cannot be read, or is not (usable) JSON.
    """
    import json  # noqa: PLC0415 - start-up time

    from citeverify_core.lookups.http import json_depth  # noqa: PLC0415 - start-up time

    text = read_text(path)
    # json.loads recurses: where it fails depends on the caller's stack, so the depth is
    # bounded before parsing, the same on every path (this fast path and typer's).
    if json_depth(text.encode("utf-8", "surrogatepass")) > MAX_JSON_DEPTH:
        raise UsageError(f"{path} is JSON nested too deeply")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        msg = f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}"
        raise UsageError(msg) from None
    except RecursionError:
        raise UsageError(f"{path} is JSON nested too deeply") from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise UsageError(f"{path} is not usable JSON: {exc}") from None


def read_documents(paths: Sequence[Path]) -> list[Any]:
    """A ``.json`` file holds one document or a list of them; any other file is one document.

    Raises:
        UsageError: A file cannot be read, or a ``.json`` file is not (usable) JSON.
    """
    docs: list[Any] = []
    for path in paths:
        if path.suffix.lower() == ".json":
            data = read_json(path)
            docs.extend(data if isinstance(data, list) else [data])
        else:
            docs.append(read_text(path))
    return docs


def run_check(
    answer_text: str,
    documents: list[Any],
    *,
    action: str | None = None,
    as_json: bool = False,
    strict: bool = False,
    lookups: bool = True,
    config: PolicyLike = None,
    notes: Sequence[str] = (),
    echo: Echo = echo,
) -> int:
    """Verify an answer and print the report (or JSON); the exit code of ``citeverify check``.

    Without ``config`` the answer is verified under the default policy with ``action`` and
    ``lookups`` applied (frozen settings: no pydantic, the fast path); with it (the typer path:
    the action and the lookups already in it) under ``config``.
    ``notes`` (the policy pack's) go to stderr after the report.

    Returns:
        0 allowed, 1 blocked (or unverified with ``strict``).

    Raises:
        CiteVerifyError: The answer, the documents or ``action`` are unusable.
    """
    # The engine is imported when a check runs: this module is imported for every command.
    from citeverify_core.engine.results import render_text  # noqa: PLC0415 - start-up time
    from citeverify_core.engine.verifier import CitationVerifier  # noqa: PLC0415 - start-up time
    from citeverify_core.policy.merge import with_check_options  # noqa: PLC0415 - start-up time
    from citeverify_core.policy.settings import PolicySettings  # noqa: PLC0415 - start-up time

    if config is None:
        config = with_check_options(PolicySettings(), action=action, lookups=lookups)
    result = CitationVerifier(config).verify(answer_text, documents)
    if as_json:
        import json  # noqa: PLC0415 - start-up time

        echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    else:
        echo(render_text(result))
    for note in notes:
        echo(f"Note: {note}", err=True)
    if result.verdict == "block" or (strict and not result.verified):
        return EXIT_BLOCKED
    return EXIT_ALLOWED


def run_demo(*, as_json: bool = False, echo: Echo = echo) -> int:
    """Verify the bundled RAG example offline and print it (``citeverify demo``).

    Returns:
        0: the demo ran (one of its answers is blocked on purpose).
    """
    import json  # noqa: PLC0415 - start-up time
    from importlib import resources  # noqa: PLC0415 - start-up time

    from citeverify_core.engine.results import render_text  # noqa: PLC0415 - start-up time
    from citeverify_core.engine.verifier import CitationVerifier  # noqa: PLC0415 - start-up time

    data = json.loads(
        resources.files("citeverify_core").joinpath("_demo/rag_example.json").read_text("utf-8")
    )
    docs = data["context_documents"]
    results = []
    if not as_json:
        echo(f"Question: {data['question']}\n")
        for i, doc in enumerate(docs, 1):  # from 1, as the answers' markers and the report
            echo(f"Context document #{i}: {doc['title']}")
    for item in data["answers"]:
        verifier = CitationVerifier({"output_action": {"unverified_action": item["policy"]}})
        result = verifier.verify(item["text"], docs)
        results.append({"label": item["label"], **result.to_dict()})
        if not as_json:
            rule = "=" * 100
            echo(f"\n{rule}\n{item['label']}  (unverified_action: {item['policy']})\n{rule}")
            echo(render_text(result))
    if as_json:
        echo(json.dumps(results, indent=2, ensure_ascii=False))
    return EXIT_ALLOWED


# --- the plain command line ----------------------------------------------------------------------

_FLAGS = {
    "--json": ("as_json", True),
    "--strict": ("strict", True),
    "--no-strict": ("strict", False),
    "--lookups": ("lookups", True),
    "--no-lookups": ("lookups", False),
}
_VALUES = {"--answer": "answer", "--context": "context", "--action": "action"}
_SHORT = {"-a": "answer", "-c": "context"}


def _parse(argv: Sequence[str]) -> dict[str, Any] | None:
    """The options of ``check`` as click would parse them, or ``None`` for anything else.

    Only forms whose meaning is certain are taken: an option given twice that is not
    ``--context`` (click keeps the last), a value that looks like an option, an empty value, a
    positional argument or ``--`` all go to typer, which says what it makes of them.
    """
    if not argv or argv[0] != "check":
        return None
    opts: dict[str, Any] = {"context": [], "as_json": False, "strict": False, "lookups": True}
    args = list(argv[1:])
    while args:
        arg = args.pop(0)
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if name in _FLAGS:
                if eq:  # click: "Option '--json' does not take a value."
                    return None
                key, flag = _FLAGS[name]
                opts[key] = flag
                continue
            if name not in _VALUES:  # --help, --policy, --request, a typo, "--"
                return None
            key = _VALUES[name]
        elif arg.startswith("-") and len(arg) > 1:
            if arg[:2] not in _SHORT:  # -p, -h, ...
                return None
            key, value = _SHORT[arg[:2]], arg[2:]  # click: -aFILE is -a FILE
            eq = "=" if value else ""
        else:  # a positional argument ("-" included): click says it is unexpected
            return None
        if not eq:
            if not args:  # click: "Option '--answer' requires an argument."
                return None
            value = args.pop(0)
        if not value or "\0" in value or (value.startswith("-") and value != "-"):
            return None
        if key == "context":
            opts["context"].append(value)
        elif key in opts:  # given twice
            return None
        else:
            opts[key] = value
    if "answer" not in opts:  # typer says what to give
        return None
    if opts.get("action") is not None and opts["action"] not in ACTIONS:
        return None  # the policy's own message, and before any file is read (as typer does)
    return opts


def _readable(path: Path) -> bool:
    """Whether typer's path check passes (it stats the path, and refuses an unreadable one)."""
    try:
        os.stat(path)
    except OSError:
        return True  # typer takes a path that does not exist: reading it fails with our message
    except Exception:  # e.g. a surrogate the file system cannot encode
        return False
    return os.access(path, os.R_OK)


def _streams_as_click_wants() -> bool:
    """Whether click.echo would write to the standard streams as they are (see :func:`echo`)."""
    import codecs  # noqa: PLC0415 - imported by the interpreter

    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None)
        if stream is None or not encoding or getattr(stream, "errors", None) is None:
            return False
        try:
            if codecs.lookup(encoding).name == "ascii":  # click re-wraps it as UTF-8
                return False
        except LookupError:
            return False
    return True


def fast_main(argv: Sequence[str], *, as_click: bool = True) -> int | None:
    """Run ``citeverify check`` for its plain form; ``None``: not that form, nothing done.

    ``argv`` is the command line without the program (``sys.argv[1:]``). ``None`` means the
    caller runs the typer application instead: nothing was printed, read (stdin included) or
    imported beyond this module. ``as_click=False`` (no typer installed) runs the plain form
    even where click would print differently (Windows consoles, ASCII streams).

    Returns:
        The exit code (0 allowed, 1 blocked or unverified with ``--strict``, 2 bad input), or
        ``None`` when the command line is not the plain form of ``check``.
    """
    if as_click and sys.platform.startswith("win"):  # click expands wildcards, wraps the console
        return None
    if as_click and any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ):
        return None  # a shell asks click for completions
    opts = _parse(argv)
    if opts is None or (as_click and not _streams_as_click_wants()):
        return None
    from pathlib import Path  # noqa: PLC0415 - start-up time

    # Typer's paths, as it builds them: Path("x/") is Path("x").
    answer, context = Path(opts["answer"]), [Path(value) for value in opts["context"]]
    if as_click and not all(_readable(path) for path in (answer, *context)):
        return None  # typer: "Invalid value for '--answer' / '-a': path '...' is not readable."
    return _guarded(
        lambda: run_check(
            read_text(answer),
            read_documents(context),
            action=opts.get("action"),
            as_json=opts["as_json"],
            strict=opts["strict"],
            lookups=opts["lookups"],
        )
    )


#: The extra that a command needs besides the cli extra (the typer application checks it again).
COMMAND_EXTRAS = {"serve": "server", "keys": "server", "refs": "references", "index": "references"}
#: Extras that bring the cli extra with them (pyproject.toml; tests/packaging/test_extras.py
#: keeps the two in step).
EXTRAS_WITH_CLI = frozenset({"server"})


def needed_extras(command: str) -> list[str]:
    """What to install, in one line, to run ``command`` when the cli extra is not installed.

    ``["cli"]``, or the command's own extra when it brings cli (``serve``: ``["server"]``), or
    both when its extra is missing too (``refs``: ``["cli", "references"]``): installing what
    the message names runs the command, instead of asking for the next extra once it is in.
    """
    extra = COMMAND_EXTRAS.get(command)
    if extra is None:
        return ["cli"]
    if extra in EXTRAS_WITH_CLI:
        return [extra]
    try:
        require_extra(extra, f"citeverify {command}")
    except MissingExtraError:
        return ["cli", extra]
    return ["cli"]


def plain_main(argv: Sequence[str]) -> int:
    """The command line when typer (the ``cli`` extra) is not installed.

    The plain ``check``, ``demo [--json]`` and ``--version`` run; anything else prints one line
    naming the extra and returns 2.
    """
    code = fast_main(argv, as_click=False)
    if code is not None:
        return code
    if list(argv) == ["--version"]:
        from citeverify_core import __version__  # noqa: PLC0415 - start-up time

        echo(f"citeverify {__version__}")
        return EXIT_ALLOWED
    if list(argv) in (["demo"], ["demo", "--json"]):
        return _guarded(lambda: run_demo(as_json=len(argv) == 2))
    command = " ".join(["citeverify", *argv[:1]])
    extras = needed_extras(argv[0] if argv else "")
    names = f"the {extras[0]} extra" if len(extras) == 1 else f"the {' and '.join(extras)} extras"
    message = (
        f"{command} needs {names}: {install_hint(','.join(extras))}. Without it: citeverify "
        "check --answer FILE --context FILE [--json] [--action ACTION] [--strict] "
        "[--no-lookups], citeverify demo [--json], citeverify --version"
    )
    echo(error_line(message), err=True)
    return EXIT_BAD_INPUT


def _guarded(run: Callable[[], int]) -> int:
    """``run()``'s exit code; an error is one line on stderr (2), as the typer path prints it."""
    reconfigure_output()
    try:
        try:
            return run()
        except KeyboardInterrupt:
            return 130  # typer: Exit(130), nothing printed
        except BrokenPipeError:
            raise  # below, as click does
        except Exception as exc:
            message = error_message(exc)
            if message is None:
                raise
            echo(error_line(message), err=True)
            return EXIT_BAD_INPUT
    except BrokenPipeError:
        # click: a closed pipe exits 1, and the flush at exit stays quiet.
        sys.stdout = cast("TextIO", _Pacified(sys.stdout))
        sys.stderr = cast("TextIO", _Pacified(sys.stderr))
        return 1


class _Pacified:
    """A stream whose flush ignores a closed pipe (click's PacifyFlushWrapper)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            return

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
