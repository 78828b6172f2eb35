"""The workflows fixloop runs headless, by document name: their class and their options.

    run_workflow("review-fix", context, review=Path("02-REVIEW.md"), repo=Path("."))

One row per workflow package; the command line and the public API (`fixloop.run_workflow`) both
look workflows up here, so a new workflow is one row, not one more code path.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.workflows.kernel.workflow import AnyWorkflow, Context


@dataclass(frozen=True)
class Entry:
    module: str
    workflow: str  # the Workflow subclass
    options: str  # its options dataclass


WORKFLOWS: dict[str, Entry] = {
    "review-fix": Entry("fixloop.workflows.review_fix", "ReviewFix", "ReviewFixOptions"),
    "fix-findings": Entry("fixloop.workflows.fix_findings", "FixFindings", "FixFindingsOptions"),
    "execute-wave": Entry("fixloop.workflows.execute_wave", "ExecuteWave", "ExecuteWaveOptions"),
    "fix-engine": Entry("fixloop.workflows.fix_engine", "FixEngine", "FixEngineOptions"),
    "fix-issue": Entry("fixloop.workflows.fix_issue", "FixIssue", "FixIssueOptions"),
    "review": Entry("fixloop.workflows.review", "Review", "ReviewOptions"),
}


def run_workflow(name: str, context: Context, **options: Any) -> Any:
    """Run the workflow `name` with its options given as keywords; returns its result."""
    entry = WORKFLOWS.get(name)
    if entry is None:
        known = ", ".join(sorted(WORKFLOWS))
        raise FixloopError(
            Diagnostic(name, 1, 1, "usage", f"no workflow {name!r} runs headless ({known})")
        )
    module = importlib.import_module(entry.module)
    workflow_class: type[AnyWorkflow] = getattr(module, entry.workflow)
    try:
        chosen = getattr(module, entry.options)(**options)
    except TypeError as exc:
        raise FixloopError(Diagnostic(name, 1, 1, "usage", f"options: {exc}")) from None
    return workflow_class(context, chosen).run()


__all__ = ["WORKFLOWS", "run_workflow"]
