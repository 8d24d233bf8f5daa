"""atmsim report: the HTML page of a reproduce output, a sweep and a run, rendered in
headless Chromium (the screenshot is not blank, the tables are in the page)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from atmsim.html_report import kind_of, write_report
from atmsim.reproduce import run_experiments
from atmsim.sweeps import load_spec, run_sweep

from conftest import SCENARIOS, cli_main, needs_core

CHROMIUM = next(
    (
        found
        for name in ("chromium", "chromium-browser", "google-chrome", "chrome")
        if (found := shutil.which(name))
    ),
    None,
)
"""Debian's chromium; scripts/test.sh installs it with apt-get when it is missing."""

needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless Chromium is not installed and could not be (scripts/test.sh runs "
    "apt-get install chromium where apt-get works)",
)


@pytest.fixture(scope="module")
def reproduce_dir(tmp_path_factory) -> Path:
    """A small reproduce output: TCP over ABR's (Kalyanaraman et al., 1996) section 9 with two run
    seeds (section 8's rows are all shown unjudged: null models match them)."""
    out = tmp_path_factory.mktemp("reproduce")
    outcomes = run_experiments(["seed000-sec9"], out, jobs=1, seeds=(1, 2))
    assert not outcomes[0].error
    return out


def chromium(*args: str) -> subprocess.CompletedProcess:
    assert CHROMIUM is not None
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


@needs_core
def test_reproduce_report_holds_the_comparison(reproduce_dir):
    assert kind_of(reproduce_dir) == "reproduce"
    page = write_report(reproduce_dir).read_text(encoding="utf-8")
    assert "Performance of TCP/IP over ABR Service on ATM Networks" in page
    assert "tcp-over-abr-sec9" in page and "seed000-sec9" in page
    assert "total TCP throughput, % of section 8" in page and "0.18" in page  # published
    assert 'class="match"' in page or 'class="miss"' in page
    assert "tolerance&#39;s reason" in page  # escaped by the template (autoescape)
    assert "data:image/png;base64," in page  # the figures are embedded
    assert "Misses and their likely causes" in page  # from docs/reproduction.md
    assert "<script" not in page  # static


@needs_core
@needs_chromium
def test_report_renders_in_headless_chromium(reproduce_dir, tmp_path):
    page = write_report(reproduce_dir)
    shot = tmp_path / "shot.png"
    result = chromium("--window-size=1280,1600", f"--screenshot={shot}", page.as_uri())
    assert shot.is_file(), result.stderr[-2000:]
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)[..., :3]
    assert pixels.shape[0] >= 1000 and pixels.shape[1] >= 1000
    not_white = (pixels.mean(axis=2) < 0.9).mean()
    assert not_white > 0.02, f"the page looks blank ({not_white:.4f} of the pixels drawn)"
    assert pixels.std() > 0.05
    dom = chromium("--dump-dom", page.as_uri()).stdout
    assert dom.count("<table") >= 2  # the documents and the experiment
    assert '<td class="match">match</td>' in dom or '<td class="miss">miss</td>' in dom
    assert "tcp-over-abr" in dom and "<img" in dom


@needs_core
def test_sweep_and_run_reports(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[sweep]\nbase = "ubr_epd"\nseeds = 2\n[set]\n"run.duration" = "0.05 s"\n'
        '[grid]\n"links.sw1-sw2.buffer" = [400, 900]\n[metrics]\nlinks = ["sw1-sw2"]\n'
    )
    out = tmp_path / "sweep"
    run_sweep(load_spec(spec), out, jobs=1, progress=False)
    assert cli_main("report", str(out)) == 0
    page = (out / "report.html").read_text()
    assert "goodput_mbps against links.sw1-sw2.buffer" not in page  # a figure, not text
    assert page.count("data:image/png;base64,") >= 4  # one figure per numeric metric
    assert "Means over the run seeds" in page
    run_dir = tmp_path / "run"
    assert cli_main("run", str(SCENARIOS / "ubr_tcp.toml"), "--out", str(run_dir)) == 0
    capsys.readouterr()
    assert cli_main("report", str(run_dir), "--out", str(tmp_path / "r.html")) == 0
    page = (tmp_path / "r.html").read_text()
    assert "Ports" in page and "Flows" in page and "Fairness" in page
    assert "balanced" in page
    assert cli_main("report", str(tmp_path / "nothing")) == 2
    assert capsys.readouterr().err.startswith("error: ")


# --- what report, fairness and plot refuse ---------------------------------------------------


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A whole run directory with a series (TINY with queue probes)."""
    from conftest import TINY

    folder = tmp_path_factory.mktemp("run")
    scenario = folder / "tiny.toml"
    scenario.write_text(TINY + '[probes]\nperiod = "1 ms"\nqueue = "all"\n', encoding="utf-8")
    with pytest.raises(SystemExit):
        from atmsim import cli

        cli.main(["run", str(scenario), "--out", str(folder / "r")])
    return folder / "r"


def _one_line_exit_2(capsys, *args: str) -> str:
    assert cli_main(*args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


SUMMARIES = [
    (b"{", "not a summary (invalid JSON: "),
    (b"[]", "not an atmsim summary (expected a JSON object, got list)"),
    (b"{}", 'not an atmsim summary (no "conservation" object)'),
    (b'{"conservation": {"cells_generated": 1', "not a summary (invalid JSON: "),
    (bytes(range(256)), "not a summary (not UTF-8 text)"),
    (
        b'{"conservation": {}}',
        "not an atmsim summary (conservation.cells_generated: expected a whole number)",
    ),
]


@needs_core
@pytest.mark.parametrize(("text", "words"), SUMMARIES)
def test_a_corrupted_summary_is_refused(run_dir, tmp_path, capsys, text, words):
    """Not an internal error, nor a report of zero rates and no figures: one line naming
    the file, exit 2."""
    broken = tmp_path / "r"
    shutil.copytree(run_dir, broken)
    (broken / "summary.json").write_bytes(text)
    for command in ("report", "fairness", "plot"):
        err = _one_line_exit_2(capsys, command, str(broken))
        assert err.startswith(f"error: {broken / 'summary.json'}: {words}"), err
    assert not (broken / "report.html").exists()


@needs_core
def test_a_summary_missing_fields_a_table_needs_is_refused(run_dir, tmp_path, capsys):
    broken = tmp_path / "r"
    shutil.copytree(run_dir, broken)
    summary = json.loads((broken / "summary.json").read_text())
    del summary["ports"][0]["cells_in"]
    (broken / "summary.json").write_text(json.dumps(summary))
    err = _one_line_exit_2(capsys, "report", str(broken))
    assert f"{broken / 'summary.json'}: not an atmsim summary (no 'cells_in')" in err


@needs_core
@pytest.mark.parametrize("kind", ["garbage", "other columns", "text values"])
def test_a_series_that_is_not_atmsims_is_refused(run_dir, tmp_path, capsys, kind):
    import pandas as pd

    broken = tmp_path / "r"
    shutil.copytree(run_dir, broken)
    path = broken / "series.parquet"
    if kind == "garbage":
        path.write_bytes(b"PAR1 not parquet")
        words = "not a series file ("
    elif kind == "other columns":
        pd.DataFrame({"a": [1.0], "b": ["x"]}).to_parquet(path)
        words = "not an atmsim series (columns a, b; expected time_s, entity, metric, value)"
    else:
        frame = pd.read_parquet(path)
        frame["value"] = frame["value"].astype(str)
        frame.to_parquet(path)
        words = "not an atmsim series (value holds str, expected numbers)"
    for command in ("report", "plot"):
        err = _one_line_exit_2(capsys, command, str(broken))
        assert err.startswith(f"error: {path}: {words}"), err


@needs_core
def test_report_writes_only_regular_files_inside_what_was_named(run_dir, tmp_path, capsys):
    """--out /dev/null (as root) would have replaced the device node with the page, and
    a symbolic link would have become a file."""
    for target, words in (
        ("/dev/null", "--out /dev/null: is not a regular file"),
        (str(tmp_path / ".." / "x.html"), "has a '..' component"),
        (str(tmp_path), "is a directory; give a file name"),
    ):
        assert words in _one_line_exit_2(capsys, "report", str(run_dir), "--out", target)
    assert Path("/dev/null").is_char_device()
    mine = tmp_path / "mine.html"
    mine.write_text("my page")
    link = tmp_path / "link.html"
    link.symlink_to(mine)
    err = _one_line_exit_2(capsys, "report", str(run_dir), "--out", str(link))
    assert f"--out {link}: is a symbolic link" in err
    assert link.is_symlink() and mine.read_text() == "my page"
    assert cli_main("report", str(run_dir), "--out", str(tmp_path / "page.html")) == 0
    capsys.readouterr()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.html", "mine.html", "page.html"]


@needs_core
def test_the_page_escapes_what_it_reads(run_dir, tmp_path):
    """The templates autoescape: a scenario name or a port name holding markup is shown
    as text, never taken as HTML."""
    copy = Path(shutil.copytree(run_dir, tmp_path / "run"))
    summary = json.loads((copy / "summary.json").read_text(encoding="utf-8"))
    summary["scenario"] = "<script>alert(1)</script>"
    summary["ports"][0]["name"] = '"><img src=x>'
    (copy / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    page = write_report(copy).read_text(encoding="utf-8")
    assert "<script" not in page and "<img src=x>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&#34;&gt;&lt;img src=x&gt;" in page
