"""`fixloop execute-wave TASKS.json --repo PATH`: tasks.json's waves, headless.

Exit codes: 0 every task it ran passed and was committed; 1 a task failed or was skipped, or the
waves stayed on a kept branch (your branch moved meanwhile); 2 bad input (a tasks.json that does
not check: a dependency cycle, an unknown dependency, a duplicate id, a path outside the
repository, a wrong type; a bad script; no run to resume), with nothing changed. Each task's state
is shown on stderr as it changes; with `--json` stdout holds only the result envelope.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO, TypeAlias

from fixloop.cli.backend_option import add_backend_arguments, backend_from_args, budget_from_args
from fixloop.cli.envelope import dumps, envelope
from fixloop.cli.pack_commands import load_valid_pack
from fixloop.cli.progress import ProgressPrinter
from fixloop.cli.sandbox_option import add_sandbox_arguments, sandbox_from_args
from fixloop.cli.wiring import wired
from fixloop.events import Event, EventKind, EventStream
from fixloop.workflows.execute_wave import ExecuteWaveOptions, ExecuteWaveResult, run_execute_wave
from fixloop.workflows.execute_wave.plan import DEFAULT_PARALLEL, LATEST
from fixloop.workflows.kernel.workflow import Context

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "execute-wave",
        help="run tasks.json wave by wave: parallel executors, verified merges, one commit a wave",
        description=(
            "Execute the tasks of tasks.json wave by wave in an isolated worktree: parallel "
            "executors in worktrees of their own, merges by task id, the build command, "
            "verification with recomputed weighted scores, a serial fix loop, per-file rollback "
            "of failed tasks and one commit of the passed ones per wave; your branch is "
            "fast-forwarded at the end."
        ),
    )
    parser.add_argument("tasks", type=Path, help="tasks.json (its statuses are written back)")
    parser.add_argument("--repo", type=Path, default=Path(), help="the repository (default: .)")
    parser.add_argument("--wave", type=_positive, metavar="N", help="run only wave N")
    parser.add_argument(
        "--parallel",
        type=_positive,
        default=DEFAULT_PARALLEL,
        metavar="K",
        help=f"executors at once (default: {DEFAULT_PARALLEL})",
    )
    parser.add_argument(
        "--resume",
        nargs="?",
        const=LATEST,
        metavar="RUN_ID",
        help="continue a stopped run of the same tasks (default: the latest)",
    )
    parser.add_argument(
        "--mcp-config",
        type=Path,
        metavar="FILE",
        help="an MCP config naming a Figma server for design tasks (default: .mcp.json)",
    )
    add_backend_arguments(parser)
    add_sandbox_arguments(parser)
    parser.add_argument("--pack", type=Path, help="pack root (default: the bundled pack)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(handler=run)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected 1 or more, got {value}")
    return value


class WaveProgress:
    """Each task's state as it changes (queued, running, merged, failed, fixed, committed)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.others = ProgressPrinter(self.stream)

    def __call__(self, event: Event) -> None:
        if event.kind is EventKind.ITEM:
            title = f" {event.title}" if event.title else ""
            print(f"task {event.item}{title}: {event.message}", file=self.stream, flush=True)
        else:
            self.others(event)


def run(args: argparse.Namespace) -> int:
    pack = load_valid_pack(args.pack)
    sandbox = sandbox_from_args(args)  # before any change: a bad choice is exit 2
    options = ExecuteWaveOptions(
        tasks=args.tasks,
        repo=args.repo,
        wave=args.wave,
        parallel=args.parallel,
        resume=args.resume,
        mcp_config=args.mcp_config,
    )
    context = Context(
        pack,
        backend_from_args(args, "execute-wave"),
        EventStream(WaveProgress()),
        budget=budget_from_args(args),
        sandbox=sandbox,
    )
    result = run_execute_wave(options, wired(context))
    if args.json:
        print(dumps(to_envelope(result)))
    else:
        print(summary(result))
    return result.exit_code


def to_envelope(result: ExecuteWaveResult) -> dict[str, object]:
    items = [
        {
            "id": task.id,
            "status": task.status,
            "name": task.name,
            "wave": task.wave,
            "total": task.total,
            "scores": task.scores,
            "reason": task.reason,
            "files": task.files,
            "attempts": task.attempts,
            "commit": task.commit,
        }
        for task in result.tasks
    ]
    return envelope(
        "execute-wave",
        result.exit_code,
        run_id=result.run_id,
        items=items,
        result=result.to_json(),
    )


def summary(result: ExecuteWaveResult) -> str:
    passed = [task for task in result.tasks if task.passed]
    lines = [
        f"execute-wave run {result.run_id}: {len(result.tasks)} task(s), {len(passed)} passed, "
        f"{len(result.tasks) - len(passed)} failed or skipped"
    ]
    for task in result.tasks:
        score = f" score {task.total}" if task.total is not None else ""
        after = f" after {task.attempts} fix attempt(s)" if task.attempts else ""
        if task.passed:
            where = f"committed in {task.commit}" if task.commit else "passed, nothing to commit"
            lines.append(f"  task {task.id} (wave {task.wave}):{score}{after}; {where}")
        else:
            lines.append(
                f"  task {task.id} (wave {task.wave}):{score}{after}; {task.status}: {task.reason}"
            )
    for wave in result.waves:
        commit = f"commit {wave.commit[:7]}" if wave.committed else "no commit"
        kept = f"; kept (also a passed task's): {', '.join(wave.kept)}" if wave.kept else ""
        lines.append(f"  wave {wave.wave}: {commit}{kept}")
    if result.kept_branch:
        lines.append(
            f"Your branch could not be fast-forwarded: the waves are on {result.kept_branch}"
        )
    lines += [f"Warning: {warning}" for warning in result.warnings]
    return "\n".join(lines)


__all__ = ["WaveProgress", "register", "run", "summary", "to_envelope"]
