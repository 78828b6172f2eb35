"""`fixloop fix-findings FINDINGS.json --repo PATH`: the fix-verify loop, headless.

Exit codes: 0 every in-scope finding ended resolved, dropped or demoted; 1 some were escalated;
2 bad input (findings that fail the schema or name a path outside the repository, a bad script,
an unknown run to resume, a backend that cannot answer, another run working here), with nothing
in the repository changed. Progress goes to stderr; with `--json` stdout holds only the command
envelope (`cli/envelope.py`): one item per finding in scope, the FixVerifyLoopOutput in its
`result.buckets`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TypeAlias

from fixloop.cli.backend_option import add_backend_arguments, backend_from_args, budget_from_args
from fixloop.cli.envelope import dumps, envelope
from fixloop.cli.pack_commands import load_valid_pack
from fixloop.cli.progress import ProgressPrinter
from fixloop.cli.sandbox_option import add_sandbox_arguments, sandbox_from_args
from fixloop.cli.wiring import wired
from fixloop.events import EventStream
from fixloop.runs.show import run_totals
from fixloop.workflows.fix_findings import (
    LATEST,
    FixFindingsOptions,
    FixFindingsResult,
    run_fix_findings,
)
from fixloop.workflows.fix_findings.escalation import escalation_text
from fixloop.workflows.fix_findings.state import FindingRecord
from fixloop.workflows.kernel.choices import TerminalPrompter
from fixloop.workflows.kernel.workflow import Context

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


ESCALATION_EPILOG = """\
when a finding is escalated (not resolved after its last round):
  fixloop prints what was attempted, why it is still unresolved and what is staged for it, then
  asks (in a terminal; headless the answer is "Defer this finding"):
    1. Defer this finding (Recommended)  nothing changes; the finding is reported as escalated
    2. Manual fix                        nothing changes; you fix it by hand
    3. Try a different approach          nothing changes; run again on this finding with what
                                         you learned (there is never a Round 3 inside a run)
    4. Discard R2 changes and revert     the last round's files get back the index entries and
                                         the bytes they had before that round, file by file
  Whatever stays staged for an escalated finding was NOT verified to resolve it: the summary
  says so, and you decide whether to keep it before you commit.

exit codes: 0 every finding resolved, dropped or demoted (or --dry-run); 1 some were escalated;
2 bad input, a backend that cannot answer, or another fix-findings run working here.
"""


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "fix-findings",
        help="resolve confirmed P0/P1 findings: pre-gate, <= 2 fix+verify rounds, staged only",
        description=(
            "Resolve confirmed P0/P1 findings one at a time (a bounded fix-verify loop). Fixes "
            "are staged with `git add -- <files>` and never committed."
        ),
        epilog=ESCALATION_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "findings", type=Path, help="a ReviewOutput JSON file or a list of findings"
    )
    parser.add_argument("--repo", type=Path, default=Path(), help="the repository (default: .)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--on-prestaged",
        choices=("ask", "commit", "set-aside", "stash", "proceed"),
        default="ask",
        metavar="ask|commit|set-aside|proceed",
        help="a fixed file already holds your staged hunks: ask (in a terminal; headless the "
        "finding is escalated and nothing is touched), commit them first (only them), set them "
        "aside (saved in a ref and a patch; never `git stash`; `stash` is an old name for it), "
        "or stage them with the fix",
    )
    parser.add_argument(
        "--on-scope-expansion",
        choices=("ask", "approve", "reject", "defer"),
        default="ask",
        help="the fixer needs more files: ask (headless: defer), approve, reject, or defer",
    )
    add_backend_arguments(parser)
    add_sandbox_arguments(parser)
    parser.add_argument("--pack", type=Path, help="pack root (default: the bundled pack)")
    parser.add_argument(
        "--resume",
        nargs="?",
        const=LATEST,
        metavar="RUN_ID",
        help="continue a stopped run of the same findings file (default: the latest)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="read and check the findings, the repository and the backend; say what would be "
        "done and change nothing: no run folder, nothing staged",
    )
    parser.add_argument(
        "--wait",
        type=_seconds,
        default=0.0,
        metavar="SECONDS",
        help="another fix-findings run is working in this repository: wait up to SECONDS for "
        "it (default 0: refuse at once, naming it)",
    )
    parser.set_defaults(handler=run)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected seconds >= 0, got {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    pack = load_valid_pack(args.pack)
    sandbox = sandbox_from_args(args)  # before any change: a bad choice is exit 2
    options = FixFindingsOptions(
        args.findings,
        args.repo,
        args.on_prestaged,
        args.on_scope_expansion,
        args.resume,
        dry_run=args.dry_run,
        wait_s=args.wait,
    )
    context = Context(
        pack,
        backend_from_args(args, "fix-findings"),
        EventStream(ProgressPrinter()),
        budget=budget_from_args(args),
        prompter=TerminalPrompter(),
        sandbox=sandbox,
    )
    session = run_fix_findings(options, wired(context))
    output = session.state.output()
    code = 0 if session.dry_run or not output.escalated else 1
    totals = run_totals(session.run_dir.parent.parent, session.run_id) if session.run_id else None
    if args.json:
        result = {
            "buckets": output.model_dump(mode="json"),
            "ignored": session.state.ignored,
            "run_dir": str(session.run_dir) if session.run_id else "",
            "dry_run": session.dry_run,
            "planned": session.planned,
            "totals": totals,
        }
        items = [_item(record) for record in session.state.records]
        print(
            dumps(envelope("fix-findings", code, run_id=session.run_id, items=items, result=result))
        )
    else:
        print(summary(session))
        if totals is not None:
            print(totals["line"])
    return code


def _item(record: FindingRecord) -> dict[str, Any]:
    finding = record.finding
    return {
        "id": finding.id,
        "status": record.bucket or "pending",
        "title": finding.title,
        "severity": finding.severity,
        "file": finding.file,
        "staged_files": record.files,
        "staged_summary": record.staged_summary,
        "attempts": record.attempts(),
        "evidence": record.evidence,
        "new_severity": record.new_severity,
        "notes": record.notes,
    }


def summary(session: FixFindingsResult) -> str:
    state = session.state
    if session.dry_run:
        return "\n".join(["fix-findings --dry-run: nothing was changed", *session.planned])
    output = state.output()
    ignored = ", ".join(map(str, state.ignored))
    lines = [
        f"fix-findings run {session.run_id}: {len(state.records)} finding(s) in scope, "
        f"{len(state.ignored)} ignored" + (f" (not confirmed P0/P1: {ignored})" if ignored else ""),
        _bucket("resolved", [str(i) for i in output.resolved]),
        _bucket("escalated", [str(e.id) for e in output.escalated]),
        _bucket("dropped", [str(d.id) for d in output.dropped]),
        _bucket("demoted", [f"{d.id} -> {d.new_severity}" for d in output.demoted]),
        "Fixes are staged, not committed: review them with `git diff --staged`.",
        f"Run record: {session.run_dir} (`fixloop runs show {session.run_id}`)",
    ]
    for record in state.records:
        if record.bucket == "escalated":
            lines += ["", escalation_text(record)]
            if record.files and not (record.staged_summary or "").startswith("nothing staged"):
                lines.append(
                    f"WARNING: staged for finding {record.finding.id} but NOT verified to "
                    f"resolve it: {', '.join(record.files)} ({record.staged_summary}). Keep, "
                    "fix or unstage it before you commit."
                )
        lines += [f"  note ({record.finding.id}): {note}" for note in record.notes]
    return "\n".join(lines)


def _bucket(name: str, ids: list[str]) -> str:
    listed = f" ({', '.join(ids)})" if ids else ""
    return f"  {name + ':':<10} {len(ids)}{listed}"
