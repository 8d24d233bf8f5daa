"""``atmsim report DIR``: one static, self-contained HTML page for a reproduce output, a
sweep output or a single run directory (figures embedded as base64 PNG; no server, no
script, no file beside it).

- Reproduce (a directory of experiment folders with table.csv): per document its
  citation, the verdicts counted, and per experiment the published values against
  the simulated means with their 95 % intervals, tolerance, verdict (coloured) and
  the tolerance's reason, then its figures; each document's analysis of its misses
  from docs/reproduction.md (shipped with the package) follows its experiments.
- Sweep (sweep.json and results.parquet): each metric against each swept parameter,
  the mean over the run seeds with its Student-t 95 % interval
  (``atmsim.reproduce.stats.spread``), one line per combination of the other
  parameters; the table of those means; the runs that failed.
- Run (summary.json): the tables of ``atmsim run`` (ports, VCs, flows, ...), the
  ledgers, the fairness against the max-min rates, and the run's figures (drawn
  from series.parquet when the directory has none).

The page is rendered by jinja2 from the templates shipped in
``atmsim/report_templates`` (one per kind, on a common base), with autoescaping
on: every value read from a directory is escaped; only the markdown of
docs/reproduction.md, rendered by markdown-it, goes in as HTML.
"""

from __future__ import annotations

import base64
import csv
import json
import math
import numbers
import re
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

from ._lazy import matplotlib
from ._lazy import pandas as pd
from ._lazy import pyplot as plt
from .binding import package_version
from .columnar import TABLE_FILES, table_file
from .fairness import FairnessInputError, fairness_of_run_dir, fairness_table
from .outputs import check_out_file, naming, write_file
from .plots import PlotInputError, plot_run_dir
from .reproduce import registry
from .reproduce.display import number
from .reproduce.papers import BY_SEED, PAPERS, readable
from .reproduce.stats import spread
from .resources import data_dir
from .results import (
    RunDirError,
    bad_summary,
    ledger_lines,
    read_series,
    read_summary,
    result_tables,
)

REPORT_FILE = "report.html"
MAX_SERIES_LINES = 8
"""A sweep figure draws at most this many combinations of the other parameters."""

TEMPLATES = Path(__file__).parent / "report_templates"
"""The report's jinja2 templates (package data)."""


class ReportInputError(ValueError):
    """A directory that is none of the three kinds (one line)."""


def _environment():
    """The jinja2 environment of the report templates, autoescaping on."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )


def _render(template: str, title: str, **context: Any) -> str:
    """A page of ``template`` (which extends base.html.j2): the title, the atmsim
    version and the time it was written, and ``context``."""

    return (
        _environment()
        .get_template(template)
        .render(
            title=title,
            version=package_version(),
            stamp=time.strftime("%Y-%m-%d %H:%M"),
            **context,
        )
    )


def _png(path: Path) -> dict:
    """A figure for the templates' ``figure`` macro: its name and base64 PNG data."""
    return {"name": path.stem, "data": base64.b64encode(path.read_bytes()).decode("ascii")}


def _table(columns: list[str], rows: list[list[Any]], classes: Optional[list] = None) -> dict:
    """A table for the templates' ``table`` macro; ``classes[r][c]`` is a cell's class
    ("num", "match", ...)."""
    return {"columns": columns, "rows": rows, "classes": classes}


def _number(value: Any) -> str:

    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    return number(x)


# --- which kind -----------------------------------------------------------------------------


def kind_of(directory: Path) -> str:
    """ "reproduce", "sweep" or "run"; ReportInputError otherwise."""
    if not directory.is_dir():
        raise ReportInputError(f"{directory}: no such directory")
    if (directory / "sweep.json").is_file() and (directory / "results.parquet").is_file():
        return "sweep"
    if any((child / "table.csv").is_file() for child in directory.iterdir() if child.is_dir()):
        return "reproduce"
    # A run directory still marked INCOMPLETE is a run's too: run_page says it is
    # incomplete rather than "not an atmsim output".
    if (directory / "summary.json").exists() or (directory / "INCOMPLETE").exists():
        return "run"
    raise ReportInputError(
        f"{directory}: not an atmsim output; expected a reproduce --out (experiment folders "
        "with table.csv), a sweep --out (sweep.json, results.parquet) or a run directory "
        "(summary.json)"
    )


def write_report(directory: Path, out: Optional[Path] = None) -> Path:
    """Write the report of ``directory`` to ``out`` (default ``directory/report.html``),
    through a temporary file renamed into place; its path. Raises ReportInputError for
    a directory that is no atmsim output, OutDirError for a target that may not be
    written (``atmsim.outputs.check_out_file``)."""

    directory = Path(directory)
    kind = kind_of(directory)
    # The target is checked before the page is made: a new path or a regular file,
    # never a device, a directory or a symbolic link (OutDirError, atmsim.outputs).
    target = check_out_file(Path(out) if out is not None else directory / REPORT_FILE)
    if kind == "reproduce":
        text = reproduce_page(directory)
    elif kind == "sweep":
        text = sweep_page(directory)
    else:
        text = run_page(directory)
    with naming(target.parent):
        target.parent.mkdir(parents=True, exist_ok=True)
    return write_file(target, text)


# --- reproduce ------------------------------------------------------------------------------


def _docs_sections() -> dict[str, str]:
    """docs/reproduction.md (package data) split by paper: the paper's id (``seed000``) -> the
    markdown of its "Misses and their likely causes" subsection ("" when it has none). A
    paper's section is the ``## `` heading that names its id in backticks."""

    path = data_dir() / "docs" / "reproduction.md"
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8")
    sections: dict[str, str] = {}
    for block in re.split(r"(?m)^## ", text)[1:]:
        heading, _, body = block.partition("\n")
        found = re.search(r"`(seed\d{3})`", heading)
        if not found:
            continue
        misses = re.split(r"(?m)^### ", body)
        for part in misses[1:]:
            title, _, content = part.partition("\n")
            if title.strip().lower().startswith("misses"):
                sections[found.group(1)] = content.strip()
    return sections


def _docs_anchor(seed: str) -> str:
    """The GitHub-style anchor of the paper's section in docs/reproduction.md (``seed`` is
    the paper's id, ``seed000``)."""

    path = data_dir() / "docs" / "reproduction.md"
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("## ") and f"`{seed}`" in line:
                slug = re.sub(r"[^\w\- ]", "", line[3:].strip().lower()).replace(" ", "-")
                return "#" + slug
    return ""


def _markdown(text: str) -> str:
    from markdown_it import MarkdownIt  # a dependency of rich

    return MarkdownIt("commonmark").enable("table").render(text)


def _read_table(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def reproduce_page(directory: Path) -> str:
    from markupsafe import Markup

    experiments = registry()
    folders = sorted(child for child in directory.iterdir() if (child / "table.csv").is_file())
    by_seed: dict[str, list[Path]] = {}
    for folder in folders:
        by_seed.setdefault(folder.name.split("-", 1)[0], []).append(folder)
    order = {key: n for n, key in enumerate(experiments)}
    misses_docs = _docs_sections()
    overview_rows, overview_classes = [], []
    documents: list[dict] = []
    docs_path = _docs_link()
    for seed in [paper.seed for paper in PAPERS if paper.seed in by_seed] + sorted(
        set(by_seed) - set(BY_SEED)
    ):
        paper = BY_SEED.get(seed)
        chosen = sorted(by_seed[seed], key=lambda f: order.get(f.name, 10**6))
        rows_all = [row for folder in chosen for row in _read_table(folder / "table.csv")]
        counts = {v: sum(r["verdict"] == v for r in rows_all) for v in ("match", "miss", "n/a")}
        beats = sum(r.get("beats_nulls") == "yes" for r in rows_all)
        overview_rows.append(
            [
                paper.id if paper else seed,
                paper.citation if paper else seed,
                len(chosen),
                counts["match"],
                beats,
                counts["miss"],
                counts["n/a"],
            ]
        )
        overview_classes.append(
            ["", "", "num", "match", "num", "miss" if counts["miss"] else "num", "na"]
        )
        analysis = misses_docs.get(seed)
        documents.append(
            {
                "anchor": f"doc-{seed}",
                "title": f"{paper.id} ({seed}): {paper.title}" if paper else seed,
                "seed": seed,
                "citation": paper.citation if paper else "",
                "topic": paper.topic if paper else "",
                "match": counts["match"],
                "miss": counts["miss"],
                "na": counts["n/a"],
                "beats": beats,
                "experiments": [
                    _experiment_section(folder, experiments.get(folder.name), readable)
                    for folder in chosen
                ],
                "link": f"{docs_path}{_docs_anchor(seed)}" if docs_path else "",
                # docs/reproduction.md as HTML: the package's own text, rendered here
                "analysis": Markup(_markdown(analysis)) if analysis else "",
            }
        )
    overview = _table(
        ["id", "citation", "experiments", "match", "beat every null model", "miss", "n/a"],
        overview_rows,
        overview_classes,
    )
    return _render(
        "reproduce.html.j2",
        f"atmsim reproduce: {directory}",
        overview=overview,
        documents=documents,
    )


def _docs_link() -> str:
    """A file: URI of the shipped docs/reproduction.md (the same text as the repository's)."""

    path = data_dir() / "docs" / "reproduction.md"
    return path.resolve().as_uri() if path.is_file() else ""


def _nulls_cell(row: dict) -> str:
    """A table.csv row's null models and whether the match beats them all."""
    text = row.get("null_models") or ""
    if row.get("beats_nulls") == "yes":
        return f"beats every null model: {text}"
    if row.get("beats_nulls") == "no":
        return f"a null model also matches: {text}"
    return text


def _experiment_section(folder: Path, experiment: Any, readable) -> dict:
    """One experiment of the reproduce page: its names, its table.csv, its figures."""
    rows = _read_table(folder / "table.csv")
    columns = [
        "quantity",
        "unit",
        "published",
        "simulated (mean)",
        "95 % interval",
        "run seeds",
        "tolerance",
        "verdict",
        "null models (prediction, verdict)",
        "note",
        "tolerance's reason",
    ]
    table_rows, classes = [], []
    for row in rows:
        interval = ""
        if row["ci95_low"] not in ("", "NaN") and row["ci95_high"] not in ("", "NaN"):
            interval = f"[{_number(row['ci95_low'])}, {_number(row['ci95_high'])}]"
        simulated = _number(row["simulated"]) if row["simulated"] else "see note"
        verdict = row["verdict"]
        table_rows.append(
            [
                row["quantity"],
                row["unit"],
                row["published"],
                simulated,
                interval,
                row["n_seeds"],
                row["tolerance"],
                verdict,
                _nulls_cell(row),
                row["note"],
                row["tolerance_reason"],
            ]
        )
        classes.append(
            [
                "",
                "",
                "num",
                "num",
                "num",
                "num",
                "num",
                verdict.replace("/", ""),
                "note",
                "note",
                "reason",
            ]
        )
    return {
        "id": folder.name,
        "readable": readable(folder.name),
        "title": experiment.title if experiment is not None else "",
        "source": experiment.source if experiment is not None else "",
        **_table(columns, table_rows, classes),
        "figures": [_png(png) for png in sorted(folder.glob("*.png"))],
    }


# --- sweep ----------------------------------------------------------------------------------


def _spread(values) -> tuple[float, float, float, int]:

    s = spread([float(v) for v in values])
    return s.mean, s.low, s.high, s.n


def sweep_page(directory: Path) -> str:

    meta = json.loads((directory / "sweep.json").read_text(encoding="utf-8"))
    frame = pd.read_parquet(directory / "results.parquet")
    parameters = [p for p in meta.get("parameters", []) if p in frame]
    metrics = [
        m
        for m in meta.get("metrics", [])
        if m in frame and pd.api.types.is_numeric_dtype(frame[m]) and frame[m].dtype != bool
    ]
    ok = frame[frame["status"] == "ok"]
    counts = frame["status"].value_counts().to_dict()
    figures: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        grid = [p for p in meta.get("grid", parameters) if p in parameters]
        for metric in metrics:
            for x in parameters or [None]:
                # keys zipped with x vary with it: the lines are the other grid keys'
                others = [p for p in grid if p != x]
                path = _sweep_figure(ok, metric, x, others, Path(tmp))
                if path is not None:
                    figures.append(_png(path))
    # the table of means
    keys = parameters
    columns = [*keys, "run seeds", *[f"{m} (mean [95 %])" for m in metrics]]
    rows, classes = [], []
    groups = ok.groupby(keys, sort=True, dropna=False) if keys else [((), ok)]
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        row: list[Any] = [*key, len(group)]
        for metric in metrics:
            mean, low, high, n = _spread(group[metric])
            interval = f" [{_number(low)}, {_number(high)}]" if math.isfinite(low) else ""
            row.append(f"{_number(mean)}{interval}")
        rows.append(row)
        classes.append(["" for _ in keys] + ["num"] * (1 + len(metrics)))
    failed = frame[frame["status"] != "ok"]
    return _render(
        "sweep.html.j2",
        f"atmsim sweep {meta.get('name', '')}: {directory}",
        base=meta.get("base"),
        parameters=", ".join(parameters) or "none",
        seeds=meta.get("seeds"),
        runs=len(frame),
        counts=", ".join(f"{n} {status}" for status, n in sorted(counts.items())),
        figures=figures,
        means=_table(columns, rows, classes),
        failed=_table(
            ["run_id", *keys, "run seed", "status", "error"],
            [
                [r["run_id"], *[r[k] for k in keys], r["seed"], r["status"], r["error"]]
                for _, r in failed.iterrows()
            ],
        )
        if len(failed)
        else None,
    )


def _sweep_figure(frame, metric: str, x: Optional[str], others: list[str], tmp: Path):
    """metric against x (mean and 95 % interval over the run seeds), a line per combination
    of the other parameters (at most MAX_SERIES_LINES)."""

    matplotlib.use("Agg")

    if frame.empty or frame[metric].isna().all():
        return None
    figure, axes = plt.subplots(figsize=(8, 4.2))
    lines = list(frame.groupby(others, sort=True)) if others else [((), frame)]
    for label, part in lines[:MAX_SERIES_LINES]:
        label = label if isinstance(label, tuple) else (label,)
        if x is None:
            xs_raw = ["all"]
            stats = [_spread(part[metric])]
        else:
            xs_raw = sorted(part[x].dropna().unique(), key=_sort_key)
            stats = [_spread(part[part[x] == value][metric]) for value in xs_raw]
        numeric = x is not None and all(
            isinstance(v, numbers.Real) and not isinstance(v, bool) for v in xs_raw
        )
        xs = list(xs_raw) if numeric else list(range(len(xs_raw)))
        means = [s[0] for s in stats]
        errors = [
            [s[0] - s[1] if math.isfinite(s[1]) else 0 for s in stats],
            [s[2] - s[0] if math.isfinite(s[2]) else 0 for s in stats],
        ]
        name = ", ".join(f"{k}={v}" for k, v in zip(others, label)) or metric
        axes.errorbar(xs, means, yerr=errors, marker="o", capsize=3, label=name, linewidth=1)
        if not numeric:
            axes.set_xticks(xs)
            axes.set_xticklabels([str(v) for v in xs_raw], rotation=20)
    axes.set_xlabel(x or "")
    axes.set_ylabel(metric)
    axes.set_title(f"{metric} against {x}" if x else metric)
    axes.grid(True, alpha=0.3)
    if len(lines) > 1:
        axes.legend(fontsize="small")
    if len(lines) > MAX_SERIES_LINES:
        axes.text(
            0.01,
            0.01,
            f"first {MAX_SERIES_LINES} of {len(lines)} combinations",
            transform=axes.transAxes,
            fontsize="small",
        )
    figure.tight_layout()
    safe = re.sub(r"[^\w.-]", "_", f"{metric}-{x}")
    path = tmp / f"{safe}.png"
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def _sort_key(value: Any):
    return (0, value) if isinstance(value, numbers.Real) else (1, str(value))


# --- one run --------------------------------------------------------------------------------


def _titled_table(table) -> dict:
    """A table of atmsim run (``atmsim.tables.Table``) for the templates'
    ``titled_table`` macro, its right-justified columns (the numbers) of class "num"."""
    classes = [["num" if right else "" for right in table.right] for _ in table.rows]
    return {
        **_table(table.headers, table.rows, classes),
        "headers": table.headers,
        "title": table.title,
        "caption": table.caption,
    }


def run_page(directory: Path) -> str:

    summary = read_summary(directory)  # RunDirError: incomplete, or not atmsim's
    try:
        return _run_page(directory, summary)
    except RunDirError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
        # a summary shaped like the core's whose rows lack what the tables need
        raise bad_summary(directory / "summary.json", error) from None


def _run_page(directory: Path, summary: dict) -> str:

    tables = [_titled_table(table) for table in result_tables(summary)]
    try:
        report = summary.get("fairness") or fairness_of_run_dir(directory)
        if len(report["entities"]) > 1:
            tables.append(_titled_table(fairness_table(report, table_file(summary, "fairness"))))
    except FairnessInputError:
        pass
    figures: list[dict] = []
    pngs = sorted(directory.glob("*.png"))
    if (directory / "series.parquet").exists():
        read_series(directory / "series.parquet")  # a file that is not atmsim's: refused
    if not pngs and (directory / "series.parquet").is_file():
        with tempfile.TemporaryDirectory() as tmp:
            import shutil

            for name in ("series.parquet", "summary.json", *TABLE_FILES.values()):
                if (directory / name).is_file():  # a large run's rows too (atmsim.columnar)
                    shutil.copy(directory / name, Path(tmp) / name)
            try:
                for path in plot_run_dir(Path(tmp)):
                    figures.append(_png(path))
            except PlotInputError:
                pass
    else:
        figures.extend(_png(path) for path in pngs)
    return _render(
        "run.html.j2",
        f"atmsim run: {directory}",
        scenario=summary.get("scenario"),
        seed=summary.get("seed"),
        sim_time_s=summary.get("sim_time_s"),
        completed=summary.get("completed", True),
        ledgers=ledger_lines(summary),
        tables=tables,
        figures=figures,
    )
