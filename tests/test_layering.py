"""The package's layering and its typed interface: which module may import which, the
one copy of each shared definition, a cheap ``import atmsim``, and the stub of the
binding (python/atmsim/_core.pyi) against the built core."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, cli_env, needs_core

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


def test_developer_tooling_is_outside_the_package() -> None:
    """The fuzzer, the fingerprints and the ns-2 comparison are in devtools/ (not in the
    wheel), and the package never imports from there."""
    for tool in ("fuzz.py", "fingerprints.py"):
        assert not (PACKAGE / "validation" / tool).exists(), tool
        assert (REPO / "devtools" / tool).is_file(), tool
    assert (REPO / "devtools" / "ns2_compare.py").is_file()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            assert not any(n.split(".")[0] == "devtools" for n in names), path


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
        "heavy = {'pandas', 'numpy', 'pyarrow', 'argparse', 'rich', 'pydantic', 'matplotlib'}\n"
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


# --- the typed interface ---------------------------------------------------------------


def test_package_is_typed() -> None:
    assert (PACKAGE / "py.typed").is_file()
    assert (PACKAGE / "_core.pyi").is_file()


def stub() -> ast.Module:
    return ast.parse((PACKAGE / "_core.pyi").read_text(encoding="utf-8"))


def parameters(function: ast.FunctionDef) -> list[str]:
    return [arg.arg for arg in function.args.args if arg.arg != "self"]


@needs_core
def test_stub_describes_the_binding() -> None:
    from atmsim import _core

    module = stub()
    functions = {n.name: n for n in module.body if isinstance(n, ast.FunctionDef)}
    classes = {n.name: n for n in module.body if isinstance(n, ast.ClassDef)}
    public = {name for name in dir(_core) if not name.startswith("_")}
    assert public == set(functions) | set(classes)
    for name, function in functions.items():
        assert parameters(function) == list(inspect.signature(getattr(_core, name)).parameters)
    for name, cls in classes.items():
        real = getattr(_core, name)
        members = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
        real_members = {m for m in vars(real) if not m.startswith("_")}
        assert real_members == set(members) - {"__init__"}, name
        init = inspect.signature(real)
        assert parameters(members["__init__"]) == list(init.parameters)
        for member, node in members.items():
            if member == "__init__":
                continue
            is_property = any(
                isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list
            )
            kind = type(vars(real)[member]).__name__
            assert is_property == (kind == "getset_descriptor"), (member, kind)
            if not is_property:
                real_parameters = list(inspect.signature(getattr(real, member)).parameters)
                assert ["self", *parameters(node)] == real_parameters, member


def test_pyproject_ships_the_stub_with_the_package() -> None:
    """maturin packs every file of python-source into the wheel; the stub and py.typed
    sit in the package there, and the console script starts at atmsim._entry."""
    from atmsim.scenario import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["tool"]["maturin"]["python-source"] == "python"
    assert project["tool"]["maturin"]["module-name"] == "atmsim._core"
    assert project["project"]["scripts"]["atmsim"] == "atmsim._entry:main"
