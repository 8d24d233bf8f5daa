"""Every example and reproduce run gives the golden digests of tests/fingerprints.json,
with the fast paths on and with them off (every cell and packet on the plain event path).

A refactoring or a speed-up must leave them unchanged. An intended model change
updates them once (``python -m devtools.fingerprints --update``) and says
why in the CHANGELOG.
"""

from __future__ import annotations

import pytest

from devtools import fingerprints

from conftest import needs_core


def test_every_run_has_a_golden_digest():
    assert set(fingerprints.load()) == set(fingerprints.fingerprint_runs())


@needs_core
@pytest.mark.parametrize("fast_paths", ["true", "false"])
def test_every_run_gives_its_golden_digest(fast_paths):
    now = fingerprints.compute(extra=(f"run.fast_paths={fast_paths}",))
    assert fingerprints.differences(fingerprints.load(), now) == []
