"""`fixloop demo [--dir PATH]`: review-fix and fix-findings on a fresh example, scripted model.

Exit codes: 0 the demo ran and its repository shows what it promised (one commit per fixed finding,
REVIEW-FIX.md's counts matching, the example's tests improved); 1 it ran but a promise failed;
2 bad input (a --dir that is not new or empty).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TypeAlias

from rich.console import Console

from fixloop.demo.run import run_demo
from fixloop.demo.summary import print_summary

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="fix a small buggy example with review-fix and fix-findings (scripted model)",
        description=(
            "Build a fresh example repository (a buggy Python package, its tests, a code "
            "review), then run review-fix and fix-findings on it with a scripted model: no "
            "network, no key. Ends with what was fixed, the commits, and the tests before/after."
        ),
    )
    parser.add_argument(
        "--dir", type=Path, help="where to build it (new or empty; default: a fresh temp dir)"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    console = Console()
    result = run_demo(args.dir, console)
    print_summary(result, console)
    return 0 if result.ok else 1
