"""The base every workflow builds on: its document, its run, its steps, its roles, its events.

A workflow is a class named after its document (`name = "review-fix"`) whose `run()` reads top to
bottom like the document's "Order of work". Each part of that order is a method decorated with
`@implements("step-id")`, the id of the document section it carries out; entering it emits a
`phase` event. A test follows the events of real runs and checks that the phases come in the
order the document names them, and that every id a workflow implements exists in its document
(`tests/workflows/test_order_of_work.py`).

    class ReviewFix(Workflow[ReviewFixOptions, ReviewFixPlan, ReviewFixResult]):
        name = "review-fix"

        def plan(self) -> ReviewFixPlan: ...            # bad input: FixloopError, exit 2
        def new_result(self, plan) -> ReviewFixResult: ...
        def work(self, plan) -> None: ...               # the document's order of work

        @implements("check-review-status")
        def check_review_status(self) -> str:
            return required_output(self.step("check-review-status", cwd=...), "STATUS")

`Workflow.run()` is the one run lifecycle, the same for every workflow; a workflow never writes
its own (mini-swe-agent's shape: the loop is the base's, the parts are the subclass's):

    plan()                 the input read and checked; nothing has run yet (bad input: exit 2)
    new_result(plan)       the result every later part fills in
    nothing_to_do(plan)    a reason to stop before anything starts (a clean review, a section
                           already complete), or None
    preflight              the git protocol's preflight (exit 2 in every workflow), then the
                           backend: the keys `first_calls(plan)` names must be answerable
    dry_run(plan)          with --dry-run: say what would be done, change nothing
    start the run          inside `one_at_a_time(plan)`: its folder, lock, trace and sandbox;
                           (all of the above inside the claim on `claimed_input()`, when the
                           workflow names one: two runs on one input never both start)
                           `new_state(plan)` saved
    work(plan)             the document's order of work; `self.git_session()` around the
                           part that changes the repository copies its branch outcome into
                           the result
    finish                 `result.run_state` ("finished", "kept-branch", …); on any exception
                           `on_failure(exc)`, then "failed", and the exception goes on up
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar, Generic, ParamSpec, TypeVar

from fixloop.agents.backend import Backend, preflight
from fixloop.agents.budget import RunBudget
from fixloop.agents.dispatch import Dispatcher
from fixloop.documents.pack import Pack, WorkflowDoc
from fixloop.events import Event, EventKind, EventStream
from fixloop.runs.exclusive import input_claim
from fixloop.runs.git_session import GitSession, git_session
from fixloop.runs.preflight import check_repository, no_optional_locks
from fixloop.runs.recovery import RecoveryReport, Sweeper
from fixloop.runs.run import Run
from fixloop.runs.state import RunState, save_state
from fixloop.sandboxes.launcher import RunSandbox, write_launcher
from fixloop.sandboxes.protocol import SandboxChoice
from fixloop.sandboxes.sweep import sweep_containers
from fixloop.steps.caller import Steps
from fixloop.steps.result import StepFailed, StepResult
from fixloop.steps.runner import StepRun, step_library
from fixloop.workflows.kernel.browser import Browser
from fixloop.workflows.kernel.choices import Prompter, ScriptedPrompter
from fixloop.workflows.kernel.result import Result

P = ParamSpec("P")
R = TypeVar("R")
OptionsT = TypeVar("OptionsT")
PlanT = TypeVar("PlanT")
ResultT = TypeVar("ResultT", bound=Result)

PROTOCOL = "git-protocol"


@dataclass
class Context:
    """What a caller hands every workflow: the pack, who plays the roles, and who listens."""

    pack: Pack
    backend: Backend
    events: EventStream = field(default_factory=EventStream)
    budget: RunBudget | None = None  # once spent, no new role call starts
    # role → model, over each role document's `model:` line (`fixloop.documents.models`)
    models: Mapping[str, str] = field(default_factory=dict)
    prompter: Prompter = field(default_factory=lambda: ScriptedPrompter([]))  # nobody to ask
    # Where the run's verification commands and the scripted model's shell run (chosen before
    # any change: `fixloop.sandboxes.choose_sandbox`); None: directly, as inside Claude Code.
    sandbox: SandboxChoice | None = None
    # The extras the front door wires in (the core imports none): the browser design tasks look
    # through, and what recovery sweeps for dead runs besides their containers (dev servers).
    browser: Browser | None = None
    sweepers: tuple[Sweeper, ...] = ()


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


def implemented_steps(workflow: type[AnyWorkflow]) -> dict[str, str]:
    """method name → the document step id it implements, for every `@implements` method."""
    return {
        name: step_id
        for name in dir(workflow)
        if (step_id := getattr(getattr(workflow, name), "step_id", None)) is not None
    }


class Workflow(Generic[OptionsT, PlanT, ResultT]):
    """One run of one workflow document."""

    name: ClassVar[str]
    # Whether the git protocol's preflight must pass before the run: every workflow that
    # changes a repository (the review workflow only writes a review file).
    needs_git: ClassVar[bool] = True

    result: ResultT

    def __init__(self, context: Context, options: OptionsT) -> None:
        self.context = context
        self.options = options
        self.pack = context.pack
        self.doc: WorkflowDoc = context.pack.workflow(self.name)
        self.protocol: WorkflowDoc = context.pack.workflow(PROTOCOL)
        self.events = context.events
        self.dispatcher = Dispatcher(
            context.pack,
            context.backend,
            events=context.events,
            budget=context.budget,
            models=context.models,
        )
        # Dispatch a role; its outcome is ok only for output that validated (fail closed).
        self.call = self.dispatcher.call
        self._run: Run | None = None
        self._depth = 0
        self.state: RunState | None = None

    # -- the run lifecycle: written once, here --------------------------------------------

    def run(self) -> ResultT:
        """Run the workflow: the lifecycle above, with the workflow's own parts in it."""
        if self.is_dry_run:
            with no_optional_locks():  # a dry run's git reads write nothing, not even a lock
                return self._run_dry()
        with input_claim(self.name, self.options_repo(), self.claimed_input()):
            plan = self.plan()
            result = self.result = self.new_result(plan)
            if self._nothing_to_do(plan):
                return result
            self.preflight(plan)
            with self.one_at_a_time(plan) as claim:
                run = self.start_run(self.repository(plan), sandbox=self.sandbox_for(plan))
                claim(run.id)
                result.run_id = run.id
                with run.failing_closed(self.run_details, self.on_failure):
                    self.state = self.new_state(plan)
                    if self.state is not None:
                        save_state(run.dir, self.state)
                    self.work(plan)
                run.finish(result.run_state, **self.run_details())
        return result

    def _run_dry(self) -> ResultT:
        plan = self.plan()
        result = self.result = self.new_result(plan)
        result.dry_run = True
        if self._nothing_to_do(plan):
            result.planned.append(f"{result.nothing_to_do}: nothing would be done")
            return result
        self.preflight(plan)
        self.dry_run(plan)
        return result

    def _nothing_to_do(self, plan: PlanT) -> bool:
        why = self.nothing_to_do(plan)
        if why is None:
            return False
        self.result.nothing_to_do = why
        self.note(why)
        return True

    @property
    def is_dry_run(self) -> bool:
        return bool(getattr(self.options, "dry_run", False))

    def preflight(self, plan: PlanT) -> None:
        """Once, before anything changes: can the protocol work in the repository, and can the
        backend answer the calls the run starts with? Either failing is one line, exit 2."""
        if self.needs_git:
            self.emit(Event(EventKind.PHASE, workflow=PROTOCOL, step="preflight", data=self._at()))
            check_repository(self, self.repository(plan))
        self.preflight_backend(self.first_calls(plan))

    # -- the parts a workflow supplies ------------------------------------------------------

    def plan(self) -> PlanT:
        """Read and check the input; nothing has run yet (bad input: FixloopError, exit 2)."""
        raise NotImplementedError

    def new_result(self, plan: PlanT) -> ResultT:
        raise NotImplementedError

    def repository(self, plan: PlanT) -> Path:
        """The repository the run works in (its runs live under its `.git/fixloop`)."""
        repo = getattr(plan, "repo", None)
        if not isinstance(repo, Path):
            raise NotImplementedError(f"{self.name}: the plan names no repository")
        return repo

    def nothing_to_do(self, plan: PlanT) -> str | None:
        """Why the run need not start at all, said as a note; None: there is work."""
        return None

    def first_calls(self, plan: PlanT) -> Sequence[str]:
        """The role-call keys the run starts with, where the workflow knows them."""
        return ()

    def sandbox_for(self, plan: PlanT) -> SandboxChoice | None:
        """The sandbox the run's commands use, when the plan chose it (else the context's)."""
        return None

    def dry_run(self, plan: PlanT) -> None:
        """Fill `result.planned` with what a run would do; change nothing."""
        self.result.planned.append("a run would start; nothing more is known before it does")

    def claimed_input(self) -> Path | None:
        """The input file (a path from the options, never replaced by the run) two live runs
        of this workflow must not share: locked before it is read, until the run ends.
        Default: None, runs never meet."""
        return None

    def options_repo(self) -> Path:
        repo = getattr(self.options, "repo", None)
        return repo if isinstance(repo, Path) else Path.cwd()

    @contextmanager
    def one_at_a_time(self, plan: PlanT) -> Iterator[Callable[[str], None]]:
        """Held while the run runs, for a workflow that must not run twice at once in one
        repository; yields what records the run's id in the claim. Default: no claim."""
        yield lambda run_id: None

    def new_state(self, plan: PlanT) -> RunState | None:
        """The run's loop state, saved in its folder before the work starts (None: none)."""
        return None

    def work(self, plan: PlanT) -> None:
        """The document's order of work, top to bottom."""
        raise NotImplementedError

    def on_failure(self, exc: BaseException) -> None:
        """An exception stopped the work; say what is kept before the run is marked failed."""

    def run_details(self) -> dict[str, Any]:
        """What the run's folder records about its end (`run.json` details)."""
        return self.result.to_json()

    def save_state(self) -> None:
        """Save the run's loop state now (after every change of it)."""
        if self.state is not None:
            save_state(self.active_run.dir, self.state)

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
        for step_id in ("recover-run", "setup-worktree"):
            self.emit(Event(EventKind.PHASE, workflow=PROTOCOL, step=step_id, data=self._at()))
        session: GitSession | None = None
        try:
            with git_session(
                self.active_run,
                protocol=self.protocol,
                recovered=recovered,
                preflighted=self.needs_git,
                sweepers=self.sweepers(),
                **options,
            ) as session:
                self._say_recovered(recovered)
                yield session
                self.emit(
                    Event(EventKind.PHASE, workflow=PROTOCOL, step="cleanup", data=self._at())
                )
        finally:
            if session is not None and session.outcome is not None:
                outcome = session.outcome
                if getattr(self, "result", None) is not None:
                    self.result.fast_forwarded = outcome.fast_forwarded
                    self.result.kept_branch = outcome.kept_branch or ""
                (self.note if outcome.fast_forwarded else self.warn)(outcome.describe())

    def _at(self) -> dict[str, int]:
        return {"depth": self._depth}

    def sweepers(self) -> tuple[Sweeper, ...]:
        """What recovery sweeps before it recovers: the extras' (the context's: dev servers),
        then the core's own, dead runs' docker containers."""
        return (*self.context.sweepers, sweep_containers)

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
        return self.steps_of(self.doc).attempt(name, cwd, **inputs)

    def try_protocol_step(self, name: str, cwd: Path, /, **inputs: str) -> StepResult:
        """Run a step of `git-protocol.md` outside the git session (recovery, resuming)."""
        return self.steps_of(self.protocol).attempt(name, cwd, **inputs)

    def steps_of(self, document: WorkflowDoc, run: StepRun | None = None) -> Steps:
        """The steps of `document` (this workflow's, the git protocol's), run for this run
        (or for `run`: a task's own run, say)."""
        return Steps(document, run or self._run)

    def emit(self, event: Event) -> None:
        self.events.emit(event)

    def note(self, message: str, *, item: str = "", data: Mapping[str, Any] | None = None) -> None:
        self.emit(Event(EventKind.NOTE, message, workflow=self.name, item=item, data=data or {}))

    def warn(self, message: str, *, item: str = "") -> None:
        """Warn now, and keep the warning (once) for the result's summary."""
        result = getattr(self, "result", None)
        if result is not None and message not in result.warnings:
            result.warnings.append(message)
        self.emit(Event(EventKind.WARNING, message, workflow=self.name, item=item))

    def item(
        self,
        item: str,
        status: StrEnum,
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


# A workflow of any options, plan and result: what the helpers and the registry speak of.
AnyWorkflow = Workflow[Any, Any, Any]


__all__ = ["PROTOCOL", "AnyWorkflow", "Context", "Workflow", "implemented_steps", "implements"]
