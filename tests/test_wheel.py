"""The package works anywhere: build the abi3 wheel, install it into a fresh virtual
environment outside the checkout, and run the commands a new user runs first from an
unrelated directory (a shipped example by name, a reproduced experiment with its report,
the examples list and copy, the benchmark).

One install; a few minutes on 2 cores (the wheel reuses the release build of
scripts/setup.sh, the dependencies come from pip's cache after the first time). It runs
in the normal test suite (and so in CI): mark ``wheel``, ``-m "not wheel"`` leaves it out.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import REPO

pytestmark = pytest.mark.wheel


def clean_env() -> dict[str, str]:
    """The environment without anything that points back into the checkout."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    }
    env["PYTHONNOUSERSITE"] = "1"
    return env


def run(args: list, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, (args, result.stdout[-3000:], result.stderr[-3000:])
    return result


def test_the_installed_wheel_runs_from_an_unrelated_directory(tmp_path):
    maturin = Path(sys.executable).with_name("maturin")
    if not maturin.is_file():
        pytest.skip("maturin is not installed next to this Python (scripts/setup.sh installs it)")
    dist = tmp_path / "dist"
    run([maturin, "build", "--release", "--quiet", "-o", dist], cwd=REPO, timeout=1800)
    wheels = list(dist.glob("atmsim-*.whl"))
    assert len(wheels) == 1 and "-abi3-" in wheels[0].name, wheels
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert "atmsim/data/scenarios/ubr_epd.toml" in names
    assert "atmsim/data/scenarios/reproduce/seed001-hetero.toml" in names
    assert "atmsim/data/scenarios/sweeps/tbe_buffer.toml" in names
    assert "atmsim/data/docs/reproduction.md" in names
    assert "atmsim/report_templates/base.html.j2" in names  # atmsim report's templates
    # developer tooling stays out of the user's wheel (devtools/ at the repository root)
    assert not any(name.startswith("devtools/") for name in names)
    for tool in ("fuzz.py", "fingerprints.py"):
        assert f"atmsim/validation/{tool}" not in names

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv], cwd=tmp_path)
    python = venv / "bin" / "python"
    atmsim = venv / "bin" / "atmsim"
    run(
        [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", wheels[0]],
        cwd=tmp_path,
        timeout=1800,
    )
    work = tmp_path / "somewhere" / "else"
    work.mkdir(parents=True)
    where = run([python, "-c", "import atmsim; print(atmsim.__file__)"], cwd=work).stdout
    assert str(venv) in where and str(REPO) not in where

    assert run([atmsim, "--version"], cwd=work).stdout.startswith("atmsim ")
    assert "ubr_epd" in run([atmsim, "examples"], cwd=work).stdout
    run([atmsim, "examples", "ubr_epd", "--to", "mine"], cwd=work)
    assert (work / "mine" / "ubr_epd.toml").is_file()

    ran = run([atmsim, "run", "ubr_epd", "--out", "epd"], cwd=work).stdout
    assert "conservation ledger: balanced" in ran
    assert (work / "epd" / "summary.json").is_file()
    run([atmsim, "run", "mine/ubr_epd.toml", "--set", "run.duration=0.2 s", "--out", "m"], work)

    reproduced = run(
        [atmsim, "reproduce", "seed001-fig3", "--out", "rep", "--jobs", "2", "--report"],
        cwd=work,
    ).stdout
    assert "tcp-explicit-rate" in reproduced and "report: rep/report.html" in reproduced
    assert (work / "rep" / "seed001-fig3" / "table.csv").is_file()
    page = (work / "rep" / "report.html").read_text()
    assert "Explicit rate control of TCP applications" in page

    bench = run([atmsim, "bench", "--runs", "1", "--scale", "10"], cwd=work).stdout
    assert "simulated cells per wall-second" in bench and "dumbbell" in bench
