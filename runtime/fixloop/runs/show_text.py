"""`fixloop runs show` and `runs list` as a person reads them: the summary first, then the detail.

    run 2026…-1de720  review-fix  finished: 3 fixed, 2 skipped
      started 2026-12-02T13:42:30.960Z, ended 2026-12-02T13:42:33.525Z (2.6s)

    item   status   attempts  cost     commit   reason
    CR-01  fixed           1  $0.0000  2b293c6
    CR-02  skipped         1  $0.0000  -        fix caused errors, rolled back
    total: 5 agent call(s), 5 turn(s), 0 tokens in / 0 out, $0.0000, 2.6s

    CR-01  fixed  average_price divides by zero on an empty list [2b293c6]
      …its calls, refused writes, notes, tool calls, then its diff

The commands each step ran (hundreds of lines for a small run) are shown only when asked
(`--commands`); a step that failed is always named, with its last error line. Everything here is
formatted from `show.py`'s view; nothing is read from the run folder again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fixloop.runs.show import ItemView, RunView, StepView, ToolView

_HEADERS = ("item", "status", "attempts", "cost", "commit", "reason")


def describe(view: RunView, *, commands: bool = False) -> list[str]:
    """The run: its summary table, then one block per item, then the run's own part."""
    lines = [_headline(view), f"  {_when(view)}"]
    if view.part_of:
        lines.append(f"  part of run {view.part_of} (its verification)")
    if view.error:
        lines.append(f"  stopped: {view.error}")
    if view.items:
        lines += ["", *_table(view.items)]
    lines.append(view.totals())
    if view.models:
        lines.append("models: " + ", ".join(f"{r}={m}" for r, m in sorted(view.models.items())))
    for item in view.items:
        lines += ["", *_item(item, commands=commands)]
    lines += _run_part(view, commands=commands)
    if not commands and _has_commands(view):
        lines += ["", f"(the commands each step ran: fixloop runs show {view.id} --commands)"]
    return lines


def list_lines(runs: Sequence[dict[str, Any]]) -> list[str]:
    """`runs list`: a header, then one row per run with its outcome (what its items ended as)."""
    if not runs:
        return ["no runs recorded"]
    rows = [("run", "workflow", "state", "outcome", "started", "ended", "note")]
    for info in runs:
        rows.append(
            (
                str(info.get("id")),
                str(info.get("workflow") or "?"),
                str(info.get("state")),
                str(info.get("outcome") or "-"),
                str(info.get("started_at") or "?"),
                str(info.get("ended_at") or "-"),
                _list_note(info),
            )
        )
    return _columns(rows)


def _list_note(info: dict[str, Any]) -> str:
    details, recovery = info.get("details") or {}, info.get("recovery") or {}
    notes = []
    kept = details.get("kept_branch") or recovery.get("kept_branch")
    if kept:
        notes.append(f"kept {kept}")
    if info.get("state") == "crashed" and info.get("last_step"):
        notes.append(f"died in {info['last_step']}")
    if info.get("recovered_at"):
        notes.append("(recovered)")
    if details.get("part_of"):
        notes.append(f"part of {details['part_of']}")
    return "  ".join(notes)


def _headline(view: RunView) -> str:
    outcome = f": {view.outcome}" if view.outcome else ""
    return f"run {view.id}  {view.workflow}  {view.state}{outcome}"


def _when(view: RunView) -> str:
    ended = f", ended {view.ended_at}" if view.ended_at else ""
    return f"started {view.started_at}{ended} ({view.wall_s:.1f}s)"


def _table(items: Sequence[ItemView]) -> list[str]:
    rows: list[tuple[str, ...]] = [_HEADERS]
    for item in items:
        cost = f"${item.usage.cost_usd:.4f}"
        rows.append(
            (item.id, item.status, str(item.attempts), cost, item.commit or "-", item.reason)
        )
    return _columns(rows, right={2})


def _columns(
    rows: Sequence[tuple[str, ...]], right: frozenset[int] | set[int] = frozenset()
) -> list[str]:
    """Rows as aligned columns (the last one left ragged)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for row in rows:
        cells = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(row[:-1])
        ]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return lines


def _item(item: ItemView, *, commands: bool) -> list[str]:
    commit = f" [{item.commit}]" if item.commit else ""
    lines = [f"{item.id}  {item.status}  {item.title}{commit}".rstrip()]
    if item.reason:
        lines.append(f"  {item.reason}")
    lines.append(f"  {item.attempts} attempt(s); {item.usage.describe()}")
    lines += [f"  call {c.key}: {c.outcome} ({c.reason}): {c.detail}" for c in item.failed_calls]
    lines += [f"  denied write: {denial}" for denial in item.denied]
    lines += [f"  scope request: {path}" for path in item.scope_requests]
    lines += [f"  note: {note}" for note in item.notes]
    if item.tools:
        lines.append(f"  tool calls ({len(item.tools)}):")
        lines += [f"    {n}. {_tool(tool)}" for n, tool in enumerate(item.tools, start=1)]
    lines += _steps(item.steps, "  ", commands=commands)
    if item.diff:
        lines += ["  diff:", *(f"    {line}" for line in item.diff.splitlines())]
    return lines


def _tool(tool: ToolView) -> str:
    said = "ok" if tool.ok else f"refused: {tool.error}" if tool.error else "failed"
    where = f" {tool.path}" if tool.path else ""
    results = f" -> {', '.join(tool.results)}" if tool.results else ""
    return f"{tool.tool}{where}: {said}{results} ({tool.duration_s:.2f}s)"


def _run_part(view: RunView, *, commands: bool) -> list[str]:
    lines = [f"call {c.key}: {c.outcome} ({c.reason}): {c.detail}" for c in view.failed_calls]
    lines += [f"note: {note}" for note in view.notes]
    lines += [f"warning: {warning}" for warning in view.warnings]
    steps = _steps(view.steps, "", commands=commands)
    if steps:
        lines += ["run steps:", *steps]
    return ["", *lines] if lines else []


def _steps(steps: Sequence[StepView], indent: str, *, commands: bool) -> list[str]:
    """Every step with its commands when asked; otherwise only the steps that failed."""
    lines: list[str] = []
    for step in steps:
        if not commands and step.ok:
            continue
        verdict = "ok" if step.ok else f"FAILED (exit {step.exit_code})"
        lines.append(
            f"{indent}  step {step.workflow}#{step.step}: {verdict} {step.duration_s:.2f}s"
        )
        if step.failure:
            lines.append(f"{indent}    {step.failure}")
        if commands:
            lines += [f"{indent}    {at or '(runtime)'}: {command}" for at, command in step.ran]
    return lines


def _has_commands(view: RunView) -> bool:
    return any(step.ran for step in view.steps) or any(
        step.ran for item in view.items for step in item.steps
    )


__all__ = ["describe", "list_lines"]
