"""`fixloop fix-issue batch JOBS.jsonl`: a team's backlog of issues, each an ordinary fix-issue run.

A verb of `fix-issue` (as `validate` is one of `bench efficacy`), not a `--batch` flag: a batch
takes none of a single run's ISSUE, `--repo`, `--test`, `--fail-to-pass` (each job's line gives
them), and a flag would have every one of them allowed beside it and ignored. `batch` first is
this parser (an issue file named `batch` is `./batch`); anything else is fix-issue's own.

Every line of JOBS.jsonl, and each job's sandbox, is checked before any job runs (a bad one:
one line, exit 2, nothing cloned).
Each job's repository is cloned into OUT/<id>/repo (the user's is only read), its run folder is
the clone's, its patch and verdict are kept beside it; a progress line per job on stderr, then
the Markdown summary (or, with `--json`, the envelope). Exit 0 when every job was resolved, 1
otherwise. An OUT that is not empty is refused unless `--resume` finishes the batch it holds
(`extras/batch/resume.py`: the jobs it finished keep their rows, the others run).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from fixloop.cli.arguments import VerbParser, verb_parser_class, whole_number
from fixloop.cli.backend_option import (
    add_backend_arguments,
    backend_from_args,
    backend_name,
    budget_from_args,
    openai_flags,
)
from fixloop.cli.contract_gate import gate
from fixloop.cli.envelope import dumps, envelope
from fixloop.cli.model_option import add_model_arguments, models_from_args
from fixloop.cli.pack_commands import load_valid_pack
from fixloop.cli.progress import ProgressPrinter
from fixloop.cli.sandbox_option import add_sandbox_arguments
from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.events import EventStream
from fixloop.masking import mask_json

COMMAND = "fix-issue batch"
VERB = "batch"


def add_verbs(parser: argparse.ArgumentParser) -> None:
    """`fix-issue batch …` on fix-issue's parser (built by `workflow_command`)."""
    base = type(parser)  # the command line's own class: it remembers a usage error for --json
    parser.__class__ = verb_parser_class(base, "FixIssueParser")
    single = parser.format_usage().removeprefix("usage: ").rstrip()
    parser.usage = f"{single}\n       {parser.prog} batch JOBS.jsonl [--workers N] [options]"
    parser.epilog = (parser.epilog or "") + (
        "\n\nA backlog of issues: `fixloop fix-issue batch JOBS.jsonl` (see its --help)."
    )
    assert isinstance(parser, VerbParser)
    parser.verbs = {VERB: batch_parser(parser.prog, base)}


def batch_parser(
    prog: str, cls: type[argparse.ArgumentParser] = argparse.ArgumentParser
) -> argparse.ArgumentParser:
    parser = cls(
        prog=f"{prog} {VERB}",
        description=(
            "Run fix-issue on every job of JOBS.jsonl, a team's backlog: one JSON object a line, "
            "with repository (a url, or a local path from the file's folder), commit (the base), "
            'issue (its text, or {"file": PATH}) and tests (a list of test commands, or '
            '{"commands", "fail_to_pass", "pass_to_pass"}); optional id, setup (commands '
            "run before the tests), image and meta. Every line is checked before any job runs. "
            "Each job runs on a clone of its own in OUT/<id>/repo (your repositories are only "
            "read), with its run folder there (`fixloop runs show latest --repo OUT/<id>/repo`) "
            "and its patch and verdict beside it. The run budget covers the whole batch: once "
            "it is spent, the jobs left are not run. An interrupted batch is finished with "
            "--resume. Exit 0 when every job was resolved."
        ),
    )
    parser.add_argument("jobs", type=Path, metavar="JOBS.jsonl", help="the jobs, one a line")
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="a new folder for the jobs' clones, patches and verdicts "
        "(default: JOBS.batch beside the jobs file)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="OUT holds an earlier run of this batch: keep the jobs it finished (their verdict "
        "recorded), run the others again, summarise them all",
    )
    parser.add_argument(
        "--workers",
        type=whole_number,
        default=1,
        metavar="N",
        help="run N jobs at once, each in its own clone and sandbox (default 1)",
    )
    parser.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="run the jobs on the Ray cluster at ADDRESS ('local': one started on this machine "
        "for the run), --workers at once; needs fixloop[ray]",
    )
    parser.add_argument(
        "--max-attempts", type=int, default=None, metavar="N", help="each job's fix attempts"
    )
    parser.add_argument(
        "--max-tokens", type=int, default=None, metavar="N", help="each job's token budget"
    )
    add_backend_arguments(parser)
    add_model_arguments(parser)
    add_sandbox_arguments(parser)
    parser.add_argument("--markdown", type=Path, metavar="FILE", help="also write the summary here")
    parser.add_argument("--pack", type=Path, help="pack root (default: the bundled pack)")
    parser.add_argument(
        "--no-contract-check",
        action="store_true",
        help="run a --pack of your own even when `fixloop check` finds it breaks a contract",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(handler=run, action=VERB)
    return parser


def _out(args: argparse.Namespace) -> Path:
    from fixloop.extras.batch import resume

    out: Path = args.out or args.jobs.with_suffix(".batch")
    if out.exists() and not out.is_dir():
        raise FixloopError(Diagnostic(display_path(out), 1, 1, "out", "is not a folder"))
    if out.exists() and not resume.empty(out) and not args.resume:
        problem = "exists and is not empty: name a new one, or --resume the batch it holds"
        raise FixloopError(Diagnostic(display_path(out), 1, 1, "out", problem))
    return out.resolve()


def run(args: argparse.Namespace) -> int:
    from fixloop.extras.batch.jobs import load_jobs
    from fixloop.extras.batch.report import markdown
    from fixloop.extras.batch.run import BatchOptions, run_batch
    from fixloop.workflows.fix_issue.plan import MAX_ATTEMPTS, MAX_TOKENS

    out = _out(args)
    jobs = load_jobs(args.jobs, out=out)  # every line, before anything runs: a bad one is exit 2
    pack = load_valid_pack(args.pack)
    backend = backend_from_args(args, COMMAND)  # a bad choice: exit 2, before any job
    if args.pack is not None and not args.no_contract_check:
        gate(args.pack, None)  # each job's repository is a fresh clone: checked each time
    pool = None
    if args.ray:
        from fixloop.extras.efficacy.ray_pool import RayPool  # only with --ray: Ray is optional

        pool = RayPool(args.ray, args.workers)
    progress = ProgressPrinter()
    options = BatchOptions(
        jobs=tuple(jobs),
        out=out,
        backend=backend_name(args),
        script=args.script,
        openai=openai_flags(args),
        sandbox=args.sandbox,
        image=args.image,
        budget=budget_from_args(args),
        max_attempts=MAX_ATTEMPTS if args.max_attempts is None else args.max_attempts,
        max_tokens=MAX_TOKENS if args.max_tokens is None else args.max_tokens,
        events=EventStream(progress),
        models=models_from_args(args, pack, Path()).chosen,
        workers=args.workers,
        pool=pool,
        jobs_file=args.jobs,
        resume=args.resume,
    )
    with progress:  # its live lines are gone before the summary prints
        result = run_batch(options, pack, backend)  # a bad sandbox: exit 2 before OUT is made
    out.mkdir(parents=True, exist_ok=True)
    result.jobs = str(args.jobs)
    table = markdown(result)
    (out / "summary.md").write_text(table, encoding="utf-8")
    details: dict[str, Any] = {**mask_json(result.to_json()), "markdown": table}
    (out / "summary.json").write_text(dumps(details) + "\n", encoding="utf-8")
    if args.markdown:
        args.markdown.write_text(table, encoding="utf-8")
    if args.json:
        items = [{"id": o.id, "status": o.status, "title": o.title} for o in result.outcomes]
        print(dumps(envelope(COMMAND, result.exit_code, items=items, result=details)))
    else:
        print(table, end="")
    return result.exit_code


__all__ = ["add_verbs", "batch_parser", "run"]
