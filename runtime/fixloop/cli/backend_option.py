"""The `--backend` choice shared by every command that dispatches roles, and the run budget flags.

`scripted` plays a script file (offline, free, deterministic); `claude` sends the same role
documents to a real model through claude-agent-sdk and the Claude Code CLI bundled in its wheel
(it needs `ANTHROPIC_API_KEY`, or a Claude Code login); `module:Class` is a backend of your own
(`fixloop.agents.registry`). Budgets apply to all of them.

The default is decided here, once, for every workflow command: `--script FILE` alone means the
scripted backend (a script is only ever played by it); otherwise `DEFAULT_BACKEND`, the real
model. Every workflow checks its backend before it changes anything (`Workflow.preflight_backend`),
so a missing login is one line and exit 2, never a run of failed calls.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fixloop.agents.backend import Backend
from fixloop.agents.budget import RunBudget
from fixloop.agents.registry import load_backend

DEFAULT_BACKEND = "claude"


def add_backend_arguments(parser: argparse.ArgumentParser, *, default: str | None = None) -> None:
    """`--backend`, `--script` and the budget flags. `default` None is the shared rule (scripted
    with --script, else DEFAULT_BACKEND); a command with a default of its own names it."""
    said = default or f"scripted with --script, else {DEFAULT_BACKEND}"
    parser.add_argument(
        "--backend",
        default=default,
        metavar="NAME",
        help="who plays the roles: claude (a real model: needs ANTHROPIC_API_KEY or a Claude "
        "Code login, and costs money), scripted (a script file, offline), or module:Class (a "
        f"backend of your own); default: {said}",
    )
    parser.add_argument("--script", type=Path, help="the scripted model's script (YAML or JSON)")
    add_budget_arguments(parser)


def add_budget_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-cost-usd",
        type=_non_negative,
        metavar="USD",
        help="run budget: once the run has spent this much, no new agent call starts",
    )
    parser.add_argument(
        "--max-wall-s",
        type=_non_negative,
        metavar="SECONDS",
        help="run budget: once the run is this old, no new agent call starts",
    )


def backend_name(args: argparse.Namespace) -> str:
    """The backend the user chose, or the default: scripted with a script, else the real one."""
    chosen: str | None = getattr(args, "backend", None)
    if chosen is not None:
        return chosen
    return "scripted" if getattr(args, "script", None) is not None else DEFAULT_BACKEND


def backend_from_args(args: argparse.Namespace, command: str) -> Backend:
    """The backend the user chose; a FixloopError (exit 2) when its arguments do not fit."""
    return load_backend(backend_name(args), script=getattr(args, "script", None), where=command)


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
