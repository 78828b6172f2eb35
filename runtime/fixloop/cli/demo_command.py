"""`fixloop demo [--dir PATH] [--backend claude]`: review-fix and fix-findings on a fresh example.

Exit codes: 0 the demo ran and its repository shows what it promised (one commit per fixed finding,
REVIEW-FIX.md's counts matching, the example's tests improved); 1 it ran but a promise failed;
2 bad input (a --dir that is not new or empty).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TypeAlias

from rich.console import Console

from fixloop.agents.backend import Backend
from fixloop.agents.budget import BudgetedBackend
from fixloop.cli.backend_option import add_budget_arguments, budget_from_args
from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.extras.demo.run import run_demo
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
    console = Console()
    result = run_demo(args.dir, console, _backend(args))
    print_summary(result, console)
    return 0 if result.ok else 1
