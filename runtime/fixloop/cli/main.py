"""Entry point. Each command group lives in its own module exposing `register(subparsers)`.

Exit codes: 0 ok, 1 findings or violations, 2 usage or input error. Expected failures arrive as
FixloopError and are printed as `file:line:col: rule: message` lines; set FIXLOOP_DEBUG=1 to see a
traceback for an unexpected one.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from types import ModuleType

from fixloop import __version__
from fixloop.cli import (
    bench_command,
    browser_command,
    check_command,
    demo_command,
    execute_wave_command,
    fix_engine_command,
    fix_findings_command,
    fix_issue_command,
    pack_commands,
    review_command,
    review_fix_command,
    runs_command,
    sandbox_command,
    step_commands,
)
from fixloop.diagnostics import FixloopError

COMMAND_MODULES: tuple[ModuleType, ...] = (
    pack_commands,
    step_commands,
    runs_command,
    review_command,
    fix_findings_command,
    fix_engine_command,
    review_fix_command,
    execute_wave_command,
    fix_issue_command,
    check_command,
    demo_command,
    browser_command,
    bench_command,
    sandbox_command,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fixloop",
        description=(
            "Verified, automated code fixing driven by Markdown agent documents. "
            "Validate, render and check a pack; run its workflows headless."
        ),
    )
    parser.add_argument("--version", action="version", version=f"fixloop {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMAND_MODULES:
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result: int = args.handler(args)
    except FixloopError as exc:
        for diagnostic in exc.diagnostics:
            print(diagnostic.format(), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("fixloop: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`fixloop … | head`): nothing is wrong, and nothing more is said.
        # Python would still flush stdout at exit and complain; point it at /dev/null first.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + 13  # what a shell reports for a writer ended by SIGPIPE
    except Exception as exc:
        if os.environ.get("FIXLOOP_DEBUG"):
            traceback.print_exc()
        print(
            f"fixloop: internal error: {type(exc).__name__}: {exc} "
            "(set FIXLOOP_DEBUG=1 for a traceback; please report it)",
            file=sys.stderr,
        )
        return 70
    return result
