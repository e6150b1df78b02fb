"""``python -m citeverify``: the command line."""

from citeverify.cli import main

main()
