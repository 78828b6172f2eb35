"""`fixloop review [PATHS…] --repo PATH [--format review-md|findings-json]`: the reviewer, headless.

Exit codes: 0 the review was written (with or without findings); 1 the reviewer's answer was
inconclusive (nothing written); 2 bad input (a path outside the repository, a phase without a
folder, nothing to review, an output that exists, a backend that cannot answer). Progress goes
to stderr; with `--json` stdout holds only the command envelope.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TypeAlias

from fixloop.cli.backend_option import add_backend_arguments, backend_from_args, budget_from_args
from fixloop.cli.envelope import dumps, envelope
from fixloop.cli.pack_commands import load_valid_pack
from fixloop.cli.progress import ProgressPrinter
from fixloop.cli.wiring import wired
from fixloop.events import EventStream
from fixloop.gitrepo import state_dir_of
from fixloop.runs.show import run_totals
from fixloop.workflows.kernel.workflow import Context
from fixloop.workflows.review import ReviewOptions, ReviewResult, run_review

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

EPILOG = """\
where the review goes:
  With a phase (`fixloop review 02`, or --phase 02) the file goes into the phase's folder,
  .planning/phases/02-*/: 02-REVIEW.md (review-md) or 02-FINDINGS.json (findings-json). Without
  a phase, --output names it. An existing file is replaced only with --overwrite.

which files:
  The PATHS given (a folder stands for the files git tracks in it); else, with a phase, the
  files its commits touched (`type(02-01): …` subjects); else the files changed in the working
  tree or the index.

then:
  fixloop review-fix .planning/phases/02-auth/02-REVIEW.md
  fixloop fix-findings .planning/phases/02-auth/02-FINDINGS.json   (each finding pre-gated)
"""


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "review",
        help="review files with the reviewer role; write a REVIEW.md or a findings JSON",
        description=(
            "Review files with the reviewer role (it only reads) and write what it found as a "
            "GSD-format REVIEW.md for review-fix, or a ReviewOutput JSON for fix-findings."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="files or folders to review; a phase number first (2, 02, 2.1) names the phase",
    )
    parser.add_argument("--repo", type=Path, default=Path(), help="the repository (default: .)")
    parser.add_argument(
        "--format",
        choices=("review-md", "findings-json"),
        default="review-md",
        help="review-md: a GSD-format REVIEW.md (review-fix); findings-json: a ReviewOutput "
        "JSON (fix-findings); default: review-md",
    )
    parser.add_argument("--phase", metavar="N", help="the phase, when PATHS do not start with it")
    parser.add_argument("--output", type=Path, metavar="FILE", help="where to write the review")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing file")
    parser.add_argument(
        "--depth",
        choices=("quick", "standard", "deep"),
        default="standard",
        help="how closely to read (default: standard)",
    )
    parser.add_argument("--criteria", default="", help="criteria the code must satisfy")
    add_backend_arguments(parser)
    parser.add_argument("--pack", type=Path, help="pack root (default: the bundled pack)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    pack = load_valid_pack(args.pack)
    options = ReviewOptions(
        paths=tuple(args.paths),
        repo=args.repo,
        format=args.format,
        phase=args.phase,
        output=args.output,
        overwrite=args.overwrite,
        depth=args.depth,
        criteria=args.criteria,
    )
    budget = budget_from_args(args)
    context = Context(
        pack, backend_from_args(args, "review"), EventStream(ProgressPrinter()), budget=budget
    )
    result = run_review(options, wired(context))
    totals = run_totals(state_dir_of(args.repo), result.run_id)
    if args.json:
        items = [
            {**finding.model_dump(mode="json"), "status": "found"} for finding in result.findings
        ]
        data = {**result.to_json(), "totals": totals}
        print(dumps(envelope("review", 0, run_id=result.run_id, items=items, result=data)))
    else:
        print(summary(result))
        print(totals["line"])
    return 0


def summary(result: ReviewResult) -> str:
    lines = [
        f"review run {result.run_id}: {len(result.files)} file(s) reviewed, "
        f"{len(result.findings)} finding(s) -> {result.output_path} ({result.format})"
    ]
    for finding in result.findings:
        where = f"{finding.file}:{finding.line_start}" if finding.line_start else finding.file
        lines.append(f"  {finding.severity} {where or '(no file)'}: {finding.title}")
    if result.notes:
        lines.append(
            f"  {len(result.notes)} finding(s) name no file: kept as notes, not for review-fix"
        )
    return "\n".join(lines)
