"""Bad input to the CLI: exit code 2, one line on stderr naming the file and the key."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import FLOW_TINY, TINY, cli_main, needs_core, run_cli


def assert_one_line_error(result, *words: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    for word in words:
        assert word in lines[0], (word, lines[0])


IP_FLOW = FLOW_TINY.replace("duplex = true", 'duplex = true\nlayer = "ip"')
TEMPLATE = '[template]\nkind = "n-source-vbr"\n'


BAD_CASES = [
    (
        "flow_hop_missing",
        FLOW_TINY.replace(
            'to = "b"\nrate = "155.52 Mbps"\nlength = "10 km"\nduplex = true',
            'to = "b"\nrate = "155.52 Mbps"\nlength = "10 km"',
        ),
        "flows.tcp.ack_path",
    ),
    (
        "mixed_layers",
        FLOW_TINY.replace('to = "sw"\nrate', 'to = "sw"\nlayer = "ip"\nrate'),
        "flows.tcp.path",
    ),
    (
        "red_on_atm",
        FLOW_TINY.replace('to = "b"\n', 'to = "b"\npolicy = { kind = "red", min_th = 5 }\n'),
        "links.sw-b.policy",
    ),
    (
        "epd_on_ip",
        IP_FLOW.replace('to = "b"\n', 'to = "b"\nbuffer = 100\npolicy = "epd"\n'),
        "links.sw-b.policy",
    ),
    ("window_parsecs", FLOW_TINY + 'window = "64 parsecs"\n', "flows.tcp.window"),
    ("variant_vegas", FLOW_TINY + 'variant = "vegas"\n', "flows.tcp.variant"),
    (
        "jitter_above_processing",
        FLOW_TINY + 'processing = "50 us"\nprocessing_jitter = "60 us"\n',
        "flows.tcp.processing_jitter",
    ),
    (
        "link_count_without_i",
        TINY.replace("buffer = 100", "buffer = 100\ncount = 5"),
        "links.ab.count",
    ),
    ("unknown_key", TINY.replace('length = "10 km"', "colour = 1"), "links.ab.colour"),
    ("wrong_unit", TINY.replace('"10 Mbps"', '"10 furlongs"'), "sources.s.rate"),
    ("negative_rate", TINY.replace('"10 Mbps"', '"-10 Mbps"'), "sources.s.rate"),
    ("missing_hop", TINY.replace('path = ["a", "b"]', 'path = ["b", "a"]'), "sources.s.path"),
    ("missing_node", TINY.replace('path = ["a", "b"]', 'path = ["a", "x"]'), "sources.s.path"),
    ("buffer_minus_one", TINY.replace("buffer = 100", "buffer = -1"), "links.ab.buffer"),
    ("buffer_zero", TINY.replace("buffer = 100", "buffer = 0"), "links.ab.buffer"),
    ("no_duration", TINY.replace('duration = "10 ms"', "seed = 2"), "run.duration"),
    (
        "abr_back_hop_missing",
        TINY.replace('path = ["a", "b"]', 'path = ["a", "b"]\nclass = "abr"'),
        "sources.s.path",
    ),
    (
        "abr_on_ubr",
        TINY.replace('path = ["a", "b"]', 'path = ["a", "b"]\nabr = { tbe = 512 }'),
        "sources.s.abr",
    ),
    (
        "abr_rdf_zero",
        TINY.replace('path = ["a", "b"]', 'path = ["a", "b"]\nclass = "abr"\nabr = { rdf = 0 }'),
        "sources.s.abr.rdf",
    ),
    (
        "algorithm_on_ip",
        IP_FLOW.replace('to = "b"\n', 'to = "b"\nalgorithm = "erica"\n'),
        "links.sw-b.algorithm",
    ),
    ("template_unknown_param", TEMPLATE + "colour = 1\n", "template.colour"),
    ("template_bad_kind", TEMPLATE.replace("n-source-vbr", "dumbbell"), "template.kind"),
    ("template_n_zero", TEMPLATE + "n = 0\n", "template.n"),
    (
        # Regression (scenario fuzzer): n = 100,000 per VC made half a million flows, which
        # took a minute to expand before any other key was checked.
        "gfr_template_too_many_connections",
        '[template]\nkind = "gfr-backbone"\nn = 100000\n',
        "template.n",
    ),
    (
        "template_override_bad",
        TEMPLATE + '[links.sw1-sw2]\nbuffer = "lots"\n',
        "links.sw1-sw2.buffer",
    ),
]
"""(name, scenario text, the key the one-line error must name)."""


@pytest.mark.parametrize(("name", "text", "key"), BAD_CASES)
@pytest.mark.parametrize("command", ["validate", "run"])
def test_bad_scenario(tmp_path: Path, command: str, name: str, text: str, key: str) -> None:
    path = tmp_path / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    result = run_cli(command, str(path), cwd=tmp_path)
    assert_one_line_error(result, f"{name}.toml", key)
    assert not (tmp_path / "runs").exists()  # nothing is written for a bad scenario


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("flow_hop_missing", 'no link from "b" to "sw"'),
        ("flow_hop_missing", "duplex = true on links.sw-b"),
        ("mixed_layers", "mixes layers"),
        ("red_on_atm", "red is for IP links"),
        ("epd_on_ip", "epd is a cell policy"),
        ("window_parsecs", 'a size like "64 KB"'),
        ("variant_vegas", '"tahoe-nofr", "tahoe", "reno", "newreno" or "sack"'),
        ("jitter_above_processing", 'must be <= processing ("50 us")'),
        ("link_count_without_i", "{i}"),
        ("abr_back_hop_missing", 'no link from "b" to "a" for the backward RM cells'),
        ("abr_back_hop_missing", "duplex = true on links.ab"),
        ("abr_on_ubr", 'ABR parameters need class = "abr"'),
        ("abr_rdf_zero", "must be > 0 and <= 1"),
        ("algorithm_on_ip", "ATM ports"),
        ("template_unknown_param", "unknown key; allowed: kind, n, vbr, "),
        ("template_bad_kind", 'templates: "n-source-vbr", "n-source", "fmmra-lan", "gfc2"'),
        ("template_n_zero", "from 1 to 100000"),
    ],
)
def test_tcp_errors_say_what_is_allowed(tmp_path: Path, name: str, words: str) -> None:
    cases = {case: text for case, text, _ in BAD_CASES}
    path = tmp_path / f"{name}.toml"
    path.write_text(cases[name], encoding="utf-8")
    assert_one_line_error(run_cli("validate", str(path)), words)


def test_bad_set_key(tmp_path: Path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY, encoding="utf-8")
    result = run_cli("validate", str(path), "--set", "links.nope.buffer=5")
    assert_one_line_error(result, "tiny.toml", "links.nope.buffer", "links has: ab")
    result = run_cli("validate", str(path), "--set", "links.ab.buffer=-1")
    assert_one_line_error(result, "tiny.toml", "links.ab.buffer", "--set")


def test_bad_template_parameter_from_set(tmp_path: Path) -> None:
    path = tmp_path / "nsv.toml"
    path.write_text(TEMPLATE, encoding="utf-8")
    for command in ("validate", "run"):
        result = run_cli(command, str(path), "--set", "template.n=0", cwd=tmp_path)
        assert_one_line_error(result, "nsv.toml", "template.n", "(from --set template.n=0)")
    result = run_cli("validate", str(path), "--set", "template.tbe=lots")
    assert_one_line_error(result, "template.tbe", "expected a whole number")
    assert not (tmp_path / "runs").exists()


def test_validate_a_template(tmp_path: Path) -> None:
    path = tmp_path / "nsv.toml"
    path.write_text(TEMPLATE, encoding="utf-8")
    result = run_cli("validate", str(path), "--set", "template.n=5")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        f'ok: {path} (template "n-source-vbr": 14 nodes, 24 links, 11 vcs, 1 sources, 5 flows)'
    )


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


def _nested_tables(depth: int, template: bool = False) -> str:
    head = '[template]\nkind = "n-source"\n' if template else '[run]\nduration = "1 s"\n'
    return head + "[nodes." + ".".join(["a"] * depth) + "]\nb = 1\n"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (_nested_tables(500), ["nodes.a.a", "nested more than 32 deep"]),
        (_nested_tables(500, template=True), ["nodes.a.a", "nested more than 32 deep"]),
        ("x = " + "[" * 40 + "]" * 40 + "\n", ["x[0][0]", "nested more than 32 deep"]),
        ('[run]\nduration = "' + "1" * 5000 + ' s"\n', ["run.duration", "at most 4096"]),
        ("[run]\n" + "k" * 5000 + " = 1\n", ["run", "a key of 5,000 characters"]),
    ],
)
def test_input_limits_of_a_scenario_file(tmp_path: Path, text: str, words: list[str]) -> None:
    """Data nested deeper than Python's recursion, or huge strings: one line, exit 2."""
    path = tmp_path / "deep.toml"
    path.write_text(text, encoding="utf-8")
    for command in ("validate", "run"):
        result = run_cli(command, str(path), cwd=tmp_path)
        assert_one_line_error(result, f"error: {path}: ", *words)


def test_a_file_too_large_or_not_regular_is_refused_before_reading(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    with big.open("wb") as handle:
        handle.truncate(16 * 2**20 + 1)  # sparse: no 16 MiB written
    assert_one_line_error(run_cli("validate", str(big)), f"{big}: larger than 16 MiB")
    for device in ("/dev/zero", "/dev/urandom"):
        result = run_cli("validate", device)
        assert_one_line_error(result, f"{device}: not a regular file")
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    assert_one_line_error(run_cli("validate", str(fifo)), f"{fifo}: not a regular file")
    spec = tmp_path / "spec.toml"
    spec.write_text('[sweep]\nbase = "ubr_epd"\n[set]\n"x" = ' + "[" * 40 + "]" * 40 + "\n")
    result = run_cli("sweep", str(spec), "--out", str(tmp_path / "o"))
    assert_one_line_error(result, f"{spec}: set.x[0]", "nested more than 32 deep")


def test_a_deeply_nested_set_value_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY, encoding="utf-8")
    result = run_cli("validate", str(path), "--set", "run.x=" + "[" * 100 + "]" * 100)
    assert_one_line_error(result, "run.x[0]", "nested more than 32 deep")


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
    assert result.stdout.strip() == f"ok: {path} (2 nodes, 1 links, 4 vcs, 4 sources, 0 flows)"


# --- --out ----------------------------------------------------------------------------------


def test_out_naming_a_file(tmp_path: Path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY, encoding="utf-8")
    taken = tmp_path / "taken"
    taken.write_text("mine", encoding="utf-8")
    result = run_cli("run", str(path), "--out", str(taken))
    assert_one_line_error(result)
    assert result.stderr == f"error: --out {taken}: is a file, expected a directory\n"
    assert taken.read_text(encoding="utf-8") == "mine"


def test_out_naming_a_directory_with_other_things(tmp_path: Path) -> None:
    """``--out /`` or ``--out ~`` would scatter run files among a person's files."""
    path = tmp_path / "tiny.toml"
    path.write_text(TINY, encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    (home / "thesis.tex").write_text("", encoding="utf-8")
    result = run_cli("run", str(path), "--out", str(home))
    assert_one_line_error(
        result,
        f"--out {home}: not empty and not an atmsim run directory",
        "expected a new or empty directory, or an atmsim run directory "
        "(atmsim marks the directories it writes with a .atmsim file)",
    )
    assert [p.name for p in home.iterdir()] == ["thesis.tex"]


@needs_core
def test_out_may_be_new_empty_or_an_earlier_run(tmp_path: Path, capsys) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY, encoding="utf-8")
    empty = tmp_path / "empty"
    empty.mkdir()
    for out in (tmp_path / "new" / "run", empty, empty):  # the last: run again into a run dir
        assert cli_main("run", str(path), "--out", str(out)) == 0
        names = sorted(p.name for p in out.iterdir())
        assert names == [".atmsim", "scenario.toml", "summary.json"]
    capsys.readouterr()


def test_reproduce_out_rule(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.write_text("", encoding="utf-8")
    result = run_cli("reproduce", "seed000-sec8", "--out", str(taken))
    assert_one_line_error(result)
    assert result.stderr == f"error: --out {taken}: is a file, expected a directory\n"
    home = tmp_path / "home"
    home.mkdir()
    (home / "thesis.tex").write_text("", encoding="utf-8")
    result = run_cli("reproduce", "seed000-sec8", "--out", str(home))
    assert_one_line_error(
        result, f"--out {home}: not empty and not an atmsim reproduce directory", ".atmsim"
    )
    assert [p.name for p in home.iterdir()] == ["thesis.tex"]


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        (["run", "{tiny}"], "run"),
        (["sweep", "{spec}"], "sweep"),
        (["reproduce", "seed000-sec8"], "reproduce"),
        (["validate-model", "--only", "md1-wait"], "validate-model"),
    ],
)
def test_out_refuses_a_directory_atmsim_did_not_write(
    tmp_path: Path, command: list[str], kind: str
) -> None:
    """A folder that merely holds a summary.json or scenario.toml is a person's own:
    only atmsim's .atmsim marker lets a command write into a non-empty directory."""
    tiny = tmp_path / "tiny.toml"
    tiny.write_text(TINY, encoding="utf-8")
    spec = tmp_path / "spec.toml"
    spec.write_text('[sweep]\nbase = "ubr_epd"\n', encoding="utf-8")
    mine = tmp_path / "mine"
    mine.mkdir()
    for name in ("summary.json", "scenario.toml", "sweep.toml", "results.parquet", "seed000.csv"):
        (mine / name).write_text("my own", encoding="utf-8")
    args = [arg.replace("{tiny}", str(tiny)).replace("{spec}", str(spec)) for arg in command]
    result = run_cli(*args, "--out", str(mine), cwd=tmp_path)
    assert_one_line_error(result, f"--out {mine}: not empty and not an atmsim {kind} directory")
    assert all(p.read_text() == "my own" for p in mine.iterdir())
    assert not (mine / ".atmsim").exists()


def test_an_out_dir_that_cannot_be_written_is_found_before_running(tmp_path: Path) -> None:
    """reproduce ran every experiment before failing to write; now the directory is
    made and marked first. (/proc takes no new directory, even from root.)"""
    for command in (["reproduce", "seed000"], ["validate-model"]):
        result = run_cli(*command, "--out", "/proc/atmsim-test/out", cwd=tmp_path)
        assert_one_line_error(result, "--out /proc/atmsim-test/out: cannot be written: ")
        assert result.stdout == ""


def test_plot_unreadable_files(tmp_path: Path) -> None:
    (tmp_path / "series.parquet").write_text("not parquet", encoding="utf-8")
    result = run_cli("plot", str(tmp_path))
    assert_one_line_error(result, f"{tmp_path / 'series.parquet'}: not a series file (")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["validate-model", "--only", "nosuch"], ["--only nosuch", "no such truth", "md1-wait"]),
        (["validate-model", "--jobs", "0"], ["--jobs", "at least 1"]),
        (["validate-model", "--only"], ["--only", "expected at least one argument"]),
        (["validate-model", "--out", "{file}"], ["--out", "is a file"]),
    ],
)
def test_validate_model_bad_input(tmp_path: Path, args: list[str], words: list[str]) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("x", encoding="utf-8")
    result = run_cli(*[arg.replace("{file}", str(path)) for arg in args], cwd=tmp_path)
    assert_one_line_error(result, *words)
    assert result.stdout == ""
