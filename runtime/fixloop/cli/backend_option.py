"""The `--backend` choice shared by every command that dispatches roles, and the run budget flags.

`scripted` plays a script file (offline, free, deterministic); `claude` sends the same role
documents to a real model through claude-agent-sdk and the Claude Code CLI bundled in its wheel
(it needs `ANTHROPIC_API_KEY`, or a Claude Code login); `openai` to any OpenAI-compatible server
(`--provider`, `--model`, `--base-url`, `--api-key-env`; docs/backends.md); `module:Class` is a
backend of your own (`fixloop.agents.registry`). Budgets apply to all of them.

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
from fixloop.agents.openai_config import PRESETS, OpenAIFlags, OpenAITarget
from fixloop.agents.registry import load_backend
from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.documents.models import every_role_model

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
        "Code login, and costs money), openai (any OpenAI-compatible server: OpenAI, DeepSeek, "
        "Gemini, Qwen, vLLM, Ollama, …), scripted (a script file, offline), or module:Class (a "
        f"backend of your own); default: {said}",
    )
    parser.add_argument("--script", type=Path, help="the scripted model's script (YAML or JSON)")
    openai = parser.add_argument_group("--backend openai")
    openai.add_argument(
        "--provider",
        metavar="NAME",
        help=f"a preset: {', '.join(PRESETS)} (default: openai, or [openai] provider in "
        "fixloop.toml)",
    )
    openai.add_argument(
        "--base-url",
        metavar="URL",
        help="the server's API address, e.g. http://127.0.0.1:8000/v1 (default: the preset's, "
        "or OPENAI_BASE_URL)",
    )
    openai.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="the environment variable holding the key (default: the preset's, e.g. "
        "DEEPSEEK_API_KEY, or OPENAI_API_KEY); the key itself is never an argument",
    )
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
    repo = getattr(args, "repo", None)
    backend = load_backend(
        backend_name(args),
        script=getattr(args, "script", None),
        openai=openai_flags(args),
        project=repo if isinstance(repo, Path) else None,
        where=command,
    )
    target = getattr(backend, "target", None)
    costed = getattr(args, "max_cost_usd", None) is not None
    if costed and isinstance(target, OpenAITarget) and not target.priced:
        # A cost it cannot count is a budget it cannot keep.
        problem = (
            "--max-cost-usd needs the model's prices: set price-input and price-output "
            "(USD per million tokens) under [openai] in fixloop.toml"
        )
        raise FixloopError(Diagnostic(command, 1, 1, "usage", problem))
    return backend


def openai_flags(args: argparse.Namespace) -> OpenAIFlags:
    """What `--provider`, `--model NAME` (every role's model, the one `--model` without a
    role), `--base-url` and `--api-key-env` said."""
    return OpenAIFlags(
        provider=getattr(args, "provider", None),
        model=every_role_model(getattr(args, "model", None) or ()),
        base_url=getattr(args, "base_url", None),
        api_key_env=getattr(args, "api_key_env", None),
    )


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
