"""``python -m citeverify``: the command line, started as the ``citeverify`` script starts it."""

from citeverify._check import main

main()
