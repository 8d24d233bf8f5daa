"""``python -m atmsim``: the same as the ``atmsim`` command."""

from ._entry import main

main()
