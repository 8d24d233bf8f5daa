"""Tooling that checks atmsim rather than uses it: fingerprints of every example and
reproduce run, the ns-2 comparison, benchmarks and the scenario fuzzer.

Nothing in the user-facing package imports from here; the CLI's ``bench`` command
does, lazily.
"""
