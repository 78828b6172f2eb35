"""`fixloop <workflow> …`: every workflow of the registry, as one command each, built from its row.

The workflow's options model (`workflows/kernel/options.py`) gives its arguments: positionals,
flags, defaults, choices, help. Every workflow command adds the same shared ones: `--backend`,
`--script` and the budget (`backend_option.py`), `--model-profile` and `--model`
(`model_option.py`), `--sandbox`/`--image` for a workflow that runs
verification commands (`sandbox_option.py`), `--pack` and `--json`. Then the command loads the
pack, chooses the sandbox (before anything changes: a bad choice is exit 2), builds the Context
(progress on stderr, a terminal prompter for a workflow that asks), runs the workflow through
the registry and prints its `summary_lines()`, or with `--json` only the one envelope
(`envelope.py`) of its items and `json_result()`.

Exit codes are the result's (`kernel/result.py`): 0 nothing left to do, 1 something fell short,
2 bad input with nothing changed. A workflow's arguments are given to its options model by
field name; a field named `budget` also gets the run budget, and `sandbox`/`image` fields get
`--sandbox`/`--image` for a workflow that checks its sandbox itself.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import importlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from fixloop.cli.arguments import Subparsers
from fixloop.cli.backend_option import add_backend_arguments, backend_from_args, budget_from_args
from fixloop.cli.contract_gate import gate, state_dir_or_none
from fixloop.cli.envelope import dumps, envelope
from fixloop.cli.model_option import add_model_arguments, models_from_args
from fixloop.cli.pack_commands import load_valid_pack
from fixloop.cli.progress import PRINTERS
from fixloop.cli.sandbox_option import add_sandbox_arguments, sandbox_from_args
from fixloop.cli.wiring import wired
from fixloop.events import EventStream
from fixloop.gitrepo import state_dir_of
from fixloop.runs.show import run_totals
from fixloop.workflows.kernel.choices import TerminalPrompter
from fixloop.workflows.kernel.options import Argument, arguments
from fixloop.workflows.kernel.workflow import Context
from fixloop.workflows.registry import WORKFLOWS, Entry, run_workflow

# A workflow command with verbs of its own (`fix-issue batch JOBS.jsonl`): the module adding them.
VERBS = {"fix-issue": "fixloop.cli.batch_command"}
_PLAIN_TYPES: tuple[Callable[[str], Any], ...] = (int, float, str, Path)


def register(subparsers: Subparsers, names: Iterable[str] | None = None) -> None:
    """`fixloop <name>` for each workflow named (every registered one by default)."""
    for name in WORKFLOWS if names is None else names:
        add_command(subparsers, name, WORKFLOWS[name])


def add_command(subparsers: Subparsers, name: str, entry: Entry) -> argparse.ArgumentParser:
    _, model = entry.load()
    epilog: str | None = getattr(model, "epilog", None)
    parser = subparsers.add_parser(
        name,
        help=entry.help,
        description=entry.description,
        epilog=epilog,
        # An epilog is laid out by hand (lists, columns); a description is wrapped.
        formatter_class=argparse.RawDescriptionHelpFormatter if epilog else argparse.HelpFormatter,
    )
    for argument in arguments(model):
        _add_argument(parser, argument)
    add_backend_arguments(parser)
    add_model_arguments(parser)
    if entry.sandboxed:
        add_sandbox_arguments(parser)
    parser.add_argument("--pack", type=Path, help="pack root (default: the bundled pack)")
    parser.add_argument(
        "--no-contract-check",
        action="store_true",
        help="run a --pack of your own even when `fixloop check` finds it breaks a contract",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(handler=functools.partial(run, name, entry))
    if name in VERBS:
        importlib.import_module(VERBS[name]).add_verbs(parser)
    return parser


def _add_argument(parser: argparse.ArgumentParser, argument: Argument) -> None:
    spec = argument.option
    given = {
        "action": spec.action,
        "nargs": spec.nargs,
        "metavar": spec.metavar,
        "choices": spec.choices,
        "type": _converter(spec.type) if spec.type is not None else None,
    }
    kwargs: dict[str, Any] = {key: value for key, value in given.items() if value is not None}
    if spec.const is not None:
        kwargs["const"] = spec.const
    if spec.flag is None:  # a positional: argparse names it after the field
        parser.add_argument(argument.name, help=spec.help, **kwargs)
        return
    default = argument.default
    # argparse appends to the default itself: it must be a list of its own
    kwargs["default"] = list(default) if spec.action == "append" else default
    parser.add_argument(spec.flag, dest=argument.name, help=spec.help, **kwargs)


def _converter(convert: Callable[[str], Any]) -> Callable[[str], Any]:
    """A converter's ValueError as argparse's one usage line (`argument --wave: expected …`)."""
    if convert in _PLAIN_TYPES:
        return convert  # argparse says `invalid int value: 'x'` for these itself

    @functools.wraps(convert)
    def parse(text: str) -> Any:
        try:
            return convert(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def run(name: str, entry: Entry, args: argparse.Namespace) -> int:
    pack = load_valid_pack(args.pack)
    passed = None
    if args.pack is not None and not args.no_contract_check:
        passed = gate(args.pack, state_dir_or_none(getattr(args, "repo", None)))  # broken: exit 2
    _, model = entry.load()
    fields = {field.name for field in dataclasses.fields(model)}
    values = {a.name: _frozen(getattr(args, a.name)) for a in arguments(model)}
    models = models_from_args(args, pack, values.get("repo", Path()))  # a bad one: exit 2 now
    budget = budget_from_args(args)
    if "budget" in fields:
        values["budget"] = budget
    sandbox = None
    if entry.sandboxed and "sandbox" in fields:  # the workflow checks it in its plan
        values.update(sandbox=args.sandbox, image=args.image)
    elif entry.sandboxed:
        sandbox = sandbox_from_args(args)  # before any change: a bad choice is exit 2
    progress = PRINTERS[entry.progress]()
    context = Context(
        pack,
        backend_from_args(args, name),
        EventStream(progress),
        budget=budget,
        sandbox=sandbox,
        models=models.chosen,
    )
    if entry.asks:
        context.prompter = TerminalPrompter()
    try:
        with progress:  # its live lines are gone before the summary prints
            result = run_workflow(name, wired(context), **values)  # the extras' browser, sweepers
    finally:
        if passed is not None:
            passed.remember()
    totals = _totals(values.get("repo", Path()), result.run_id) if entry.totals else None
    if args.json:
        data = {**result.json_result(), **({"totals": totals} if entry.totals else {})}
        items = [result.item_json(item) for item in result.work_items()]
        print(
            dumps(envelope(name, result.exit_code, run_id=result.run_id, items=items, result=data))
        )
    else:
        print("\n".join(result.summary_lines()))
        if totals is not None:
            print(totals["line"])
    code: int = result.exit_code
    return code


def _frozen(value: Any) -> Any:
    """A list from argparse (nargs, append) as the tuple a frozen options model holds."""
    return tuple(value) if isinstance(value, list) else value


def _totals(repo: Path, run_id: str) -> dict[str, Any] | None:
    """What the run spent (calls, cost, wall time), read from its folder; None without a run."""
    if not run_id:
        return None
    return run_totals(state_dir_of(repo), run_id)


__all__ = ["add_command", "register", "run"]
