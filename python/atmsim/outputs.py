"""Where atmsim writes: output directories (its own, marked as such), output files, and
writes that never leave a half-written file or overwrite what is not atmsim's.

- A path given for output (``--out``, ``--json``) is at most ``MAX_PATH_CHARS``
  characters and ``MAX_PATH_PARTS`` components long, has no ``..`` component, and is
  not itself a symbolic link: what is written lands inside what was named. A symbolic
  link among its parent directories (a home directory on another disk) is followed, as
  other tools follow it: the path as named is the user's choice.
- An output directory is new (created with its parents), empty, or one atmsim wrote:
  every output directory atmsim creates or fills holds ``MARKER``, a small JSON file
  (``{"kind": "run", "version": "..."}``) written before anything else. A non-empty
  directory without it, or marked for another kind (a sweep's output given to
  ``atmsim run``), is refused: a folder that merely holds a ``summary.json`` may be
  a person's own.
- An output file is written to a temporary file in its directory, then renamed over
  the target (``write_file``): the target is new or an existing regular file, never a
  directory, a device or a symbolic link (renaming over ``/dev/null`` would replace
  the device node).
- A write that fails (a full disk: ``ENOSPC``) is an OSError naming the file
  (``named_os_error``), which the CLI prints as one line.

Every refusal is an ``OutDirError`` whose text is one line, ``PATH: why``; the CLI
puts the flag in front and exits 2.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Union

from .binding import package_version
from .errors import one_line

MARKER = ".atmsim"
"""The file that marks a directory as atmsim's output (JSON: kind, version)."""

KINDS = ("run", "sweep", "reproduce", "validate-model")
"""The kinds of output directory: what wrote it, and what may write into it again."""

MAX_MARKER_BYTES = 4096
MAX_PATH_CHARS = 4096
"""An output path is at most this long (PATH_MAX on Linux)."""
MAX_PATH_PARTS = 64
"""An output path has at most this many components (a path 1000 folders deep made
Python's recursive ``mkdir`` fail with RecursionError)."""

SHOWN_PATH_CHARS = 100
"""A path longer than this is cut in messages (with "...")."""

PathLike = Union[str, os.PathLike]


class OutDirError(ValueError):
    """A path that may not receive atmsim's output. ``str()`` is one line, ``PATH: why``;
    the CLI puts the flag in front (``--out PATH: why``)."""

    def __init__(self, path: PathLike, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{show_path(path)}: {reason}")


def show_path(path: PathLike) -> str:
    """``path`` for a message: on one line, cut to SHOWN_PATH_CHARS characters."""
    text = one_line(os.fspath(path))
    if len(text) > SHOWN_PATH_CHARS:
        return text[: SHOWN_PATH_CHARS - 3] + "..."
    return text


def _a(kind: str) -> str:
    return f"an atmsim {kind} directory"


def rule_text(kind: str) -> str:
    return (
        f"expected a new or empty directory, or {_a(kind)} "
        f"(atmsim marks the directories it writes with a {MARKER} file)"
    )


def check_path(path: PathLike) -> Path:
    """``path`` as a Path if it may name an output: not too long or deep, no ``..``
    component, no NUL character; OutDirError otherwise."""
    text = os.fspath(path)
    if not text:
        raise OutDirError(path, "an empty path")
    if "\0" in text:
        raise OutDirError(path, "a path with a NUL character")
    if len(text) > MAX_PATH_CHARS:
        raise OutDirError(path, f"a path of {len(text):,} characters; at most {MAX_PATH_CHARS}")
    parts = Path(text).parts
    if len(parts) > MAX_PATH_PARTS:
        raise OutDirError(path, f"a path of {len(parts):,} components; at most {MAX_PATH_PARTS}")
    if ".." in parts:
        raise OutDirError(path, "has a '..' component; name the place without it")
    return Path(text)


def _lstat(path: Path) -> os.stat_result | None:
    """The path's own status (a link's, not its target's), None when it does not exist."""
    try:
        return path.lstat()
    except (FileNotFoundError, NotADirectoryError):  # a parent says which (_check_parents)
        return None
    except OSError as error:  # a component that is a file, a name too long, no access
        raise OutDirError(path, f"cannot be used: {error.strerror}") from None


def _check_parents(path: Path) -> None:
    """The nearest existing parent of a new path must be a directory."""
    for parent in path.parents:
        found = _lstat(parent)
        if found is not None:
            if not parent.is_dir():  # a file, or a link to none or to a file
                raise OutDirError(path, f"{show_path(parent)} is a file, expected a directory")
            return


def read_marker(directory: Path) -> str | None:
    """The kind in ``directory``'s marker, or None when it has no marker atmsim wrote
    (missing, not a regular file, too large, not its JSON)."""
    path = directory / MARKER
    try:
        found = path.lstat()
        if not stat.S_ISREG(found.st_mode) or found.st_size > MAX_MARKER_BYTES:
            return None
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    kind = data.get("kind") if isinstance(data, dict) else None
    return kind if kind in KINDS else None


def check_out_dir(path: PathLike, kind: str = "run") -> Path:
    """``path`` if ``kind``'s files may be written into it (module docstring), else
    OutDirError. Nothing is created."""
    path = check_path(path)
    found = _lstat(path)
    if found is None:
        _check_parents(path)
        return path
    if stat.S_ISLNK(found.st_mode):
        if not path.exists():
            raise OutDirError(path, f"is a broken symbolic link; {rule_text(kind)}")
        raise OutDirError(path, "is a symbolic link; name the directory it points to")
    if stat.S_ISREG(found.st_mode):
        raise OutDirError(path, "is a file, expected a directory")
    if not stat.S_ISDIR(found.st_mode):
        raise OutDirError(path, "is not a directory (a device, FIFO or socket)")
    try:
        with os.scandir(path) as entries:
            empty = next(entries, None) is None
    except OSError as error:
        raise OutDirError(path, f"cannot be read: {error.strerror}") from None
    if empty:
        return path
    marked = read_marker(path)
    if marked == kind:
        return path
    if marked is not None:
        raise OutDirError(path, f"is {_a(marked)}, not {_a(kind)}; {rule_text(kind)}")
    raise OutDirError(path, f"not empty and not {_a(kind)}; {rule_text(kind)}")


def prepare_out_dir(path: PathLike, kind: str = "run") -> Path:
    """``check_out_dir``, then create the directory (with its parents) and write its
    marker: a directory that cannot be written is found before any work is done."""
    path = check_out_dir(path, kind)
    try:
        path.mkdir(parents=True, exist_ok=True)
        if read_marker(path) != kind:
            write_file(path / MARKER, marker_text(kind))
    except OutDirError:
        raise
    except OSError as error:
        raise OutDirError(path, f"cannot be written: {error.strerror or error}") from None
    return path


def marker_text(kind: str) -> str:
    """The marker of a ``kind`` directory: ``{"kind": ..., "version": ...}``."""
    return json.dumps({"kind": kind, "version": package_version()}) + "\n"


def check_out_file(path: PathLike) -> Path:
    """``path`` if a file may be written there: new (its parent a directory or to be
    made) or an existing regular file; OutDirError otherwise."""
    path = check_path(path)
    found = _lstat(path)
    if found is None:
        _check_parents(path)
        return path
    if stat.S_ISLNK(found.st_mode):
        raise OutDirError(path, "is a symbolic link; name a regular file")
    if stat.S_ISDIR(found.st_mode):
        raise OutDirError(path, "is a directory; give a file name")
    if not stat.S_ISREG(found.st_mode):
        raise OutDirError(path, "is not a regular file (a device, FIFO or socket)")
    return path


def named_os_error(error: OSError, path: PathLike) -> OSError:
    """``error`` naming ``path`` when it names no file (a failed write, say ENOSPC, does
    not), so that the one-line message says which file could not be written."""
    if error.filename is not None and error.strerror:
        return error
    reason = error.strerror or " ".join(str(error).split()) or type(error).__name__
    return OSError(error.errno, reason, os.fspath(path))


@contextlib.contextmanager
def naming(path: PathLike) -> Iterator[None]:
    """Turn an OSError raised inside into one naming ``path`` (``named_os_error``)."""
    try:
        yield
    except OSError as error:
        raise named_os_error(error, path) from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def replacing(path: PathLike) -> Iterator[Path]:
    """A temporary path in ``path``'s directory to write the new file to; renamed over
    ``path`` when the block ends without an error, removed otherwise. ``path`` must be
    new or a regular file (checked again just before the rename)."""
    path = Path(path)
    with naming(path):
        handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(handle)
        temporary = Path(name)
        try:
            # mkstemp makes the file private (0600): give it the usual permissions.
            os.chmod(temporary, 0o666 & ~_umask())
            yield temporary
            found = _lstat(path)
            if found is not None and not stat.S_ISREG(found.st_mode):
                raise OutDirError(path, "is no longer a regular file; not replaced")
            os.replace(temporary, path)
        finally:
            with contextlib.suppress(OSError):
                temporary.unlink()


def write_file(path: PathLike, data: str | bytes) -> Path:
    """Write ``data`` (text is UTF-8) to ``path`` through a temporary file renamed over it
    (``replacing``): readers see the old file or the new one, never half of it."""
    path = Path(path)
    with replacing(path) as temporary:
        with naming(path):
            with open(temporary, "wb") as handle:
                handle.write(data.encode("utf-8") if isinstance(data, str) else data)
    return path
