"""atmsim.results: the tables, the conservation ledgers' verdict and the rule for run
directories, on summaries of real runs (altered where a test needs a fault)."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest

import atmsim
from atmsim.outputs import MARKER, check_out_file, write_file
from atmsim.reproduce.report import check_reproduce_dir
from atmsim.results import (
    MAX_TABLE_ROWS,
    PERSIST_KEYS,
    OutDirError,
    check_out_dir,
    ledger_lines,
    print_result,
    result_tables,
)

from conftest import FLOW_TINY, SCENARIOS, TINY, needs_core, write

pytestmark = needs_core

IP_FLOW = FLOW_TINY.replace("duplex = true", 'duplex = true\nlayer = "ip"')


@pytest.fixture(scope="module")
def summaries(tmp_path_factory) -> dict[str, dict]:
    """Summaries of real runs: cells only, TCP over ATM, TCP over IP, ABR."""
    folder = tmp_path_factory.mktemp("runs")
    texts = {"cells": TINY, "atm_flow": FLOW_TINY, "ip_flow": IP_FLOW}
    out = {
        key: atmsim.run(write(folder, text), progress=False).summary for key, text in texts.items()
    }
    abr = atmsim.run(SCENARIOS / "abr_gfc2.toml", overrides=["run.duration=20 ms"], progress=False)
    out["abr"] = abr.summary
    return out


def titles(summary: dict) -> list[str]:
    return [str(table.title) for table in result_tables(summary)]


def test_tables_of_each_kind_of_run(summaries) -> None:
    assert titles(summaries["cells"]) == ["Ports", "VCs"]
    assert titles(summaries["atm_flow"]) == ["Ports", "VCs", "Flows"]
    assert titles(summaries["ip_flow"]) == ["IP ports", "Flows"]
    assert titles(summaries["abr"]) == ["Ports", "VCs", "ABR"]


def test_long_tables_are_cut_with_a_caption(summaries) -> None:
    summary = copy.deepcopy(summaries["cells"])
    port = summary["ports"][0]
    summary["ports"] = [dict(port, name=f"p{i}") for i in range(MAX_TABLE_ROWS + 10)]
    (ports, _) = result_tables(summary)
    assert len(ports.rows) == MAX_TABLE_ROWS
    assert ports.caption == "10 more in summary.json"


def test_flows_table_totals_the_goodput(summaries) -> None:
    (flow,) = summaries["atm_flow"]["flows"]
    table = result_tables(summaries["atm_flow"])[-1]
    assert table.caption == f"total goodput {flow['goodput_mbps']:.3f} Mbps"


def test_persist_counters_are_shown_only_when_a_flow_persisted(summaries) -> None:
    """The core writes a flow's persist_expiries, window_probes and zero_window_acks only
    when not 0 (a sender always offered a full segment never persists); the flows table
    shows them when some flow has them, and Result.flows gives them for every flow."""
    summary = copy.deepcopy(summaries["ip_flow"])
    (flow,) = summary["flows"]
    assert not any(key in flow for key in PERSIST_KEYS)
    assert "window probes" not in result_tables(summary)[-1].headers
    frame = atmsim.Result(summary, None, "", False).flows
    assert [int(frame[key].iloc[0]) for key in PERSIST_KEYS] == [0, 0, 0]
    flow.update(persist_expiries=5, window_probes=4, zero_window_acks=4)
    table = result_tables(summary)[-1]
    columns = ["persist expiries", "window probes", "zero-window ACKs"]
    assert [table.rows[0][table.headers.index(name)] for name in columns] == ["5", "4", "4"]
    frame = atmsim.Result(summary, None, "", False).flows
    assert [int(frame[key].iloc[0]) for key in PERSIST_KEYS] == [5, 4, 4]


def test_bytes_dropped_beyond_a_window_are_a_term_of_the_byte_ledger(summaries) -> None:
    """Window probes into a closed window, dropped by the receiver: written by the core
    only when not 0, and then a term of the balance."""
    summary = copy.deepcopy(summaries["ip_flow"])
    nbytes = summary["conservation"]["bytes"]
    assert "dropped_beyond_window" not in nbytes
    nbytes["sent"] += 3
    nbytes["retransmitted"] += 3
    assert ledger_lines(summary)[-1][1] is False
    nbytes["dropped_beyond_window"] = 3
    line, ok = ledger_lines(summary)[-1]
    assert ok and "dropped beyond window 3" in line, line


@pytest.mark.parametrize("kind", ["cells", "atm_flow", "ip_flow", "abr"])
def test_real_runs_balance(summaries, kind: str) -> None:
    lines = ledger_lines(summaries[kind])
    assert all(ok for _, ok in lines), lines
    # with flows the byte ledger; the packet ledger over IP only, the cell ledger over
    # ATM only: a ledger with nothing in it is not printed
    names = [line.split(":")[0] for line, _ in lines]
    expected = {
        "cells": ["conservation ledger"],
        "abr": ["conservation ledger"],
        "atm_flow": ["conservation ledger", "byte ledger"],
        "ip_flow": ["packet ledger", "byte ledger"],
    }[kind]
    assert names == expected
    if kind != "ip_flow":
        generated = summaries[kind]["conservation"]["cells_generated"]
        assert lines[0][0].startswith(f"conservation ledger: balanced (generated {generated:,} = ")


def test_an_empty_ledger_is_not_printed_but_an_unbalanced_one_is(summaries) -> None:
    summary = copy.deepcopy(summaries["atm_flow"])
    assert summary["conservation"]["packets"]["generated"] == 0
    assert not any(line.startswith("packet ledger") for line, _ in ledger_lines(summary))
    summary["conservation"]["packets"]["ok"] = False
    assert any(line.startswith("packet ledger: UNBALANCED") for line, _ in ledger_lines(summary))
    nothing = copy.deepcopy(summaries["cells"])
    for key in ("cells_generated", "cells_delivered", "cells_dropped", "cells_queued"):
        nothing["conservation"][key] = 0
    nothing["conservation"]["cells_on_links"] = 0
    assert ledger_lines(nothing) == [
        ("conservation ledgers: balanced (nothing was generated)", True)
    ]


def test_terms_that_do_not_add_up_are_unbalanced_even_if_the_core_says_ok(summaries) -> None:
    summary = copy.deepcopy(summaries["atm_flow"])
    summary["conservation"]["cells_queued"] += 1
    (cells, nbytes) = ledger_lines(summary)  # the empty packet ledger is left out
    assert cells[1] is False and "conservation ledger: UNBALANCED (generated" in cells[0]
    assert nbytes[1]


def test_a_problem_the_core_reports_is_shown(summaries) -> None:
    summary = copy.deepcopy(summaries["cells"])
    summary["conservation"]["ok"] = False
    summary["conservation"]["problems"] = ["port ab: 1 cell unaccounted"]
    lines = ledger_lines(summary)
    assert lines[-1] == (
        "conservation: the core reports a problem (port ab: 1 cell unaccounted)",
        False,
    )


def test_a_missing_ledger_is_unbalanced(summaries) -> None:
    summary = copy.deepcopy(summaries["ip_flow"])
    del summary["conservation"]["bytes"]
    assert ledger_lines(summary)[-1] == ("byte ledger: MISSING from the core's summary", False)


def test_print_result_says_whether_it_balances(summaries, capsys, tmp_path: Path) -> None:
    result = atmsim.Result(copy.deepcopy(summaries["ip_flow"]), None, "", False)
    assert print_result(result, tmp_path, 200) is True
    printed = capsys.readouterr().out
    assert "IP ports" in printed and f"run dir: {tmp_path}" in printed
    result.summary["conservation"]["bytes"]["ok"] = False
    assert print_result(result, tmp_path, 200) is False
    assert "byte ledger: UNBALANCED" in capsys.readouterr().out


# --- run directories ----------------------------------------------------------------------


def _marked(directory: Path, kind: str = "run") -> Path:
    directory.mkdir(parents=True)
    (directory / MARKER).write_text(f'{{"kind": "{kind}", "version": "0"}}\n')
    (directory / "queue.png").write_text("")
    return directory


def test_out_dir_allowed(tmp_path: Path) -> None:
    assert check_out_dir(tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"
    (tmp_path / "empty").mkdir()
    assert check_out_dir(tmp_path / "empty") == tmp_path / "empty"
    run_dir = _marked(tmp_path / "run")
    assert check_out_dir(run_dir) == run_dir


def test_out_dir_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(OutDirError) as info:
        check_out_dir(tmp_path / "notes.txt")
    assert str(info.value) == f"{tmp_path / 'notes.txt'}: is a file, expected a directory"
    with pytest.raises(OutDirError, match="notes.txt is a file, expected a directory"):
        check_out_dir(tmp_path / "notes.txt" / "run")
    with pytest.raises(OutDirError) as info:
        check_out_dir(tmp_path)
    assert str(info.value) == (
        f"{tmp_path}: not empty and not an atmsim run directory; expected a new or empty "
        "directory, or an atmsim run directory (atmsim marks the directories it writes "
        "with a .atmsim file)"
    )
    os.symlink(tmp_path / "nowhere", tmp_path / "dangling")
    with pytest.raises(OutDirError, match="broken symbolic link"):
        check_out_dir(tmp_path / "dangling")


def test_a_directory_is_atmsims_only_with_its_marker(tmp_path: Path) -> None:
    """A folder holding a scenario.toml or a summary.json may be a person's own: only
    atmsim's marker lets atmsim write into a non-empty directory, and only for its kind."""
    for name in ("scenario.toml", "summary.json"):
        mine = tmp_path / f"mine-{name}"
        mine.mkdir()
        (mine / name).write_text("my own")
        with pytest.raises(OutDirError, match="not empty and not an atmsim run directory"):
            check_out_dir(mine)
    forged = tmp_path / "forged"
    forged.mkdir()
    (forged / MARKER).write_text("not json")
    with pytest.raises(OutDirError, match="not empty and not an atmsim run directory"):
        check_out_dir(forged)
    sweep = _marked(tmp_path / "sweep", "sweep")
    with pytest.raises(OutDirError, match="is an atmsim sweep directory, not an atmsim run"):
        check_out_dir(sweep)
    assert check_out_dir(sweep, "sweep") == sweep
    link = tmp_path / "link"
    os.symlink(_marked(tmp_path / "real"), link)
    with pytest.raises(OutDirError, match="is a symbolic link"):
        check_out_dir(link)


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("a/../b", "has a '..' component"),
        ("/".join(["a"] * 1000), "components; at most 64"),
        ("x" * 5000, "characters; at most 4096"),
    ],
)
def test_out_paths_are_limited(tmp_path: Path, path: str, words: str) -> None:
    with pytest.raises(OutDirError) as info:
        check_out_dir(tmp_path / path)
    assert words in str(info.value) and "\n" not in str(info.value)
    assert len(str(info.value)) < 300  # a long path is cut in the message


def test_out_dir_root_is_refused() -> None:
    with pytest.raises(OutDirError, match="^/: not empty and not an atmsim run directory"):
        check_out_dir("/")


def test_reproduce_dir(tmp_path: Path) -> None:
    assert check_reproduce_dir(tmp_path / "new") == tmp_path / "new"
    earlier = _marked(tmp_path / "earlier", "reproduce")
    assert check_reproduce_dir(earlier) == earlier
    other = tmp_path / "other"
    other.mkdir()
    (other / "seed000.csv").write_text("")  # looks like an earlier output, is not marked
    with pytest.raises(OutDirError, match="not empty and not an atmsim reproduce directory"):
        check_reproduce_dir(other)


def test_output_files_are_regular_files(tmp_path: Path) -> None:
    """A report or a --json file replaces only a regular file: renaming a temporary file
    over /dev/null (as root) would replace the device node, over a link the link."""
    assert check_out_file(tmp_path / "new" / "report.html") == tmp_path / "new" / "report.html"
    with pytest.raises(OutDirError, match="is not a regular file"):
        check_out_file("/dev/null")
    os.symlink(tmp_path / "elsewhere.html", tmp_path / "link.html")
    with pytest.raises(OutDirError, match="is a symbolic link"):
        check_out_file(tmp_path / "link.html")
    with pytest.raises(OutDirError, match="is a directory"):
        check_out_file(tmp_path)
    with pytest.raises(OutDirError, match="'..' component"):
        check_out_file(tmp_path / ".." / "x.html")
    target = write_file(tmp_path / "page.html", "<p>old</p>")
    write_file(target, "<p>new</p>")
    assert target.read_text() == "<p>new</p>"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    assert (target.stat().st_mode & 0o777) == (0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
