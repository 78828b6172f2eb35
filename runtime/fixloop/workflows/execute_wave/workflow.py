"""execute-wave: tasks.json's waves, as `workflows/execute-wave.md` says, top to bottom.

    result = run_execute_wave(ExecuteWaveOptions(tasks=Path("tasks.json"), repo=repo), context)

`ExecuteWave.run` is the document's "Order of work"; `run_wave` is its step 4, one wave. The
runtime plays the wave-runner and the fix-loop roles itself (their whole job is sequencing, which
is this code) and dispatches the executor, reviewer, verifier and fixer. Every git change is a
document step: execute-wave's own (`merge-task`, `remove-task`, `checkpoint-task`,
`resume-run`) or git-protocol's (worktrees, tags, per-file rollback, exact-path commits,
cleanup), all in the run's own worktree; the user's branch only fast-forwards, at cleanup.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from fixloop import gitrepo
from fixloop.agents.backend import AgentOutcome
from fixloop.agents.toolbox import Toolbox
from fixloop.runs.exclusive import exclusive_run
from fixloop.sandboxes.launcher import RunSandbox
from fixloop.steps.result import StepFailed, required_output
from fixloop.steps.runner import step_library
from fixloop.workflows.execute_wave import design, fixes, resume
from fixloop.workflows.execute_wave.design import lent_tools
from fixloop.workflows.execute_wave.implement import Implementer
from fixloop.workflows.execute_wave.merge import merge_one, remove_task
from fixloop.workflows.execute_wave.plan import (
    ExecuteWaveOptions,
    WavePlan,
    all_done,
    plan_execute_wave,
)
from fixloop.workflows.execute_wave.records import Records
from fixloop.workflows.execute_wave.scoring import Score
from fixloop.workflows.execute_wave.state import (
    ExecuteWaveResult,
    ExecuteWaveState,
    TaskRecord,
    TaskStatus,
    write_wave_result,
)
from fixloop.workflows.execute_wave.tasks import WaveSettings, id_order
from fixloop.workflows.execute_wave.tasks_file import TaskFile
from fixloop.workflows.execute_wave.verify import Verification
from fixloop.workflows.execute_wave.work import (
    TaskEvents,
    TaskSteps,
    TaskWork,
    batches,
    in_parallel,
    now,
    task_files_only,
)
from fixloop.workflows.kernel.workflow import Context, Workflow, implements


def by_id(works: Sequence[TaskWork]) -> list[TaskWork]:
    return sorted(works, key=lambda work: id_order(work.id))


class ExecuteWave(Workflow[ExecuteWaveOptions, WavePlan, ExecuteWaveResult]):
    name = "execute-wave"
    state: ExecuteWaveState

    def __init__(self, context: Context, options: ExecuteWaveOptions) -> None:
        super().__init__(context, options)
        self.wave_baseline_ref = ""  # the wave's baseline tag, for the reviewer's diff
        self.rolled_back: list[str] = []  # what the last rollback restored

    # -- the parts of the kernel's run -----------------------------------------------------

    @contextmanager
    def one_at_a_time(self, plan: WavePlan) -> Iterator[Callable[[str], None]]:
        """One run per tasks.json: its statuses are written back. The file is replaced on each
        write, so the claim is a lock named after it (`runs.exclusive`), not a lock on it."""
        key = hashlib.sha256(str(plan.tasks.path.resolve()).encode("utf-8", "surrogateescape"))
        with exclusive_run(
            gitrepo.state_dir_of(plan.repo),
            self.name,
            where=plan.tasks.shown,
            lock=f"{self.name}-{key.hexdigest()[:16]}",
            on="on this tasks file",
            then="run again when it is done",
        ) as claim:
            yield claim.record

    def plan(self) -> WavePlan:
        plan = self.wave_plan = self.load_tasks()
        self.tasks_file = TaskFile(plan.tasks.path)
        if self.options.resume is not None:  # nothing to resume is bad input: no run starts
            stopped = resume.stopped_of_plan(gitrepo.state_dir_of(plan.repo), plan.tasks.digest)
            resume.chosen_run(stopped, self.options.resume)
        return plan

    def new_result(self, plan: WavePlan) -> ExecuteWaveResult:
        return ExecuteWaveResult(plan.tasks.shown)

    def nothing_to_do(self, plan: WavePlan) -> str | None:
        return all_done(plan)

    def new_state(self, plan: WavePlan) -> ExecuteWaveState:
        run = self.active_run
        self.result.run_dir = str(run.dir)
        state = ExecuteWaveState(
            input_path=plan.tasks.shown, input_digest=plan.tasks.digest, repo=str(plan.repo)
        )
        self.records = Records(run.dir, state, self.tasks_file, self._item)
        return state

    def work(self, plan: WavePlan) -> None:
        pool = self.options.pool or ThreadPoolExecutor(self.options.parallel, "fixloop-executor")
        try:
            self.resume_run()
            with self.git_session() as git:
                self.git = git
                for number in plan.waves:
                    self.run_wave(number, pool)
        finally:
            if self.options.pool is None:
                pool.shutdown(wait=True)
        self.settle()

    def run_details(self) -> dict[str, int]:
        passed = sum(record.passed for record in self.result.tasks)
        return {"passed": passed, "failed": len(self.result.tasks) - passed}

    def run_wave(self, number: int, pool: Executor) -> None:
        if self.state.wave(number).finished:
            return  # finished by the run this one resumed: its results stand
        works = self.wave_tasks(number)
        if works:
            has_design = any(work.task.is_design for work in works)
            self.browser_cleanup(has_design, 10)
            try:
                self.implement(works, pool)
                self.browser_cleanup(has_design, 0)
                self.begin_wave()
                tag = f"wave-{number}-baseline"
                self.git.tag(tag)
                self.wave_baseline_ref = f"refs/tags/fixloop/{self.active_run.id}/{tag}"
                for work in by_id(works):
                    self.merge_task(work)
                self.backpressure(works, number)
                with self.verification_server(works) as url:
                    self.verify(works, url, pool)
                    self.browser_cleanup(has_design, 0)
                    self.fix_loop(works, url)
                    self.browser_cleanup(has_design, 0)
            finally:
                for work in works:
                    remove_task(self, work)
                    if work.sub_run is not None:
                        work.sub_run.close()  # its worktree is `fixloop recover`'s now
            self.rollback_failed(works, number)
            self.commit_wave(works, number)
            self.end_wave(number)
        self.wave_result(number)

    # -- the parts of the order of work -----------------------------------------------------

    @implements("load-tasks")
    def load_tasks(self) -> WavePlan:
        return plan_execute_wave(self.options)

    @implements("resume-run")
    def resume_run(self) -> None:
        resume.resume_or_warn(self)

    @implements("wave-tasks")
    def wave_tasks(self, number: int) -> list[TaskWork]:
        """The wave's tasks to run; those whose dependency did not pass are skipped, saying why."""
        on_disk = self.tasks_file.read()
        works: list[TaskWork] = []
        for task in self.wave_plan.tasks.waves()[number]:
            if on_disk.get(task.id, {}).get("status") == "done":
                continue
            record = TaskRecord(id=task.id, name=task.name, wave=number, kind=task.kind)
            self.state.tasks[task.id] = record
            blocking = [
                f"dependency {dep} is {on_disk.get(dep, {}).get('status', 'pending')}"
                for dep in task.depends_on
                if on_disk.get(dep, {}).get("status") != "done"
            ]
            if blocking:
                self.state.wave(number).skipped.append(task.id)
                reason = blocking[0]
                self.records.set(
                    task.id, TaskStatus.SKIPPED, f"skipped: {reason}", lastError=reason
                )
                continue
            events = TaskEvents(self.events, task.id)
            run_id = f"{self.active_run.id}-task-{task.id}"
            works.append(TaskWork(task, run_id, events, TaskSteps(self.active_run, events)))
            queued = f"queued (wave {number})"
            self.records.set(task.id, TaskStatus.QUEUED, queued, startedAt=now(), lastError=None)
        return works

    @implements("begin-wave")
    def begin_wave(self) -> None:
        self.step("begin-wave", self.git.worktree, WORKTREE=str(self.git.worktree))

    @implements("browser-cleanup")
    def browser_cleanup(self, needed: bool, max_age_s: float) -> None:
        stopped = design.stop_stale_browsers(self.context.browser, max_age_s) if needed else 0
        if stopped:
            self.note(f"stopped {stopped} stale browser process(es)")

    @implements("implement")
    def implement(self, works: list[TaskWork], pool: Executor) -> None:
        """Up to --parallel executors at once; design tasks in batches of maxParallelBrowsers."""
        work_of = {work.id: work for work in works}
        for batch in batches([work.task for work in works], self.settings.maxParallelBrowsers):
            jobs = [Implementer(self, work_of[task.id]) for task in batch]
            in_parallel(pool, jobs, self.options.parallel)

    @implements("merge-task")
    def merge_task(self, work: TaskWork) -> None:
        merge_one(self, work)
        remove_task(self, work)
        if work.merged:
            merged = f"merged ({', '.join(work.files)})"
            self.records.set(
                work.id,
                TaskStatus.MERGED,
                merged,
                files=work.files,
                filesModified=work.files,
                executorFinishedAt=work.executor_finished_at or None,
            )
        elif work.failed:
            self.fail(work)

    @implements("backpressure")
    def backpressure(self, works: list[TaskWork], number: int) -> None:
        fixes.backpressure(self, works, number)
        for work in works:
            if work.merged and work.failed:
                self.fail(work)

    @implements("verify")
    def verify(self, works: list[TaskWork], url: str, pool: Executor) -> None:
        to_verify = {work.id: work for work in works if work.to_verify and not work.failed}
        tasks = [work.task for work in to_verify.values()]
        for batch in batches(tasks, self.settings.maxParallelBrowsers):
            jobs = [Verification(self, to_verify[task.id], url, "verify") for task in batch]
            in_parallel(pool, jobs, self.options.parallel)
        for work in by_id(list(to_verify.values())):
            score = work.score or Score({}, 0, False)
            status = TaskStatus.PASSED if score.passed else TaskStatus.RUNNING
            verdict = "passed" if score.passed else "below threshold, to the fix loop"
            self.records.set(work.id, status, f"scored {score.total}: {verdict}", **_scored(score))

    @implements("fix-loop")
    def fix_loop(self, works: list[TaskWork], url: str) -> None:
        """The tasks that failed verification, one at a time (they share the run's worktree)."""
        for work in by_id(works):
            if work.failed or not work.to_verify or work.score is None or work.score.passed:
                continue
            others = {p for w in works if w is not work for p in (*w.files, *w.task.files)}
            fixed = fixes.FixLoop(self, work, url, others)()
            score = work.score or Score({}, 0, False)
            if fixed:
                message = f"fixed (attempt {work.attempts}, scored {score.total})"
                self.records.set(work.id, TaskStatus.FIXED, message, **_scored(score))
            else:
                self.fail(work, **_scored(score))

    @implements("rollback-failed")
    def rollback_failed(self, works: list[TaskWork], number: int) -> None:
        """Every file of a failed task back to the baseline, unless a passed task has it too."""
        passed = {p for w in works if self.passes(w) for p in self.owned(w)}
        failed = {p for w in works if not self.passes(w) for p in self.owned(w)}
        record = self.state.wave(number)
        record.kept = sorted(failed & passed)
        for path in record.kept:
            self.warn(f"{path} belongs to a failed and a passed task: not rolled back")
        self.rolled_back = sorted(failed - passed)
        if self.rolled_back:
            self.git.rollback(self.rolled_back, f"wave-{number}-baseline")

    @implements("commit-wave")
    def commit_wave(self, works: list[TaskWork], number: int) -> None:
        winners = [work for work in by_id(works) if self.passes(work)]
        paths = {p for w in winners for p in self.owned(w)} | set(self.rolled_back)
        names = ", ".join(work.task.name for work in winners) or "no task passed"
        commit = self.git.commit(sorted(paths), f"feat: implement wave {number} tasks ({names})")
        self.put_back_leftovers()
        record = self.state.wave(number)
        record.committed, record.commit = commit is not None, commit or ""
        record.passed = [work.id for work in winners]
        record.failed = [work.id for work in by_id(works) if not self.passes(work)]
        for work in by_id(works):
            if not self.passes(work):
                reason = work.failed or "verification failed"
                rolled = f"failed: {reason}; rolled back"
                self.records.set(work.id, TaskStatus.ROLLED_BACK, rolled, lastError=reason)
                continue
            # The wave commit holds its final state; without one, its merge commit does.
            short = (commit or work.merge_commit)[:7]
            shown = f"committed ({short})" if short else "passed (nothing to commit)"
            self.records.set(
                work.id,
                TaskStatus.COMMITTED,
                shown,
                commit=short,
                completedAt=now(),
                verifyPassed=True,
            )

    @implements("end-wave")
    def end_wave(self, number: int) -> None:
        """The wave is final: say so on disk first (with its commit), then move the run's branch.

        A run killed in between is resumed from the state: it fast-forwards to that commit."""
        self.finished(number, gitrepo.head(self.git.worktree))
        worktree = str(self.git.worktree)
        ended = self.step(
            "end-wave", self.git.worktree, RUN_ID=self.active_run.id, WORKTREE=worktree
        )
        if required_output(ended, "WAVES_COMMIT") != self.state.waves_commit:
            raise StepFailed(ended, "the run's branch is not at the wave's last commit")

    @implements("wave-result")
    def wave_result(self, number: int) -> None:
        record = self.state.wave(number)
        if not record.finished:  # a wave with nothing to run: its tasks were done or skipped
            self.finished(number, gitrepo.head(self.git.worktree))
        write_wave_result(self.active_run.dir, record, self.wave_plan.tasks.raw_ids)
        skipped = f", {len(record.skipped)} skipped" if record.skipped else ""
        passed, failed = len(record.passed), len(record.failed)
        self.note(f"Wave {number} done: {passed} passed, {failed} failed{skipped}")

    def finished(self, number: int, waves_commit: str) -> None:
        self.state.wave(number).finished = True
        self.state.waves_commit = waves_commit
        self.records.save()

    # -- what the parts share -----------------------------------------------------------------

    def settle(self) -> None:
        """The waves are done: the result lists every task and wave this run and the runs it
        resumed handled."""
        result, state = self.result, self.state
        state.done = True
        self.records.save()
        result.tasks = sorted(state.tasks.values(), key=lambda record: id_order(record.id))
        result.waves = sorted(state.waves, key=lambda record: record.wave)

    @property
    def settings(self) -> WaveSettings:
        return self.wave_plan.tasks.settings

    def fail(self, work: TaskWork, **values: Any) -> None:
        failed = f"failed: {work.failed}"
        self.records.set(work.id, TaskStatus.FAILED, failed, lastError=work.failed, **values)

    def passes(self, work: TaskWork) -> bool:
        return not work.failed and work.score is not None and work.score.passed

    def owned(self, work: TaskWork) -> list[str]:
        """The files a task's changes are in: its merge's, and any its fix loop took on."""
        record = self.state.tasks.get(work.id)
        return sorted(set(work.files) | set(record.files if record else []))

    def put_back_leftovers(self) -> None:
        """After the wave commit nothing of the wave may linger uncommitted in the worktree."""
        left = task_files_only(list(gitrepo.changed_paths(self.git.worktree)))
        if left:
            self.warn(f"uncommitted changes after the wave commit, put back: {', '.join(left)}")
            self.git.rollback(left, "HEAD")

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
    ) -> AgentOutcome:
        """A role call about one task: its events carry the task's id (the run's dispatcher
        otherwise: its backend, budget, timeout and sandbox, with `services` bound into it),
        with the tools of a design task's Figma server and of the `toolbox` it is lent."""
        sandbox = self.dispatcher.sandbox
        if services and sandbox is not None:
            sandbox = replace(sandbox, services=services)
        dispatcher = replace(self.dispatcher, events=work.events, sandbox=sandbox)
        figma = self.wave_plan.figma if design and work.task.figma_url else None
        extra = lent_tools(figma, toolbox)
        return dispatcher.call(role, inputs, task, cwd, writable=writable, key=key, **extra)

    def isolated_sandbox(self) -> bool:
        sandbox = self.dispatcher.sandbox
        return sandbox is not None and sandbox.choice.kind in ("bwrap", "docker")

    def run_sandbox(self) -> RunSandbox | None:
        return self.dispatcher.sandbox

    def screenshot_client(self) -> Path | None:
        sandbox = self.dispatcher.sandbox
        if sandbox is None or sandbox.choice.kind != "docker":
            return None
        return step_library(self.doc) / design.SCREENSHOT_CLIENT

    def verification_server(self, works: list[TaskWork]) -> Any:
        """One dev server on the run's worktree while design tasks are verified and fixed."""
        needed = any(w.task.is_design and w.to_verify and not w.failed for w in works)
        run = self.active_run
        return design.served_if(
            needed,
            self.context.browser,
            command=self.settings.devServerCommand,
            worktree=self.git.worktree,
            folder=run.dir,
            run_id=run.id,
            timeout_s=self.options.dev_server_timeout_s,
            sandbox=self.run_sandbox(),
            warn=self.warn,
        )

    def _item(self, task_id: str, status: TaskStatus, message: str, title: str) -> None:
        self.item(task_id, status, message, title=title)


def _scored(score: Score) -> dict[str, Any]:
    return {"total": score.total, "scores": score.scores, "warnings": list(score.warnings)}


def run_execute_wave(options: ExecuteWaveOptions, context: Context) -> ExecuteWaveResult:
    return ExecuteWave(context, options).run()


__all__ = ["ExecuteWave", "run_execute_wave"]
