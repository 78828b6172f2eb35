"""The demo's displays: a live table on a terminal, one plain line per change elsewhere."""

from __future__ import annotations

import io

from rich.console import Console

from fixloop.extras.demo.progress import LiveDisplay, PlainDisplay, display_for


def test_plain_display_prints_each_change_once() -> None:
    out = io.StringIO()
    with PlainDisplay(Console(file=out, width=200)) as display:
        display.stage("review-fix")
        display.row("review-fix", "CR-01", "add [bold]subtracts[/]", "fixing", done=False)
        display.row("review-fix", "CR-01", "add [bold]subtracts[/]", "fixed", done=True)
        display.note("report committed")
    assert out.getvalue().splitlines() == [
        "== review-fix",
        "   review-fix CR-01: add [bold]subtracts[/] ...",  # markup in a title stays text
        "   review-fix CR-01: fixed",
        "   report committed",
    ]


def test_live_display_keeps_one_row_per_finding_with_its_latest_status() -> None:
    console = Console(file=io.StringIO(), force_terminal=True, width=120, record=True)
    with LiveDisplay(console) as display:
        display.row("review-fix", "CR-01", "add subtracts", "fixing", done=False)
        display.row("review-fix", "CR-01", "add subtracts", "fixed", done=True)
        display.row("fix-findings", "2", "label", "escalated", done=True)
    assert [(r.finding, r.status) for r in display.rows.values()] == [
        ("CR-01", "fixed"),
        ("2", "escalated"),
    ]
    text = console.export_text()
    assert "CR-01" in text and "escalated" in text


def test_display_follows_the_terminal() -> None:
    assert isinstance(display_for(Console(file=io.StringIO())), PlainDisplay)
    terminal = Console(file=io.StringIO(), force_terminal=True)
    assert isinstance(display_for(terminal), LiveDisplay)
