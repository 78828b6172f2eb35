"""Implement one task: its own worktree, its executor, its result file read failing closed.

Runs on an executor pool's thread, several tasks at once. Everything it changes is its own: the
task's worktree (created by git-protocol's `setup-worktree`, run in the run's worktree with the
task's RUN_ID, so the sentinel is written only after `git worktree add` and `fixloop recover`
finds a killed task's worktree like any run's), the task's sub-run folder (its liveness lock and
its dev server's record), its result file. Every problem fails this task only (`SkipItem`).
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from fixloop.agents.backend import BackendFailed
from fixloop.agents.toolbox import qualified
from fixloop.diagnostics import FixloopError
from fixloop.events import EventStream
from fixloop.runs.run import Run
from fixloop.schemas.results import ImplResult
from fixloop.workflows.execute_wave import design
from fixloop.workflows.execute_wave.merge import commit_task
from fixloop.workflows.execute_wave.shot_tool import TOOL, ScreenshotTool
from fixloop.workflows.execute_wave.state import TaskStatus
from fixloop.workflows.execute_wave.work import CONTEXT, TaskWork, now
from fixloop.workflows.kernel.errors import SkipItem

if TYPE_CHECKING:
    from fixloop.workflows.execute_wave.wave import WaveRun

TASK_WORKFLOW = "execute-wave-task"  # the sub-runs that hold task worktrees


def result_path(worktree: Path, task_id: str) -> Path:
    return worktree / CONTEXT / f"impl-result-{task_id}.json"


def read_impl_result(path: Path, task_id: str) -> ImplResult:
    """The executor's result file, failing closed: anything but a valid, matching file skips."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SkipItem("implementation result missing", str(path.name)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SkipItem("implementation result unreadable", str(exc)) from None
    try:
        result = ImplResult.model_validate(json.loads(text))
    except ValueError as exc:  # JSONDecodeError and ValidationError are ValueErrors
        detail = str(exc).splitlines()[0] if not isinstance(exc, ValidationError) else _first(exc)
        raise SkipItem("implementation result invalid", detail) from None
    if str(result.id) != task_id:
        raise SkipItem("implementation result invalid", f"it is about task {result.id}")
    if result.status == "failed":
        raise SkipItem("executor reported failed", result.notes)
    return result


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "(result)"
    return f"{where}: {error['msg']}"


def create_worktree(flow: WaveRun, work: TaskWork) -> None:
    """The task's own worktree on its own branch, from the run's branch (the run's worktree is
    on it until the wave begins), and the sub-run that holds it while it exists."""
    work.sub_run = Run.start(flow.wave_plan.repo, TASK_WORKFLOW, work.run_id, events=EventStream())
    steps = flow.steps_of(flow.protocol, work.steps)
    setup = steps.attempt("setup-worktree", flow.git.worktree, RUN_ID=work.run_id)
    if setup.ok:
        work.worktree = Path(setup.outputs["WORKTREE"])
    else:
        work.fail(f"could not create the task's worktree: {setup.describe_failure()}")


class Implementer:
    """Implements one task of a wave (one instance per task; called on a pool thread)."""

    def __init__(self, flow: WaveRun, work: TaskWork) -> None:
        self.flow = flow
        self.work = work

    def __call__(self) -> None:
        work = self.work
        flow = self.flow
        flow.item(work.id, TaskStatus.RUNNING, "running", title=work.task.name)
        try:
            self.implement()
            work.executor_finished_at = now()
        except SkipItem as skip:
            work.fail(f"{skip.reason}: {skip.detail}" if skip.detail else skip.reason)
        except BackendFailed:
            work.fail("not done: the backend failed")
            flow.item(
                work.id, TaskStatus.FAILED, "failed: the backend failed", title=work.task.name
            )
            raise  # the run stops: every other task would meet the same failure
        except FixloopError as exc:  # a step or the browser failed for this task only
            work.fail(str(exc).splitlines()[0])
        if work.failed:
            flow.item(work.id, TaskStatus.FAILED, f"failed: {work.failed}", title=work.task.name)
        else:
            flow.item(work.id, TaskStatus.RUNNING, "implemented", title=work.task.name)

    def implement(self) -> None:
        work, flow = self.work, self.flow
        create_worktree(flow, work)
        if work.failed or work.worktree is None or work.sub_run is None:
            raise SkipItem(work.failed or "the task has no worktree")
        with ExitStack() as stack:
            inputs = self.inputs(work.worktree)
            url = ""
            services: tuple[tuple[str, str], ...] = ()
            tool: ScreenshotTool | None = None
            if work.task.is_design:
                base = stack.enter_context(
                    design.served(
                        flow.context.browser,
                        flow.wave_plan.tasks.settings.devServerCommand,
                        work.worktree,
                        work.sub_run.dir,
                        run_id=work.run_id,
                        timeout_s=flow.options.dev_server_timeout_s,
                        sandbox=flow.run_sandbox(),
                    )
                )
                url = design.page_url(base, work.task.route)
                services = self.services(stack, base)
                tool = self.screenshot_tool(base, work.worktree)
                inputs |= {
                    "dev_server_url": url,
                    "screenshot_command": design.screenshot_command(
                        url, flow.options.viewport, flow.screenshot_client()
                    ),
                    "screenshot_tool": qualified(TOOL),
                }
            outcome = flow.call_for(
                work,
                "executor",
                inputs,
                self.brief(),
                work.worktree,
                key=f"executor/{work.id}/implement",
                design=work.task.is_design,
                services=services,
                toolbox=tool,
            )
            path = result_path(work.worktree, work.id)
            flow.records.keep(path, f"impl-result-{work.id}.json")
            if not outcome.ok:
                raise SkipItem(f"executor call inconclusive ({outcome.reason})", outcome.detail)
            work.impl = read_impl_result(path, work.id)
            if url:
                self.record_page(url)
        commit_task(flow, work)

    def services(self, stack: ExitStack, base: str) -> tuple[tuple[str, str], ...]:
        """In a sandbox without a network (bwrap, docker) the executor cannot reach its dev
        server: the run takes its screenshots for it, through a service bound into its sandbox."""
        if not self.flow.isolated_sandbox():
            return ()
        return stack.enter_context(
            design.screenshot_service(
                self.flow.context.browser, base, self.flow.options.screenshot_timeout_s
            )
        )

    def screenshot_tool(self, base: str, worktree: Path) -> ScreenshotTool:
        """Lent to every design executor, whatever its backend: the claude backend's shell
        reaches neither the dev server nor the service, and one rule serves every shell."""
        flow = self.flow
        shots = design.shooter(flow.context.browser, base, flow.options.screenshot_timeout_s)
        return ScreenshotTool(shots, worktree, flow.options.viewport)

    def inputs(self, worktree: Path) -> dict[str, Any]:
        task = self.work.task
        inputs: dict[str, Any] = {
            "task": task.brief(),
            "worktree": str(worktree),
            "result_path": str(result_path(worktree, task.id)),
            "check_command": self.flow.wave_plan.tasks.settings.backpressureCommand,
        }
        if task.reference_image:
            inputs["reference"] = str(self.flow.wave_plan.repo / task.reference_image)
        return inputs

    def brief(self) -> str:
        task = self.work.task
        files = ", ".join(task.files)
        scope = (
            f"Change only the task's files ({files}) and files you create"
            if files
            else "The task declares no files: change no existing file, only create new ones"
        )
        return (
            f"Implement task {task.id} ({task.name}) in your worktree as your instructions say. "
            f"{scope}; any other change is put back. Do not commit. Write your ImplResult JSON "
            "to result_path, then answer with it."
        )

    def record_page(self, url: str) -> None:
        """The implemented page as the browser shows it, for the record (a failure is a note)."""
        flow, work = self.flow, self.work
        target = flow.active_run.dir / "shots" / f"task-{work.id}-implemented.png"
        try:
            design.shoot(
                flow.context.browser,
                url,
                target,
                flow.options.viewport,
                flow.options.screenshot_timeout_s,
            )
        except FixloopError as exc:
            flow.warn(f"task {work.id}: no screenshot of the implemented page: {exc}", item=work.id)
            return
        work.shots.append(target)


__all__ = ["TASK_WORKFLOW", "Implementer", "read_impl_result", "result_path"]
