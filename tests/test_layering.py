"""The package's layering: which module may import which, the one copy of each shared
definition, a cheap ``import atmsim``."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, cli_env

PACKAGE = REPO / "python" / "atmsim"


def imported_modules(path: Path) -> set[str]:
    """The atmsim modules a file imports (anywhere in it), as dotted names."""
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if path.name == "__init__.py":
        package += ".__init__"
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: -node.level]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {name for name in names if name == "atmsim" or name.startswith("atmsim.")}


def modules() -> dict[str, set[str]]:
    """Every module of the package (path relative to python/atmsim) -> what it imports."""
    return {
        str(path.relative_to(PACKAGE)): imported_modules(path)
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def test_only_the_entry_points_import_the_cli() -> None:
    importers = {name for name, imports in modules().items() if "atmsim.cli" in imports}
    assert importers == {"_entry.py"}


def test_user_facing_modules_do_not_import_the_validation_tooling() -> None:
    """validation/ checks atmsim; only the CLI's bench command reaches into it."""
    for name, imports in modules().items():
        if name.startswith("validation/") or name == "cli.py":
            continue
        assert not any(i.startswith("atmsim.validation") for i in imports), name


def test_one_definition_of_each_shared_thing() -> None:
    """One Tolerance, one Jain index, one CELL_BITS, one ledger check."""
    definitions: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            else:
                continue
            for name in names:
                definitions.setdefault(name, []).append(str(path.relative_to(PACKAGE)))
    assert definitions["Tolerance"] == ["compare.py"]
    assert definitions["jain"] == ["compare.py"]
    assert "jain_index" not in definitions
    assert definitions["CELL_BITS"] == ["units.py"]
    assert definitions["ledger_lines"] == ["results.py"]
    assert definitions["print_result"] == ["results.py"]


def test_import_atmsim_is_cheap() -> None:
    """``import atmsim`` (and the command's entry module) loads none of the heavy
    dependencies, so that a Ctrl-C during the command's start-up can be caught."""
    code = (
        "import sys, atmsim, atmsim._entry\n"
        "heavy = {'pandas', 'numpy', 'pyarrow', 'typer', 'rich', 'pydantic', 'matplotlib'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_public_names_load_on_first_use() -> None:
    import atmsim

    assert atmsim.run.__module__ == "atmsim.api"
    assert atmsim.Result.__module__ == "atmsim.api"
    assert atmsim.ScenarioError.__module__ == "atmsim.errors"
    assert atmsim.load_scenario.__module__.startswith("atmsim.scenario")
    assert isinstance(atmsim.__version__, str)
    assert set(atmsim.__all__) <= set(dir(atmsim))
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        atmsim.nonsense  # noqa: B018
