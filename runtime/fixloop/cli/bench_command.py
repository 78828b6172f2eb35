"""`fixloop bench efficacy CORPUS`: how often fix-issue resolves a frozen corpus, at what cost.

Prints a Markdown table (per task: status, tests before and after, whether the patch passed
acceptance, attempts, turns, tool calls, cost, wall time; and the totals). Exit 0 when every task
was measured, whatever the rate; 1 when a task could not be run at all; 2 for bad input (a
corpus that does not load or is not frozen as it is, a bad sandbox or backend choice).

Two more verbs share the name, read before CORPUS (`arguments.VerbParser`): `bench efficacy validate
CORPUS` proves each task with its reference patch (exit 1 when one is invalid), and `bench
efficacy import SWEBENCH.json[l]` writes a corpus of SWE-bench instances.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from fixloop.cli.arguments import Subparsers, VerbParser, verb_parser_class, whole_number
from fixloop.cli.backend_option import add_backend_arguments, budget_from_args, openai_flags
from fixloop.cli.contract_gate import gate
from fixloop.cli.envelope import dumps, envelope
from fixloop.cli.model_option import add_model_arguments, models_from_args
from fixloop.cli.pack_commands import load_valid_pack
from fixloop.cli.progress import ProgressPrinter
from fixloop.cli.sandbox_option import add_sandbox_arguments
from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.events import EventStream
from fixloop.extras.efficacy import BenchOptions, export_tasks, freeze, markdown, run_bench
from fixloop.extras.efficacy.swebench import (
    DEFAULT_TEST,
    ImportOptions,
    import_instances,
    write_predictions,
)
from fixloop.extras.efficacy.validate import summary, validate_corpus
from fixloop.masking import mask_json

COMMAND = "bench efficacy"


def _validate_parser(
    prog: str, cls: type[argparse.ArgumentParser] = argparse.ArgumentParser
) -> argparse.ArgumentParser:
    parser = cls(
        prog=f"{prog} validate",
        description=(
            "Prove each task of a corpus: its reference patch goes through the acceptance a fix "
            "goes through, its fail-to-pass tests fail at the base, its pass-to-pass tests pass "
            "there, and every one passes with the patch. One line per task and a summary; exit "
            "1 when a task is invalid."
        ),
    )
    parser.add_argument("corpus", type=Path, help="the corpus folder (holding corpus.yaml)")
    parser.add_argument(
        "--gold",
        type=Path,
        metavar="DIR",
        help="the reference patches, DIR/<task-id>.patch (default: each task's gold.patch)",
    )
    add_sandbox_arguments(parser)
    parser.add_argument(
        "--task", action="append", default=[], metavar="ID", help="only this task (repeatable)"
    )
    parser.add_argument("--pack", type=Path, help="pack root (default: the bundled pack)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(handler=run_validate)
    return parser


def _import_parser(
    prog: str, cls: type[argparse.ArgumentParser] = argparse.ArgumentParser
) -> argparse.ArgumentParser:
    parser = cls(
        prog=f"{prog} import",
        description=(
            "Write a frozen corpus of SWE-bench instance records (JSON or JSONL): each task's "
            "repository cloned at its base commit, its issue, its test patch as hidden tests, "
            "its gold patch as the reference `validate` proves it with."
        ),
    )
    parser.add_argument("source", type=Path, help="SWE-bench instances, .json or .jsonl")
    parser.add_argument(
        "--repos",
        required=True,
        metavar="MIRROR_OR_URL",
        help="a folder of repositories (OWNER__NAME, OWNER/NAME or NAME, .git or not) or a "
        "url base (URL/OWNER/NAME)",
    )
    parser.add_argument("--out", type=Path, required=True, metavar="CORPUS", help="a new folder")
    parser.add_argument(
        "--test",
        default=DEFAULT_TEST,
        metavar="CMD",
        help=f"the test command before the test files (default: {DEFAULT_TEST})",
    )
    parser.add_argument(
        "--setup",
        action="append",
        default=[],
        metavar="CMD",
        help="a command every task runs before its tests, in the sandbox (repeatable)",
    )
    parser.add_argument("--image", metavar="IMG", help="every task's Docker image")
    parser.add_argument("--name", default="", help="the corpus name (default: the file's stem)")
    parser.set_defaults(handler=run_import)
    return parser


def register(subparsers: Subparsers) -> None:
    bench = subparsers.add_parser("bench", help="measure fixloop on a corpus of tasks")
    base: type[argparse.ArgumentParser] = type(bench)
    efficacy_class = verb_parser_class(base, "EfficacyParser")
    kinds: Subparsers = bench.add_subparsers(
        dest="bench", metavar="BENCH", required=True, parser_class=efficacy_class
    )
    parser = kinds.add_parser(
        "efficacy",
        usage=(
            "%(prog)s [options] CORPUS\n"
            "       %(prog)s validate CORPUS [--gold DIR] [options]\n"
            "       %(prog)s import SWEBENCH.json[l] --repos MIRROR_OR_URL --out CORPUS"
        ),
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
    parser.add_argument(
        "--workers",
        type=whole_number,
        default=1,
        metavar="N",
        help="run N tasks at once, each in its own sandbox and working copy (default 1)",
    )
    parser.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="run the tasks on the Ray cluster at ADDRESS ('local': one started on this machine "
        "for the run), --workers at once; needs fixloop[ray]",
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
    parser.add_argument(
        "--predictions",
        type=Path,
        metavar="FILE",
        help="also write SWE-bench's predictions (JSONL: instance_id, model_name_or_path, "
        "model_patch) of every task",
    )
    parser.add_argument(
        "--model-name",
        metavar="NAME",
        help="model_name_or_path in the predictions (default: fixloop-BACKEND, fixloop-patches)",
    )
    parser.add_argument("--pack", type=Path, help="pack root (default: the bundled pack)")
    parser.add_argument(
        "--no-contract-check",
        action="store_true",
        help="run a --pack of your own even when `fixloop check` finds it breaks a contract",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(handler=run)
    assert isinstance(parser, VerbParser)
    parser.verbs = {
        "validate": _validate_parser(parser.prog, base),
        "import": _import_parser(parser.prog, base),
    }


def run(args: argparse.Namespace) -> int:
    if args.freeze:
        print(f"{args.corpus / 'corpus.yaml'}: digest {freeze(args.corpus)}")
        return 0
    if args.export:
        for folder in export_tasks(args.corpus, args.export, tuple(args.task)):
            print(folder)
        return 0
    pack = load_valid_pack(args.pack)
    if args.pack is not None and not args.no_contract_check:
        gate(args.pack, None)  # a bench's tasks are repositories of their own: checked each time
    pool = None
    if args.ray:
        from fixloop.extras.efficacy.ray_pool import RayPool  # only with --ray: Ray is optional

        pool = RayPool(args.ray, args.workers)
    progress = ProgressPrinter()
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
        events=EventStream(progress),
        models=models_from_args(args, pack, args.corpus).chosen,
        workers=args.workers,
        pool=pool,
    )
    with progress:  # its live lines are gone before the table prints
        result = run_bench(options, pack)
    table = markdown(result)
    if args.markdown:
        args.markdown.write_text(table, encoding="utf-8")
    if args.predictions:
        write_predictions(result, args.predictions, args.model_name or f"fixloop-{result.backend}")
    if args.json:
        items = [{"id": o.id, "status": o.status, "title": o.title} for o in result.outcomes]
        details = {**mask_json(result.to_json()), "markdown": table}
        print(dumps(envelope(COMMAND, result.exit_code, items=items, result=details)))
    else:
        print(table, end="")
    return result.exit_code


def run_validate(args: argparse.Namespace) -> int:
    pack = load_valid_pack(args.pack)
    options = BenchOptions(
        corpus=args.corpus,
        sandbox=args.sandbox,
        image=args.image,
        tasks=tuple(args.task),
        events=EventStream(ProgressPrinter()),
    )
    found = validate_corpus(options, pack, args.gold)
    code = 0 if all(task.valid for task in found) else 1
    if args.json:
        items = [{"id": t.id, "status": "valid" if t.valid else "invalid"} for t in found]
        details = {"tasks": [task.to_json() for task in found], "summary": summary(found)}
        print(dumps(envelope("bench efficacy validate", code, items=items, result=details)))
        return code
    for task in found:
        print(task.line())
    print(summary(found))
    return code


def _words(raw: str, flag: str) -> tuple[str, ...]:
    """A command's words, split like a shell splits them (never run by one)."""
    try:
        words = tuple(shlex.split(raw))
    except ValueError as exc:
        raise FixloopError(Diagnostic(flag, 1, 1, "usage", f"{raw!r}: {exc}")) from None
    if not words:
        raise FixloopError(Diagnostic(flag, 1, 1, "usage", "the command is empty"))
    return words


def run_import(args: argparse.Namespace) -> int:
    options = ImportOptions(
        source=args.source,
        repos=args.repos,
        out=args.out,
        test=_words(args.test, "--test"),
        setup=tuple(_words(command, "--setup") for command in args.setup),
        image=args.image,
        name=args.name,
    )
    imported = import_instances(options)
    print(f"{args.out}: {len(imported)} tasks imported, frozen")
    return 0


__all__ = ["register", "run", "run_import", "run_validate"]
