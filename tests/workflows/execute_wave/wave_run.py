"""A real execute-wave run as its own process, for the crash matrix and the resume tests.

    python tests/workflows/execute_wave/wave_run.py REPO TASKS SCRIPT [--resume] [--parallel K]

It runs the wave exactly as `fixloop execute-wave` does, with the scripted model playing SCRIPT.
With `FIXLOOP_CRASH_AT` set, the runtime kills itself at that point. Prints one JSON line: the
run's id, its exit code and each task's status.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from fixloop.agents.scripted import ScriptedBackend
from fixloop.cli.wiring import wired
from fixloop.documents.pack import default_pack_root, load_pack
from fixloop.runs.state import LATEST
from fixloop.workflows.execute_wave import ExecuteWaveOptions, run_execute_wave
from fixloop.workflows.kernel.workflow import Context


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo", type=Path)
    parser.add_argument("tasks", type=Path)
    parser.add_argument("script", type=Path)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--parallel", type=int, default=2)
    args = parser.parse_args()
    pack, _ = load_pack(default_pack_root())
    context = wired(Context(pack, ScriptedBackend.from_file(args.script)))  # as the CLI's
    options = ExecuteWaveOptions(
        tasks=args.tasks,
        repo=args.repo,
        parallel=args.parallel,
        resume=LATEST if args.resume else None,
    )
    result = run_execute_wave(options, context)
    statuses = {task.id: task.status for task in result.tasks}
    print(json.dumps({"run": result.run_id, "exit": result.exit_code, "statuses": statuses}))
    return result.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
