"""``python -m atmsim``: the same as the ``atmsim`` command."""

from .cli import main

main()
