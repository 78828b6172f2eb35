"""What a run did, read back from its folder: per item, its steps and calls; totals for the run.

Everything comes from the run's own records (`run.json`, `events.jsonl`, and the diffs a workflow
saved with `save_diff`), never from parsing printed text: the events are typed. The pieces:

- an item (a finding, a task) is what its `item` events name; its status is the last one;
- a role call belongs to the item its key names (`fixer/CR-01/iteration-1` → `CR-01`): its
  turns, tokens, cost, refused writes, and its outcome when it was not ok (a backend's error
  text among them); a call of an implementing role (fixer, executor, issue-fixer) is an attempt,
  one per distinct key stem (a re-dispatch after a scope answer is the same attempt), unless the
  item's own event says how many attempts it took;
- a tool call (fix-issue's lent tools) belongs to the item its event names, in order: the
  item's timeline;
- a step belongs to the item being worked on when it ran (between the item's `running` event and
  the event that finished it); the others belong to the run (setup, cleanup, the report);
- a scope request is a note event carrying `scope_request` (the files asked for);
- the models used are those the role calls' events name, per role;
- the diff an item committed or staged is the file its finished item event names (`diff`):
  fix-issue's is its patch;
- the run's outcome is its items' final statuses counted (`3 fixed, 2 skipped`), and the error
  that stopped it, if one did; a run that is part of another (fix-issue's `-verify` run) says
  which, and `latest` passes it by.

The text a person reads is `show_text.py`'s. Totals are the sums over every role call of the run
and its wall time (start to end, or to its last event for a run that did not end).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.masking import mask_text
from fixloop.runs.run import RUN_ID_PATTERN, list_runs, read_run
from fixloop.runs.state import LATEST

DIFFS = "diffs"
_RUN_ID = re.compile(RUN_ID_PATTERN)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


@dataclass
class StepView:
    workflow: str
    step: str
    ok: bool
    exit_code: int
    duration_s: float
    ran: list[tuple[str, str]] = field(default_factory=list)  # (document line, command)
    failure: str = ""


# What an item still in progress when its run ended is shown as (no workflow's own status).
STOPPED = "stopped"
# Roles whose call is an attempt at the item's work (the others judge it or review).
IMPLEMENTERS = frozenset({"fixer", "executor", "issue-fixer"})


@dataclass
class Spend:
    calls: int = 0
    attempts: int = 0  # calls of an implementing role, one per attempt
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    elapsed_s: float = 0.0  # the calls' own wall time

    def add(self, event: dict[str, Any]) -> None:
        self.calls += 1
        self.elapsed_s += float(event.get("elapsed_s") or 0.0)
        self.turns += int(event.get("turns") or 0)
        self.input_tokens += int(event.get("input_tokens") or 0)
        self.output_tokens += int(event.get("output_tokens") or 0)
        self.cost_usd += float(event.get("cost_usd") or 0.0)

    def describe(self) -> str:
        return (
            f"{self.calls} agent call(s), {self.turns} turn(s), "
            f"{self.input_tokens:,} tokens in / {self.output_tokens:,} out, ${self.cost_usd:.4f}"
        )


@dataclass
class CallView:
    """A role call that did not end ok: what went wrong, in the backend's own words."""

    key: str
    outcome: str
    reason: str
    detail: str


@dataclass
class ToolView:
    """One call of a lent tool, as the item's timeline shows it."""

    tool: str
    ok: bool
    path: str = ""
    error: str = ""
    duration_s: float = 0.0
    results: list[str] = field(default_factory=list)


@dataclass
class ItemView:
    id: str
    title: str = ""
    status: str = ""
    message: str = ""
    commit: str = ""
    diff: str = ""  # the diff it committed or staged, as saved in the run folder
    usage: Spend = field(default_factory=Spend)
    attempts: int = 0  # what the item's own event says, else its implementing calls
    denied: list[str] = field(default_factory=list)
    scope_requests: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    steps: list[StepView] = field(default_factory=list)
    failed_calls: list[CallView] = field(default_factory=list)
    tools: list[ToolView] = field(default_factory=list)

    @property
    def reason(self) -> str:
        """The one-line why: the item's message without the status it repeats."""
        message = self.message.splitlines()[0] if self.message else ""
        if message in ("", self.status, "running"):
            return ""
        return message.removeprefix(f"{self.status}: ")


@dataclass
class RunView:
    id: str
    workflow: str
    state: str
    started_at: str
    ended_at: str
    wall_s: float
    items: list[ItemView] = field(default_factory=list)
    steps: list[StepView] = field(default_factory=list)  # not part of any item
    usage: Spend = field(default_factory=Spend)  # every call of the run
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # the run's own (not an item's)
    failed_calls: list[CallView] = field(default_factory=list)  # calls of no item
    error: str = ""  # what stopped the run, when something did
    part_of: str = ""  # the run this one is part of (fix-issue's verification run)
    # role → the model(s) its calls ran on ("default": the backend's, no model named)
    models: dict[str, str] = field(default_factory=dict)

    @property
    def outcome(self) -> str:
        """The items' final statuses counted, in the order they first ended in them."""
        counts = Counter(item.status for item in self.items if item.status != "running")
        said = ", ".join(f"{n} {status}" for status, n in counts.items())
        return said or ("no items" if self.state != "running" else "")

    def totals(self) -> str:
        return f"total: {self.usage.describe()}, {self.wall_s:.1f}s"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["outcome"] = self.outcome
        for item, shown in zip(self.items, data["items"], strict=True):
            shown["reason"] = item.reason
        return data


def save_diff(run_dir: Path, item: str, label: str, text: str) -> str:
    """Keep the diff an item committed or staged in the run folder (masked); its relative path."""
    folder = run_dir / DIFFS
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{_UNSAFE.sub('_', item)}-{_UNSAFE.sub('_', label)}.diff"
    (folder / name).write_text(mask_text(text), encoding="utf-8")
    return f"{DIFFS}/{name}"


def part_of(info: dict[str, Any]) -> str:
    """The run a run is part of (`run.json` details), or "" for a run of its own."""
    return str((info.get("details") or {}).get("part_of") or "")


def resolve_run(state_dir: Path, run_id: str) -> Path:
    """The folder of run `run_id` (or of the newest run of the user's for `latest`: not one that
    is part of another); FixloopError if none."""
    if run_id == LATEST:
        runs = [info for info in list_runs(state_dir) if not part_of(info)]
        if not runs:
            raise FixloopError(Diagnostic(run_id, 1, 1, "usage", "no runs recorded here"))
        run_id = str(runs[-1]["id"])
    folder = state_dir / "runs" / run_id
    if not _RUN_ID.match(run_id) or not (folder / "run.json").is_file():
        raise FixloopError(Diagnostic(run_id, 1, 1, "usage", "no such run in this repository"))
    return folder


def read_events(run_dir: Path) -> list[dict[str, Any]]:
    """The run's events; a line cut short by a kill is skipped (the ones before it are whole)."""
    return [event for _, event in _numbered_events(run_dir)]


def _numbered_events(run_dir: Path) -> list[tuple[int, dict[str, Any]]]:
    path = run_dir / "events.jsonl"
    events: list[tuple[int, dict[str, Any]]] = []
    if not path.is_file():
        return events
    text = path.read_text(encoding="utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            event = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(event, dict):
            events.append((number, event))
    return events


def run_view(run_dir: Path) -> RunView:
    info = read_run(run_dir)
    numbered = _numbered_events(run_dir)
    events = [event for _, event in numbered]
    view = RunView(
        id=str(info.get("id", run_dir.name)),
        workflow=str(info.get("workflow") or "?"),
        state=str(info.get("state")),
        started_at=str(info.get("started_at") or ""),
        ended_at=str(info.get("ended_at") or ""),
        wall_s=_wall(info, events),
        error=str((info.get("details") or {}).get("error") or ""),
        part_of=part_of(info),
    )
    items: dict[str, ItemView] = {}
    said_attempts: dict[str, int] = {}
    tried: dict[str, set[str]] = {}
    current: str | None = None
    for number, event in numbered:
        try:
            current = _take(
                view, items, current, run_dir, event, said_attempts=said_attempts, tried=tried
            )
        except (TypeError, ValueError, AttributeError) as exc:
            # A line fixloop did not write (edited, or another tool's): say where, not crash.
            where = str(run_dir / "events.jsonl")
            problem = f"not an event as fixloop writes it ({exc})"
            raise FixloopError(Diagnostic(where, number, 1, "events", problem)) from None
    for item_id, item in items.items():
        if item.status == "running" and view.state != "running":  # the run ended under it
            item.status = STOPPED
            item.message = f"{STOPPED}: the run ended while it was worked on"
        item.usage.attempts = len(tried.get(item_id, ()))
        item.attempts = said_attempts.get(item_id, item.usage.attempts)
    view.usage.attempts = sum(item.usage.attempts for item in items.values())
    view.items = list(items.values())
    return view


def _take(
    view: RunView,
    items: dict[str, ItemView],
    current: str | None,
    run_dir: Path,
    event: dict[str, Any],
    *,
    said_attempts: dict[str, int],
    tried: dict[str, set[str]],
) -> str | None:
    """Add one event to the view; the item now running (or None) after it. `said_attempts`:
    the attempts items' own events name; `tried`: the attempt keys of their implementing calls."""
    kind = event.get("event")
    item_id = str(event.get("item") or "")
    if kind == "item" and item_id:
        item = items.setdefault(item_id, ItemView(item_id))
        item.title = str(event.get("title") or item.title)
        status = str(event.get("status"))
        item.status, item.message = status, str(event.get("message") or "")
        item.commit = str(event.get("commit") or item.commit)
        if event.get("diff"):
            item.diff = _read_diff(run_dir, str(event["diff"]))
        if isinstance(event.get("attempts"), int):
            said_attempts[item_id] = int(event["attempts"])
        current = item_id if status == "running" else None
    elif kind == "step":
        step = _step(event)
        (items[current].steps if current in items else view.steps).append(step)
    elif kind == "agent":
        _add_call(view, items, tried, event)
    elif kind == "tool" and item_id:
        items.setdefault(item_id, ItemView(item_id)).tools.append(_tool(event))
    elif kind == "note" and item_id:
        item = items.setdefault(item_id, ItemView(item_id))
        item.scope_requests += [str(p) for p in event.get("scope_request") or []]
        item.notes.append(str(event.get("message") or ""))
    elif kind == "note":
        view.notes.append(str(event.get("message") or ""))
    elif kind == "warning":
        view.warnings.append(str(event.get("message") or ""))
    return current


def run_totals(state_dir: Path, run_id: str) -> dict[str, Any]:
    """What a run spent: calls, turns, tokens, cost, wall time (`line` says it in words)."""
    view = run_view(state_dir / "runs" / run_id)
    return {**asdict(view.usage), "wall_s": round(view.wall_s, 3), "line": view.totals()}


def _add_model(models: dict[str, str], event: dict[str, Any]) -> None:
    role, model = str(event.get("role") or "?"), str(event.get("model") or "default")
    held = models.get(role, "").split("/") if role in models else []
    if model not in held:
        models[role] = "/".join([*held, model])


def _step(event: dict[str, Any]) -> StepView:
    ran = [(str(r.get("at") or ""), str(r.get("command") or "")) for r in event.get("ran") or []]
    failure = "" if event.get("ok") else str(event.get("stderr_tail") or "").strip()
    return StepView(
        workflow=str(event.get("workflow") or ""),
        step=str(event.get("step") or ""),
        ok=bool(event.get("ok")),
        exit_code=int(event.get("exit_code") or 0),
        duration_s=float(event.get("duration_s") or 0.0),
        ran=ran,
        failure=failure.splitlines()[-1] if failure else "",
    )


def _add_call(
    view: RunView, items: dict[str, ItemView], tried: dict[str, set[str]], event: dict[str, Any]
) -> None:
    """A role call: the run's spend and models, and its item's (with the attempt it was) when it
    has one."""
    view.usage.add(event)
    _add_model(view.models, event)
    key = str(event.get("key") or "")
    failed = _failed_call(event)
    owner = _owner(key)
    if owner is None:
        view.failed_calls += [failed] if failed else []
        return
    item = items.setdefault(owner, ItemView(owner))
    item.usage.add(event)
    item.denied += [_denied(d) for d in event.get("denied") or []]
    item.failed_calls += [failed] if failed else []
    if event.get("role") in IMPLEMENTERS:
        tried.setdefault(owner, set()).add("/".join(key.split("/")[:3]))


def _failed_call(event: dict[str, Any]) -> CallView | None:
    if event.get("outcome") == "ok":
        return None
    return CallView(
        key=str(event.get("key") or ""),
        outcome=str(event.get("outcome") or ""),
        reason=str(event.get("reason") or ""),
        detail=str(event.get("detail") or "").strip(),
    )


def _tool(event: dict[str, Any]) -> ToolView:
    results = event.get("results")
    return ToolView(
        tool=str(event.get("tool") or "?"),
        ok=bool(event.get("ok")),
        path=str(event.get("path") or ""),
        error=str(event.get("error") or ""),
        duration_s=float(event.get("duration_s") or 0.0),
        results=[str(r) for r in results] if isinstance(results, list) else [],
    )


def _owner(key: str) -> str | None:
    """The item a call key names (`role/ITEM/phase`), or None for a call of the whole run."""
    parts = key.split("/")
    if len(parts) < 3 or parts[1] in ("review", "run"):
        return None
    return parts[1]


def _denied(denial: Any) -> str:
    if isinstance(denial, dict):
        return f"{denial.get('path')} ({denial.get('tool')}: {denial.get('reason')})"
    return str(denial)


def _read_diff(run_dir: Path, relative: str) -> str:
    target = (run_dir / relative).resolve()
    if not target.is_relative_to(run_dir.resolve()) or not target.is_file():
        return ""
    return target.read_text(encoding="utf-8", errors="replace")


def _wall(info: dict[str, Any], events: list[dict[str, Any]]) -> float:
    start = _moment(info.get("started_at"))
    end = _moment(info.get("ended_at")) or (_moment(events[-1].get("time")) if events else None)
    return max((end - start).total_seconds(), 0.0) if start and end else 0.0


def _moment(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


__all__ = [
    "LATEST",
    "CallView",
    "ItemView",
    "RunView",
    "Spend",
    "StepView",
    "ToolView",
    "part_of",
    "read_events",
    "resolve_run",
    "run_totals",
    "run_view",
    "save_diff",
]
