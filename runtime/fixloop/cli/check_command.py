"""`fixloop check [PATHS…]`: generic rules and contracts of a pack, for CI and pre-commit.

With no path, the pack the current directory is in (or the one `[tool.fixloop] pack` names);
`--bundled` checks the pack fixloop ships. Exit codes: 0 clean (warnings allowed), 1 violations,
2 usage or input error.

What only `--json` needs (the envelope) is imported where it is printed: a hook's check prints
text.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fixloop.checker import check, report
from fixloop.checker.checking import CheckResult
from fixloop.cli.arguments import (
    Subparsers,
    add_format_option,
    add_pack_options,
    add_selection_options,
    split_ids,
)
from fixloop.diagnostics import FixloopError, Severity
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
    add_selection_options(check)
    check.add_argument(
        "--whole-pack",
        action="store_true",
        help="check the whole pack each PATH is in (for pre-commit, which passes changed files: "
        "a workflow's contracts may cover a brief that changed)",
    )
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
    if args.paths and args.whole_pack:
        packs = [pack_root_of(p) for p in args.paths]
        roots = list(dict.fromkeys(p for p in packs if p is not None))
        return roots, find_config(roots[0] if roots else Path.cwd())
    if args.paths:
        return list(args.paths), find_config(args.paths[0])
    config = find_config(Path.cwd())
    return [config.pack or pack_root_or_fail(Path.cwd())], config


def run_check(args: argparse.Namespace) -> int:
    paths, config = chosen_paths(args)
    config = config.narrowed(split_ids(args.select), split_ids(args.ignore))
    if not paths:  # --whole-pack, and no changed file is in a pack
        if args.format == "json":
            from fixloop.cli import envelope

            return envelope.emit("check", 0, result={"documents": 0, "contracts": 0})
        print("checked 0 documents, 0 contracts: ok (no pack holds these files)", file=sys.stderr)
        return 0
    profile = Profile(args.profile) if args.profile else None
    result = check(paths, profile=profile)
    if args.events:
        events = [e.to_json() for d in result.documents for e in d.events]
        if args.format == "json":
            from fixloop.cli import envelope

            return envelope.emit("check", 0, result={"events": events})
        print(json.dumps(events, indent=2))
        return 0
    shown = [d for d in result.diagnostics if config.wanted(d)]
    known = set(result.rule_help)
    shown += [config.unknown_id(rule, known) for rule in sorted(config.named_ids() - known)]
    errors = [d for d in shown if d.severity is Severity.ERROR]
    code = 1 if errors and not args.exit_zero else 0
    if args.format == "json":
        from fixloop.cli import envelope

        counts = {"documents": len(result.documents), "contracts": len(result.contracts)}
        return envelope.emit("check", code, items=envelope.diagnostic_items(shown), result=counts)
    if args.format == "sarif":
        sys.stdout.write(report.sarif(shown, result.rule_help))
    else:
        sys.stdout.write(report.text(shown))
        print(summary(result, len(errors), len(shown) - len(errors)), file=sys.stderr)
    return code


def pack_root_of(path: Path) -> Path | None:
    """The pack a file or folder is in, or None."""
    try:
        return pack_root_or_fail(path if path.is_dir() else path.parent)
    except FixloopError:
        return None


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
