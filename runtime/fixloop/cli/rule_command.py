"""`fixloop rule [ID]`: what a rule of `fixloop check` and `validate` reports.

Its own module, not `check_command`'s: `fixloop check` builds the parser of the command it runs
only (`main.COMMANDS`), and building this one's too was about a tenth of a check's parser (0.25
of 2 ms).
"""

from __future__ import annotations

import argparse

from fixloop.cli.arguments import Subparsers
from fixloop.diagnostics import Diagnostic, FixloopError, did_you_mean


def register(subparsers: Subparsers) -> None:
    rule = subparsers.add_parser(
        "rule",
        help="explain a rule of fixloop check and validate",
        description="Print what a rule reports; with no id, list every rule.",
    )
    rule.add_argument("rule_id", nargs="?", metavar="ID", help="a rule id, e.g. unexported-env")
    rule.add_argument("--json", action="store_true", help="print the result as JSON")
    rule.set_defaults(handler=run_rule)


def run_rule(args: argparse.Namespace) -> int:
    known = all_rules()
    if args.json and (args.rule_id is None or args.rule_id in known):
        chosen = sorted(known) if args.rule_id is None else [args.rule_id]
        items = [{"id": rule, "status": "rule", "help": known[rule]} for rule in chosen]
        from fixloop.cli import envelope

        return envelope.emit("rule", 0, items=items)
    if args.rule_id is None:
        width = max(map(len, known))
        print("\n".join(f"{rule:<{width}}  {text}" for rule, text in sorted(known.items())))
        return 0
    if args.rule_id not in known:
        message = f"no rule {args.rule_id!r}{did_you_mean(args.rule_id, known)}"
        raise FixloopError(Diagnostic("command line", 1, 1, "usage", message))
    print(f"{args.rule_id}: {known[args.rule_id]}")
    return 0


def all_rules() -> dict[str, str]:
    # Here, not at the top: `fixloop --help` imports every command's module.
    from fixloop.checker.rules import RULES
    from fixloop.documents.pack_rules import PACK_RULES

    return {**PACK_RULES, **{k: r.help for k, r in RULES.items()}}
