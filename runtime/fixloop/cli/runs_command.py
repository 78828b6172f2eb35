"""`fixloop runs list|prune|show`: the runs recorded in a repository, and what each one did."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from fixloop.cli.arguments import existing_directory
from fixloop.cli.envelope import dumps, envelope
from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.gitrepo import state_dir_of
from fixloop.runs.prune import DEFAULT_KEEP, prune_runs
from fixloop.runs.run import list_runs
from fixloop.runs.show import resolve_run, run_view
from fixloop.runs.show_text import describe, list_lines

PRUNE_EPILOG = f"""\
Each run keeps a folder in <git-common-dir>/fixloop/runs/<run-id>/. This removes the folders
of runs that are over, oldest first, keeping the newest N (--keep, default {DEFAULT_KEEP}) and,
with --older-than, every run that ended less than DAYS days ago. A run is over when it finished,
crashed and was recovered (`fixloop recover`), kept a temp branch that is gone since, or was a
`fixloop step run` that failed. It never removes a run that:
  - is running (a process holds its lock);
  - crashed and was not recovered, or still has a sentinel, worktree, temp branch or tags
    (`fixloop recover` and `fix-findings --resume` work from them);
  - failed as a workflow run (`--resume` continues it), or kept its temp branch for commits your
    branch does not have while that branch is still there (its record says why);
  - holds user content the run set aside: prestaged-N.patch (your staged hunks), displaced/
    (bytes of files that were put back), uncommitted/ (a report that could not be committed).
    These may be the only copy of your work, so they go only with --include-saved. Git refs
    such as refs/fixloop/prestaged/<run-id>/N are never deleted; they are named instead.
Pruning holds the repository lock that runs take to change shared git metadata, so it never
races a run starting. Exit code: 0 on success, 1 when the lock stays taken, 2 on bad input.

examples:
  fixloop runs prune --dry-run
  fixloop runs prune --keep 5 --older-than 14 --repo ../project --json
"""


def register(subparsers: Any) -> None:
    runs = subparsers.add_parser("runs", help="inspect the runs recorded in a repository")
    runs_sub = runs.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    listing = runs_sub.add_parser(
        "list", help="list runs with their state (running, finished, crashed, …)"
    )
    listing.add_argument("--repo", type=Path, default=Path(), help="repository (default .)")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.set_defaults(handler=run_runs_list)
    prune = runs_sub.add_parser(
        "prune",
        help="remove the folders of old finished runs (never running, crashed or kept ones)",
        description="Remove the run folders of old finished runs; say what was kept and why.",
        epilog=PRUNE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    prune.add_argument("--repo", type=Path, default=Path(), help="repository (default .)")
    prune.add_argument(
        "--keep",
        default=str(DEFAULT_KEEP),
        metavar="N",
        help=f"always keep the newest N finished runs (default {DEFAULT_KEEP}; 0 keeps none)",
    )
    prune.add_argument(
        "--older-than",
        metavar="DAYS",
        help="also keep finished runs that ended less than DAYS days ago (fractions allowed)",
    )
    prune.add_argument(
        "--include-saved",
        action="store_true",
        help="also remove runs holding user content they set aside (see below)",
    )
    prune.add_argument("--dry-run", action="store_true", help="say what would go; change nothing")
    prune.add_argument("--json", action="store_true", help="machine-readable report")
    prune.set_defaults(handler=run_runs_prune)
    show = runs_sub.add_parser(
        "show",
        help="what a run did: a summary per item, then each item's diff, calls and tool calls",
        description=(
            "Show what a run did, from its folder: first a summary (per finding, task or issue "
            "its status, attempts, cost, commit and why), then per item the diff it committed "
            "or staged (fix-issue: its patch), the calls that failed and the backend's words, "
            "refused writes, scope requests and the tool calls in order; then the run's cost "
            "and time. --commands adds every step's commands with their document lines."
        ),
    )
    show.add_argument("run_id", metavar="RUN_ID", help="a run id (`fixloop runs list`), or latest")
    show.add_argument("--repo", type=Path, default=Path(), help="repository (default .)")
    show.add_argument(
        "--commands", action="store_true", help="also every command each step ran, with its line"
    )
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="also write the run's report as one self-contained HTML page (items, diffs, "
        "evidence, screenshots, cost and time per item)",
    )
    show.set_defaults(handler=run_runs_show)


def run_runs_list(args: argparse.Namespace) -> int:
    repo = existing_directory(args.repo)
    state_dir = state_dir_of(repo)
    runs = [
        {**info, "outcome": run_view(state_dir / "runs" / str(info["id"])).outcome}
        for info in list_runs(state_dir)
    ]
    if args.json:
        items = [{**info, "status": info.get("state")} for info in runs]
        print(dumps(envelope("runs list", 0, items=items)))
        return 0
    for line in list_lines(runs):
        print(line)
    return 0


def _number(flag: str, text: str | None, *, whole: bool) -> float | None:
    """A flag's value as a number >= 0; bad input is one located line and exit 2."""
    if text is None:
        return None
    kind = "a whole number" if whole else "a number of days"
    try:
        value = int(text) if whole else float(text)
    except ValueError:
        value = -1
    if not value >= 0 or value == float("inf"):
        raise FixloopError(Diagnostic(flag, 1, 1, "usage", f"expected {kind} >= 0, got {text!r}"))
    return value


def run_runs_prune(args: argparse.Namespace) -> int:
    keep = _number("--keep", args.keep, whole=True)
    older = _number("--older-than", args.older_than, whole=False)
    repo = existing_directory(args.repo)
    report = prune_runs(
        repo,
        keep=int(keep or 0),
        older_than_days=older,
        include_saved=args.include_saved,
        dry_run=args.dry_run,
    )
    if args.json:
        data = report.to_json()
        items = [{**d, "status": "removed"} for d in data.pop("removed")]
        items += [{**d, "status": "kept"} for d in data.pop("kept")]
        print(dumps(envelope("runs prune", 0, items=items, result=data)))
    else:
        for line in report.lines():
            print(line)
    return 0


def run_runs_show(args: argparse.Namespace) -> int:
    repo = existing_directory(args.repo)
    run_dir = resolve_run(state_dir_of(repo), args.run_id)
    view = run_view(run_dir)
    if args.html is not None:
        from fixloop.extras.report.html import write_html  # the page's template: only here

        written = write_html(view, run_dir, args.html)
        print(f"report: {written}", file=sys.stderr)
    if args.json:
        data = view.to_json()
        items = data.pop("items")
        print(dumps(envelope("runs show", 0, run_id=view.id, items=items, result=data)))
    else:
        for line in describe(view, commands=args.commands):
            print(line)
    return 0
