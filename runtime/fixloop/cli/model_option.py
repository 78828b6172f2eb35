"""`--model-profile` and `--model ROLE=MODEL` on every workflow command, and `fixloop models`.

The choice itself (profiles, precedence, checks) is `fixloop.documents.models`; this module puts
it on the command line. `fixloop models` prints what a run here would use, per role, and where
it comes from: the slash commands that dispatch Claude Code's own subagents read it there
(`--json`), so a profile set in the project's settings reaches them too.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from fixloop.cli.arguments import Subparsers
from fixloop.cli.envelope import emit
from fixloop.cli.pack_commands import load_valid_pack
from fixloop.documents.config import find_config
from fixloop.documents.models import ModelChoice, choose_models, profiles
from fixloop.documents.pack import Pack


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model-profile",
        metavar="|".join(profiles()),
        help="the roles' models, by profile (`fixloop models` shows them); default: the "
        "settings' model-profile, else each role's own model line",
    )
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="[ROLE=]MODEL",
        help="run ROLE on MODEL, or every role without ROLE= (claude: an alias such as opus, "
        "sonnet, haiku, or a claude-* id; openai: the server's model name); repeatable; over "
        "the profile",
    )


def models_from_args(args: argparse.Namespace, pack: Pack, repo: Path) -> ModelChoice:
    """The run's models from the command line and the settings that apply at `repo`; a
    FixloopError (exit 2) for an unknown profile, role or model."""
    return choose_models(
        pack.agents,
        options=getattr(args, "model", None) or (),
        profile=getattr(args, "model_profile", None),
        config=find_config(repo),
        server_names=getattr(args, "backend", None) == "openai",
    )


def register(subparsers: Subparsers) -> None:
    models = subparsers.add_parser(
        "models",
        help="the model each role runs on here (profile, settings, --model)",
        description="The model each role of the pack runs on in this repository: --model, the "
        "settings' models table, the profile (--model-profile, else the settings' "
        "model-profile), else the role's own model line.",
    )
    models.add_argument("--repo", type=Path, default=Path(), help="the repository (default: .)")
    add_model_arguments(models)
    models.add_argument("--pack", type=Path, help="pack root (default: the bundled pack)")
    models.add_argument("--json", action="store_true", help="print the result as JSON")
    models.set_defaults(handler=run_models)


def run_models(args: argparse.Namespace) -> int:
    pack = load_valid_pack(args.pack)
    choice = models_from_args(args, pack, args.repo)
    rows: dict[str, dict[str, Any]] = {}
    for role, agent in sorted(pack.agents.items()):
        own = agent.spec.model
        model = choice.model(role, own)
        source = choice.sources.get(role, "its document")
        rows[role] = {"model": model or "default", "from": source}
    if args.json:
        # Each role an item; its status says where its model came from (--model, settings, …).
        items = [{"id": role, "status": _origin(row["from"]), **row} for role, row in rows.items()]
        return emit("models", 0, items=items, result={"profile": choice.profile, "roles": rows})
    print(f"profile: {choice.profile or '(none: the documents)'}")
    for role, row in rows.items():
        print(f"  {role:12} {row['model']:10} {row['from']}")
    return 0


def _origin(source: str) -> str:
    """Where a role's model came from, as one word: --model, settings, profile or document."""
    return "document" if source == "its document" else source.split(maxsplit=1)[0]


__all__ = ["add_model_arguments", "models_from_args", "register", "run_models"]
