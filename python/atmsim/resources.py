"""The files that ship inside the package: example scenarios, the reproduced
experiments' scenarios, example sweeps and the ns-2 script of the validation dumbbell.

They live in ``python/atmsim/data/`` and are found through ``importlib.resources``,
so an installed atmsim (a wheel, ``pip install .``) finds them from any directory.
In a source checkout, the top-level ``scenarios/`` is a symbolic link to
``python/atmsim/data/scenarios``: the package data is the single copy, and the
README's ``atmsim run scenarios/ubr_epd.toml`` keeps working from the checkout.

``atmsim run NAME`` and ``atmsim validate NAME`` also take a shipped example by
name (``ubr_epd`` or ``ubr_epd.toml``) when no such file exists
(``resolve_scenario``); ``atmsim examples`` lists them and copies one out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

EXAMPLE_SUFFIX = ".toml"


def data_dir() -> Path:
    """The package's data directory (``atmsim/data``) as a filesystem path.

    atmsim runs from a regular installation (a directory, not a zip archive), where
    ``importlib.resources`` gives a real path. (Imported here: a command given an
    existing file never needs it, and its import counts in ``atmsim validate``.)"""
    from importlib import resources

    return Path(str(resources.files("atmsim") / "data"))


def scenario_dir() -> Path:
    """The example scenarios (every ``*.toml`` directly in it)."""
    return data_dir() / "scenarios"


def reproduce_dir() -> Path:
    """The scenarios of the reproduced experiments (``atmsim reproduce``)."""
    return scenario_dir() / "reproduce"


def sweep_dir() -> Path:
    """The example sweep specifications (``atmsim sweep``)."""
    return scenario_dir() / "sweeps"


def ns2_script() -> Path:
    """The ns-2 script of the validation dumbbell (docs/validation.md)."""
    return data_dir() / "ns2" / "dumbbell.tcl"


def examples() -> dict[str, Path]:
    """Shipped example scenarios by name (file name without ``.toml``), sorted."""
    return {path.stem: path for path in sorted(scenario_dir().glob(f"*{EXAMPLE_SUFFIX}"))}


def sweeps() -> dict[str, Path]:
    """Shipped example sweeps by name, sorted."""
    return {path.stem: path for path in sorted(sweep_dir().glob(f"*{EXAMPLE_SUFFIX}"))}


def _stem(name: str) -> Optional[str]:
    stem = name[: -len(EXAMPLE_SUFFIX)] if name.endswith(EXAMPLE_SUFFIX) else name
    if not stem or "/" in stem or "\\" in stem:
        return None
    return stem


def shipped_example(name: str) -> Optional[Path]:
    """The shipped example scenario called ``name`` (with or without ``.toml``), or None."""
    stem = _stem(name)
    return None if stem is None else examples().get(stem)


def shipped_sweep(name: str) -> Optional[Path]:
    """The shipped example sweep called ``name`` (with or without ``.toml``), or None."""
    stem = _stem(name)
    return None if stem is None else sweeps().get(stem)


def shipped(name: str) -> Optional[Path]:
    """The shipped example or sweep called ``name``, or None."""
    return shipped_example(name) or shipped_sweep(name)


def resolve_scenario(path: str | Path) -> Path:
    """``path`` itself when it exists, else the shipped example of that name:
    ``atmsim run ubr_epd`` and ``atmsim.run("ubr_epd")`` work from any directory, and
    so does the checkout's relative path ``scenarios/ubr_epd.toml`` that the README
    shows. A path that is none of these stays as given, so that loading it reports
    "no such file"."""
    given = Path(path)
    if given.exists():
        return given
    name = str(path)
    if not given.is_absolute() and len(given.parts) == 2 and given.parts[0] == "scenarios":
        name = given.parts[1]
    found = shipped_example(name)
    return found if found is not None else given


def description(path: Path, lines: int = 1) -> str:
    """The first sentence of a scenario file's leading comment (its ``# name: ...``
    line without the name), for ``atmsim examples``."""
    text = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        body = line.lstrip("#").strip()
        if not body:
            break
        text.append(body)
    joined = " ".join(text)
    head, sep, rest = joined.partition(": ")
    if sep and head == path.stem:
        joined = rest
    for end in (". ", ": "):
        if end in joined:
            joined = joined.split(end, 1)[0] + end.strip()
            break
    return joined


def copy_example(name: str, to: Path) -> Path:
    """Copy the shipped example or sweep ``name`` into the directory ``to`` (created),
    or to the file ``to`` when it ends in ``.toml``; the path written. A file that
    exists is not overwritten (FileExistsError)."""
    source = shipped(name)
    if source is None:
        raise KeyError(name)
    target = to if to.suffix == EXAMPLE_SUFFIX else to / source.name
    if target.exists():
        raise FileExistsError(str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    import shutil

    shutil.copyfile(source, target)
    return target
