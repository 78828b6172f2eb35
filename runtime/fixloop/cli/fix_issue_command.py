"""`fixloop fix-issue ISSUE.md --repo PATH`: an issue in, a verified patch out, headless.

Exit codes: 0 the issue is resolved (the patch passed acceptance on a clean checkout); 1 it is
not (unresolved or rejected: the result says why, and the patch, if any, is still written); 2 bad
input (an issue file that is missing or empty, a test command that is not found, a repository
with uncommitted changes, a sandbox or image that cannot be had), with nothing changed. Progress
goes to stderr; with `--json` stdout holds only the result envelope.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TypeAlias

from fixloop.cli.backend_option import add_backend_arguments, backend_from_args, budget_from_args
from fixloop.cli.envelope import dumps, envelope
from fixloop.cli.pack_commands import load_valid_pack
from fixloop.cli.progress import ProgressPrinter
from fixloop.cli.sandbox_option import add_sandbox_arguments
from fixloop.cli.wiring import wired
from fixloop.events import EventStream
from fixloop.masking import mask_json
from fixloop.workflows.fix_issue import FixIssueOptions, FixIssueResult, run_fix_issue
from fixloop.workflows.fix_issue.plan import MAX_ATTEMPTS
from fixloop.workflows.kernel.workflow import Context

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
COMMAND = "fix-issue"


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        COMMAND,
        help="fix an issue: a patch, accepted only when it passes on a clean checkout",
        description=(
            "Fix the issue described in ISSUE.md: a model locates the code, edits it with "
            "version-checked edits, runs the preset tests in a sandbox and iterates; the patch "
            "is accepted only after it applies to a clean checkout of the base commit and the "
            "tests pass there. Your branch and working tree are never touched: the output is a "
            "patch, a result.json and the trace, in .git/fixloop/runs/RUN_ID/."
        ),
    )
    parser.add_argument("issue", type=Path, help="the issue, a Markdown or text file")
    parser.add_argument("--repo", type=Path, default=Path(), help="the repository (default: .)")
    parser.add_argument(
        "--test",
        action="append",
        default=[],
        metavar="CMD",
        help="a test command, split into words like a shell would but never run by one "
        "(repeat for several; default: python3 -m pytest -q for a pytest project)",
    )
    add_sandbox_arguments(parser)
    parser.add_argument(
        "--max-attempts",
        type=int,
        default=MAX_ATTEMPTS,
        metavar="N",
        help=f"fix attempts before giving up (default: {MAX_ATTEMPTS})",
    )
    add_backend_arguments(parser)
    parser.add_argument("--pack", type=Path, help="pack root (default: the bundled pack)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    pack = load_valid_pack(args.pack)
    options = FixIssueOptions(
        issue=args.issue,
        repo=args.repo,
        tests=args.test,
        sandbox=args.sandbox,
        image=args.image,
        max_attempts=args.max_attempts,
    )
    budget = budget_from_args(args)
    context = Context(
        pack, backend_from_args(args, COMMAND), EventStream(ProgressPrinter()), budget=budget
    )
    result = run_fix_issue(options, wired(context))
    if args.json:
        print(dumps(to_envelope(result)))
    else:
        print("\n".join(result.lines()))
    return result.exit_code


def to_envelope(result: FixIssueResult) -> dict[str, object]:
    item = {"id": result.issue_id, "status": str(result.status.item_status), "title": result.issue}
    details = mask_json(result.to_json())  # as result.json holds it: test output may quote a key
    return envelope(COMMAND, result.exit_code, run_id=result.run_id, items=[item], result=details)


__all__ = ["register", "run"]
