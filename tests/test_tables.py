"""The plain-text tables of ``atmsim run`` and ``atmsim fairness`` (``atmsim.tables``):
their drawing, the widths they measure, their cutting into parts that fit."""

from __future__ import annotations

import io

import pytest

from atmsim.tables import PIPE_WIDTH, Table, fit, print_tables, render, table_width, text_width


def small() -> Table:
    table = Table("Ports", ["port", "cells in", "CLR"], [False, True, True])
    table.add_row("a", "1,234", "0.5")
    table.add_row("long-name", "7", "0")
    return table


def test_a_table_is_drawn_with_a_heavy_header_and_justified_columns() -> None:
    assert render(small()).splitlines() == [
        "Ports",
        "┏━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━┓",
        "┃ port      ┃ cells in ┃ CLR ┃",
        "┡━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━┩",
        "│ a         │    1,234 │ 0.5 │",
        "│ long-name │        7 │   0 │",
        "└───────────┴──────────┴─────┘",
    ]
    assert table_width(small()) == len("┏━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━┓")


def test_an_empty_table_and_a_caption() -> None:
    table = Table("Drops", ["port", "cells"], [False, True], caption="none dropped")
    assert render(table).splitlines() == [
        "Drops",
        "┏━━━━━━┳━━━━━━━┓",
        "┃ port ┃ cells ┃",
        "┗━━━━━━┻━━━━━━━┛",
        "none dropped",
    ]


def test_styles_only_when_asked() -> None:
    styled = render(small(), styled=True).splitlines()
    assert styled[0] == "\x1b[3mPorts\x1b[0m"
    assert "\x1b[1mport     \x1b[0m" in styled[2]
    assert "\x1b" not in render(small())


def test_too_wide_a_table_is_cut_by_columns_repeating_the_first() -> None:
    table = small()
    table.caption = "the caption"
    parts = fit(table, 25)
    assert [part.title for part in parts] == ["Ports (1/2)", "Ports (2/2)"]
    assert [part.headers for part in parts] == [["port", "cells in"], ["port", "CLR"]]
    assert [part.rows for part in parts] == [
        [["a", "1,234"], ["long-name", "7"]],
        [["a", "0.5"], ["long-name", "0"]],
    ]
    assert [part.caption for part in parts] == [None, "the caption"]
    assert all(table_width(part) <= 25 for part in parts)
    assert fit(table, table_width(table)) == [table]
    # Never cut further than the name column and one other: wider, but whole.
    assert [part.headers for part in fit(table, 5)] == [["port", "cells in"], ["port", "CLR"]]


def test_wide_characters_take_two_columns() -> None:
    assert text_width("abc") == 3
    assert text_width("流量") == 4
    assert text_width("e\u0301") == 1  # a combining accent takes none
    table = Table("T", ["名前", "n"], [False, True])
    table.add_row("x", "1")
    lines = render(table).splitlines()
    assert len({text_width(line) for line in lines[1:]}) == 1  # every rule lines up


def test_print_tables_to_a_file_is_plain_and_wide() -> None:
    printed = io.StringIO()
    print_tables([small(), small()], file=printed)
    text = printed.getvalue()
    assert text.count("Ports\n") == 2 and "\x1b" not in text
    many = Table("VCs", [f"column {k}" for k in range(30)], [k > 0 for k in range(30)])
    many.add_row(*[str(k) for k in range(30)])
    printed = io.StringIO()
    print_tables([many], file=printed)
    assert max(text_width(line) for line in printed.getvalue().splitlines()) <= PIPE_WIDTH


def test_rows_must_match_the_columns() -> None:
    with pytest.raises(ValueError, match="a row of 2 cells in a table of 3"):
        small().add_row("x", "1")
    with pytest.raises(ValueError, match="one justification per column"):
        Table("T", ["a", "b"], [False])
