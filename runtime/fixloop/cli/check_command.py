"""`fixloop check [PATHS…] [--format text|json|sarif]`: generic rules and contracts of a pack.

Exit codes: 0 clean (warnings allowed), 1 violations, 2 usage or input error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fixloop.checker import report
from fixloop.checker.check import check_paths
from fixloop.cli.pack_commands import Subparsers
from fixloop.diagnostics import Severity
from fixloop.documents.pack import default_pack_root


def register(subparsers: Subparsers) -> None:
    check = subparsers.add_parser(
        "check",
        help="check the bash in a pack's documents: generic rules and declared contracts",
    )
    check.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="pack roots, folders, documents or .contracts.yaml files (default: the bundled pack)",
    )
    check.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    check.add_argument(
        "--events",
        action="store_true",
        help="print the command events the checker sees (JSON) instead of checking",
    )
    check.set_defaults(handler=run_check)


def run_check(args: argparse.Namespace) -> int:
    paths: list[Path] = args.paths or [default_pack_root()]
    result = check_paths(paths)
    if args.events:
        events = [e.to_json() for d in result.documents for e in d.events]
        print(json.dumps(events, indent=2))
        return 0
    errors = [d for d in result.diagnostics if d.severity is Severity.ERROR]
    if args.format == "json":
        sys.stdout.write(
            report.as_json(result.diagnostics, len(result.documents), len(result.contracts))
        )
    elif args.format == "sarif":
        sys.stdout.write(report.sarif(result.diagnostics, result.rule_help))
    else:
        sys.stdout.write(report.text(result.diagnostics))
        verdict = f"{len(errors)} error(s)" if errors else "ok"
        warnings = len(result.diagnostics) - len(errors)
        print(
            f"checked {len(result.documents)} documents, {len(result.contracts)} contracts: "
            f"{verdict}" + (f", {warnings} warning(s)" if warnings else ""),
            file=sys.stderr,
        )
    return 1 if errors else 0
