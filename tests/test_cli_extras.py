"""What a new user meets first: atmsim --version, the shipped examples (listed, copied out,
run by name), the note that a seed changes nothing, tables that fit 80 columns."""

from __future__ import annotations

import json

from rich.console import Console

import atmsim
from atmsim.determinism import seed_dependence
from atmsim.resources import examples, reproduce_dir, resolve_scenario, scenario_dir, sweeps
from atmsim.results import fit_table, print_tables, result_tables
from atmsim.scenario import load_scenario, to_core

from conftest import REPO, SCENARIOS, TINY, cli_main, needs_core, write


def test_version(capsys):
    assert cli_main("--version") == 0
    assert capsys.readouterr().out == f"atmsim {atmsim.__version__}\n"


def test_package_data_is_the_scenarios_directory():
    # scenarios/ in the checkout is a symbolic link to the package data: one copy
    assert (REPO / "scenarios").resolve() == scenario_dir().resolve()
    assert "ubr_epd" in examples() and "mux_onoff" in examples()
    assert (reproduce_dir() / "seed000-sec8.toml").is_file()
    assert "tbe_buffer" in sweeps()


def test_examples_list_and_copy(tmp_path, capsys):
    assert cli_main("examples") == 0
    listed = capsys.readouterr().out
    for name in ("ubr_epd", "mux_onoff", "abr_gfc2", "tbe_buffer"):
        assert name in listed
    assert cli_main("examples", "ubr_epd", "--to", str(tmp_path / "mine")) == 0
    copied = tmp_path / "mine" / "ubr_epd.toml"
    assert capsys.readouterr().out.strip() == str(copied)
    assert copied.read_text() == (SCENARIOS / "ubr_epd.toml").read_text()
    assert cli_main("examples", "ubr_epd", "--to", str(tmp_path / "mine")) == 2  # no overwrite
    assert "exists; not overwritten" in capsys.readouterr().err
    assert cli_main("examples", "nothing") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: examples: no shipped example 'nothing'; choose from: ")


def test_a_bare_name_runs_the_shipped_example(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_scenario("ubr_epd") == examples()["ubr_epd"]
    assert resolve_scenario("ubr_epd.toml") == examples()["ubr_epd"]
    write(tmp_path, TINY, "ubr_epd.toml")  # a file of that name wins
    assert resolve_scenario("ubr_epd.toml").resolve() == (tmp_path / "ubr_epd.toml").resolve()
    assert resolve_scenario("missing.toml").name == "missing.toml"


@needs_core
def test_validate_and_run_by_name(tmp_path, capsys):
    assert cli_main("validate", "md1") == 0
    assert capsys.readouterr().out.startswith("ok: ")
    assert cli_main("run", "md1", "--set", "run.duration=0.1 s", "--out", str(tmp_path / "r")) == 0
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["scenario"] == "md1"


def test_seed_dependence_is_decided_conservatively():
    def core(name: str, *overrides: str) -> dict:
        return to_core(load_scenario(SCENARIOS / name, list(overrides)))

    assert seed_dependence(core("ip_dumbbell.toml")) == []  # IP, tail drop, no jitter
    assert seed_dependence(core("md1.toml"))  # Poisson cells
    assert seed_dependence(core("ubr_tcp.toml"))  # ties among cells at a port
    assert seed_dependence(core("ubr_tcp.toml", "run.arbitration=scheduling_order")) == []
    red = core("ip_dumbbell.toml", 'links.r1-r2.policy={kind = "red", min_th = 5}')
    assert any("RED" in reason or "red" in reason for reason in seed_dependence(red))


@needs_core
def test_the_seed_note_is_printed_only_when_the_seed_cannot_matter(tmp_path, capsys):
    args = ("--set", "run.duration=1 s", "--seed", "7")
    assert cli_main("run", "ip_dumbbell", *args, "--out", str(tmp_path / "a")) == 0
    assert "note: --seed 7 changes nothing here" in capsys.readouterr().err
    assert cli_main("run", "md1", *args, "--out", str(tmp_path / "b")) == 0
    assert "note:" not in capsys.readouterr().err
    # and it is true: another seed gives the same summary
    one = atmsim.run(SCENARIOS / "ip_dumbbell.toml", seed=1, progress=False)
    seven = atmsim.run(SCENARIOS / "ip_dumbbell.toml", seed=7, progress=False)
    for summary in (one.summary, seven.summary):
        for key in ("seed", "wall_s", "events"):
            summary.pop(key)
    assert one.summary == seven.summary


@needs_core
def test_tables_fit_80_columns_without_cutting_numbers():
    result = atmsim.run(SCENARIOS / "ubr_tcp.toml", progress=False, overrides=["run.duration=1 s"])
    console = Console(width=80, record=True, force_terminal=False)
    print_tables(console, result_tables(result.summary))
    text = console.export_text()
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    cells_in = next(p for p in result.summary["ports"] if p["name"] == "sw1-sw2")["cells_in"]
    assert f"{cells_in:,}" in text  # whole, on one line
    wide = Console(width=200)
    assert len(fit_table(wide, result_tables(result.summary)[0])) == 1


@needs_core
def test_queue_figures_add_a_smoothed_mean_and_the_distribution(tmp_path, capsys):
    out = tmp_path / "mux"
    assert cli_main("run", "mux_onoff", "--set", "run.duration=3 s", "--out", str(out)) == 0
    capsys.readouterr()
    assert cli_main("plot", str(out)) == 0
    written = capsys.readouterr().out.split()
    assert str(out / "queue.png") in written and str(out / "queue_ccdf.png") in written
    assert (out / "queue_ccdf.png").stat().st_size > 10_000
