"""The workflows fixloop runs headless, by document name: one row each.

    run_workflow("review-fix", context, review=Path("02-REVIEW.md"), repo=Path("."))

A row names the workflow's package, its class and its options model, and what its command says
about it. The command line (`cli/workflow_command.py` builds `fixloop <name>` from the row and
the options model) and the public API (`fixloop.run_workflow`) both look workflows up here, so a
new workflow is one package, one document and one row (`add_workflow` adds a row from outside,
as a plugin or a test does). Importing this module imports no workflow.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fixloop.diagnostics import Diagnostic, FixloopError

if TYPE_CHECKING:
    from fixloop.workflows.kernel.workflow import AnyWorkflow, Context


@dataclass(frozen=True)
class Entry:
    module: str
    workflow: str  # the Workflow subclass
    options: str  # its options dataclass (`kernel/options.py`: its fields are the arguments)
    help: str  # its line in `fixloop --help`
    description: str  # the head of `fixloop <name> --help`
    asks: bool = False  # it may ask a person: in a terminal the command hands it a prompter
    sandboxed: bool = True  # it runs verification commands: `--sandbox` and `--image`
    totals: bool = False  # its command adds the run's totals (calls, cost) to what it prints
    progress: str = "items"  # how its progress reads on stderr (`cli/progress.py` PRINTERS)

    def load(self) -> tuple[type[AnyWorkflow], type[Any]]:
        """The workflow class and its options model (this imports the workflow's package)."""
        module = importlib.import_module(self.module)
        return getattr(module, self.workflow), getattr(module, self.options)


WORKFLOWS: dict[str, Entry] = {
    "review-fix": Entry(
        "fixloop.workflows.review_fix",
        "ReviewFix",
        "ReviewFixOptions",
        help="fix a REVIEW.md's findings: one verified commit per finding, REVIEW-FIX.md",
        description="Fix the findings of a GSD-format REVIEW.md in an isolated worktree: one "
        "verified, atomic commit per finding, per-file rollback on failure, REVIEW-FIX.md "
        "committed once, and your branch fast-forwarded at the end.",
        asks=True,
        totals=True,
    ),
    "fix-findings": Entry(
        "fixloop.workflows.fix_findings",
        "FixFindings",
        "FixFindingsOptions",
        help="resolve confirmed P0/P1 findings: pre-gate, <= 2 fix+verify rounds, staged only",
        description="Resolve confirmed P0/P1 findings one at a time (a bounded fix-verify "
        "loop). Fixes are staged with `git add -- <files>` and never committed.",
        asks=True,
        totals=True,
    ),
    "execute-wave": Entry(
        "fixloop.workflows.execute_wave",
        "ExecuteWave",
        "ExecuteWaveOptions",
        help="run tasks.json wave by wave: parallel executors, verified merges, one commit a wave",
        description="Execute the tasks of tasks.json wave by wave in an isolated worktree: "
        "parallel executors in worktrees of their own, merges by task id, the build command, "
        "verification with recomputed weighted scores, a serial fix loop, per-file rollback of "
        "failed tasks and one commit of the passed ones per wave; your branch is fast-forwarded "
        "at the end.",
        progress="tasks",
    ),
    "fix-engine": Entry(
        "fixloop.workflows.fix_engine",
        "FixEngine",
        "FixEngineOptions",
        help="implement a mini-PRD's acceptance criteria: executor, verifier, <= 3 attempts each",
        description="Implement one section from its mini-prd.md in an isolated worktree: a "
        "checklist of its acceptance criteria, then per item an executor attempt judged by an "
        "independent verifier, at most 3 attempts, one commit per passed item, progress in "
        "meta.yaml, an error report naming each failed item, and COMPLETE written last.",
    ),
    "fix-issue": Entry(
        "fixloop.workflows.fix_issue",
        "FixIssue",
        "FixIssueOptions",
        help="fix an issue: a patch, accepted only when it passes on a clean checkout",
        description="Fix the issue described in ISSUE.md: a model locates the code, edits it "
        "with version-checked edits, runs the preset tests in a sandbox and iterates; the patch "
        "is accepted only after it applies to a clean checkout of the base commit and the tests "
        "pass there. Your branch and working tree are never touched: the output is a patch, a "
        "result.json and the trace, in .git/fixloop/runs/RUN_ID/.",
    ),
    "review": Entry(
        "fixloop.workflows.review",
        "Review",
        "ReviewOptions",
        help="review files with the reviewer role; write a REVIEW.md or a findings JSON",
        description="Review files with the reviewer role (it only reads) and write what it "
        "found as a GSD-format REVIEW.md for review-fix, or a ReviewOutput JSON for "
        "fix-findings.",
        sandboxed=False,
        totals=True,
    ),
}


def add_workflow(name: str, entry: Entry) -> None:
    """One more row: `fixloop <name>` and `run_workflow(name, …)` run it from now on."""
    WORKFLOWS[name] = entry


def run_workflow(name: str, context: Context, **options: Any) -> Any:
    """Run the workflow `name` with its options given as keywords; returns its result."""
    entry = WORKFLOWS.get(name)
    if entry is None:
        known = ", ".join(sorted(WORKFLOWS))
        raise FixloopError(
            Diagnostic(name, 1, 1, "usage", f"no workflow {name!r} runs headless ({known})")
        )
    workflow_class, options_model = entry.load()
    try:
        chosen = options_model(**options)
    except TypeError as exc:
        raise FixloopError(Diagnostic(name, 1, 1, "usage", f"options: {exc}")) from None
    return workflow_class(context, chosen).run()


__all__ = ["WORKFLOWS", "Entry", "add_workflow", "run_workflow"]
