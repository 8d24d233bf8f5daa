"""Tooling that checks atmsim and that users run: ``atmsim bench`` (``bench``,
``memory_bench``, and the ns-2 dumbbell harness ``ns2`` it times) and ``atmsim
validate-model`` (``truths`` against ``theory``).

Nothing else in the user-facing package imports from here; the CLI's ``bench`` and
``validate-model`` commands do, lazily. What only developers run (the fingerprints,
the fuzzer, the ns-2 comparison) is in ``devtools/`` at the repository root, outside
the package.
"""
