"""`fixloop demo [--dir PATH] [--backend claude]`: review-fix and fix-findings on a fresh example.

Exit codes: 0 the demo ran and its repository shows what it promised (one commit per fixed finding,
REVIEW-FIX.md's counts matching, the example's tests improved); 1 it ran but a promise failed;
2 bad input (a --dir that is not new or empty).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TypeAlias

from rich.console import Console

from fixloop.agents.backend import Backend
from fixloop.agents.budget import BudgetedBackend
from fixloop.cli.backend_option import add_budget_arguments, budget_from_args
from fixloop.cli.envelope import emit
from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.extras.demo.run import DemoResult, run_demo
from fixloop.extras.demo.summary import print_summary

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="run every workflow on small buggy examples (scripted model, offline)",
        description=(
            "Build fresh example repositories (a buggy Python package with its tests, a code "
            "review and a mini-PRD; a plan of tasks; an issue), then run review-fix, "
            "fix-findings, fix-engine, execute-wave and fix-issue on them with a scripted model: "
            "no network, no key. Ends with what was fixed, the commits, the graded patch, and "
            "the tests before/after."
        ),
    )
    parser.add_argument(
        "--dir", type=Path, help="where to build it (new or empty; default: a fresh temp dir)"
    )
    parser.add_argument(
        "--backend",
        choices=("scripted", "claude"),
        default="scripted",
        help="scripted (default: the demo's own script, offline) or claude (a real model: "
        "needs ANTHROPIC_API_KEY or a Claude Code login, and costs money)",
    )
    add_budget_arguments(parser)
    parser.add_argument(
        "--json", action="store_true", help="print the result as JSON (progress on stderr)"
    )
    parser.set_defaults(handler=run)


def _backend(args: argparse.Namespace) -> Backend | None:
    budget = budget_from_args(args)
    if args.backend == "scripted":
        if budget is not None:
            problem = (
                "--max-cost-usd and --max-wall-s cap a real model: use them with --backend claude"
            )
            raise FixloopError(Diagnostic("demo", 1, 1, "usage", problem))
        return None
    from fixloop.agents.registry import load_backend  # lazy; says what to install when needed

    backend = load_backend("claude", where="demo")
    return BudgetedBackend(backend, budget) if budget is not None else backend


def run(args: argparse.Namespace) -> int:
    console = Console(stderr=args.json)  # with --json, stdout holds the envelope alone
    result = run_demo(args.dir, console, _backend(args))
    code = 0 if result.ok else 1
    if args.json:
        return emit("demo", code, items=_items(result), result=_details(result))
    print_summary(result, console)
    return code


def _items(result: DemoResult) -> list[dict[str, Any]]:
    """One item per workflow the demo ran: its run, its exit code and its own result."""
    items: list[dict[str, Any]] = []
    for name, ran in (
        ("review-fix", result.review_fix),
        ("fix-engine", result.fix_engine),
        ("execute-wave", result.execute_wave),
        ("fix-issue", result.fix_issue),
    ):
        if ran is not None:
            status = "fell-short" if ran.exit_code else "done"
            items.append(
                {"id": name, "status": status, "run_id": ran.run_id, "result": ran.json_result()}
            )
    if result.fix_findings is not None:
        findings = result.fix_findings
        status = "fell-short" if findings.escalated else "done"
        output = findings.model_dump(mode="json")
        items.insert(1, {"id": "fix-findings", "status": status, "result": output})
    return items


def _details(result: DemoResult) -> dict[str, Any]:
    after = result.tests_after.describe() if result.tests_after else None
    return {
        "directory": str(result.directory),
        "repo": str(result.repo),
        "backend": result.backend,
        "tests": {"before": result.tests_before.describe(), "after": after},
        "commits": result.commits,
        "problems": result.problems,
    }
