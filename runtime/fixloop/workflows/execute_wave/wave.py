"""What the parts of a wave (implement, merge, verify, fix, resume) may use of the running wave.

The parts take a `WaveRun`, not the `ExecuteWave` workflow: this protocol lists exactly what they
read and call, so a part cannot reach further into the workflow without saying so here, and the
workflow module imports the parts without the parts importing it (no import circle).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from fixloop.agents.backend import AgentOutcome
from fixloop.agents.toolbox import Toolbox
from fixloop.documents.pack import WorkflowDoc
from fixloop.runs.git_session import GitSession
from fixloop.runs.run import Run
from fixloop.sandboxes.launcher import RunSandbox
from fixloop.steps.caller import Steps
from fixloop.steps.result import StepResult
from fixloop.steps.runner import StepRun
from fixloop.workflows.execute_wave.plan import ExecuteWaveOptions, WavePlan
from fixloop.workflows.execute_wave.records import Records
from fixloop.workflows.execute_wave.state import ExecuteWaveResult, ExecuteWaveState
from fixloop.workflows.execute_wave.tasks_file import TaskFile
from fixloop.workflows.execute_wave.work import TaskWork
from fixloop.workflows.kernel.workflow import Context


class WaveRun(Protocol):
    # what the run read and keeps
    options: ExecuteWaveOptions
    wave_plan: WavePlan
    tasks_file: TaskFile
    records: Records
    state: ExecuteWaveState
    result: ExecuteWaveResult
    wave_baseline_ref: str  # the wave's baseline tag, for the reviewer's diff
    # where it works
    doc: WorkflowDoc
    protocol: WorkflowDoc
    git: GitSession
    call: Callable[..., AgentOutcome]  # a role call for the run as a whole
    context: Context  # what the caller handed the run (the browser design tasks look through)

    @property
    def active_run(self) -> Run: ...

    def call_for(
        self,
        work: TaskWork,
        role: str,
        inputs: Mapping[str, Any],
        task: str,
        cwd: Path,
        *,
        writable: Sequence[str] | None = None,
        key: str,
        design: bool = False,
        services: tuple[tuple[str, str], ...] = (),
        toolbox: Toolbox | None = None,
    ) -> AgentOutcome: ...

    def isolated_sandbox(self) -> bool:
        """Whether role calls' commands run in a sandbox without the host's network."""
        ...

    def run_sandbox(self) -> RunSandbox | None:
        """The run's sandbox (None when none was chosen): design tasks' dev servers run in it
        when it confines (bwrap, docker), for they serve what the agent wrote."""
        ...

    def screenshot_client(self) -> Path | None:
        """The step library's python3-only screenshot client when the sandbox has no fixloop
        (docker), else None."""
        ...

    def step(self, name: str, cwd: Path, /, **inputs: str) -> StepResult: ...

    def steps_of(self, document: WorkflowDoc, run: StepRun | None = None) -> Steps: ...

    def note(
        self, message: str, *, item: str = "", data: Mapping[str, Any] | None = None
    ) -> None: ...

    def warn(self, message: str, *, item: str = "") -> None: ...

    def item(
        self,
        item: str,
        status: StrEnum,
        message: str = "",
        *,
        title: str = "",
        data: Mapping[str, Any] | None = None,
    ) -> None: ...


__all__ = ["WaveRun"]
