"""Plain-text tables for the terminal: those of ``atmsim run`` (ports, VCs, drops,
flows, ABR, GFR) and of ``atmsim fairness``.

A table is a title, a header per column, each column left- or right-justified
(names left, numbers right), rows of strings and an optional caption. It is
drawn with the box characters that rich draws by default (a heavy frame round
the header, a light one round the rows); the header is bold and the title
italic on a terminal, unless ``NO_COLOR`` is set. A table wider than the
terminal is cut into parts by columns, each repeating the first (the name
column) and titled "(1/2)", "(2/2)": no number is ever folded or cut.

These tables are drawn here rather than by rich: importing rich, and measuring
and drawing four tables with it, was a good part of a short ``atmsim run``
(docs/performance.md, "CLI start-up"). rich still draws
what needs more than this (the progress bars, ``atmsim examples``' folded
descriptions, ``atmsim reproduce``'s coloured verdicts).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
import unicodedata
from dataclasses import dataclass, field
from typing import Optional, TextIO

from ._lazy import rich

PIPE_WIDTH = 200
"""The width when stdout is a file or a pipe: wide, so that tables are not cut into 80."""


@dataclass
class Table:
    """A titled table of strings; ``right[k]`` says whether column k is right-justified."""

    title: str
    headers: list[str]
    right: list[bool]
    rows: list[list[str]] = field(default_factory=list)
    caption: Optional[str] = None

    def __post_init__(self) -> None:
        if len(self.right) != len(self.headers):
            raise ValueError("a table needs one justification per column")

    def add_row(self, *cells: str) -> None:
        if len(cells) != len(self.headers):
            raise ValueError(f"a row of {len(cells)} cells in a table of {len(self.headers)}")
        self.rows.append([str(cell) for cell in cells])


def text_width(text: str) -> int:
    """Terminal columns ``text`` takes: East Asian wide characters two, combining marks
    none, the rest one."""
    if text.isascii():
        return len(text)
    width = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def column_widths(table: Table) -> list[int]:
    """Each column's width: its widest cell or header."""
    return [
        max([text_width(table.headers[k]), *(text_width(row[k]) for row in table.rows)])
        for k in range(len(table.headers))
    ]


def table_width(table: Table) -> int:
    """The columns the drawn table takes: every cell padded by a space each side, and a
    rule before, between and after the columns."""
    return sum(w + 2 for w in column_widths(table)) + len(table.headers) + 1


def _pad(text: str, width: int, right: bool) -> str:
    gap = " " * (width - text_width(text))
    return gap + text if right else text + gap


def fit(table: Table, width: int) -> list[Table]:
    """``table`` as one or more tables no wider than ``width``: when it is wider, its
    columns are split into parts, each repeating the first (the name column), titled
    "(1/2)", "(2/2)", so that no number is folded or cut. A part of the name column and
    one other column wider than ``width`` is left wider (never cut)."""
    if table_width(table) <= width or len(table.headers) <= 2:
        return [table]

    def part(indices: list[int]) -> Table:
        keep = [0, *indices]
        return Table(
            title=table.title,
            headers=[table.headers[k] for k in keep],
            right=[table.right[k] for k in keep],
            rows=[[row[k] for k in keep] for row in table.rows],
        )

    groups: list[list[int]] = []
    current: list[int] = []
    for k in range(1, len(table.headers)):
        trial = [*current, k]
        if current and table_width(part(trial)) > width:
            groups.append(current)
            current = [k]
        else:
            current = trial
    groups.append(current)
    parts = [part(group) for group in groups]
    if len(parts) > 1:
        for n, sub in enumerate(parts, start=1):
            sub.title = f"{table.title} ({n}/{len(parts)})"
    parts[-1].caption = table.caption
    return parts


def render(table: Table, styled: bool = False) -> str:
    """The drawn table, lines joined by newlines (no newline at the end); ``styled``:
    the title in italic and the header in bold (ANSI escapes)."""
    widths = column_widths(table)

    def rule(left: str, line: str, middle: str, right: str) -> str:
        return left + middle.join(line * (w + 2) for w in widths) + right

    def cells(values: list[str], bar: str, bold: bool = False) -> str:
        parts = []
        for value, w, right in zip(values, widths, table.right):
            text = _pad(value, w, right)
            parts.append(f" \x1b[1m{text}\x1b[0m " if bold else f" {text} ")
        return bar + bar.join(parts) + bar

    lines = []
    if table.title:
        lines.append(f"\x1b[3m{table.title}\x1b[0m" if styled else table.title)
    lines.append(rule("┏", "━", "┳", "┓"))
    lines.append(cells(table.headers, "┃", bold=styled))
    if table.rows:
        lines.append(rule("┡", "━", "╇", "┩"))
        lines.extend(cells(row, "│") for row in table.rows)
        lines.append(rule("└", "─", "┴", "┘"))
    else:
        lines.append(rule("┗", "━", "┻", "┛"))
    if table.caption:
        lines.append(table.caption)
    return "\n".join(lines)


def rich_console():
    """A rich Console on stdout for what this module does not draw (tables that fold
    their text, styled reports): the terminal's width, else ``PIPE_WIDTH`` so that a
    file or a pipe does not squeeze the tables. When stdout's reader leaves (``atmsim
    examples | head``) it raises BrokenPipeError, which the command answers with exit
    141 as for any other output; rich itself would exit 1."""

    class _Console(rich.console.Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError

    console = _Console()
    if not console.is_terminal or columns_setting() is not None:
        console = _Console(width=terminal_width())
    return console


def columns_setting() -> Optional[int]:
    """The width the ``COLUMNS`` environment variable asks for (20 or more), or None."""
    text = os.environ.get("COLUMNS", "").strip()
    return int(text) if text.isdigit() and int(text) >= 20 else None


def terminal_width(stream: Optional[TextIO] = None) -> int:
    """The width to draw for: ``COLUMNS`` when it is set (also for a file or a pipe:
    ``COLUMNS=80 atmsim reproduce ... | less``), else the terminal's when ``stream``
    (stdout) is one, else ``PIPE_WIDTH``."""
    setting = columns_setting()
    if setting is not None:
        return setting
    stream = stream if stream is not None else sys.stdout
    if stream.isatty():
        return shutil.get_terminal_size((80, 24)).columns
    return PIPE_WIDTH


def print_tables(
    tables: list[Table], width: Optional[int] = None, file: Optional[TextIO] = None
) -> None:
    """Print ``tables`` to ``file`` (stdout), each cut to fit ``width`` (the terminal's,
    see ``terminal_width``); styled on a terminal unless ``NO_COLOR`` is set."""
    stream = file if file is not None else sys.stdout
    styled = stream.isatty() and not os.environ.get("NO_COLOR")
    width = width if width is not None else terminal_width(stream)
    for table in tables:
        for part in fit(table, width):
            print(render(part, styled=styled), file=stream)


class RunProgress:
    """Progress of long work on stderr, told as ``progress(done, total)`` (runs of
    ``atmsim validate-model``, tasks of ``atmsim reproduce``): on a terminal a rich bar
    (runs done of all, time elapsed and left) below the lines printed meanwhile, gone
    when the work ends; elsewhere a line every 10 s (none for work done within that).
    Used as a context manager, so that the bar ends with the work, also on Ctrl-C."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.bar = None
        self.task = None
        self.started = self.last = time.perf_counter()

    def __enter__(self) -> RunProgress:
        if sys.stderr.isatty():
            self.bar = rich.progress.Progress(
                rich.progress.TextColumn(self.label),
                rich.progress.BarColumn(),
                rich.progress.MofNCompleteColumn(),
                rich.progress.TimeElapsedColumn(),
                rich.progress.TimeRemainingColumn(),
                console=rich.console.Console(stderr=True),
                transient=True,
            )
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def __call__(self, done: int, total: int) -> None:
        if self.bar is not None:
            if self.task is None:
                self.task = self.bar.add_task(self.label, total=total)
            self.bar.update(self.task, completed=done)
            return
        now = time.perf_counter()
        if now - self.last >= 10 and done < total:
            print(f"{self.label}: {done}/{total} runs, {now - self.started:.0f} s", file=sys.stderr)
            self.last = now
