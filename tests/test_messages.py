"""Error messages: values spelled as TOML, one printable line, the --set in effect."""

from __future__ import annotations

import datetime
import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from atmsim import cli
from atmsim.errors import show_value

from conftest import TINY, write


def one_line_error(path: Path, *sets: str) -> str:
    """The one line ``atmsim validate`` prints for a bad scenario (exit 2)."""
    argv = ["validate", str(path)]
    for item in sets:
        argv += ["--set", item]
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        with pytest.raises(SystemExit) as info:
            cli.main(argv)
    assert info.value.code == 2, err.getvalue()
    lines = err.getvalue().splitlines()
    assert len(lines) == 1, err.getvalue()
    assert lines[0].startswith(f"error: {path}: ")
    return lines[0]


@pytest.mark.parametrize(
    ("value", "spelled"),
    [
        (True, "true"),
        ({"kind": "atm"}, '{ kind = "atm" }'),
        (["a", "a"], '["a", "a"]'),
        (1e30, "1e+30"),
        (float("nan"), "nan"),
        (float("-inf"), "-inf"),
        ({"a b": [1, {}]}, '{ "a b" = [1, {}] }'),
        ('say "hi"\n', '"say \\"hi\\"\\n"'),
        ("\x7f", '"\\u007F"'),
        (datetime.date(1979, 5, 27), "1979-05-27"),
        (2**300, "a 301-bit integer"),
        ("x" * 100, '"' + "x" * 56 + "..."),
    ],
)
def test_values_are_spelled_as_toml(value: object, spelled: str) -> None:
    assert show_value(value) == spelled


@pytest.mark.parametrize(
    ("replace", "shown", "words"),
    [
        ("buffer = 100", "buffer = true", "got true"),
        ("buffer = 100", 'buffer = { kind = "atm" }', 'got { kind = "atm" }'),
        ("buffer = 100", "buffer = 100\npolicy = [1, 2]", "got [1, 2]"),
        ('kind = "cbr"', "kind = 1e30", "got 1e+30"),
    ],
)
def test_errors_show_toml_values(tmp_path: Path, replace: str, shown: str, words: str) -> None:
    line = one_line_error(write(tmp_path, TINY.replace(replace, shown)))
    assert "True" not in line and "{'" not in line and "['" not in line, line
    assert words in line, line


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (TINY.replace("buffer = 100", "buffer = " + "[" * 3000 + "]" * 3000), "nested too deeply"),
        (TINY.replace("buffer = 100", "buffer = " + "9" * 5000), "more than 4300 digits"),
        (
            TINY.replace("[links.ab]", '[links."a\\u2028b"]'),
            ': links."a\\u2028b": names may only use',
        ),
        (TINY.replace("[links.ab]", '[links."a.b"]'), ': links."a.b": names may only use'),
        (TINY.replace("[links.ab]", '[links."ab\\n"]'), ': links."ab\\n": names may only use'),
        (TINY.replace("rate = ", '"" = 1\nrate = ', 1), ': links.ab."": unknown key; allowed:'),
        (TINY.replace("[nodes]", '[nodes."a b"]\n[nodes]'), ': nodes."a b": names may only use'),
    ],
)
def test_files_python_cannot_read_as_such(tmp_path: Path, text: str, words: str) -> None:
    line = one_line_error(write(tmp_path, text))
    assert words in line, line


def test_set_twice_names_the_set_in_effect(tmp_path: Path) -> None:
    path = write(tmp_path, TINY)
    line = one_line_error(path, "links.ab.buffer=5", "links.ab.buffer=-1")
    assert line.endswith("got -1 (from --set links.ab.buffer=-1)"), line


def test_a_long_list_of_names_is_cut_in_an_error() -> None:
    """Regression (scenario fuzzer): an unknown flow beside a template that made 500,000
    flows gave a 7 MB "one-line" error listing them all."""
    from atmsim.scenario.common import QUOTED_NAMES, _quoted

    assert _quoted([]) == "(none)"
    assert _quoted(["a", "b"]) == "a, b"
    names = [f"f{k}" for k in range(500_000)]
    text = _quoted(names)
    assert text.startswith("f0, f1, ") and text.endswith(f"... and {500_000 - QUOTED_NAMES:,} more")
    assert len(text) < 300
