"""Developer tooling that checks atmsim rather than uses it, kept out of the package
users install: the fingerprints of every example and reproduce run
(``devtools.fingerprints``), the scenario fuzzer (``devtools.fuzz``), the comparison
with ns-2 (``devtools.ns2_compare``), where ``atmsim reproduce`` spends its time
(``devtools.reproduce_profile``) and where a run of many VCs spends its time and
memory (``devtools.run_phases``). Run from the repository root, as
``.venv/bin/python -m devtools.<module>`` or through ``scripts/``; the tests import it
(pytest puts the repository root on the path: pyproject.toml).

What users run stays in ``atmsim.validation``: ``atmsim bench`` (with the ns-2 dumbbell
harness) and ``atmsim validate-model`` (the truths).
"""
