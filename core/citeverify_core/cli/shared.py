"""What every command shares: one line on stderr for any failure, and reading input files."""

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, ParamSpec, TypeVar

import typer

from citeverify_core.cli.fast import (
    EXIT_BAD_INPUT,
    UsageError,
    error_line,
    error_message,
    read_documents,
    read_json,
    read_text,
    reconfigure_output,
)

if TYPE_CHECKING:
    pass

__all__ = []


def _fail(message: str) -> NoReturn:
    typer.echo(error_line(message), err=True)  # one line, whatever the message holds
    raise typer.Exit(EXIT_BAD_INPUT)


_P = ParamSpec("_P")
_R = TypeVar("_R")


# Typer's own exceptions pass through untouched. Typer 0.2x vendors click (`typer._click`) and
# no longer installs it; older versions use click itself. Take ClickException from whichever
# click typer uses, never `import click` (a fresh install may not have it).
_CLICK_EXCEPTION: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"
)


def _one_line_errors(command: Callable[_P, _R]) -> Callable[_P, _R]:
    """Every failure of a command is one line on stderr and exit 2, never a traceback.

    Library errors carry their own message; anything else is a bug of ours, named as such (set
    ``CITEVERIFY_DEBUG=1`` to see the traceback). Output that cannot be encoded (a lone
    surrogate in an answer) is escaped instead of crashing the print.
    """

    @functools.wraps(command)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        reconfigure_output()
        try:
            return command(*args, **kwargs)
        except (typer.Exit, typer.Abort, _CLICK_EXCEPTION, BrokenPipeError):
            raise  # a closed pipe: click exits 1 quietly
        except Exception as exc:  # the message is citeverify_core.cli.fast's, as on the fast path
            message = error_message(exc)
            if message is None:  # CITEVERIFY_DEBUG: the traceback
                raise
            _fail(message)

    return run


def _read_text(path: Path) -> str:
    try:
        return read_text(path)
    except UsageError as exc:
        _fail(str(exc))


def _read_json(path: Path) -> Any:
    try:
        return read_json(path)
    except UsageError as exc:
        _fail(str(exc))


def _read_documents(paths: list[Path]) -> list[Any]:
    """A ``.json`` file holds one document or a list of them; any other file is one document."""
    try:
        return read_documents(paths)
    except UsageError as exc:
        _fail(str(exc))
