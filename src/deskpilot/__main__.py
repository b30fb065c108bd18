"""``python -m deskpilot``: the command line."""

from deskpilot.cli import main

main()
