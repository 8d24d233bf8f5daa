"""Fingerprints: a digest of every example's and every reproduce run's results.

In the style of OMNeT++'s fingerprint tests: each run's summary (less what
depends on the machine or on how the run loop sliced time: ``wall_s``,
``events``, ``atmsim_version``) and its series are hashed; the digests are
kept in ``tests/fingerprints.json`` and the test suite checks that every run
still gives them, with the fast paths on and off. A refactoring or a
speed-up must leave them unchanged; an intended model change updates them
once, with the reason in the CHANGELOG::

    .venv/bin/python -m devtools.fingerprints --update

Without ``--update`` the command checks and lists the runs whose digests
moved (exit 1), and ``--fast-paths off`` checks the plain event path.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Optional

from atmsim._lazy import argparse
from atmsim.api import run
from atmsim.reproduce import registry, seed_override
from atmsim.resources import scenario_dir

REPO_ROOT = Path(__file__).resolve().parents[1]
"""The source checkout this module sits in."""

FINGERPRINT_FILE = REPO_ROOT / "tests" / "fingerprints.json"
"""Where the golden digests are kept."""

EXAMPLES_DIR = scenario_dir()
"""The example scenarios (every ``*.toml`` directly in it; package data)."""

VOLATILE_KEYS = ("wall_s", "events", "atmsim_version")
"""Summary keys left out of the digest: they depend on the machine, on the
version string, or (``events``) on the fast paths and on where the run
loop's slices of simulated time end, none of which may change results."""


def fingerprint_runs() -> dict[str, tuple[Path, tuple[str, ...]]]:
    """Every run that has a fingerprint: name -> (scenario file, overrides).

    The examples are ``example/<stem>``; the reproduce runs are
    ``reproduce/<file>`` followed by their overrides in brackets, each
    distinct (file, overrides) pair once however many experiments use it.
    A reproduce run is fingerprinted with its file's seed (run seed 1 of
    ``atmsim reproduce``) and, when its experiment runs several run seeds, with
    the second (``run.seed=2`` added): that pins the seeded path; the other
    run seeds differ from it only by the number, and fingerprinting all ten would
    multiply this check's time by ten.
    """
    runs: dict[str, tuple[Path, tuple[str, ...]]] = {}
    for path in sorted(EXAMPLES_DIR.glob("*.toml")):
        runs[f"example/{path.stem}"] = (path, ())
    for experiment in registry().values():
        variants: list[tuple[str, ...]] = [()]
        if len(experiment.seeds) > 1:
            variants.append((seed_override(experiment.seeds[1]),))
        for spec in experiment.runs.values():
            for extra in variants:
                overrides = (*spec.overrides, *extra)
                name = f"reproduce/{spec.scenario}"
                if overrides:
                    name += "[" + ", ".join(overrides) + "]"
                runs[name] = (spec.path, overrides)
    return dict(sorted(runs.items()))


DERIVED_KEYS = ("fairness",)
"""Summary keys left out of the digest because Python computes them from the rest of
the summary and the scenario (``atmsim.rundir.complete_summary``): the digest of
what they are computed from pins them."""


def digest_result(summary: dict, series: Any) -> dict[str, str]:
    """The digests of one run: its summary (without VOLATILE_KEYS and DERIVED_KEYS)
    and its series."""
    left_out = (*VOLATILE_KEYS, *DERIVED_KEYS)
    kept = {key: value for key, value in summary.items() if key not in left_out}
    text = json.dumps(kept, sort_keys=True, separators=(",", ":"), allow_nan=True)
    series_hash = hashlib.sha256()
    series_hash.update(series["time_s"].to_numpy(dtype="<f8").tobytes())
    series_hash.update("\n".join(map(str, series["entity"])).encode())
    series_hash.update("\n".join(map(str, series["metric"])).encode())
    series_hash.update(series["value"].to_numpy(dtype="<f8").tobytes())
    return {
        "summary": hashlib.sha256(text.encode()).hexdigest()[:32],
        "series": series_hash.hexdigest()[:32],
        "series_rows": str(len(series)),
    }


def run_one(name: str, path: Path, overrides: tuple[str, ...], extra: tuple[str, ...]) -> tuple:
    """Run one fingerprinted scenario; (name, digests)."""
    result = run(path, overrides=[*overrides, *extra], progress=False)
    return name, digest_result(result.summary, result.series)


def compute(
    names: Optional[Iterable[str]] = None, extra: tuple[str, ...] = (), jobs: int = 0
) -> dict[str, dict[str, str]]:
    """The digests of the given runs (default: all), ``extra`` overrides added to each,
    on ``jobs`` processes (0: one per core)."""
    runs = fingerprint_runs()
    chosen = list(runs) if names is None else list(names)
    jobs = jobs or os.cpu_count() or 1
    out: dict[str, dict[str, str]] = {}
    if jobs <= 1:
        for name in chosen:
            key, digests = run_one(name, *runs[name], extra)
            out[key] = digests
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(run_one, name, *runs[name], extra) for name in chosen]
            for future in futures:
                key, digests = future.result()
                out[key] = digests
    return dict(sorted(out.items()))


def load() -> dict[str, dict[str, str]]:
    """The golden digests (empty before the first ``--update``)."""
    if not FINGERPRINT_FILE.is_file():
        return {}
    return json.loads(FINGERPRINT_FILE.read_text(encoding="utf-8"))["runs"]


def save(digests: dict[str, dict[str, str]]) -> None:
    """Write the golden digests."""
    document = {
        "about": "Digests of every example and reproduce run (summary without "
        + ", ".join(VOLATILE_KEYS)
        + "; series). Update: python -m devtools.fingerprints --update",
        "runs": digests,
    }
    FINGERPRINT_FILE.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")


def differences(golden: dict, now: dict) -> list[str]:
    """One line per run whose digests differ, or that is missing on either side."""
    lines = []
    for name in sorted(set(golden) | set(now)):
        if name not in now:
            lines.append(f"{name}: not run")
        elif name not in golden:
            lines.append(f"{name}: no golden digest")
        else:
            moved = [key for key in now[name] if golden[name].get(key) != now[name][key]]
            if moved:
                lines.append(f"{name}: {', '.join(moved)} changed")
    return lines


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m devtools.fingerprints", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--update", action="store_true", help="write the golden digests")
    parser.add_argument(
        "--fast-paths", choices=("on", "off"), default="on", help="run with the fast paths on/off"
    )
    parser.add_argument("--jobs", type=int, default=0, help="processes (default: the cores)")
    parser.add_argument("runs", nargs="*", help="run names (default: all)")
    args = parser.parse_args(argv)
    extra = () if args.fast_paths == "on" else ("run.fast_paths=false",)
    now = compute(args.runs or None, extra, args.jobs)
    if args.update:
        golden = load() if args.runs else {}
        golden.update(now)
        save(golden)
        print(f"wrote {len(now)} fingerprints to {FINGERPRINT_FILE}")
        return 0
    golden = load()
    if args.runs:
        golden = {name: golden[name] for name in args.runs if name in golden}
    lines = differences(golden, now)
    for line in lines:
        print(line)
    print(f"{len(now)} runs, {len(lines)} differ")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
