"""`fixloop check [PATHS…]`: generic rules and contracts of a pack, for CI and pre-commit.

With no path, the pack the current directory is in (or the one `[tool.fixloop] pack` names);
`--bundled` checks the pack fixloop ships. Exit codes: 0 clean (warnings allowed), 1 violations,
2 usage or input error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fixloop.checker import report
from fixloop.checker.check import CheckResult, check_paths
from fixloop.cli.arguments import Subparsers, add_format_option, add_pack_options
from fixloop.diagnostics import Severity
from fixloop.documents.config import Config, Profile, find_config
from fixloop.documents.discovery import bundled_pack_root, pack_root_or_fail


def register(subparsers: Subparsers) -> None:
    check = subparsers.add_parser(
        "check",
        help="check the bash in a pack's documents: generic rules and declared contracts",
        description=(
            "Parse the bash of every document as bash; check the generic rules and the "
            "contracts the documents declare (docs/contracts.md)."
        ),
    )
    check.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="pack roots, folders, documents or .contracts.yaml files "
        "(default: the pack the current directory is in)",
    )
    add_format_option(check, "json", "sarif")
    add_pack_options(check)
    check.add_argument(
        "--events",
        action="store_true",
        help="print the command events the checker sees (JSON) instead of checking",
    )
    check.set_defaults(handler=run_check)


def chosen_paths(args: argparse.Namespace) -> tuple[list[Path], Config]:
    """The paths to work on and the settings that apply to them."""
    if args.bundled:
        root = bundled_pack_root()
        return [root], find_config(root)
    if args.paths:
        return list(args.paths), find_config(args.paths[0])
    config = find_config(Path.cwd())
    return [config.pack or pack_root_or_fail(Path.cwd())], config


def run_check(args: argparse.Namespace) -> int:
    paths, config = chosen_paths(args)
    profile = Profile(args.profile) if args.profile else None
    result = check_paths(paths, profile=profile)
    if args.events:
        events = [e.to_json() for d in result.documents for e in d.events]
        print(json.dumps(events, indent=2))
        return 0
    shown = [d for d in result.diagnostics if config.wanted(d)]
    known = set(result.rule_help)
    shown += [config.unknown_id(rule) for rule in sorted(config.named_ids() - known)]
    errors = [d for d in shown if d.severity is Severity.ERROR]
    if args.format == "json":
        sys.stdout.write(report.as_json(shown, len(result.documents), len(result.contracts)))
    elif args.format == "sarif":
        sys.stdout.write(report.sarif(shown, result.rule_help))
    else:
        sys.stdout.write(report.text(shown))
        print(summary(result, len(errors), len(shown) - len(errors)), file=sys.stderr)
    return 1 if errors else 0


def summary(result: CheckResult, errors: int, warnings: int) -> str:
    verdict = f"{errors} error(s)" if errors else "ok"
    line = (
        f"checked {len(result.documents)} documents, {len(result.contracts)} contracts: {verdict}"
    )
    if warnings:
        line += f", {warnings} warning(s)"
    if result.folded:
        line += f"; {result.folded} follow-on problem(s) of documents that did not load not shown"
    return line
