"""`fixloop bench efficacy CORPUS`: how often fix-issue resolves a frozen corpus, at what cost.

Prints a Markdown table (per task: status, tests before and after, whether the patch passed
acceptance, attempts, turns, tool calls, cost, wall time; and the totals). Exit 0 when every task
was measured, whatever the rate; 1 when a task could not be run at all; 2 for bad input (a
corpus that does not load or is not frozen as it is, a bad sandbox or backend choice).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TypeAlias

from fixloop.cli.backend_option import add_backend_arguments, budget_from_args, openai_flags
from fixloop.cli.envelope import dumps, envelope
from fixloop.cli.model_option import add_model_arguments, models_from_args
from fixloop.cli.pack_commands import load_valid_pack
from fixloop.cli.progress import ProgressPrinter
from fixloop.cli.sandbox_option import add_sandbox_arguments
from fixloop.events import EventStream
from fixloop.extras.efficacy import BenchOptions, export_tasks, freeze, markdown, run_bench
from fixloop.masking import mask_json

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
COMMAND = "bench efficacy"


def register(subparsers: Subparsers) -> None:
    bench = subparsers.add_parser("bench", help="measure fixloop on a corpus of tasks")
    kinds = bench.add_subparsers(dest="bench", metavar="BENCH", required=True)
    parser = kinds.add_parser(
        "efficacy",
        help="resolved rate, cost, turns and wall time of fix-issue on a frozen corpus",
        description=(
            "Run fix-issue on every task of a frozen corpus (each task: a repository, an issue, "
            "hidden acceptance tests the agent never sees), every command in a sandbox, and "
            "report the resolved rate, cost, turns and wall time per task and in total. With "
            "--patches, score patches another agent made, through the same acceptance."
        ),
    )
    parser.add_argument("corpus", type=Path, help="the corpus folder (holding corpus.yaml)")
    add_backend_arguments(parser, default="scripted")
    add_model_arguments(parser)
    add_sandbox_arguments(parser)
    parser.add_argument(
        "--patches",
        type=Path,
        metavar="DIR",
        help="score DIR/<task-id>.patch instead of running fix-issue (another agent's patches)",
    )
    parser.add_argument(
        "--task", action="append", default=[], metavar="ID", help="only this task (repeatable)"
    )
    parser.add_argument(
        "--out", type=Path, metavar="DIR", help="keep each task's result.json, trace and patch"
    )
    parser.add_argument("--markdown", type=Path, metavar="FILE", help="also write the table here")
    parser.add_argument(
        "--export",
        type=Path,
        metavar="DIR",
        help="write each task's repository and issue (no hidden tests) for another agent, and stop",
    )
    parser.add_argument(
        "--freeze",
        action="store_true",
        help="record the corpus's current digest in corpus.yaml after a deliberate change",
    )
    parser.add_argument("--pack", type=Path, help="pack root (default: the bundled pack)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.freeze:
        print(f"{args.corpus / 'corpus.yaml'}: digest {freeze(args.corpus)}")
        return 0
    if args.export:
        for folder in export_tasks(args.corpus, args.export, tuple(args.task)):
            print(folder)
        return 0
    pack = load_valid_pack(args.pack)
    options = BenchOptions(
        corpus=args.corpus,
        backend=args.backend,
        script=args.script,
        openai=openai_flags(args),
        sandbox=args.sandbox,
        image=args.image,
        budget=budget_from_args(args),
        patches=args.patches,
        tasks=tuple(args.task),
        out=args.out,
        events=EventStream(ProgressPrinter()),
        models=models_from_args(args, pack, args.corpus).chosen,
    )
    result = run_bench(options, pack)
    table = markdown(result)
    if args.markdown:
        args.markdown.write_text(table, encoding="utf-8")
    if args.json:
        items = [{"id": o.id, "status": o.status, "title": o.title} for o in result.outcomes]
        details = {**mask_json(result.to_json()), "markdown": table}
        print(dumps(envelope(COMMAND, result.exit_code, items=items, result=details)))
    else:
        print(table, end="")
    return result.exit_code


__all__ = ["register", "run"]
