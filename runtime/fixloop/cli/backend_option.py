"""The `--backend` choice shared by every command that dispatches roles, and the run budget flags.

`scripted` plays a script file (offline, free, deterministic); `claude` sends the same role
documents to a real model through claude-agent-sdk and the Claude Code CLI bundled in its wheel
(it needs `ANTHROPIC_API_KEY`, or a Claude Code login). Budgets apply to both.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fixloop.agents.backend import Backend
from fixloop.agents.budget import RunBudget
from fixloop.agents.scripted import ScriptedBackend
from fixloop.diagnostics import Diagnostic, FixloopError

BACKENDS = ("scripted", "claude")


def add_backend_arguments(parser: argparse.ArgumentParser, *, default: str = "scripted") -> None:
    parser.add_argument(
        "--backend", choices=BACKENDS, default=default,
        help="who plays the roles: a script file (scripted, offline) or a real model (claude: "
        "needs ANTHROPIC_API_KEY or a Claude Code login, and costs money)",
    )  # fmt: skip
    parser.add_argument("--script", type=Path, help="the scripted model's script (YAML or JSON)")
    add_budget_arguments(parser)


def add_budget_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-cost-usd", type=_non_negative, metavar="USD",
        help="run budget: once the run has spent this much, no new agent call starts",
    )  # fmt: skip
    parser.add_argument(
        "--max-wall-s", type=_non_negative, metavar="SECONDS",
        help="run budget: once the run is this old, no new agent call starts",
    )  # fmt: skip


def backend_from_args(args: argparse.Namespace, command: str) -> Backend:
    """The backend the user chose; a FixloopError (exit 2) when its arguments do not fit."""
    if args.backend == "claude":
        if getattr(args, "script", None) is not None:
            problem = "--script is for --backend scripted; --backend claude asks a real model"
            raise FixloopError(Diagnostic(command, 1, 1, "usage", problem))
        # Imported here: claude-agent-sdk takes about half a second to import, which every other
        # command (and `fixloop --help`) should not pay; and the slim install has none.
        try:
            from fixloop.agents.claude import ClaudeBackend
        except ModuleNotFoundError as exc:
            problem = f"--backend claude needs {exc.name}: pip install 'fixloop[claude]'"
            raise FixloopError(Diagnostic(command, 1, 1, "usage", problem)) from None

        return ClaudeBackend()
    if getattr(args, "script", None) is None:
        problem = "--backend scripted needs --script FILE (the scripted model's replies)"
        raise FixloopError(Diagnostic(command, 1, 1, "usage", problem))
    return ScriptedBackend.from_file(args.script)


def budget_from_args(args: argparse.Namespace) -> RunBudget | None:
    cost = getattr(args, "max_cost_usd", None)
    wall = getattr(args, "max_wall_s", None)
    if cost is None and wall is None:
        return None
    return RunBudget(max_cost_usd=cost, max_wall_s=wall)


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value
