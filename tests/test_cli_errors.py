"""Bad input to the CLI: exit code 2, one line on stderr naming the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import TINY, run_cli


def assert_one_line_error(result, *words: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    for word in words:
        assert word in lines[0], (word, lines[0])


@pytest.mark.parametrize(
    ("name", "text", "key"),
    [
        ("unknown_key", TINY.replace('length = "10 km"', "colour = 1"), "links.ab.colour"),
        ("wrong_unit", TINY.replace('"10 Mbps"', '"10 furlongs"'), "sources.s.rate"),
        ("negative_rate", TINY.replace('"10 Mbps"', '"-10 Mbps"'), "sources.s.rate"),
        ("missing_hop", TINY.replace('path = ["a", "b"]', 'path = ["b", "a"]'), "sources.s.path"),
        ("missing_node", TINY.replace('path = ["a", "b"]', 'path = ["a", "x"]'), "sources.s.path"),
        ("buffer_minus_one", TINY.replace("buffer = 100", "buffer = -1"), "links.ab.buffer"),
        ("buffer_zero", TINY.replace("buffer = 100", "buffer = 0"), "links.ab.buffer"),
        ("no_duration", TINY.replace('duration = "10 ms"', "seed = 2"), "run.duration"),
    ],
)
@pytest.mark.parametrize("command", ["validate", "run"])
def test_bad_scenario(tmp_path: Path, command: str, name: str, text: str, key: str) -> None:
    path = tmp_path / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    result = run_cli(command, str(path), cwd=tmp_path)
    assert_one_line_error(result, f"{name}.toml", key)
    assert not (tmp_path / "runs").exists()  # nothing is written for a bad scenario


def test_bad_set_key(tmp_path: Path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY, encoding="utf-8")
    result = run_cli("validate", str(path), "--set", "links.nope.buffer=5")
    assert_one_line_error(result, "tiny.toml", "links.nope.buffer", "links has: ab")
    result = run_cli("validate", str(path), "--set", "links.ab.buffer=-1")
    assert_one_line_error(result, "tiny.toml", "links.ab.buffer", "--set")


def test_missing_file(tmp_path: Path) -> None:
    result = run_cli("validate", str(tmp_path / "nothere.toml"))
    assert_one_line_error(result, "nothere.toml", "no such file")
    result = run_cli("run", str(tmp_path / "nothere.toml"), cwd=tmp_path)
    assert_one_line_error(result, "nothere.toml", "no such file")


def test_toml_syntax_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text('[run]\nduration = "1 s"\nseed = = 3\n', encoding="utf-8")
    result = run_cli("validate", str(path))
    assert_one_line_error(result, "broken.toml", "invalid TOML", "line 3")


@pytest.mark.parametrize(
    "args",
    [["run", "{file}", "--seed", "abc"], ["run", "{file}", "--bogus"], ["frobnicate"], []],
)
def test_usage_errors_are_one_line(tmp_path: Path, args: list[str]) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY, encoding="utf-8")
    result = run_cli(*[arg.replace("{file}", str(path)) for arg in args], cwd=tmp_path)
    assert_one_line_error(result)


def test_plot_without_series(tmp_path: Path) -> None:
    result = run_cli("plot", str(tmp_path))
    assert_one_line_error(result, str(tmp_path), "series.parquet")


def test_validate_ok(tmp_path: Path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY, encoding="utf-8")
    result = run_cli("validate", str(path), "--set", "sources.s.count=4")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"ok: {path} (2 nodes, 1 links, 4 vcs, 4 sources)"
