"""How a failure is told to a person: one line, never a traceback.

Bad input has its own one-line errors (``ScenarioError``, the CLI's flag
errors). What remains is a bug: an exception nobody expected, in Python or in
the core (the binding turns a Rust panic into a RuntimeError whose message
begins "internal error:"). ``internal_error_message`` words it the same way
wherever it is caught: ``atmsim`` commands and each ``atmsim reproduce``
experiment.
"""

from __future__ import annotations

INTERNAL_PREFIX = "internal error:"
"""How the core words a bug it caught; the line says it once."""

REPORT_HINT = "please report it; run with --debug for the traceback"


def internal_error_message(error: BaseException) -> str:
    """``internal error: <type>: <message> (please report it; ...)`` on one line,
    without a second "internal error:" when the message already starts with it."""
    message = " ".join(str(error).split())
    if message.startswith(INTERNAL_PREFIX):
        message = message[len(INTERNAL_PREFIX) :].strip()
    what = f"{type(error).__name__}: {message}" if message else type(error).__name__
    return f"{INTERNAL_PREFIX} {what} ({REPORT_HINT})"


def os_error_message(error: OSError) -> str:
    """``PATH: reason`` for an OSError that names a file (``[Errno 13]`` left out),
    else its text, on one line."""
    if error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return " ".join(str(error).split())
