"""Progress on stderr while a workflow runs: one listener of the run's event stream.

Every workflow emits the same events (`fixloop.events`); this prints the ones a person follows:
an item starting and finishing, notes, warnings. Steps and role calls go to the trace only, unless
`--verbose` asks for them too. Lines are flushed as they come: a pipe or a CI log sees them live.

Between those lines a role call can take minutes, so what is in flight is shown as well, from the
dispatcher's `agent-progress` events (a call's start, then each turn or tool call):

- in a terminal, a live line per item (or call) in flight, redrawn every second under the
  printed lines: elapsed time, turns, tokens and cost of the call running, and the run's cost;
- anywhere else (a pipe, a CI log), a heartbeat: the same lines, once every `FIXLOOP_HEARTBEAT_S`
  seconds (30 by default; 0 turns it off) of silence while something is in flight.

All of it goes to the stream given (stderr): `--json` output on stdout stays one document.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, TextIO

from fixloop.events import Event, EventKind

HEARTBEAT_ENV = "FIXLOOP_HEARTBEAT_S"
DEFAULT_HEARTBEAT_S = 30.0
LIVE_REFRESH_S = 1.0
_UP_AND_CLEAR = "\x1b[1A\x1b[2K"


def heartbeat_interval(env: dict[str, str] | None = None) -> float:
    """Seconds of silence before a heartbeat line; 0 means none. A value that is not a
    non-negative number falls back to the default rather than stopping a run over a display."""
    text = (os.environ if env is None else env).get(HEARTBEAT_ENV, "")
    try:
        value = float(text) if text.strip() else DEFAULT_HEARTBEAT_S
    except ValueError:
        return DEFAULT_HEARTBEAT_S
    return value if value >= 0 else DEFAULT_HEARTBEAT_S


def duration(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{whole}s"


def _tokens(count: int) -> str:
    return f"{count / 1000:.1f}k" if count >= 1000 else str(count)


@dataclass
class _Call:
    started: float
    data: dict[str, Any] = field(default_factory=dict)


class ProgressPrinter:
    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        verbose: bool = False,
        live: bool | None = None,
        heartbeat_s: float | None = None,
    ) -> None:
        self.stream = stream or sys.stderr
        self.verbose = verbose
        self.live = _is_terminal(self.stream) if live is None else live
        self.heartbeat_s = heartbeat_interval() if heartbeat_s is None else heartbeat_s
        self._items: dict[str, tuple[str, float]] = {}  # item id -> (label, started)
        self._labels: dict[str, str] = {}  # every item seen: a call names the item it is for
        self._calls: dict[str, _Call] = {}  # call key -> what it used so far
        self._spent = 0.0  # the cost of the calls that ended
        self._lock = threading.RLock()
        self._drawn = 0  # live lines on screen under the printed ones
        self._quiet_since = time.monotonic()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self.backend_errors: set[str] = set()

    def __call__(self, event: Event) -> None:
        with self._lock:
            self._track(event)
            line = self.line(event)
            self._clear()  # the live lines go under whatever is printed, redrawn as they are now
            if line is not None:
                print(line, file=self.stream, flush=True)
                self._quiet_since = time.monotonic()
            self._draw()
            if self._in_flight() and self._ticker is None and self._ticks():
                self._ticker = threading.Thread(target=self._tick, daemon=True, name="progress")
                self._ticker.start()

    def line(self, event: Event) -> str | None:
        if event.kind is EventKind.ITEM:
            if event.status == "running":
                return f"{self.label(event)}: {event.title} ..."
            commit = event.data.get("commit")
            suffix = f" ({commit})" if commit else ""
            return f"{self.label(event)}: {event.message}{suffix}"
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

    def label(self, event: Event) -> str:
        """How an item is named in its lines: `review-fix [1/2] CR-01`."""
        index, total = event.data.get("index"), event.data.get("total")
        where = f" [{index}/{total}]" if index and total else ""
        return f"{event.workflow}{where} {event.item}"

    def in_flight(self) -> list[str]:
        """One line per item or call in flight, as the live display and the heartbeat say it."""
        now = time.monotonic()
        lines: list[str] = []
        shown: set[str] = set()
        for key, call in self._calls.items():
            parts = key.split("/")
            owner = parts[1] if len(parts) > 1 else ""
            label = self._labels.get(owner, key)
            shown.add(owner)
            data = call.data
            tokens = int(data.get("input_tokens") or 0) + int(data.get("output_tokens") or 0)
            lines.append(
                f"{label}: {data.get('role') or parts[0]} {duration(now - call.started)}, "
                f"{data.get('turns') or 0} turn(s), {_tokens(tokens)} tokens, "
                f"${float(data.get('cost_usd') or 0.0):.4f} (run ${self._run_cost():.4f})"
            )
        for item, (label, started) in self._items.items():
            if item not in shown:
                lines.append(f"{label}: {duration(now - started)}")
        return lines

    def close(self) -> None:
        """Stop redrawing and take the live lines away (what was printed stays)."""
        self._stop.set()
        with self._lock:
            self._items.clear()
            self._calls.clear()
            self._clear()
            self.stream.flush()

    def __enter__(self) -> ProgressPrinter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _track(self, event: Event) -> None:
        if event.kind is EventKind.ITEM and event.item:
            if event.data.get("total") or event.item not in self._labels:
                # An inner run's events (bench efficacy's fix-issue) keep the outer k/N name.
                self._labels[event.item] = self.label(event)
            if event.status == "running":
                self._items[event.item] = (self.label(event), time.monotonic())
            else:
                self._items.pop(event.item, None)
        elif event.kind is EventKind.AGENT_PROGRESS:
            key = str(event.data.get("key") or "")
            started = time.monotonic() - float(event.data.get("elapsed_s") or 0.0)
            self._calls[key] = _Call(self._calls[key].started if key in self._calls else started)
            self._calls[key].data = dict(event.data)
        elif event.kind is EventKind.AGENT:
            self._calls.pop(str(event.data.get("key") or ""), None)
            self._spent += float(event.data.get("cost_usd") or 0.0)
        elif event.kind is EventKind.RUN_END:
            self._items.clear()
            self._calls.clear()

    def _run_cost(self) -> float:
        running = sum(float(c.data.get("cost_usd") or 0.0) for c in self._calls.values())
        return self._spent + running

    def _in_flight(self) -> bool:
        return bool(self._items or self._calls)

    def _ticks(self) -> bool:
        return self.live or self.heartbeat_s > 0

    def _tick(self) -> None:
        step = LIVE_REFRESH_S if self.live else min(LIVE_REFRESH_S, self.heartbeat_s)
        while not self._stop.wait(step):
            with self._lock:
                if self.live:
                    self._clear()
                    self._draw()
                elif self._in_flight() and time.monotonic() - self._quiet_since >= self.heartbeat_s:
                    for line in self.in_flight():
                        print(f"... {line}", file=self.stream, flush=True)
                    self._quiet_since = time.monotonic()

    def _draw(self) -> None:
        if not self.live:
            return
        width = max(20, shutil.get_terminal_size((100, 24)).columns - 1)
        lines = [f"~ {line}"[:width] for line in self.in_flight()]
        if lines:
            self.stream.write("".join(f"{line}\n" for line in lines))
            self.stream.flush()
        self._drawn = len(lines)

    def _clear(self) -> None:
        if self._drawn:
            self.stream.write(_UP_AND_CLEAR * self._drawn)
            self._drawn = 0


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class TaskProgress(ProgressPrinter):
    """Each task's state as it changes (queued, running, merged, failed, fixed, committed)."""

    def line(self, event: Event) -> str | None:
        if event.kind is EventKind.ITEM:
            title = f" {event.title}" if event.title else ""
            return f"task {event.item}{title}: {event.message}"
        return super().line(event)

    def label(self, event: Event) -> str:
        return f"task {event.item}"


# How a workflow's progress reads (its registry row names one).
PRINTERS: dict[str, type[ProgressPrinter]] = {
    "items": ProgressPrinter,
    "tasks": TaskProgress,
}


__all__ = ["HEARTBEAT_ENV", "PRINTERS", "ProgressPrinter", "TaskProgress", "heartbeat_interval"]
