"""What every workflow's result says about its run, written once.

A workflow's result derives from `Result` and adds only what is its own (review-fix's report,
fix-issue's patch). The kernel fills the base fields as the run goes: the run id when the run
starts, every warning as it is said, the branch outcome when the git session ends. The exit code,
the run's final state and the JSON the CLI prints are generic over the workflow's items:

    exit 0  nothing is left to do (or a dry run, or nothing to do at all)
    exit 1  an item fell short, the user's branch could not be fast-forwarded (the work is kept
            on a branch), or the workflow says the run is incomplete (`incomplete()`)

An item is anything with an id, a title and a status; `work_items()` says what they are, and
`item_json` turns one into the row `--json` shows. `fixloop <workflow>` prints `summary_lines()`,
or with `--json` one envelope of the items and `json_result()` (`cli/workflow_command.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(kw_only=True)
class Result:
    run_id: str = ""
    warnings: list[str] = field(default_factory=list)
    fast_forwarded: bool = False
    kept_branch: str = ""
    dry_run: bool = False
    planned: list[str] = field(default_factory=list)  # what a dry run would do, one line each
    nothing_to_do: str = ""  # why the run did not start: the input asks for nothing

    # -- what a workflow supplies ----------------------------------------------------------

    def work_items(self) -> Sequence[Any]:
        """The items of work, in order (each with at least an id and a status)."""
        return ()

    def item_json(self, item: Any) -> dict[str, Any]:
        """One item as `--json` shows it."""
        return dict(item.to_json())

    def short(self, item: Any) -> bool:
        """Did this item fall short of what the run was asked to do?"""
        return False

    def incomplete(self) -> bool:
        """Anything else that makes the run fall short (a report not committed, a section not
        finished); the items' own shortfalls are counted already."""
        return False

    def details(self) -> dict[str, Any]:
        """The workflow's own keys of the JSON result."""
        return {}

    def json_result(self) -> dict[str, Any]:
        """The `result` of the command's `--json` envelope (the items are beside it)."""
        return self.to_json()

    def summary_lines(self) -> list[str]:
        """What a person reads at the end of a run: each item's status, then the warnings."""
        if self.dry_run:
            return ["--dry-run: nothing was changed", *self.planned]
        if self.nothing_to_do:
            return [self.nothing_to_do]
        items = self.work_items()
        short = len(self.shortfalls())
        lines = [f"run {self.run_id}: {len(items)} item(s), {short} fell short"]
        lines += [f"  {item.id}: {item.status}" for item in items]
        if self.kept_branch:
            lines.append(
                f"Your branch could not be fast-forwarded: the work is on {self.kept_branch}"
            )
        lines += [f"Warning: {warning}" for warning in self.warnings]
        return lines

    # -- generic ------------------------------------------------------------------------------

    def shortfalls(self) -> list[Any]:
        return [item for item in self.work_items() if self.short(item)]

    @property
    def exit_code(self) -> int:
        if self.dry_run or self.nothing_to_do:
            return 0
        return 1 if self.kept_branch or self.shortfalls() or self.incomplete() else 0

    @property
    def run_state(self) -> str:
        """How the run's folder records its end when no exception stopped it."""
        return "kept-branch" if self.kept_branch else "finished"

    def to_json(self) -> dict[str, Any]:
        return {
            **self.details(),
            "run_id": self.run_id,
            "fast_forwarded": self.fast_forwarded,
            "kept_branch": self.kept_branch,
            "warnings": list(self.warnings),
            "dry_run": self.dry_run,
            "planned": list(self.planned),
            "nothing_to_do": self.nothing_to_do,
        }


__all__ = ["Result"]
