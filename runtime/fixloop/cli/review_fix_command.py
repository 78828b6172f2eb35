"""`fixloop review-fix REVIEW.md --repo PATH`: the code-review fixer, headless.

Exit codes: 0 every finding in scope was fixed (or the review was clean or skipped); 1 some were
skipped, the report could not be committed, or the user's branch could not be fast-forwarded (the
fixes are then kept on a branch); 2 bad input (a REVIEW.md that does not parse, a finding without a
File line, a path outside the repository, a bad script), with nothing in the repository changed.
Progress goes to stderr; with `--json` stdout holds only the result object.
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
from fixloop.events import EventStream
from fixloop.gitrepo import state_dir_of
from fixloop.reviews.model import FixScope
from fixloop.runs.show import run_totals
from fixloop.workflows.kernel.choices import TerminalPrompter
from fixloop.workflows.kernel.scope_policy import SCOPE_POLICIES
from fixloop.workflows.kernel.workflow import Context
from fixloop.workflows.review_fix import ReviewFixOptions, ReviewFixResult, run_review_fix

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "review-fix",
        help="fix a REVIEW.md's findings: one verified commit per finding, REVIEW-FIX.md",
        description=(
            "Fix the findings of a GSD-format REVIEW.md in an isolated worktree: "
            "one verified, atomic commit per finding, per-file rollback on failure, REVIEW-FIX.md "
            "committed once, and your branch fast-forwarded at the end."
        ),
    )
    parser.add_argument("review", type=Path, help="the REVIEW.md (inside the repository)")
    parser.add_argument("--repo", type=Path, default=Path(), help="the repository (default: .)")
    parser.add_argument(
        "--all", action="store_true", help="also fix info (IN-) findings; default: CR-/BL-/WR-"
    )
    parser.add_argument(
        "--auto",
        action="store_true",
        help="re-review and fix again until the review is clean, at most 3 iterations",
    )
    parser.add_argument(
        "--on-scope-expansion",
        choices=SCOPE_POLICIES,
        default="ask",
        help="a fixer asks to edit files its finding does not name: ask (the default; deferred "
        "when no one is at a terminal), approve, reject or defer. Git metadata, CI "
        "configuration, the pack's documents and secret files need a person's yes",
    )
    add_backend_arguments(parser)
    add_sandbox_arguments(parser)
    parser.add_argument("--pack", type=Path, help="pack root (default: the bundled pack)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="parse, plan and check (backend, repository, paths); say what would be done and "
        "change nothing: no run folder, no worktree, no commit",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    pack = load_valid_pack(args.pack)
    sandbox = sandbox_from_args(args)  # before any change: a bad choice is exit 2
    options = ReviewFixOptions(
        review=args.review,
        repo=args.repo,
        scope=FixScope.ALL if args.all else FixScope.CRITICAL_WARNING,
        auto=args.auto,
        budget=budget_from_args(args),
        dry_run=args.dry_run,
        on_scope_expansion=args.on_scope_expansion,
    )
    context = Context(
        pack,
        backend_from_args(args, "review-fix"),
        EventStream(ProgressPrinter()),
        budget=options.budget,
        prompter=TerminalPrompter(),
        sandbox=sandbox,
    )
    result = run_review_fix(options, context)
    totals = run_totals(state_dir_of(args.repo), result.run_id) if result.run_id else None
    if args.json:
        data = result.to_json()
        items = data.pop("findings")
        data["totals"] = totals
        code = result.exit_code
        print(dumps(envelope("review-fix", code, run_id=result.run_id, items=items, result=data)))
    else:
        print(summary(result))
        if totals is not None:
            print(totals["line"])
    return result.exit_code


def summary(result: ReviewFixResult) -> str:
    if result.dry_run:
        return "\n".join(["review-fix --dry-run: nothing was changed", *result.planned])
    if result.review_status in ("clean", "skipped"):
        return f"{result.review_path}: status {result.review_status}; no issues to fix"
    lines = [
        f"review-fix run {result.run_id}: {len(result.outcomes)} finding(s) in scope, "
        f"{len(result.fixed)} fixed, {len(result.skipped)} skipped "
        f"({result.iterations} iteration(s))",
    ]
    for outcome in result.outcomes:
        commit = f" [{outcome.commit}]" if outcome.commit else ""
        lines.append(f"  {outcome.finding.id}: {outcome.label}{commit}")
    if result.report_path:
        lines.append(f"Report: {result.report_path} ({result.report_status})")
    lines += [f"Warning: {warning}" for warning in result.warnings]
    return "\n".join(lines)
