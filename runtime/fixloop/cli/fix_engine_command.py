"""`fixloop fix-engine MINI-PRD.md --repo PATH`: a section's acceptance criteria, implemented.

Exit codes: 0 the section is complete (every checklist item verified and committed, COMPLETE
written; or it already was); 1 an item failed its three attempts (the error report names it), or
the run stopped short (a spent budget, your branch moved): `--resume` continues it; 2 bad input (a
mini-PRD outside the repository or without acceptance criteria, duplicate item ids, a checklist.md
or meta.yaml that does not parse, a bad script), with nothing changed. Progress goes to stderr;
with `--json` stdout holds only the result envelope.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TypeAlias

from fixloop.cli.backend_option import add_backend_arguments, backend_from_args, budget_from_args
from fixloop.cli.envelope import dumps, envelope
from fixloop.cli.pack_commands import load_valid_pack
from fixloop.cli.progress import ProgressPrinter
from fixloop.cli.sandbox_option import add_sandbox_arguments, sandbox_from_args
from fixloop.cli.wiring import wired
from fixloop.events import EventStream
from fixloop.workflows.fix_engine import FixEngineOptions, FixEngineResult, run_fix_engine
from fixloop.workflows.kernel.workflow import Context

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "fix-engine",
        help="implement a mini-PRD's acceptance criteria: executor, verifier, <= 3 attempts each",
        description=(
            "Implement one section from its mini-prd.md in an isolated worktree: a checklist of "
            "its acceptance criteria, then per item an executor attempt judged by an independent "
            "verifier, at most 3 attempts, one commit per passed item, progress in meta.yaml, an "
            "error report naming each failed item, and COMPLETE written last."
        ),
    )
    parser.add_argument(
        "mini_prd",
        type=Path,
        metavar="MINI-PRD.md",
        help="the section's mini-prd.md (or its folder), inside the repository",
    )
    parser.add_argument("--repo", type=Path, default=Path(), help="the repository (default: .)")
    parser.add_argument(
        "--resume", action="store_true", help="continue the stopped run of this section"
    )
    add_backend_arguments(parser)
    add_sandbox_arguments(parser)
    parser.add_argument("--pack", type=Path, help="pack root (default: the bundled pack)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    pack = load_valid_pack(args.pack)
    sandbox = sandbox_from_args(args)  # before any change: a bad choice is exit 2
    budget = budget_from_args(args)
    options = FixEngineOptions(args.mini_prd, args.repo, resume=args.resume, budget=budget)
    context = Context(
        pack,
        backend_from_args(args, "fix-engine"),
        EventStream(ProgressPrinter()),
        budget=budget,
        sandbox=sandbox,
    )
    result = run_fix_engine(options, wired(context))
    if args.json:
        print(dumps(to_envelope(result)))
    else:
        print("\n".join(result.summary_lines()))
    return result.exit_code


def to_envelope(result: FixEngineResult) -> dict[str, object]:
    items = [result.item_json(item) for item in result.items]
    return envelope(
        "fix-engine", result.exit_code, run_id=result.run_id, items=items, result=result.to_json()
    )
