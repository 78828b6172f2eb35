"""Progress on stderr while a workflow runs: one listener of the run's event stream.

Every workflow emits the same events (`fixloop.events`); this prints the ones a person follows:
an item starting and finishing, notes, warnings. Steps and role calls go to the trace only, unless
`--verbose` asks for them too. Lines are flushed as they come: a pipe or a CI log sees them live.
"""

from __future__ import annotations

import sys
from typing import TextIO

from fixloop.events import Event, EventKind


class ProgressPrinter:
    def __init__(self, stream: TextIO | None = None, *, verbose: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.verbose = verbose
        self.backend_errors: set[str] = set()

    def __call__(self, event: Event) -> None:
        line = self.line(event)
        if line is not None:
            print(line, file=self.stream, flush=True)

    def line(self, event: Event) -> str | None:
        if event.kind is EventKind.ITEM:
            index, total = event.data.get("index"), event.data.get("total")
            where = f" [{index}/{total}]" if index and total else ""
            if event.status == "running":
                return f"{event.workflow}{where} {event.item}: {event.title} ..."
            commit = event.data.get("commit")
            suffix = f" ({commit})" if commit else ""
            return f"{event.workflow}{where} {event.item}: {event.message}{suffix}"
        if event.kind is EventKind.WARNING:
            return f"WARN: {event.message}"
        if event.kind is EventKind.NOTE:
            return f"-- {event.message}"
        if self.verbose and event.kind is EventKind.STEP:
            ok = "ok" if event.data.get("ok") else f"FAILED (exit {event.data.get('exit_code')})"
            return f"   step {event.workflow}#{event.step}: {ok}"
        if event.kind is EventKind.AGENT and event.data.get("reason") == "backend_error":
            # Why the model could not answer (a refused key, a server down) is the one thing
            # to read about a run of failed calls: said once, not once a call.
            detail = str(event.data.get("detail", ""))
            if detail not in self.backend_errors:
                self.backend_errors.add(detail)
                return f"WARN: {event.data.get('key')}: {detail}"
        if self.verbose and event.kind is EventKind.AGENT:
            cost = event.data.get("cost_usd", 0.0)
            return f"   agent {event.data.get('key')}: {event.data.get('outcome')} (${cost:.4f})"
        return None


class TaskProgress:
    """Each task's state as it changes (queued, running, merged, failed, fixed, committed)."""

    def __init__(self, stream: TextIO | None = None, *, verbose: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.others = ProgressPrinter(self.stream, verbose=verbose)

    def __call__(self, event: Event) -> None:
        if event.kind is EventKind.ITEM:
            title = f" {event.title}" if event.title else ""
            print(f"task {event.item}{title}: {event.message}", file=self.stream, flush=True)
        else:
            self.others(event)


# How a workflow's progress reads (its registry row names one).
PRINTERS: dict[str, type[ProgressPrinter] | type[TaskProgress]] = {
    "items": ProgressPrinter,
    "tasks": TaskProgress,
}


__all__ = ["PRINTERS", "ProgressPrinter", "TaskProgress"]
