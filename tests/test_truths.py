"""The truth suite (``atmsim validate-model``, atmsim.validation.truths): its analytic
formulas against values computed by hand, and its fast set, each truth passing or
failing only for the reason it is known to fail."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from atmsim.validation import theory, truths

from conftest import cli_main, needs_core

# --- the formulas, by hand ----------------------------------------------------------------


def test_pollaczek_khinchine_for_deterministic_service():
    # W_q = rho / (2 (1 - rho)) service times: 0.5 at rho 0.5, 2 at rho 0.8.
    assert theory.md1_mean_wait(0.5) == pytest.approx(0.5)
    assert theory.md1_mean_wait(0.8) == pytest.approx(2.0)
    assert theory.md1_mean_wait(0.0) == 0.0
    with pytest.raises(ValueError):
        theory.md1_mean_wait(1.0)


@pytest.mark.parametrize("rho", [0.1, 0.5, 0.9, 1.0, 2.0])
def test_md1k_without_waiting_room_is_erlang_loss_with_one_server(rho):
    # No waiting place: an arrival is lost when the server is busy, rho / (1 + rho)
    # whatever the service distribution (Erlang's B formula with one server).
    assert theory.md1k_loss(rho, 0) == pytest.approx(rho / (1 + rho))


def test_md1k_with_one_waiting_place_by_hand():
    # K = 2: the departure chain has states 0 and 1 with identical rows (a0, 1 - a0),
    # so pi_0 = a0 = e^-rho and the loss is 1 - 1 / (e^-rho + rho).
    for rho in (0.5, 1.0, 1.5):
        assert theory.md1k_loss(rho, 1) == pytest.approx(1 - 1 / (math.exp(-rho) + rho))


def test_md1k_probabilities_sum_to_one_and_loss_falls_with_the_buffer():
    for rho in (0.5, 0.9, 1.2):
        probabilities = theory.md1k_state_probabilities(rho, 10)
        assert len(probabilities) == 12
        assert sum(probabilities) == pytest.approx(1.0)
        losses = [theory.md1k_loss(rho, b) for b in (0, 1, 3, 10, 30)]
        assert losses == sorted(losses, reverse=True)
    # Overloaded and a large buffer: the loss tends to 1 - 1 / rho.
    assert theory.md1k_loss(1.2, 60) == pytest.approx(1 - 1 / 1.2, rel=1e-3)


def test_karol_output_queueing():
    # ((N - 1) / N) p / (2 (1 - p)): N = 2, p = 0.8 gives 1 slot; N = 1 never waits;
    # many inputs tend to M/D/1.
    assert theory.karol_output_wait(2, 0.8) == pytest.approx(1.0)
    assert theory.karol_output_wait(1, 0.9) == 0.0
    assert theory.karol_output_wait(10**6, 0.5) == pytest.approx(0.5, rel=1e-5)


def test_cells_and_the_aal5_ceiling():
    # 512 + 56 = 568 bytes: 12 cells; 1460: 32 cells; 9180: 193 cells.
    assert [theory.cells_per_segment(m) for m in (512, 1460, 9180)] == [12, 32, 193]
    cps = 155.52e6 / 424
    assert theory.aal5_goodput_ceiling(cps, 512) == pytest.approx(cps * 8 * 512 / 12)
    # ABR: the data VC's cells D (data and forward RM) share the sender's port with
    # the ACK VC's backward RM cells b = 2 D / (32 x 12) in proportion to what is
    # offered, R and b: D = R^2 / (R + b); 31 of every 32 of D are data, 12 a segment.
    abr = theory.aal5_goodput_ceiling(cps, 512, nrm=32)
    data_vc = abr / (8 * 512) * 12 * 32 / 31
    assert data_vc == pytest.approx(cps**2 / (cps + 2 * data_vc / (32 * 12)), rel=1e-12)
    # Within (2 / (Nrm c))^2 of counting the backward RM cells at their full rate.
    budget = cps * 8 * 512 * 31 / (12 * 32 + 2)
    assert abr / budget - 1 == pytest.approx((2 / (32 * 12)) ** 2, rel=0.2)
    assert theory.ip_goodput_ceiling(10e6, 960) == pytest.approx(9.6e6)


def test_round_trips():
    # ATM, 3 hops of 1 ms, MSS 512 (12 cells): (12 + 2 + 2 x 2) cell times + 6 ms.
    assert theory.atm_base_rtt(1e-6, [1e-3] * 3, 512) == pytest.approx(18e-6 + 6e-3)
    # IP, one hop of 10 Mbps and 1 ms, MSS 960: 0.8 ms + 32 us + 2 ms.
    assert theory.ip_base_rtt([10e6], [1e-3], 960) == pytest.approx(2.832e-3)


def test_lakshman_madhow_sawtooth():
    # beta = 0: 3/4; beta = 0.5: 3/4 x 2.25 / 1.75; beta >= 1: the link stays full.
    assert theory.reno_sawtooth_utilisation(100, 0) == pytest.approx(0.75)
    assert theory.reno_sawtooth_utilisation(100, 50) == pytest.approx(0.75 * 2.25 / 1.75)
    assert theory.reno_sawtooth_utilisation(100, 100) == 1.0
    assert theory.reno_sawtooth_utilisation(100, 150) == 1.0


def test_usable_window_keeps_one_segment_whatever_the_scale():
    # Half a segment asked for: one whole segment, also where MSS is not a multiple of
    # 2^scale (1460 = 91.25 x 16).
    assert theory.usable_window(700, 1460, 3, 65535 << 3) == 1460
    assert theory.usable_window(1470, 1460, 4, 65535 << 4) == 1460
    # Whole segments of the window written: 100000 bytes at scale 0 are capped by the
    # 16-bit field at 65535, 44 segments of 1460.
    assert theory.usable_window(100000, 1460, 0, 65535) == 44 * 1460
    # Ten segments and 5 bytes at scale 4: the field holds 912 x 16 = 14592 bytes, 9
    # whole segments.
    assert theory.usable_window(14605, 1460, 4, 65535 << 4) == 9 * 1460


def test_internet_checksum_rfc1071_example():
    # RFC 1071 section 3: the words 0001 f203 f4f5 f6f7 sum to ddf2; checksum 220d.
    assert theory.internet_checksum([0x0001, 0xF203, 0xF4F5, 0xF6F7]) == 0x220D
    assert theory.internet_checksum([]) == 0xFFFF


@needs_core
def test_the_cores_incremental_update_rfc1624_example():
    from atmsim._core import checksum_update

    # RFC 1624 section 4: HC 0xDD2F, m 0x5555 -> m' 0x3285 gives 0x0000 (eqn. 3).
    assert checksum_update(0xDD2F, 0x5555, 0x3285) == 0x0000
    assert checksum_update(0x1234, 7, 7) == 0x1234


def test_least_jain_in_a_band():
    # A share f of the values at 1 and the rest at r: J(f) = (f + (1 - f) r)^2 / (f +
    # (1 - f) r^2), least at f = r / (1 + r): 4 r / (1 + r)^2.
    def jain(f: float, r: float) -> float:
        return (f + (1 - f) * r) ** 2 / (f + (1 - f) * r * r)

    assert theory.least_jain_in_band(1.1) == pytest.approx(jain(1.1 / 2.1, 1.1), rel=1e-12)
    assert theory.least_jain_in_band(1.1) == pytest.approx(4.4 / 4.41, rel=1e-12)
    assert jain(0.5, 1.1) > theory.least_jain_in_band(1.1)
    assert theory.least_jain_in_band(1.0) == 1.0


# --- the suite's shape ------------------------------------------------------------------------


def test_every_truth_names_its_source_grid_and_tolerance():
    names = [truth.name for truth in truths.TRUTHS]
    assert len(names) == len(set(names)) >= 12
    for truth in truths.TRUTHS:
        assert truth.source and truth.tolerance and truth.title
        assert truth.fast and len(truth.full) >= len(truth.fast)
        assert truth.seeds(False) and truth.seeds(True)


def test_selection_refuses_an_unknown_truth():
    assert [t.name for t in truths.select(["md1-wait"])] == ["md1-wait"]
    with pytest.raises(truths.TruthInputError, match="no such truth"):
        truths.select(["md1-wait", "nosuch"])


def test_a_check_outside_its_range_fails():
    check = truths.Check("t", "p", "m", 2.0, 1.0, 0.9, 1.1, "why")
    assert check.verdict == "FAIL"
    check.simulated = 1.0
    assert check.verdict == "pass"
    assert truths.Check("t", "p", "m", math.nan, 1.0, 0.9, 1.1, "why").verdict == "FAIL"


# --- the fast set ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fast_outcome():
    return truths.run_suite(truths.TRUTHS, full=False, jobs=2)


def _param(truth: truths.Truth):
    if truth.known:
        # A model defect or a claim that does not hold, known to the project: the
        # truth must keep failing until it is fixed (strict: a pass says "fixed").
        return pytest.param(truth.name, marks=pytest.mark.xfail(strict=True, reason=truth.known))
    return truth.name


@needs_core
@pytest.mark.parametrize("name", [_param(truth) for truth in truths.TRUTHS])
def test_fast_set(fast_outcome, name):
    truth = truths.BY_NAME[name]
    checks = fast_outcome.checks[name]
    assert checks
    failing = [c for c in checks if c.verdict == "FAIL"]
    assert not failing, "; ".join(f"{c.point}: {c.metric} {c.simulated}" for c in failing)
    assert fast_outcome.verdict(truth) == "pass"


@needs_core
def test_fast_set_fails_only_for_known_causes(fast_outcome):
    # Every failing check carries the cause its truth knows of: a new failure (a new
    # defect, or a run that broke) has none and fails here.
    unknown = [c for c in fast_outcome.failed if not c.known]
    assert not unknown, "; ".join(f"{c.truth} {c.point}: {c.metric}" for c in unknown)
    failing_truths = {c.truth for c in fast_outcome.failed}
    assert failing_truths <= {t.name for t in truths.TRUTHS if t.known}


@needs_core
def test_fast_set_table_fits_80_columns_and_names_failures(fast_outcome):
    lines = truths.table_lines(fast_outcome)
    assert max(len(line) for line in lines) <= 80
    text = "\n".join(lines)
    for truth in truths.TRUTHS:
        assert truth.name in text
    if fast_outcome.failed:
        assert "Failures" in text and "likely cause" in text


@needs_core
def test_fast_set_outputs(fast_outcome, tmp_path):
    written = truths.write_outputs(fast_outcome, tmp_path / "out", "atmsim validate-model")
    rows = list(csv.DictReader(written[0].open(encoding="utf-8")))
    assert len(rows) == sum(len(c) for c in fast_outcome.checks.values())
    assert {"truth", "point", "simulated", "theory", "low", "high", "tolerance", "verdict"} <= (
        set(rows[0])
    )
    report = json.loads(written[1].read_text(encoding="utf-8"))
    assert [t["name"] for t in report["truths"]] == [t.name for t in truths.TRUTHS]
    assert all(t["source"] for t in report["truths"])


# --- the command -------------------------------------------------------------------------------


@needs_core
def test_the_command_runs_a_truth_and_writes_its_points(tmp_path: Path, capsys):
    out = tmp_path / "truths"
    code = cli_main(
        "validate-model", "--only", "rfc1624-checksum", "--jobs", "1", "--out", str(out)
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "rfc1624-checksum" in printed and "RFC 1624" in printed
    assert (out / "truths.csv").is_file() and (out / "truths.json").is_file()


@needs_core
def test_the_command_exits_1_naming_a_failing_truth(capsys):
    # ABR with MCRs: the switch algorithms do not share the excess above the MCRs
    # (a known failure, with its cause printed).
    code = cli_main("validate-model", "--only", "abr-mcr-share", "--jobs", "1")
    printed = capsys.readouterr().out
    assert code == 1
    assert "failing truths: abr-mcr-share" in printed
    assert "erica mcr mcrs=0/20/60" in printed
    assert "likely cause: the switch algorithms share the ABR capacity" in printed


@needs_core
def test_ctrl_c_with_workers_exits_130_quietly(tmp_path: Path):
    """Ctrl-C from a terminal reaches the whole process group, the workers too: they
    leave it to the command, which ends them and exits 130 without a traceback."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from conftest import cli_env

    process = subprocess.Popen(
        [sys.executable, "-m", "atmsim", "validate-model", "--only", "md1-wait", "--full"]
        + ["--jobs", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
        cwd=tmp_path,
        start_new_session=True,
    )
    time.sleep(3.0)  # the workers are simulating
    os.killpg(process.pid, signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stdout + stderr
