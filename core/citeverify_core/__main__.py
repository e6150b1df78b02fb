"""``python -m citeverify_core``: the command line, as the ``citeverify`` script starts it."""

from citeverify_core.cli import main

main()
