"""`fixloop fix-findings FINDINGS.json --repo PATH`: the fix-verify loop, headless.

Exit codes: 0 every in-scope finding ended resolved, dropped or demoted; 1 some were escalated;
2 bad input (findings that fail the schema or name a path outside the repository, a bad script,
an unknown run to resume), with nothing in the repository changed. Progress goes to stderr; with
`--json` stdout holds only the FixVerifyLoopOutput envelope.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TypeAlias

from fixloop.cli.backend_option import add_backend_arguments, backend_from_args, budget_from_args
from fixloop.cli.pack_commands import load_valid_pack
from fixloop.cli.progress import ProgressPrinter
from fixloop.events import EventStream
from fixloop.workflows.fix_findings import (
    LATEST,
    FixFindingsOptions,
    FixFindingsResult,
    run_fix_findings,
)
from fixloop.workflows.fix_findings.escalation import escalation_text
from fixloop.workflows.kernel.choices import TerminalPrompter
from fixloop.workflows.kernel.workflow import Context

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "fix-findings",
        help="resolve confirmed P0/P1 findings: pre-gate, <= 2 fix+verify rounds, staged only",
        description=(
            "Resolve confirmed P0/P1 findings one at a time (a bounded fix-verify loop). Fixes "
            "are staged with `git add -- <files>` and never committed."
        ),
    )
    parser.add_argument(
        "findings", type=Path, help="a ReviewOutput JSON file or a list of findings"
    )
    parser.add_argument("--repo", type=Path, default=Path(), help="the repository (default: .)")
    parser.add_argument("--json", action="store_true", help="print the envelope as JSON")
    parser.add_argument(
        "--on-prestaged", choices=("ask", "commit", "stash", "proceed"), default="ask",
        help="a fixed file already holds your staged hunks: ask (in a terminal; headless the "
        "finding is escalated and nothing is touched), commit them first (only them), set them "
        "aside (saved in a ref and a patch; never `git stash`), or stage them with the fix",
    )  # fmt: skip
    parser.add_argument(
        "--on-scope-expansion", choices=("ask", "approve", "reject", "defer"), default="ask",
        help="the fixer needs more files: ask (headless: defer), approve, reject, or defer",
    )  # fmt: skip
    add_backend_arguments(parser)
    parser.add_argument("--pack", type=Path, help="pack root (default: the bundled pack)")
    parser.add_argument(
        "--resume", nargs="?", const=LATEST, metavar="RUN_ID",
        help="continue a stopped run of the same findings file (default: the latest)",
    )  # fmt: skip
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    pack = load_valid_pack(args.pack)
    options = FixFindingsOptions(
        args.findings, args.repo, args.on_prestaged, args.on_scope_expansion, args.resume
    )
    context = Context(
        pack,
        backend_from_args(args, "fix-findings"),
        EventStream(ProgressPrinter()),
        budget=budget_from_args(args),
        prompter=TerminalPrompter(),
    )
    session = run_fix_findings(options, context)
    output = session.state.output()
    if args.json:
        print(output.model_dump_json(indent=2))
    else:
        print(summary(session))
    return 1 if output.escalated else 0


def summary(session: FixFindingsResult) -> str:
    state = session.state
    output = state.output()
    lines = [
        f"fix-findings run {session.run_id}: {len(state.records)} finding(s) in scope, "
        f"{len(state.ignored)} ignored (not confirmed P0/P1)",
        f"  resolved:  {', '.join(map(str, output.resolved)) or '-'}",
        f"  escalated: {', '.join(str(e.id) for e in output.escalated) or '-'}",
        f"  dropped:   {', '.join(str(d.id) for d in output.dropped) or '-'}",
        f"  demoted:   {', '.join(f'{d.id} ({d.new_severity})' for d in output.demoted) or '-'}",
        "Fixes are staged, not committed: review them with `git diff --staged`.",
        f"Run record: {session.run_dir}",
    ]
    for record in state.records:
        if record.bucket == "escalated":
            lines += ["", escalation_text(record)]
        lines += [f"  note ({record.finding.id}): {note}" for note in record.notes]
    return "\n".join(lines)
