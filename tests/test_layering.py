"""The package's layering and its typed interface: which module may import which, no
import circle, imports at the top of each module, the heavy libraries only through
``atmsim._lazy``, the one copy of each shared definition, a cheap ``import atmsim``,
and the stub of the binding (python/atmsim/_core.pyi) against the built core."""

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


# --- where and how modules import each other ---------------------------------------------

DEFERRED_IMPORTS = {
    "_entry.py": "the command's entry point loads the CLI inside main(), once its Ctrl-C "
    "handler is in place: an interrupt during the start-up is then answered quietly",
    "cli.py": "each command loads its implementation when it runs: `atmsim validate` "
    "would otherwise load the run, sweep, reproduce, report and validation modules too",
    "scenario/load.py": "the named templates are loaded for a scenario with a [template] "
    "table only: defining their models is a tenth of every command's start-up",
}
"""The modules that may import atmsim modules inside functions, and why. Their deferred
imports still count in the import graph (``test_no_import_circle``)."""

HEAVY = {"argparse", "matplotlib", "numpy", "pandas", "pyarrow", "rich", "tomli_w"}
"""Libraries every module takes from atmsim._lazy (loaded on first use)."""

PYDANTIC = {"pydantic", "pydantic_core"}
"""Imported directly only where the scenario models are defined and their errors read:
defining a pydantic class imports pydantic anyway."""


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    relative = Path(*name.split(".")[1:]) if "." in name else Path()
    return (PACKAGE / relative).with_suffix(".py").is_file() or (
        PACKAGE / relative / "__init__.py"
    ).is_file()


def import_nodes(tree: ast.Module):
    """(node, inside a function) for every import statement outside ``if TYPE_CHECKING``."""

    def walk(node: ast.AST, in_function: bool):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                yield from walk(ast.Module(body=child.orelse, type_ignores=[]), in_function)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, in_function
            nested = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            yield from walk(child, in_function or nested)

    yield from walk(tree, False)


def atmsim_targets(path: Path, node: ast.stmt) -> set[str]:
    """The atmsim modules an import statement loads: ``from .x import y`` loads x.y when
    y is a module, else x."""
    if isinstance(node, ast.Import):
        names = {alias.name for alias in node.names}
    else:
        if node.level:
            package = module_name(path).split(".")
            if path.name != "__init__.py":
                package = package[:-1]
            base = package[: len(package) - node.level + 1]
            module = ".".join([*base, node.module] if node.module else base)
        else:
            module = node.module or ""
        names = set()
        for alias in node.names:
            sub = f"{module}.{alias.name}"
            names.add(sub if is_module(sub) else module)
    return {name for name in names if name.split(".")[0] == "atmsim" and is_module(name)}


def import_graph() -> dict[str, set[str]]:
    """Module -> the atmsim modules it imports (top-level and deferred, not the imports
    for type checkers). Importing ``a.b`` from outside package ``a`` runs ``a`` first,
    so that counts as importing ``a`` too."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        edges = graph.setdefault(name, set())
        for node, _ in import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            for target in atmsim_targets(path, node):
                parts = target.split(".")
                for k in range(2, len(parts) + 1):
                    parent = ".".join(parts[:k])
                    if parent == target or not name.startswith(parent + "."):
                        edges.add(parent)
        edges.discard(name)
    return graph


def test_atmsim_modules_import_each_other_at_the_top() -> None:
    """No import of an atmsim module inside a function, but in DEFERRED_IMPORTS: an
    import there hides an import circle until the function runs."""
    deferred: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node, in_function in import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            if in_function and atmsim_targets(path, node):
                where = str(path.relative_to(PACKAGE))
                deferred.setdefault(where, []).append(f"line {node.lineno}")
    assert set(deferred) == set(DEFERRED_IMPORTS), deferred


def test_no_import_circle() -> None:
    """The atmsim modules' imports form no circle: each module can be read knowing only
    those it imports."""
    graph = import_graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph.get(name, ())):
            if state.get(target) == 1:
                circle = path[path.index(target) :] + [target]
                raise AssertionError("import circle: " + " -> ".join(circle))
            if target not in state:
                visit(target, [*path, target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def test_the_graph_sees_deferred_and_package_imports() -> None:
    graph = import_graph()
    assert "atmsim.cli" in graph["atmsim._entry"]  # inside main()
    assert "atmsim.reproduce.report" in graph["atmsim.cli"]  # inside a command
    assert "atmsim.reproduce" in graph["atmsim.html_report"]
    assert "atmsim.reproduce.seed000" in graph["atmsim.reproduce.catalog"]
    assert "atmsim.reproduce" not in graph["atmsim.reproduce.catalog"]


def test_heavy_libraries_come_from_the_lazy_module() -> None:
    for path in sorted(PACKAGE.rglob("*.py")):
        where = str(path.relative_to(PACKAGE))
        if where == "_lazy.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                roots = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level:
                roots = {(node.module or "").split(".")[0]}
            else:
                continue
            assert not roots & HEAVY, f"{where}:{node.lineno}: use atmsim._lazy"
            if roots & PYDANTIC:
                assert where.startswith("scenario/") or where == "errors.py", where


def test_a_lazy_module_answers_as_the_module_once_used() -> None:
    import importlib
    import xml

    from atmsim._lazy import LazyModule

    json = LazyModule("json")
    assert json.dumps([1]) == "[1]"
    assert json.loads is importlib.import_module("json").loads
    assert "JSONDecodeError" in dir(json)
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        json.nonsense  # noqa: B018
    assert not hasattr(json, "nonsense")
    assert LazyModule("xml").dom.__name__ == "xml.dom"  # a submodule, imported when asked
    assert xml.dom is importlib.import_module("xml.dom")


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
        "import sys, atmsim, atmsim._entry, atmsim._lazy\n"
        "heavy = {'pandas', 'numpy', 'pyarrow', 'argparse', 'rich', 'pydantic', 'matplotlib'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_modules_load_their_libraries_on_first_use() -> None:
    """Importing the run, report, plot, sweep and reproduce modules loads pandas,
    matplotlib and rich only when they are used (atmsim._lazy); the reproduce registry
    computes with numpy as it loads."""
    code = (
        "import sys\n"
        "import atmsim.api, atmsim.cli, atmsim.fairness, atmsim.plots, atmsim.results\n"
        "import atmsim.sweeps, atmsim.tables\n"
        "heavy = {'pandas', 'numpy', 'pyarrow', 'rich', 'matplotlib'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
        "from atmsim._lazy import pandas\n"
        "print(pandas.DataFrame({'a': [1]}).shape, 'pandas' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "(1, 1) True"]


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
