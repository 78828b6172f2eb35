"""tasks.json and scores for execute-wave followed by hand in Claude Code (the runtime's own code).

    LIB="${FIXLOOP_PYTHON:-python3} ${CLAUDE_PLUGIN_ROOT}/workflows/lib/execute_wave.py"
    $LIB plan TASKS.json [--repo DIR]              the checked plan: settings, waves, tasks
    $LIB set TASKS.json ID KEY=VALUE...            write keys of one task (JSON values, or text)
    $LIB paths TASKS.json ID... --out FILE         their filesModified, NUL-separated, checked
    $LIB score RESULT.json --type design|logic [--tasks TASKS.json] [--best BEST.json]
                                                   the recomputed score of a result file

It imports fixloop (`FIXLOOP_PYTHON` is the interpreter fixloop is installed in): the checks,
the status writes and the scoring are exactly the headless runtime's, never a second copy.
Bad input: one line on stderr naming the task and the key, exit 2. `score` always prints JSON;
`check` says whether the result file could be scored at all (anything but OK fails closed).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

try:
    from fixloop.diagnostics import FixloopError
    from fixloop.gitrepo import toplevel
    from fixloop.steps.paths import write_paths_file
    from fixloop.workflows.execute_wave import scoring
    from fixloop.workflows.execute_wave.tasks import WaveSettings, load_plan
    from fixloop.workflows.execute_wave.tasks_file import TaskFile
except ImportError as missing:  # pragma: no cover - depends on the interpreter it is run with
    sys.exit(f"execute_wave.py: needs the fixloop package ({missing}); set FIXLOOP_PYTHON")


def plan(args: argparse.Namespace) -> dict[str, Any]:
    loaded = load_plan(args.tasks, toplevel(args.repo))
    return {
        "settings": loaded.settings.__dict__,
        "waves": {str(n): [t.id for t in tasks] for n, tasks in loaded.waves().items()},
        "tasks": {
            t.id: {"kind": t.kind, "status": t.status, "wave": t.wave, "files": list(t.files)}
            for t in loaded.tasks
        },
    }


def set_keys(args: argparse.Namespace) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for pair in args.pairs:
        key, equals, text = pair.partition("=")
        if not equals or not key:
            raise SystemExit(f"execute_wave.py: set: {pair!r} is not KEY=VALUE")
        try:
            values[key] = json.loads(text)
        except ValueError:
            values[key] = text
    tasks = TaskFile(args.tasks)
    if args.id not in tasks.read():
        raise SystemExit(f"execute_wave.py: set: tasks.json has no task {args.id}")
    tasks.update(args.id, **values)
    return {"id": args.id, "set": sorted(values)}


def paths(args: argparse.Namespace) -> dict[str, Any]:
    on_disk = TaskFile(args.tasks).read()
    files = sorted({f for task_id in args.ids for f in on_disk[task_id].get("filesModified", [])})
    write_paths_file(args.out, toplevel(args.repo), files)
    return {"paths": files, "out": str(args.out)}


def score(args: argparse.Namespace) -> dict[str, Any]:
    settings = load_plan(args.tasks, toplevel(args.repo)).settings if args.tasks else WaveSettings()
    thresholds = scoring.Thresholds(
        settings.threshold(args.type), settings.dimensionThreshold, settings.scoreDropTolerance
    )
    text = args.result.read_text(encoding="utf-8") if args.result.is_file() else None
    check, raw = scoring.check_result(text)
    current = scoring.recompute(raw, args.type, thresholds) if check == scoring.OK else None
    shown = (current or scoring.zero(args.type)).to_json()
    regression = None
    if current is not None and args.best is not None and args.best.is_file():
        best = json.loads(args.best.read_text(encoding="utf-8"))
        before = scoring.Score(best.get("scores", {}), int(best.get("total", 0)), False)
        regression = scoring.regression(current, before, thresholds)
    return {"check": check, **shown, "regression": regression}


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="execute_wave.py", description="tasks.json and scores")
    commands = main.add_subparsers(dest="command", required=True)
    plan_parser = commands.add_parser("plan")
    plan_parser.add_argument("tasks", type=Path)
    set_parser = commands.add_parser("set")
    set_parser.add_argument("tasks", type=Path)
    set_parser.add_argument("id")
    set_parser.add_argument("pairs", nargs="+", metavar="KEY=VALUE")
    paths_parser = commands.add_parser("paths")
    paths_parser.add_argument("tasks", type=Path)
    paths_parser.add_argument("ids", nargs="+", metavar="ID")
    paths_parser.add_argument("--out", type=Path, required=True)
    score_parser = commands.add_parser("score")
    score_parser.add_argument("result", type=Path)
    score_parser.add_argument("--type", choices=tuple(scoring.WEIGHTS), required=True)
    score_parser.add_argument("--tasks", type=Path)
    score_parser.add_argument("--best", type=Path)
    for sub in (plan_parser, paths_parser, score_parser):
        sub.add_argument("--repo", type=Path, default=Path())
    return main


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    handler = {"plan": plan, "set": set_keys, "paths": paths, "score": score}[args.command]
    try:
        print(json.dumps(handler(args), indent=2))
    except FixloopError as exc:
        for diagnostic in exc.diagnostics:
            print(diagnostic.format(), file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
