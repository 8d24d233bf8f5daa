"""``atmsim reproduce``: the published experiments of the papers, side by side with ours.

An ``Experiment`` names one published result (a section, a table row, a figure
comparison, a claim across rows): the scenario files it runs
(``scenarios/reproduce/*.toml``, with every parameter the paper does not state
chosen there with a comment), and the published quantities with their
tolerances.

Every experiment runs once per run seed (``RUN_SEEDS``: ``run.seed`` = 1..10).
The core takes cells that reach a port at the same instant in an order drawn
from the run seed, so the run seeds are samples of one configuration; lossy TCP runs,
where that order decides which source loses, differ most. Each quantity is
computed per run seed, judged on its mean (``atmsim.compare.Tolerance``), and
reported with the Student-t 95 % interval of that mean and the number of run seeds
(``stats``). The files of run seed 1 (scenario.toml, summary.json,
series.parquet, figures) are written; every run seed's value goes to seeds.csv.

A published value is judged once. Where a paper publishes one configuration's
value in several tables, the other places get a row that names the experiment
judging it (``Quantity.see``, verdict n/a) and run nothing.

A match counts only if it discriminates. Each judged quantity carries the
predictions of one or more null models (``NullModel``: a prediction from the
paper's inputs alone, with no simulation, such as "each VC gets exactly its MCR"
or "every source gets an equal share"), judged by the same tolerance; a row
that a null model also matches tests nothing about the mechanism, and the
counts set the matches that beat every null model apart (``beats_nulls``). A row
that a null model matches whatever we simulate is shown, not judged
(``Quantity.unjudged``: the reason), with its tolerance and the null models'
verdicts kept so that the reason can be checked.

``run_experiments`` runs every (experiment, run seed) on a process pool and returns
one ``Outcome`` per experiment, its rows: published, simulated (the mean),
ci95_low, ci95_high, n_seeds, tolerance, verdict. Identical runs are simulated
once (``runner``): a configuration several experiments share (the same core
JSON), once per run seed; a run that draws no random number
(``atmsim.determinism.seed_dependence`` empty), once for every run seed.

One module per paper (``seed000`` .. ``seed004``) lists its
experiments; ``registry()`` gathers them. docs/reproduction.md lists which
tolerance each kind of published number gets and why.
"""

# The package's modules, each importing only those listed before it:
#
# - stats.py: the mean and Student-t interval over the run seeds;
# - papers.py: the documents and their readable ids;
# - experiments.py: Quantity, NullModel, Run, Experiment and the run seeds;
# - nulls.py, measures.py, seed000.py .. seed004.py: the experiments;
# - catalog.py: the registry of the experiments and the ids accepted;
# - csv_tables.py: table.csv and seeds.csv;
# - judging.py: measuring, judging and aggregating one experiment's seeds;
# - runner.py: running (experiment, run seed) pairs on a process pool, identical runs once;
# - inventory.py, report.py: the coverage inventory and the command's report.
#
# The names below are the package's interface (``from atmsim.reproduce import ...``).

from __future__ import annotations

from .catalog import UnknownExperiment, registry, seed_ids, select, valid_ids
from .csv_tables import CSV_COLUMNS, SEED_COLUMNS, null_text, write_csv, write_seed_csv
from .experiments import (
    FIGURE_KINDS,
    RUN_SEEDS,
    SCENARIO_DIR,
    SEEDS,
    Experiment,
    Extracted,
    NullModel,
    NullPrediction,
    Quantity,
    Run,
    seed_override,
)
from .judging import (
    Outcome,
    SeedOutcome,
    accepted_range,
    aggregate,
    crosses_bound,
    evaluate,
    judge,
    measure,
)
from .runner import draw_figures, run_dir, run_experiments, run_seed

__all__ = [
    "CSV_COLUMNS",
    "FIGURE_KINDS",
    "RUN_SEEDS",
    "SCENARIO_DIR",
    "SEEDS",
    "SEED_COLUMNS",
    "Experiment",
    "Extracted",
    "NullModel",
    "NullPrediction",
    "Outcome",
    "Quantity",
    "Run",
    "SeedOutcome",
    "UnknownExperiment",
    "accepted_range",
    "aggregate",
    "crosses_bound",
    "draw_figures",
    "evaluate",
    "judge",
    "measure",
    "null_text",
    "registry",
    "run_dir",
    "run_experiments",
    "run_seed",
    "seed_ids",
    "seed_override",
    "select",
    "valid_ids",
    "write_csv",
    "write_seed_csv",
]
