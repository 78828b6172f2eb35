"""The demo's progress display: a live table in a terminal, plain lines anywhere else.

Both displays take the same calls: `stage` (a phase of the demo begins), `row` (a finding's status
changed), `note` (one line worth keeping). The live table redraws in place and keeps only the
current state of each finding; the plain display prints every change once, so a log or a CI job
reads the same story.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import TracebackType
from typing import Protocol

from rich.console import Console, Group
from rich.live import Live
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

_STYLES = {"fixed": "green", "resolved": "green", "skipped": "yellow", "dropped": "cyan"}
_FAILED = {"escalated": "red"}


class Display(Protocol):
    def stage(self, text: str) -> None: ...

    def row(self, workflow: str, finding: str, title: str, status: str, done: bool) -> None: ...

    def note(self, text: str) -> None: ...

    def __enter__(self) -> Display: ...

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...


def _style(status: str) -> str:
    word = status.split(":", 1)[0].split(maxsplit=1)[0] if status.strip() else ""
    return _STYLES.get(word, _FAILED.get(word, "white"))


@dataclass
class _Row:
    workflow: str
    finding: str
    title: str
    status: str
    done: bool


@dataclass
class LiveDisplay:
    """A rich `Live` table: one row per finding, a spinner on the one in progress."""

    console: Console
    stage_text: str = ""
    rows: dict[tuple[str, str], _Row] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    _live: Live | None = None

    def _render(self) -> Group:
        table = Table(expand=True, show_edge=False, pad_edge=False)
        table.add_column("workflow", style="bold", no_wrap=True)
        table.add_column("finding", no_wrap=True)
        table.add_column("title", ratio=3, overflow="ellipsis", no_wrap=True)
        table.add_column("status", ratio=2, overflow="ellipsis", no_wrap=True)
        for row in self.rows.values():
            status: Text | Spinner = Text(row.status, style=_style(row.status))
            if not row.done:
                status = Spinner("dots", text=Text(row.status))
            table.add_row(row.workflow, row.finding, Text(row.title), status)
        parts: list[Text | Table | Spinner] = [Spinner("dots", text=Text(self.stage_text))]
        if self.rows:
            parts.append(table)
        parts += [Text(note, style="dim") for note in self.notes[-4:]]
        return Group(*parts)

    def _refresh(self) -> None:
        if self._live is not None:
            self._live.update(self._render(), refresh=True)

    def stage(self, text: str) -> None:
        self.stage_text = text
        self._refresh()

    def row(self, workflow: str, finding: str, title: str, status: str, done: bool) -> None:
        self.rows[(workflow, finding)] = _Row(workflow, finding, title, status, done)
        self._refresh()

    def note(self, text: str) -> None:
        self.notes.append(text)
        self._refresh()

    def __enter__(self) -> LiveDisplay:
        self._live = Live(self._render(), console=self.console, refresh_per_second=12)
        self._live.__enter__()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._live is not None:
            self.stage_text = "done" if kind is None else "stopped"
            self._live.update(self._render(), refresh=True)
            self._live.__exit__(kind, value, traceback)
            self._live = None


@dataclass
class PlainDisplay:
    """One line per change, for logs and pipes."""

    console: Console

    def stage(self, text: str) -> None:
        self.console.print(f"== {text}", highlight=False, markup=False)

    def row(self, workflow: str, finding: str, title: str, status: str, done: bool) -> None:
        if done:
            line = f"   {workflow} {finding}: {status}"
        else:
            line = f"   {workflow} {finding}: {title} ..."
        self.console.print(line, highlight=False, markup=False, soft_wrap=True)

    def note(self, text: str) -> None:
        self.console.print(f"   {text}", highlight=False, markup=False, soft_wrap=True)

    def __enter__(self) -> PlainDisplay:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        return None


def display_for(console: Console) -> Display:
    return LiveDisplay(console) if console.is_terminal else PlainDisplay(console)
