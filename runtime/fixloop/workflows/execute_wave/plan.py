"""execute-wave's options, and its plan: everything checked before anything changes.

`plan_execute_wave` is the whole of "bad input touches nothing": the repository, tasks.json
(`tasks.load_plan`: types, ids, dependencies, paths), what design tasks need (a dev server
command; a reference image or a Figma MCP server), and the wave asked for. Each problem is one
FixloopError line (exit 2) naming the file, the task and the key.
"""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path

from fixloop import gitrepo
from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.runs.state import LATEST
from fixloop.workflows.execute_wave.design import DEFAULT_VIEWPORT, FigmaTools, find_figma
from fixloop.workflows.execute_wave.tasks import TaskPlan, load_plan
from fixloop.workflows.kernel.options import option, positive, repo_option, resume_option

DEFAULT_PARALLEL = 4


@dataclass(frozen=True)
class ExecuteWaveOptions:
    # tasks.json; relative paths are taken from the current directory
    tasks: Path = option(type=Path, help="tasks.json (its statuses are written back)")
    repo: Path = repo_option()
    wave: int | None = option(
        "--wave", type=positive, default=None, metavar="N", help="run only wave N"
    )
    parallel: int = option(
        "--parallel",
        type=positive,
        default=DEFAULT_PARALLEL,
        metavar="K",
        help=f"executors at once (default: {DEFAULT_PARALLEL})",
    )
    resume: str | None = resume_option("tasks")  # a run id, or `latest`
    pool: Executor | None = None  # runs the parallel work; threads of our own when None
    mcp_config: Path | None = option(
        "--mcp-config",
        type=Path,
        default=None,
        metavar="FILE",
        help="an MCP config naming a Figma server for design tasks (default: .mcp.json)",
    )
    viewport: tuple[int, int] = DEFAULT_VIEWPORT
    screenshot_timeout_s: float = 30.0
    dev_server_timeout_s: float = 60.0


@dataclass(frozen=True)
class WavePlan:
    options: ExecuteWaveOptions
    repo: Path  # the repository's working tree (the user's)
    tasks: TaskPlan
    waves: list[int]  # the waves this run works on, in order
    figma: FigmaTools | None


def _usage(where: str, message: str) -> FixloopError:
    return FixloopError(Diagnostic(where, 1, 1, "usage", message))


def plan_execute_wave(options: ExecuteWaveOptions) -> WavePlan:
    if options.parallel < 1:
        raise _usage("--parallel", f"{options.parallel}: at least 1 executor")
    if not options.repo.is_dir():
        raise _usage(str(options.repo), "--repo: not a directory")
    repo = gitrepo.toplevel(options.repo)
    path = options.tasks if options.tasks.is_absolute() else Path.cwd() / options.tasks
    plan = load_plan(path, repo)
    waves = sorted(plan.waves())
    if options.wave is not None:
        if options.wave not in waves:
            known = ", ".join(str(w) for w in waves) or "none"
            raise _usage("--wave", f"{options.wave}: tasks.json has no such wave (waves: {known})")
        waves = [options.wave]
    figma = find_figma(repo, options.mcp_config)
    for task in plan.tasks:
        if not task.is_design or task.status == "done":
            continue
        where = f"task {task.id}"
        if not plan.settings.devServerCommand.strip():
            raise FixloopError(
                Diagnostic(
                    plan.shown,
                    1,
                    1,
                    "tasks",
                    f"{where}: a design task needs the setting "
                    "devServerCommand (the command that serves the pages)",
                )
            )
        if task.figma_url and not task.reference_image and figma is None:
            raise FixloopError(
                Diagnostic(
                    plan.shown,
                    1,
                    1,
                    "tasks",
                    f"{where}: figmaUrl: no Figma MCP server "
                    "is configured (.mcp.json or --mcp-config); add a referenceImage",
                )
            )
    return WavePlan(options, repo, plan, waves, figma)


def all_done(plan: WavePlan) -> str | None:
    """Why the run need not start: every task of the waves asked for is `done` in tasks.json
    (the statuses a run writes back as it commits them); None when one is not."""
    if plan.options.resume is not None:
        return None
    chosen = [task for task in plan.tasks.tasks if task.wave in plan.waves]
    if not chosen or any(task.status != "done" for task in chosen):
        return None
    waves = ", ".join(str(wave) for wave in plan.waves)
    return (
        f"every task of {plan.tasks.shown} in wave(s) {waves} is done ({len(chosen)} task(s)): "
        "nothing to do; set a task's status to pending to run it again"
    )


__all__ = [
    "DEFAULT_PARALLEL",
    "LATEST",
    "ExecuteWaveOptions",
    "WavePlan",
    "all_done",
    "plan_execute_wave",
]
