"""The efficacy harness: every task of a corpus through fix-issue, or another agent's patches
through the same acceptance, with what each cost.

Per task: its repository is built fresh in a temporary folder (`materialize`), the issue is put
beside it (never inside), and fix-issue runs with the task's preset tests and its hidden
acceptance tests (copied only over the clean checkout that judges the patch, so the agent never
sees them). Every command runs in the chosen sandbox. A task is `resolved` exactly when
fix-issue says so; the report also says whether each exported patch passed acceptance anyway.

With `patches`, no agent runs: `PATCHES/<task-id>.patch` (made by any agent, against the base the
harness builds) goes through the very same acceptance, so two agents compare on the same tasks.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from fixloop.agents.backend import Backend, Usage
from fixloop.agents.budget import RunBudget
from fixloop.agents.openai_config import OpenAIFlags
from fixloop.agents.registry import load_backend
from fixloop.agents.scripted import ScriptedBackend
from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.documents.pack import Pack
from fixloop.events import Event, EventKind, EventStream
from fixloop.extras.efficacy.corpus import Corpus, Task, load_corpus
from fixloop.extras.efficacy.evidence import keep, record
from fixloop.extras.efficacy.executor import LocalPool, TaskPool, in_order, longest_first
from fixloop.extras.efficacy.materialize import hidden_from_patch, materialize
from fixloop.extras.efficacy.outcome import BenchResult, TaskOutcome
from fixloop.runs.run import new_run_id, now_iso
from fixloop.sandboxes import choose_sandbox, open_sandbox
from fixloop.workflows.fix_issue import (
    Acceptance,
    FixIssueOptions,
    HiddenTests,
    PatchCheck,
    PresetTest,
    SandboxOpener,
    run_fix_issue,
    verify_patch,
)
from fixloop.workflows.fix_issue.grading import TestSelection
from fixloop.workflows.fix_issue.suite import summary
from fixloop.workflows.kernel.workflow import Context

Kept = list[tuple[Path, str]]  # files of a task's evidence: a source, the name kept under


@dataclass(frozen=True)
class BenchOptions:
    corpus: Path
    backend: str = "scripted"
    script: Path | None = None  # scripted: task id → script; default: each task's answer.yaml
    openai: OpenAIFlags = field(default_factory=OpenAIFlags)  # --backend openai's choices
    sandbox: str = "auto"
    image: str | None = None
    budget: RunBudget | None = None  # for the whole bench: once spent, no task starts
    patches: Path | None = None  # score these patches instead of running an agent
    tasks: tuple[str, ...] = ()  # only these; default: all
    out: Path | None = None  # keep each task's result.json, trace and patch here
    events: EventStream = field(default_factory=EventStream)
    open_sandbox: SandboxOpener = open_sandbox
    models: Mapping[str, str] = field(default_factory=dict)  # role → model (`--model`, profile)
    workers: int = 1  # tasks at once on this machine (`--workers`); ignored when `pool` is given
    pool: TaskPool | None = None  # where tasks run; default: LocalPool(workers)
    agent: Callable[[Task], Backend] | None = None  # who plays each task; default: `backend`
    # Seconds each task took before (task id → wall time, an earlier run's record): the longest
    # start first, so the run does not end waiting on one long task. Results keep task order.
    expected: Mapping[str, float] = field(default_factory=dict)


def _say(
    events: EventStream, task: Task, status: str, message: str, place: tuple[int, int] = (0, 0)
) -> None:
    # `place` is the task's position in the run and the run's size: with several workers the
    # finishing order is anyone's, but "[3/8]" still names the same task.
    index, total = place
    events.emit(
        Event(
            EventKind.ITEM,
            message,
            workflow="efficacy",
            item=task.id,
            title=task.spec.title,
            status=status,
            data={"index": index, "total": total} if total else {},
        )
    )


def _scripts(options: BenchOptions) -> dict[str, object] | None:
    if options.script is None:
        return None
    try:
        data = yaml.safe_load(options.script.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise FixloopError(Diagnostic(str(options.script), 1, 1, "script", str(exc))) from None
    if not isinstance(data, dict):
        problem = "a bench script maps task ids to scripted-backend scripts"
        raise FixloopError(Diagnostic(str(options.script), 1, 1, "script", problem))
    return data


def backend_for(options: BenchOptions) -> Callable[[Task], Backend]:
    """Who plays the issue-fixer for each task (one real backend; one script per task)."""
    if options.agent is not None:
        return options.agent
    if options.backend != "scripted":
        shared = load_backend(
            options.backend, script=options.script, openai=options.openai, where="bench efficacy"
        )
        return lambda task: shared
    scripts = _scripts(options)

    def scripted(task: Task) -> Backend:
        if scripts is None:
            return ScriptedBackend.from_file(task.answer)
        entry = scripts.get(task.id, {})
        return ScriptedBackend(entry if isinstance(entry, dict) else {}, origin=task.id)

    return scripted


def _hidden(task: Task, repo: Path, base: str) -> HiddenTests:
    """The task's hidden tests: its `hidden/` folder, or its test.patch's files at `base`."""
    commands = tuple(PresetTest(tuple(argv)) for argv in task.spec.acceptance)
    files = task.hidden
    if task.test_patch is not None:
        files = hidden_from_patch(task, repo, base, repo.parent / "hidden")
    return HiddenTests(files=files, commands=commands)


def _image(options: BenchOptions, task: Task) -> str | None:
    """The task's image, for docker (auto may choose it); `--sandbox local|bwrap` runs none."""
    if options.sandbox in ("local", "bwrap"):
        return options.image
    return task.spec.image or options.image


def _selection(task: Task) -> TestSelection:
    return TestSelection(
        fail_to_pass=tuple(task.spec.fail_to_pass),
        pass_to_pass=None if task.spec.pass_to_pass is None else tuple(task.spec.pass_to_pass),
        require_fail_to_pass=True,
    )


def _acceptance_trace(acceptance: Acceptance | None) -> Kept:
    if acceptance is None or acceptance.folder is None:
        return []
    return [(acceptance.folder / "events.jsonl", "acceptance-events.jsonl")]


def _run_agent(
    options: BenchOptions, pack: Pack, task: Task, backend: Backend, workdir: Path
) -> tuple[TaskOutcome, Kept]:
    repo = workdir / "repo"
    base = materialize(task, repo)
    issue = workdir / "issue.md"
    shutil.copyfile(task.issue, issue)
    fix = FixIssueOptions(
        issue=issue,
        repo=repo,
        tests=list(task.commands),
        sandbox=options.sandbox,
        image=_image(options, task),
        hidden=_hidden(task, repo, base),
        issue_id=task.id,
        open_sandbox=options.open_sandbox,
        fail_to_pass=task.spec.fail_to_pass,
        pass_to_pass=task.spec.pass_to_pass or (),
        require_fail_to_pass=True,
    )
    context = Context(pack, backend, options.events, budget=options.budget, models=options.models)
    result = run_fix_issue(fix, context)
    acceptance = result.acceptance
    outcome = TaskOutcome(
        id=task.id,
        kind=task.spec.kind,
        title=task.spec.title,
        status=str(result.status),
        reason=result.reason,
        base=base,
        run_id=result.run_id,
        sandbox=result.sandbox,
        tests_before=summary(result.tests_before),
        tests_after=summary(result.tests_after),
        accepted=None if acceptance is None else acceptance.accepted,
        attempts=len(result.attempts),
        turns=result.turns,
        tool_calls=result.tool_calls,
        cost_usd=result.cost_usd,
    )
    patch = Path(result.patch_path) if result.patch_path else None
    record(outcome, acceptance, after_fix=result.tests_after, patch=patch)
    kept = [
        (Path(source), Path(source).name)
        for source in (result.result_path, result.trace_path, result.patch_path)
        if source
    ]
    return outcome, kept + _acceptance_trace(acceptance)


def accept_patch(
    options: BenchOptions, pack: Pack, task: Task, repo: Path, *, base: str, patch: Path
) -> Acceptance:
    """`patch` through the task's acceptance on a clean checkout of `base` (`repo` built by
    `materialize`): what `--patches` scores and what `validate` proves a task with."""
    hidden = _hidden(task, repo, base)
    check = PatchCheck(
        repo=repo,
        base=base,
        patch=patch.resolve(),
        commands=tuple(PresetTest(argv) for argv in task.commands) + hidden.commands,
        opener=options.open_sandbox,
        sandbox=options.sandbox,
        image=_image(options, task),
        hidden_files=hidden.files,
        selection=_selection(task),
    )
    return verify_patch(
        check,
        document=pack.workflow("fix-issue"),
        protocol=pack.workflow("git-protocol"),
        run_id=new_run_id(),
        events=options.events,
    )


def _score_patch(
    options: BenchOptions, pack: Pack, task: Task, workdir: Path
) -> tuple[TaskOutcome, Kept]:
    assert options.patches is not None
    repo = workdir / "repo"
    base = materialize(task, repo)
    outcome = TaskOutcome(id=task.id, kind=task.spec.kind, title=task.spec.title, base=base)
    patch = options.patches / f"{task.id}.patch"
    if not patch.is_file() or not patch.read_bytes().strip():
        outcome.status, outcome.reason = "unresolved", f"no patch ({patch.name})"
        return outcome, []
    acceptance = accept_patch(options, pack, task, repo, base=base, patch=patch)
    outcome.accepted = acceptance.accepted
    outcome.status = "resolved" if acceptance.accepted else "rejected"
    outcome.reason = acceptance.problem or "the patch passed acceptance"
    outcome.tests_before = summary(acceptance.base_results)
    outcome.tests_after = summary(acceptance.results)
    record(outcome, acceptance, patch=patch)
    return outcome, [(patch, "fix.patch"), *_acceptance_trace(acceptance)]


def run_task(
    options: BenchOptions,
    pack: Pack,
    task: Task,
    backend: Callable[[Task], Backend],
    place: tuple[int, int] = (0, 0),
) -> TaskOutcome:
    """One task in a temporary folder of its own, timed; an error is this task's, not the run's."""
    started, started_at = time.monotonic(), now_iso()
    _say(options.events, task, "running", task.spec.kind, place)
    kept: Kept = []
    with tempfile.TemporaryDirectory(prefix=f"fixloop-efficacy-{task.id}-") as folder:
        try:
            if options.patches is not None:
                outcome, kept = _score_patch(options, pack, task, Path(folder))
            else:
                outcome, kept = _run_agent(options, pack, task, backend(task), Path(folder))
        except FixloopError as exc:
            outcome = _error(task, str(exc).splitlines()[0])
        except Exception as exc:  # one task's failure (even a bug of ours) stops no other
            outcome = _error(task, f"internal error: {type(exc).__name__}: {exc}".splitlines()[0])
        outcome.wall_s = time.monotonic() - started
        outcome.started_at, outcome.ended_at = started_at, now_iso()
        keep(options.out, outcome, kept)  # before the task's folder goes
    _say(options.events, task, outcome.status, f"{outcome.status}: {outcome.reason}", place)
    return outcome


def _error(task: Task, reason: str) -> TaskOutcome:
    return TaskOutcome(
        id=task.id, kind=task.spec.kind, title=task.spec.title, status="error", reason=reason
    )


Placed = tuple[int, Task]  # a task and its place in the run (1-based)


@dataclass
class TaskJob:
    """One task of the run as a pool runs it. It pickles for a pool that sends it to other
    processes: without the run's event stream and budget, which stay here (`admit`, `settle`),
    and without the backend, which each process loads again from the options."""

    options: BenchOptions
    pack: Pack
    total: int
    backend: Callable[[Task], Backend] | None = None

    def __call__(self, placed: Placed) -> TaskOutcome:
        index, task = placed
        if self.backend is None:
            self.backend = backend_for(self.options)
        return run_task(self.options, self.pack, task, self.backend, (index, self.total))

    def admit(self, placed: Placed) -> TaskOutcome | None:
        """Asked when the task would start: once the run's budget is spent no task starts
        (those already running stop at their next call)."""
        _, task = placed
        spent = self.options.budget.exhausted() if self.options.budget else None
        if spent is None:
            return None
        return TaskOutcome(
            id=task.id,
            kind=task.spec.kind,
            title=task.spec.title,
            status="not-run",
            reason=spent.describe(),
        )

    def settle(self, placed: Placed, outcome: TaskOutcome) -> None:
        """A task that ran in another process: its cost charged to the run's budget, its end
        said on the run's event stream."""
        index, task = placed
        if self.options.budget is not None:
            self.options.budget.charge(Usage(cost_usd=outcome.cost_usd))
        message = f"{outcome.status}: {outcome.reason}"
        _say(self.options.events, task, outcome.status, message, (index, self.total))

    def __getstate__(self) -> dict[str, object]:
        away = replace(self.options, events=EventStream(), budget=None, pool=None)
        return {"options": away, "pack": self.pack, "total": self.total, "backend": None}


def export_tasks(corpus_root: Path, target: Path, task_ids: tuple[str, ...] = ()) -> list[Path]:
    """What another agent gets to work on: per task a repository at the base the harness
    builds, and the issue beside it. The hidden tests stay behind."""
    corpus = load_corpus(corpus_root)
    tasks = corpus.select(list(task_ids)) if task_ids else corpus.tasks
    made: list[Path] = []
    for task in tasks:
        folder = target / task.id
        if folder.exists():
            raise FixloopError(Diagnostic(str(folder), 1, 1, "usage", "exists; export elsewhere"))
        folder.mkdir(parents=True)
        materialize(task, folder / "repo")
        shutil.copyfile(task.issue, folder / "issue.md")
        made.append(folder)
    return made


def run_bench(options: BenchOptions, pack: Pack) -> BenchResult:
    corpus: Corpus = load_corpus(options.corpus)
    choose_sandbox(options.sandbox, image=options.image)  # bad sandbox input: exit 2, no task
    tasks = corpus.select(list(options.tasks)) if options.tasks else corpus.tasks
    if options.patches is not None and not options.patches.is_dir():
        raise FixloopError(Diagnostic(str(options.patches), 1, 1, "usage", "no such folder"))
    backend = backend_for(options)
    result = BenchResult(
        corpus=corpus.spec.name,
        version=corpus.spec.version,
        digest=corpus.digest,
        backend="patches" if options.patches else options.backend,
        sandbox=options.sandbox,
    )
    pool = options.pool or LocalPool(options.workers)
    _ = pack.digest  # read once here, not by the first tasks at once (and shipped with it)
    job = TaskJob(options, pack, len(tasks), backend)
    started = time.monotonic()
    placed = list(enumerate(tasks, 1))
    order = longest_first(placed, lambda item: options.expected.get(item[1].id))
    result.outcomes = in_order(pool, job, placed, order, admit=job.admit, settle=job.settle)
    result.wall_s = time.monotonic() - started
    # The sandbox that really ran the commands, as the first task that ran one reported it.
    result.sandbox = next((o.sandbox for o in result.outcomes if o.sandbox), options.sandbox)
    return result


__all__ = [
    "BenchOptions",
    "TaskJob",
    "accept_patch",
    "backend_for",
    "export_tasks",
    "run_bench",
    "run_task",
]
