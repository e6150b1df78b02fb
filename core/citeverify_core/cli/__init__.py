"""The ``citeverify`` command line.

:func:`main` is the script's entry point. A plain ``citeverify check`` runs on the standard
library and the engine alone (:mod:`citeverify_core.cli.fast`); everything else goes to the typer
application in :mod:`citeverify_core.cli.app`, imported only then (typer and rich cost about
100 ms of start-up). Without typer (the ``cli`` extra), ``check``, ``demo`` and ``--version`` still
run and anything else names the extra (:func:`citeverify_core.cli.fast.plain_main`).
"""

from __future__ import annotations

import sys

from citeverify_core.cli.fast import fast_main, plain_main
from citeverify_core.errors import MissingExtraError, require_extra

__all__ = ["main"]


def main() -> None:
    """Entry point of the ``citeverify`` script: the fast path, else the typer application."""
    code = fast_main(sys.argv[1:])
    if code is None:
        try:
            require_extra("cli", "citeverify")
        except MissingExtraError:
            sys.exit(plain_main(sys.argv[1:]))
        # Deferred for start-up time: typer, click and rich only when the fast path declines.
        from citeverify_core.cli.app import main as typer_main  # noqa: PLC0415 - start-up time

        typer_main()
        return
    sys.exit(code)
