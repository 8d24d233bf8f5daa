"""Allowed ranges, values spelled as TOML in errors, --set notes and the memory estimate.

Every bad value is refused by the CLI with exit 2 and one line naming the file, the
key and the allowed range (docs/scenarios.md, "Allowed ranges").
"""

from __future__ import annotations

import io
import resource
import subprocess
import sys
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from atmsim import cli
from atmsim.scenario import load_scenario, memory

from conftest import FLOW_TINY, SCENARIOS, TINY, cli_env, load_text, needs_core, write

IP_FLOW = FLOW_TINY.replace("duplex = true", 'duplex = true\nlayer = "ip"')
GEOMETRIC = TINY.replace('kind = "cbr"', 'kind = "geometric_onoff"').replace(
    'rate = "10 Mbps"', 'peak = "10 Mbps"\nmean = "1 Mbps"\nmean_burst = 10'
)
ABR_FLOW = FLOW_TINY.replace("[flows.tcp]", '[flows.tcp]\nclass = "abr"\nabr = {}')


def cli_run(*args: str) -> tuple[int, str, str]:
    """``atmsim ARGS`` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        with pytest.raises(SystemExit) as info:
            cli.main(list(args))
    return info.value.code, out.getvalue(), err.getvalue()


def cli_limited(address_space: int, *args: str) -> subprocess.CompletedProcess:
    """``atmsim ARGS`` in a process limited to ``address_space`` bytes (ulimit -v)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    return subprocess.run(
        [sys.executable, "-m", "atmsim", *args],
        capture_output=True,
        text=True,
        env=cli_env(),
        preexec_fn=limit,
        timeout=300,
    )


def one_line_error(path: Path, *sets: str) -> str:
    """The one line ``atmsim validate`` prints for a bad scenario (exit 2)."""
    argv = ["validate", str(path)]
    for item in sets:
        argv += ["--set", item]
    code, _, err = cli_run(*argv)
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: {path}: ")
    return lines[0]


# (name, scenario text, --set overrides, dotted key, words of the range)
OUT_OF_RANGE = [
    (
        "ip_rate_tiny",
        IP_FLOW.replace('rate = "155.52 Mbps"', 'rate = "0.001 bps"', 1),
        (),
        "links.a-sw.rate",
        'must be from 1 kbps to 1 Tbps, got "0.001 bps"',
    ),
    ("atm_rate_huge", TINY, ("links.ab.rate=1001 Gbps",), "links.ab.rate", "1 kbps to 1 Tbps"),
    ("atm_rate_above_1_tbps", TINY, ("links.ab.rate=1.5 Tbps",), "links.ab.rate", "to 1 Tbps"),
    (
        "delay_huge",
        TINY.replace('length = "10 km"', 'delay = "1e15 s"'),
        (),
        "links.ab.delay",
        "at most 1000000 s",
    ),
    (
        "delay_above_1000_s",
        TINY.replace('length = "10 km"', 'delay = "1001 s"'),
        (),
        "links.ab.delay",
        'must be from 0 s to 1000 s, got "1001 s"',
    ),
    (
        "length_huge",
        TINY.replace('length = "10 km"', 'length = "1e300 km"'),
        (),
        "links.ab.length",
        "at most 200000000 km",
    ),
    ("buffer_float", TINY, ("links.ab.buffer=1e30",), "links.ab.buffer", "got 1e+30"),
    ("buffer_2_40", TINY, ("links.ab.buffer=1099511627776",), "links.ab.buffer", "4294967294"),
    ("buffer_fraction", TINY, ("links.ab.buffer=100.5",), "links.ab.buffer", "got 100.5"),
    ("seed_2_64", TINY, ("run.seed=18446744073709551616",), "run.seed", "2^64 - 1"),
    ("seed_float", TINY, ("run.seed=1.5",), "run.seed", "whole number"),
    ("duration_huge", TINY, ("run.duration=1000001 s",), "run.duration", "at most 1000000 s"),
    ("count_1e9", TINY + "count = 1000000000\n", (), "sources.s.count", "from 1 to 100000"),
    ("mean_burst_half", GEOMETRIC, ("sources.s.mean_burst=0.5",), "sources.s.mean_burst", ">= 1"),
    ("mean_burst_nan", GEOMETRIC, ("sources.s.mean_burst=nan",), "sources.s.mean_burst", "nan"),
    ("rate_tiny", TINY, ("sources.s.rate=1e-9 cells/s",), "sources.s.rate", "0.001 cells/s"),
    (
        "on_zero",
        TINY.replace('kind = "cbr"', 'kind = "vbr_onoff"').replace(
            'rate = "10 Mbps"', 'peak = "10 Mbps"\non = "0 s"\noff = "1 ms"'
        ),
        (),
        "sources.s.on",
        "must be > 0 s and at most 1000000 s",
    ),
    (
        "frame_cells_big",
        TINY.replace('kind = "cbr"', 'kind = "frames"\nframe_cells = [1, 70000]'),
        (),
        "sources.s.frame_cells",
        "1 <= lo <= hi <= 65535",
    ),
    ("window_huge", FLOW_TINY + 'window = "1e999999999 GB"\n', (), "flows.tcp.window", "2^53"),
    (
        "window_2_gb_scaled",
        FLOW_TINY + 'window = "2 GB"\nwindow_scale = 14\n',
        (),
        "flows.tcp.window",
        "to 1073725440 bytes",
    ),
    (
        "cwnd_huge",
        FLOW_TINY,
        ("flows.tcp.initial_cwnd=1000001",),
        "flows.tcp.initial_cwnd",
        "1000000",
    ),
    ("tick_huge", FLOW_TINY, ("flows.tcp.timer=1001 s",), "flows.tcp.timer", "1 us to 1000 s"),
    ("rto_order", FLOW_TINY, ("flows.tcp.initial_rto=100 ms",), "flows.tcp.initial_rto", ">= min"),
    (
        "delayed_ack",
        FLOW_TINY,
        ("flows.tcp.delayed_ack=1001 s",),
        "flows.tcp.delayed_ack",
        "1000 s",
    ),
    ("nrm_300", ABR_FLOW, ("flows.tcp.abr.nrm=300",), "flows.tcp.abr.nrm", "from 2 to 256"),
    ("mrm_above_nrm", ABR_FLOW, ("flows.tcp.abr.mrm=64",), "flows.tcp.abr.mrm", "to nrm (32)"),
    ("adtf_long", ABR_FLOW, ("flows.tcp.abr.adtf=11 s",), "flows.tcp.abr.adtf", "10.23 s"),
    ("trm_short", ABR_FLOW, ("flows.tcp.abr.trm=10 us",), "flows.tcp.abr.trm", "100 us"),
    ("pcr_above_link", ABR_FLOW, ("flows.tcp.abr.pcr=1 Gbps",), "flows.tcp.abr.pcr", "first link"),
    ("tcr_above_pcr", ABR_FLOW, ("flows.tcp.abr.pcr=1 kbps",), "flows.tcp.abr.tcr", "<= pcr"),
    ("crm_big", ABR_FLOW, ("flows.tcp.abr.crm=16777216",), "flows.tcp.abr.crm", "16777215"),
    (
        "delta_big",
        FLOW_TINY.replace(
            "duplex = true", 'duplex = true\nalgorithm = { kind = "erica", delta = 11 }'
        ),
        (),
        "links.a-sw.algorithm.delta",
        "expected a number >= 0 and <= 10, got 11",
    ),
    (
        "erica_a",
        FLOW_TINY.replace(
            "duplex = true", 'duplex = true\nalgorithm = { kind = "erica_plus", a = 0 }'
        ),
        (),
        "links.a-sw.algorithm.a",
        ">= 1 and <= 10",
    ),
    (
        "interval_cells_float",
        FLOW_TINY.replace(
            "duplex = true", 'duplex = true\nalgorithm = { kind = "fmmra", interval_cells = 1e9 }'
        ),
        (),
        "links.a-sw.algorithm.interval_cells",
        "whole number from 1 to 1000000000, got 1000000000.0",
    ),
    (
        "efci_high",
        FLOW_TINY.replace(
            "duplex = true", 'duplex = true\nalgorithm = { kind = "efci", high = 4294967295 }'
        ),
        (),
        "links.a-sw.algorithm.high",
        "4294967294",
    ),
    (
        "probe_period",
        TINY + '[probes]\nperiod = "1 ps"\nqueue = "all"\n',
        (),
        "probes.period",
        "1 ns",
    ),
    (
        "red_max_th",
        IP_FLOW,
        ('links.sw-b.policy={ kind = "red", min_th = 1e300 }',),
        "links.sw-b.policy.min_th",
        "2^53",
    ),
    ("path_256_links", TINY, (), "", ""),  # replaced below
    ("template_n", '[template]\nkind = "n-source"\nn = 100001\n', (), "template.n", "100000"),
    (
        "template_km",
        '[template]\nkind = "n-source"\naccess_km = 1e300\n',
        (),
        "template.access_km",
        "2e+08 km",
    ),
]


def _long_path() -> str:
    """A chain of 257 nodes joined by 256 links, and a source along all of it."""
    nodes = "".join(f'n{k} = {{ kind = "switch" }}\n' for k in range(257))
    chain = [f"n{k}" for k in range(257)]
    links = "".join(
        f'[links.l{k}]\nfrom = "n{k}"\nto = "n{k + 1}"\nrate = "1 Mbps"\n' for k in range(256)
    )
    path = ", ".join(f'"{n}"' for n in chain)
    return (
        '[run]\nduration = "1 ms"\n[nodes]\n'
        + nodes
        + links
        + f'[sources.s]\nkind = "greedy"\npath = [{path}]\n'
    )


@pytest.mark.parametrize(
    ("name", "text", "sets", "key", "words"), OUT_OF_RANGE, ids=[c[0] for c in OUT_OF_RANGE]
)
def test_out_of_range_is_one_line_naming_key_and_range(
    tmp_path: Path, name: str, text: str, sets: tuple, key: str, words: str
) -> None:
    if name == "path_256_links":
        text, key, words = _long_path(), "sources.s.path", "at most 256 nodes (255 links"
    path = write(tmp_path, text)
    line = one_line_error(path, *[s for s in sets if not s.endswith("=")])
    if key:
        assert f": {key}: " in line, line
    assert words in line, line


def test_the_top_rate_is_spelled_in_tbps(tmp_path: Path) -> None:
    """1 Tbps, the documented top line rate, parses in its own unit."""
    code, out, err = cli_run(
        "validate", str(write(tmp_path, TINY)), "--set", "links.ab.rate=1 Tbps"
    )
    assert code == 0, err
    assert out.startswith("ok: ")


def test_a_chain_of_255_links_is_allowed(tmp_path: Path) -> None:
    text = _long_path().replace(', "n256"]', "]")
    scenario = load_text(tmp_path, text)
    assert len(scenario.sources["s"].path) == 256


@pytest.mark.parametrize(
    ("text", "key"),
    [
        (TINY.replace('kind = "cbr"', "kind = { a = 1 }"), "sources.s.kind"),
        (TINY.replace("buffer = 100", 'buffer = 100\npolicy = ["a", "a"]'), "links.ab.policy"),
        ('[template]\nkind = { kind = "atm" }\n', "template.kind"),
        ('[template]\nkind = ["gfc2"]\n', "template.kind"),
        (TINY.replace('duration = "10 ms"', "duration = 1979-05-27"), "run.duration"),
    ],
)
def test_tables_and_lists_where_a_scalar_belongs(tmp_path: Path, text: str, key: str) -> None:
    line = one_line_error(write(tmp_path, text))
    assert f": {key}" in line, line


def test_too_many_links_are_refused_before_expansion(tmp_path: Path) -> None:
    nodes = '"a{i}" = { kind = "host", count = 100000 }\n"b{i}" = { count = 100000 }\n'
    links = "".join(
        f'[links."l{k}-{{i}}"]\ncount = 100000\nfrom = "a{{i}}"\nto = "b{{i}}"\n'
        'rate = "1 Mbps"\nduplex = true\n'
        for k in range(6)
    )
    text = '[run]\nduration = "1 ms"\n[nodes]\n' + nodes + links
    started = time.perf_counter()
    line = one_line_error(write(tmp_path, text))
    assert time.perf_counter() - started < 10
    assert ": links.l0-{i}.count: the scenario makes 1200000 links" in line, line
    assert "at most 1000000 links" in line


def test_probes_beyond_memory_are_refused(tmp_path: Path) -> None:
    line = one_line_error(SCENARIOS / "md1.toml", "probes.period=1 ns", "run.duration=1 s")
    assert ": probes.period: the run needs ~" in line
    assert "1000000000 ticks x 1 series" in line
    assert line.endswith(
        "raise probes.period or shorten run.duration (from --set probes.period=1 ns)"
    )


def test_memory_estimate_counts_samples_and_entities() -> None:
    scenario = load_scenario(SCENARIOS / "md1.toml", ["run.duration=1 s", "probes.period=1 us"])
    estimate = scenario.memory_estimate()
    assert (estimate.samples, estimate.series) == (1_000_000, 1)
    assert estimate.probes == 1_000_000 * memory.BYTES_PER_SAMPLE
    entities = 2 * memory.BYTES_PER["nodes"] + memory.BYTES_PER["links"]
    entities += memory.BYTES_PER["vcs"] + memory.BYTES_PER["sources"]
    assert estimate.total == memory.BASE_BYTES + entities + estimate.probes
    assert str(estimate) == "~242 MiB"


def test_memory_limit_of_the_process_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "machine_memory", lambda: (200 << 20, "this process's limit"))
    with pytest.raises(Exception) as info:
        load_scenario(SCENARIOS / "md1.toml", ["run.duration=1 s", "probes.period=1 us"])
    assert "more than this process's limit (200 MiB)" in str(info.value)
    load_scenario(SCENARIOS / "md1.toml")  # 1000 samples fit


def test_machine_memory_is_known_here() -> None:
    have, what = memory.machine_memory()
    assert have is not None and have > 1 << 28 and what


def test_a_large_template_validates(tmp_path: Path) -> None:
    """20,000 TCP flows (the largest allowed n is 100,000; docs/validation.md gives the
    fuzzer's view of large counts). Their windows (1 MB each) are not all counted as held
    at once: their congestion windows grow only as the one bottleneck delivers."""
    text = '[template]\nkind = "n-source"\nn = 20000\nperiod = "1 s"\n'
    started = time.perf_counter()
    scenario = load_text(tmp_path, text)
    assert len(scenario.flows) == 1 and scenario.memory_estimate().total > 20000 * 12 << 10
    assert scenario.memory_estimate().total < 2 << 30
    assert time.perf_counter() - started < 60


CHAIN = """\
[run]
duration = "10 s"

[nodes]
a = { kind = "host" }
b = {}
c = { kind = "host" }

[links.ab]
from = "a"
to = "b"
rate = "2000 cells/s"

[links.bc]
from = "b"
to = "c"
rate = "1000 cells/s"

[sources.s]
kind = "cbr"
path = ["a", "b", "c"]
rate = "2000 cells/s"
"""
"""A source offering twice the cell rate of its second link, whose buffer is unlimited."""


def test_cells_piling_up_in_an_unlimited_buffer_are_counted(tmp_path: Path) -> None:
    """bc is offered 2000 cells/s against 1000: 10,000 cells wait there after 10 s."""
    estimate = load_text(tmp_path, CHAIN).memory_estimate()
    assert estimate.cells == 10_000
    assert estimate.cells_bytes == 10_000 * memory.BYTES_PER_CELL
    assert estimate.cells_at[0] == "links.bc.buffer"
    finite = load_text(
        tmp_path, CHAIN.replace('rate = "1000 cells/s"', 'rate = "1000 cells/s"\nbuffer = 50')
    )
    assert finite.memory_estimate().cells == 50


def test_an_unlimited_buffer_that_cannot_fit_is_refused(tmp_path: Path) -> None:
    """A 1 Tbps source into a 1 kbps link for 1000 s would queue 2.4e12 cells (170 TB):
    refused at validation, naming the buffer, instead of the core running out of memory."""
    text = (
        CHAIN.replace('"10 s"', '"1000 s"')
        .replace('"2000 cells/s"', '"1000 Gbps"')
        .replace('"1000 cells/s"', '"1 kbps"')
    )
    line = one_line_error(write(tmp_path, text))
    assert ": links.bc.buffer: the run needs ~" in line, line
    assert 'most of them at link "bc" (buffer "inf", offered 2.35849e+09 cells/s' in line
    assert line.endswith("give the link a finite buffer, offer less or shorten run.duration")


def test_probes_under_an_address_space_limit_are_refused(tmp_path: Path) -> None:
    """Under ulimit -v a run maps about twice what its probe samples touch: 2.6e7 samples
    (~2.5 GiB by the estimate) do not fit in 3.5 GiB of address space and are refused at
    probes.period (they once passed validation and failed in pyarrow's realloc, an
    internal error, exit 1)."""
    text = '[template]\nkind = "n-source"\nn = 15\nduration = "20 ms"\nperiod = "100 ns"\n'
    path = write(tmp_path, text)

    result = cli_limited(3584 << 20, "validate", str(path))
    assert result.returncode == 2, result.stderr
    assert ": probes.period: the run needs ~2.5 GiB of memory for its probes" in result.stderr
    assert "more than what this process may still map under ulimit -v" in result.stderr


@needs_core
def test_a_large_network_runs_in_little_memory(tmp_path: Path) -> None:
    """6,000 TCP flows over ATM (24,002 links, 12,000 VCs) run in 1.5 GiB of address space:
    a port keeps per-VC state only for what its policy reads (the weights of DFBA were
    once made for every port, 2.3 GB here, and the core ran out of memory)."""
    path = write(tmp_path, '[template]\nkind = "n-source"\nn = 6000\nduration = "1 us"\n')

    result = cli_limited(1536 << 20, "run", str(path), "--out", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("layer", ["atm", "ip"])
def test_one_byte_segments_with_huge_windows_run_or_are_refused(tmp_path: Path, layer) -> None:
    """MSS 1 byte, the largest window (65535 << 14 bytes) and an initial window of 10^6
    segments: a fuzz case of this shape passed the memory estimate and then aborted.
    Under an address-space limit of 3 GiB it must run with balanced ledgers or be
    refused in one line, never abort."""
    ip = '\nlayer = "ip"' if layer == "ip" else ""
    text = FLOW_TINY.replace('duration = "100 ms"', 'duration = "2 s"').replace(
        "duplex = true", "duplex = true" + ip
    ) + ('mss = 1\nwindow = "1073725440 B"\ninitial_cwnd = 1000000\n')
    path = write(tmp_path, text)

    result = cli_limited(3 << 30, "run", str(path), "--out", str(tmp_path / "run"))
    assert "Traceback" not in result.stderr and "panicked" not in result.stderr
    if result.returncode == 2:
        assert len(result.stderr.splitlines()) == 1, result.stderr
    else:
        assert result.returncode == 0, result.stderr
