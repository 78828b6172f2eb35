"""`fixloop step run|list`, `recover`: debugging steps, healing crashes."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from fixloop.cli.arguments import existing_directory, parse_pairs
from fixloop.cli.contract_gate import gate, state_dir_or_none
from fixloop.cli.envelope import dumps, emit, envelope
from fixloop.cli.step_help import StepHelp, describe_step, list_steps, step_rows
from fixloop.cli.wiring import recovery_sweepers
from fixloop.diagnostics import Diagnostic, FixloopError, Severity, display_path
from fixloop.documents.pack import WorkflowDoc, default_pack_root, load_pack, validate_spec
from fixloop.documents.source import load_document
from fixloop.documents.specs import WorkflowSpec
from fixloop.runs.git_session import load_protocol
from fixloop.runs.recovery import recover
from fixloop.runs.run import Run
from fixloop.steps.result import StepResult
from fixloop.steps.runner import find_step, run_step, step_inputs
from fixloop.steps.script import CRASH_ENV

STEP_RUN_EPILOG = f"""\
how a step runs:
  The step's ```bash blocks run in one `bash --noprofile --norc`, in document order, under
  `set -euo pipefail`, in the repository (--repo). Each --input reaches bash only as an
  environment variable of that name (checked against the workflow's `inputs:`); nothing is
  pasted into the script. A step returns values by appending `NAME=value` lines (or
  `NAME<<EOF` … `EOF` for multi-line values) to the file named by $FIXLOOP_OUTPUT.
  The run's trace (one event per step) is in <git-common-dir>/fixloop/runs/<run-id>/events.jsonl.

  If the step takes a RUN_ID input and you do not pass one, the new run's id is used.

what a step takes and writes:
  `fixloop step run WORKFLOW STEP --help` shows the step's interface (each input with its type,
  whether it is required, its default, pattern and meaning; each output); `fixloop step list
  WORKFLOW` lists every step's. An input the step does not take is refused (exit 2), and so is a
  run without one it requires; writing an output it does not declare fails the step.

crash injection (for testing recovery):
  {CRASH_ENV}=STEP:K kills the runtime with SIGKILL right after the K-th command of STEP
  ({CRASH_ENV}=STEP#N:K: of the N-th run of STEP); then try `fixloop recover`.

examples:
  fixloop step run git-protocol preflight --repo . --trace
  fixloop step run git-protocol setup-worktree --repo . --json
  fixloop step run git-protocol commit-paths --input WORKTREE="$wt" --input MESSAGE=fix --path a.py
  fixloop step run ./my-workflow.md build --repo ../project --input TARGET='a b'
"""

RECOVER_EPILOG = """\
A run is dead when no process holds its lock (<git-common-dir>/fixloop/runs/<id>/lock); a live
run is never touched. A dead run's dev servers are stopped and its docker sandbox containers
removed first. For each dead run this then runs the `recover-run` step of the git protocol:
remove its worktree, delete its temp branch unless that branch holds commits your branch does
not have (then it is KEPT and named, with the commands to merge or delete it), delete its tags,
and remove its sentinel last. Your branch, your index and your files are never touched.
Exit code: 0 when everything found was recovered, 1 when something could not be.
"""


def register(subparsers: Any) -> None:
    step = subparsers.add_parser(
        "step", help="run one step of a workflow document, or show its interface (debugging)"
    )
    step_sub = step.add_subparsers(dest="step_command", metavar="ACTION", required=True)
    run = step_sub.add_parser(
        "run",
        help="run STEP of WORKFLOW in a repository and show its outputs",
        description="Run one step of a workflow document, exactly as a workflow run would.",
        epilog=STEP_RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,
    )
    run.add_argument("-h", "--help", action=StepHelp, dest="step_help")
    run.add_argument("workflow", help="workflow name in the pack, or a path to a workflow .md")
    run.add_argument("step", help="step id (the {#id} at the end of the step's heading)")
    run.add_argument("--repo", type=Path, default=Path(), help="repository to run in (default .)")
    run.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an input, passed to bash as the environment variable KEY (repeatable)",
    )
    run.add_argument(
        "--path",
        action="append",
        default=[],
        metavar="PATH",
        help="a path for a step that takes PATHS_FILE (repeatable): fixloop writes the list, "
        "NUL-separated, into the run's folder",
    )
    run.add_argument("--pack", type=Path, help="pack root (default: the bundled pack)")
    run.add_argument(
        "--no-contract-check",
        action="store_true",
        help="run a step of a --pack of your own even when `fixloop check` finds it breaks a "
        "contract",
    )
    run.add_argument("--timeout", type=float, default=300.0, help="seconds (default 300)")
    run.add_argument("--json", action="store_true", help="print the whole result as JSON")
    run.add_argument(
        "--trace",
        action="store_true",
        help="also list every command the step ran, with its line in the document (stderr)",
    )
    run.set_defaults(handler=run_step_command)
    listing = step_sub.add_parser(
        "list",
        help="list the steps of WORKFLOW with their interfaces (inputs, outputs)",
        description="List a workflow's steps, each with the inputs it takes and the outputs it "
        "writes ([NAME]: optional). `fixloop step run WORKFLOW STEP --help` shows one in full.",
    )
    listing.add_argument("workflow", help="workflow name in the pack, or a path to a workflow .md")
    listing.add_argument("--pack", type=Path, help="pack root (default: the bundled pack)")
    listing.add_argument("--json", action="store_true", help="print the steps as JSON")
    listing.set_defaults(handler=run_step_list)

    rec = subparsers.add_parser(
        "recover",
        help="clean up after crashed runs: orphan worktrees, temp branches, sentinels",
        description="Find runs that died and remove what they left behind.",
        epilog=RECOVER_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rec.add_argument("--repo", type=Path, default=Path(), help="repository (default .)")
    rec.add_argument("--pack", type=Path, help="pack root (default: the bundled pack)")
    rec.add_argument("--json", action="store_true", help="machine-readable report")
    rec.set_defaults(handler=run_recover)


def load_workflow(name: str, pack_root: Path | None) -> WorkflowDoc:
    """A workflow by name from the pack, or from a .md path; errors in that document only."""
    path = Path(name)
    if name.endswith(".md") and path.is_file():
        source = load_document(path)
        spec, problems = validate_spec(WorkflowSpec, source, "frontmatter")
        if spec is None:
            raise FixloopError(problems)
        return WorkflowDoc(spec, source)
    root = pack_root or default_pack_root()
    pack, diagnostics = load_pack(root)
    if name not in pack.workflows:
        own = [d for d in diagnostics if Path(d.path).stem == name]
        errors = [d for d in own if d.severity is Severity.ERROR]
        if errors:
            raise FixloopError(errors)
    return pack.workflow(name)


def _result_json(result: StepResult, run: Run) -> dict[str, Any]:
    return {
        "run": run.id,
        "events": str(run.events_path),
        "workflow": result.workflow,
        "step": result.step,
        "ok": result.ok,
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "duration_s": result.duration_s,
        "outputs": result.outputs,
        "stdout": result.stdout,
        "stderr": result.stderr,
        "commands": result.commands,
        "command_sites": result.command_sites,
        "error": result.error,
    }


def run_step_list(args: argparse.Namespace) -> int:
    workflow = load_workflow(args.workflow, args.pack)
    if args.json:
        where = {"workflow": workflow.name, "path": str(workflow.source.path)}
        return emit("step list", 0, items=step_rows(workflow), result=where)
    sys.stdout.write(list_steps(workflow))
    return 0


def _show_step(args: argparse.Namespace) -> int:
    workflow = load_workflow(args.workflow, args.pack)
    step = workflow.markdown().step(args.step)
    if step is None:
        find_step(workflow, args.step)  # the one "no such step" error
        return 2
    sys.stdout.write(describe_step(workflow, step))
    return 0


def run_step_command(args: argparse.Namespace) -> int:
    if args.step_help:
        return _show_step(args)
    repo = existing_directory(args.repo)
    workflow = load_workflow(args.workflow, args.pack)
    inputs = parse_pairs(args.input, "--input")
    find_step(workflow, args.step)  # an unknown step is refused before a run folder exists
    if args.path and (
        not step_inputs(workflow, args.step, {"PATHS_FILE": ""}) or "PATHS_FILE" in inputs
    ):
        message = f"--path: step {args.step} takes no PATHS_FILE, or it was given as --input too"
        raise FixloopError(Diagnostic(str(args.workflow), 1, 1, "usage", message))
    # A step of a pack of one's own runs only once the pack keeps its contracts, as a workflow
    # of it would (checked once per change of its documents).
    passed = None
    if args.pack is not None and not args.no_contract_check:
        passed = gate(args.pack, state_dir_or_none(repo))
    run = Run.start(repo, workflow.name)
    if passed is not None:
        passed.remember()
    # A step that takes RUN_ID and was given none runs as this new run.
    inputs = step_inputs(workflow, args.step, {"RUN_ID": run.id}) | inputs
    if args.path:
        # Inside Claude Code a NUL-separated file is hard to write with an allowed command; the
        # step still refuses every unsafe path in it, as it would from any list.
        listing = run.dir / "paths"
        listing.write_bytes(b"".join(os.fsencode(path) + b"\0" for path in args.path))
        inputs["PATHS_FILE"] = str(listing)
    try:
        result = run_step(
            workflow, args.step, cwd=repo, inputs=inputs, run=run, timeout_s=args.timeout
        )
    except FixloopError:
        # Refused before anything ran (a bad input): the call leaves no run behind.
        run.close()
        shutil.rmtree(run.dir, ignore_errors=True)
        raise
    run.finish("finished" if result.ok else "failed", step_run=f"{workflow.name}#{args.step}")
    code = 0 if result.ok else 1
    if args.json:
        item = {"id": f"{workflow.name}#{args.step}", "status": "passed" if result.ok else "failed"}
        data = _result_json(result, run)
        print(dumps(envelope("step run", code, run_id=run.id, items=[item], result=data)))
        return code
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    if args.trace:
        for command, site in zip(result.commands, result.command_sites, strict=True):
            first = command.splitlines()[0] if command else ""
            print(f"+ {site or '(runtime)'}: {first}", file=sys.stderr)
    for key, value in result.outputs.items():
        print(f"{key}={value}" if "\n" not in value else f"{key}<<EOF\n{value}\nEOF")
    verdict = "ok" if result.ok else "FAILED"
    print(
        f"{workflow.name}#{args.step}: {verdict} in {result.duration_s:.3f}s, "
        f"{len(result.commands)} commands; run {run.id} (trace: {display_path(run.events_path)})",
        file=sys.stderr,
    )
    if not result.ok:
        print(result.describe_failure(), file=sys.stderr)
    return 0 if result.ok else 1


def run_recover(args: argparse.Namespace) -> int:
    repo = existing_directory(args.repo)
    protocol = load_protocol(args.pack)
    report = recover(repo, protocol, sweepers=recovery_sweepers())
    code = 0 if report.ok else 1
    if args.json:
        data = report.to_json()
        items = [
            {"id": item["run_id"], "status": _recovered_status(item), **item}
            for item in data.pop("recovered")
        ]
        items += [{"id": run_id, "status": "running"} for run_id in data.pop("live")]
        items += [{"id": s["run_id"], "status": "stopped", **s} for s in data.pop("stopped")]
        print(dumps(envelope("recover", code, items=items, result=data)))
    else:
        for line in report.lines():
            print(line)
    return code


def _recovered_status(item: dict[str, Any]) -> str:
    if item.get("error"):
        return "failed"
    return "kept-branch" if item.get("kept_branch") else "recovered"
