"""What the parts of a fix-findings run (the fixer call, the pre-staged check, the dry run) may
use of the running workflow.

They take a `FindingsRun`, not the `FixFindings` workflow: this protocol lists exactly what they
read and call, and the workflow module imports the parts without the parts importing it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from fixloop.agents.backend import AgentOutcome
from fixloop.runs.run import Run
from fixloop.workflows.fix_findings.staging import StagingSteps
from fixloop.workflows.fix_findings.state import FindingRecord, FixFindingsState
from fixloop.workflows.fix_findings.tree_guard import TreeGuard
from fixloop.workflows.kernel.workflow import Context


class FindingsOptions(Protocol):
    """The options the parts read (the run's own options model has more)."""

    @property
    def on_prestaged(self) -> str: ...

    @property
    def wait_s(self) -> float: ...


class FindingsRun(Protocol):
    repo: Path  # the user's repository: fix-findings works in its tree
    state: FixFindingsState
    brief: str  # the rules every fixer brief carries
    steps: StagingSteps
    guard: TreeGuard
    call: Callable[..., AgentOutcome]

    @property
    def name(self) -> str: ...

    @property
    def options(self) -> FindingsOptions: ...

    @property
    def context(self) -> Context: ...

    @property
    def active_run(self) -> Run: ...

    def max_rounds(self, record: FindingRecord) -> int: ...

    def save(self) -> None: ...

    def warn(self, message: str, *, item: str = "") -> None: ...


__all__ = ["FindingsRun"]
