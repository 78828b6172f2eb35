"""The base every workflow builds on: its document, its run, its steps, its roles, its events.

A workflow is a class named after its document (`name = "review-fix"`) whose `run()` reads top to
bottom like the document's "Order of work". Each part of that order is a method decorated with
`@implements("step-id")`, the id of the document section it carries out; entering it emits a
`phase` event. A test follows the events of real runs and checks that the phases come in the
order the document names them, and that every id a workflow implements exists in its document
(`tests/workflows/test_order_of_work.py`).

    class ReviewFix(Workflow):
        name = "review-fix"

        def run(self) -> Result:
            status = self.check_review_status()
            ...

        @implements("check-review-status")
        def check_review_status(self) -> str:
            return required_output(self.step("check-review-status", cwd=...), "STATUS")
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, ParamSpec, TypeVar

from fixloop.agents.backend import Backend, preflight
from fixloop.agents.budget import RunBudget
from fixloop.agents.dispatch import Dispatcher
from fixloop.documents.pack import Pack, WorkflowDoc
from fixloop.events import Event, EventKind, EventStream
from fixloop.runs.git_session import GitSession, git_session
from fixloop.runs.recovery import RecoveryReport
from fixloop.runs.run import Run
from fixloop.sandboxes.launcher import RunSandbox, write_launcher
from fixloop.sandboxes.protocol import SandboxChoice
from fixloop.steps.result import StepFailed, StepResult
from fixloop.steps.runner import run_step, step_library
from fixloop.workflows.kernel.choices import Prompter, ScriptedPrompter
from fixloop.workflows.kernel.items import ItemStatus

P = ParamSpec("P")
R = TypeVar("R")
W = TypeVar("W", bound="Workflow")

PROTOCOL = "git-protocol"


@dataclass
class Context:
    """What a caller hands every workflow: the pack, who plays the roles, and who listens."""

    pack: Pack
    backend: Backend
    events: EventStream = field(default_factory=EventStream)
    budget: RunBudget | None = None  # once spent, no new role call starts
    prompter: Prompter = field(default_factory=lambda: ScriptedPrompter([]))  # nobody to ask
    # Where the run's verification commands and the scripted model's shell run (chosen before
    # any change: `fixloop.sandboxes.choose_sandbox`); None: directly, as inside Claude Code.
    sandbox: SandboxChoice | None = None


def implements(step_id: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Mark a workflow method as the document section `step_id`; entering it emits a phase."""

    def decorate(method: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(method)
        def entered(*args: P.args, **kwargs: P.kwargs) -> R:
            workflow = args[0]
            assert isinstance(workflow, Workflow)
            with workflow.phase(step_id):
                return method(*args, **kwargs)

        entered.step_id = step_id  # type: ignore[attr-defined]
        return entered

    return decorate


def implemented_steps(workflow: type[Workflow]) -> dict[str, str]:
    """method name → the document step id it implements, for every `@implements` method."""
    return {
        name: step_id
        for name in dir(workflow)
        if (step_id := getattr(getattr(workflow, name), "step_id", None)) is not None
    }


class Workflow:
    """One run of one workflow document."""

    name: ClassVar[str]

    def __init__(self, context: Context) -> None:
        self.context = context
        self.pack = context.pack
        self.doc: WorkflowDoc = context.pack.workflow(self.name)
        self.protocol: WorkflowDoc = context.pack.workflow(PROTOCOL)
        self.events = context.events
        self.dispatcher = Dispatcher(
            context.pack, context.backend, events=context.events, budget=context.budget
        )
        # Dispatch a role; its outcome is ok only for output that validated (fail closed).
        self.call = self.dispatcher.call
        self._run: Run | None = None
        self._depth = 0

    def run(self) -> object:
        """The document's order of work, top to bottom; returns the workflow's result."""
        raise NotImplementedError

    # -- the run -------------------------------------------------------------------------

    @property
    def active_run(self) -> Run:
        """The run `start_run` opened (the `run()` method is the workflow's order of work)."""
        if self._run is None:
            raise RuntimeError(f"{self.name}: no run started yet")
        return self._run

    def preflight_backend(self, calls: Sequence[str] = ()) -> None:
        """Check, before any worktree or commit, that the backend can answer at all (a login or
        key for a real model; script coverage for a scripted one: `calls` are the keys the run
        starts with, where the workflow knows them), and stop with the cause in one line if not.
        Every workflow calls it before its first change."""
        preflight(self.context.backend, calls)

    def start_run(self, repo: Path, *, sandbox: SandboxChoice | None = None) -> Run:
        """Open this workflow's run in `repo`: its folder, its lock, its trace of every event.
        `sandbox`: where its commands run, when the workflow chose it itself (else the
        context's choice)."""
        self._run = Run.start(repo, self.name, events=self.events)
        choice = sandbox or self.context.sandbox
        if choice is not None:
            self._use_sandbox(self._run, choice)
        return self._run

    def _use_sandbox(self, run: Run, choice: SandboxChoice) -> None:
        """Write the run's sandbox launcher (steps reach it as FIXLOOP_SANDBOX) and hand the
        sandbox to role calls; say which sandbox it is, and why."""
        sandbox = RunSandbox(
            choice,
            run_id=run.id,
            python=sys.executable,
            # Seen read-only in a container, and under bwrap's private /tmp: the step library
            # (its Python tools) and the run's folder (copies a step checks, like a baseline).
            read_only=(str(step_library(self.doc)), str(run.dir)),
        )
        write_launcher(run.dir, sandbox)
        self.dispatcher.sandbox = sandbox
        self.note(str(choice))

    @contextmanager
    def phase(self, step_id: str) -> Iterator[None]:
        """Work on the document section `step_id`; nested phases are parts of their parent."""
        self.emit(Event(EventKind.PHASE, workflow=self.name, step=step_id, data=self._at()))
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1

    @contextmanager
    def git_session(self, **options: Any) -> Iterator[GitSession]:
        """The git protocol around the work: preflight, recovery of dead runs, the run's own
        worktree on a temporary branch; its cleanup (fast-forward only) on every way out."""
        recovered: list[RecoveryReport] = []
        for step_id in ("preflight", "recover-run", "setup-worktree"):
            self.emit(Event(EventKind.PHASE, workflow=PROTOCOL, step=step_id, data=self._at()))
        session: GitSession | None = None
        try:
            with git_session(
                self.active_run, protocol=self.protocol, recovered=recovered, **options
            ) as session:
                self._say_recovered(recovered)
                yield session
                self.emit(
                    Event(EventKind.PHASE, workflow=PROTOCOL, step="cleanup", data=self._at())
                )
        finally:
            if session is not None and session.outcome is not None:
                outcome = session.outcome
                (self.note if outcome.fast_forwarded else self.warn)(outcome.describe())

    def _at(self) -> dict[str, int]:
        return {"depth": self._depth}

    def _say_recovered(self, reports: Sequence[RecoveryReport]) -> None:
        for line in (line for report in reports for line in report.lines()):
            if line != "nothing to recover":
                self.note(line)

    # -- steps, roles, events ------------------------------------------------------------

    def step(self, name: str, cwd: Path, /, **inputs: str) -> StepResult:
        """Run a step of this workflow's document; StepFailed unless it succeeded."""
        result = self.try_step(name, cwd, **inputs)
        if not result.ok:
            raise StepFailed(result)
        return result

    def try_step(self, name: str, cwd: Path, /, **inputs: str) -> StepResult:
        """Run a step whose failure the caller handles itself (its `ok` says how it went)."""
        return run_step(self.doc, name, cwd=cwd, inputs=inputs, run=self._run)

    def try_protocol_step(self, name: str, cwd: Path, /, **inputs: str) -> StepResult:
        """Run a step of `git-protocol.md` outside the git session (recovery, resuming)."""
        return run_step(self.protocol, name, cwd=cwd, inputs=inputs, run=self._run)

    def emit(self, event: Event) -> None:
        self.events.emit(event)

    def note(self, message: str, *, item: str = "", data: Mapping[str, Any] | None = None) -> None:
        self.emit(Event(EventKind.NOTE, message, workflow=self.name, item=item, data=data or {}))

    def warn(self, message: str, *, item: str = "") -> None:
        self.emit(Event(EventKind.WARNING, message, workflow=self.name, item=item))

    def item(
        self,
        item: str,
        status: ItemStatus,
        message: str = "",
        *,
        title: str = "",
        data: Mapping[str, Any] | None = None,
    ) -> None:
        """An item changed status: the trace records it, a progress display shows it."""
        event = Event(
            EventKind.ITEM,
            message or str(status),
            workflow=self.name,
            item=item,
            title=title,
            status=str(status),
            data=data or {},
        )
        self.emit(event)


__all__ = ["PROTOCOL", "Context", "Workflow", "implemented_steps", "implements"]
