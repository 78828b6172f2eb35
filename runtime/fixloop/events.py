"""The one event stream of a run: what the trace records and what a progress display shows.

Every layer speaks in `Event`s: the step runner (a document step ran), the dispatcher (a role call
ended), a workflow (an item changed status, a phase began, something worth a warning). One
`EventStream` carries them to its listeners: the run's `events.jsonl` trace, the command line's
progress lines, the demo's live table. Nobody formats an event into text that someone else parses
back; a listener reads the fields.

    stream = EventStream()
    stream.subscribe(print_progress)
    stream.emit(Event(EventKind.ITEM, "CR-01 fixed", item="CR-01", status="fixed"))
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class EventKind(StrEnum):
    RUN_START = "run-start"
    RUN_END = "run-end"
    STEP = "step"  # a document step ran: data holds exit code, outputs, commands, timing
    AGENT = "agent"  # a role call ended: data holds status, reason, usage, denied writes
    # A role call still running: at its start, then whenever its backend knows more (a turn, a
    # tool call). data holds key, role, model and the usage so far (turns, tokens, cost).
    AGENT_PROGRESS = "agent-progress"
    TOOL = "tool"  # a role called a tool its workflow lent it: data holds name, outcome, timing
    PHASE = "phase"  # the workflow entered a part of its document's order of work (`step`)
    ITEM = "item"  # an item (finding, task, checklist item) changed status
    NOTE = "note"  # something the user should read (recovery, cleanup, a question's answer)
    WARNING = "warning"


@dataclass(frozen=True)
class Event:
    kind: EventKind
    message: str = ""
    workflow: str = ""
    step: str = ""  # the document step id, for STEP and PHASE events
    item: str = ""  # the finding's or task's id, for ITEM events (and notes about one item)
    title: str = ""
    status: str = ""  # the workflow's item status (its own StrEnum) for ITEM events
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The fields worth keeping, flat: the trace line's shape (`event` names the kind)."""
        line: dict[str, Any] = {"event": str(self.kind)}
        for name in ("message", "workflow", "step", "item", "title", "status"):
            value = getattr(self, name)
            if value:
                line[name] = value
        line.update(self.data)
        return line


Listener = Callable[[Event], None]


class EventStream:
    """Hands each event to every listener, in subscription order, one event at a time.

    Parallel executors emit from several threads; the lock keeps each event whole for every
    listener (a trace line is never interleaved, a display never sees half an update)."""

    def __init__(self, *listeners: Listener) -> None:
        self._listeners: list[Listener] = list(listeners)
        self._lock = threading.RLock()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add a listener; returns the function that removes it again."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def emit(self, event: Event) -> None:
        with self._lock:
            for listener in list(self._listeners):
                listener(event)

    # A stream sent to another process (a task on a cluster's worker) arrives empty: its
    # listeners (a display, a trace file) belong to this process.
    def __getstate__(self) -> dict[str, object]:
        return {}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__()  # type: ignore[misc]


__all__ = ["Event", "EventKind", "EventStream", "Listener"]
