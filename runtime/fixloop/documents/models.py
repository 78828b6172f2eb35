"""Which model each role runs on: a named profile, single roles chosen on top, or the documents.

Per role, the first that names one wins: `--model ROLE=MODEL` on the command line, the settings'
`models` table (`[tool.fixloop.models]`, or `[models]` in fixloop.toml), the profile
(`--model-profile`, else the settings' `model-profile`), the role's own `model:` line. The
profiles are data, `model_profiles.toml` beside this module, and nowhere else.

A profile, role or model that does not exist is one line naming where it was written (the
command line, or the settings file and its line) and exit 2, before anything runs.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.documents.claude_code import valid_model
from fixloop.documents.claude_code_names import MODEL_ALIASES
from fixloop.documents.config import Config

PROFILES_FILE = Path(__file__).with_name("model_profiles.toml")


@functools.cache
def profiles() -> dict[str, dict[str, str]]:
    """profile name → role → model, as `model_profiles.toml` writes them."""
    loaded = tomllib.loads(PROFILES_FILE.read_text(encoding="utf-8"))
    return {name: {str(r): str(m) for r, m in table.items()} for name, table in loaded.items()}


@dataclass(frozen=True)
class ModelChoice:
    """The models chosen for a run: role → model, for the roles something chose one for."""

    chosen: dict[str, str] = field(default_factory=dict)
    profile: str | None = None
    sources: dict[str, str] = field(default_factory=dict)  # role → who chose its model

    def model(self, role: str, own: str | None) -> str | None:
        return self.chosen.get(role, own)


EVERY_ROLE = "*"  # the role of a `--model MODEL` given without `ROLE=`


def parse_model_option(text: str) -> tuple[str, str]:
    """`ROLE=MODEL`, or `MODEL` for every role (`EVERY_ROLE`), from the command line; a
    FixloopError (exit 2) for anything else."""
    role, sep, model = text.partition("=") if "=" in text else (EVERY_ROLE, "=", text)
    if not sep or not role.strip() or not model.strip():
        raise FixloopError(
            Diagnostic("--model", 1, 1, "model", f"expected [ROLE=]MODEL, got {text!r}")
        )
    return role.strip(), model.strip()


def every_role_model(options: Sequence[str]) -> str | None:
    """The last `--model MODEL` given without a role, if any."""
    bare = [model for role, model in map(parse_model_option, options) if role == EVERY_ROLE]
    return bare[-1] if bare else None


def choose_models(
    roles: Iterable[str],
    *,
    options: Sequence[str] = (),
    profile: str | None = None,
    config: Config | None = None,
    server_names: bool = False,
) -> ModelChoice:
    """The run's models: `options` (`--model` values), `profile` (`--model-profile`) and the
    settings, checked against the pack's `roles`. `server_names`: the backend takes any model
    name its server knows (openai), not only Claude's; its `--model MODEL` for every role is
    the backend's own choice (`every_role_model`), not a role's."""
    known = sorted(roles)
    config = config or Config()
    settings = config.settings
    where = _Where(config)
    name = profile if profile is not None else settings.model_profile
    chosen: dict[str, str] = {}
    sources: dict[str, str] = {}
    if name is not None:
        if name not in profiles():
            at = "--model-profile" if profile is not None else where.at("model-profile")
            message = f"unknown profile {name!r}: use {_or(profiles())}"
            raise FixloopError(where.problem(at, "model-profile", message))
        for role, model in profiles()[name].items():
            if role in known:
                chosen[role], sources[role] = model, f"profile {name}"
    pinned = [(r, m, where.at(r)) for r, m in settings.models.items()]
    given = [(*parse_model_option(text), "--model") for text in options]
    if server_names:
        given = [(role, model, at) for role, model, at in given if role != EVERY_ROLE]
    for role, model, _ in given:
        if role == EVERY_ROLE and not valid_model(model):
            message = f"unknown model {model!r} for every role: use {_claude_models()}; for one "
            message += "role, ROLE=MODEL"
            raise FixloopError(Diagnostic("--model", 1, 1, "model", message))
    given = [
        (each, model, at)
        for role, model, at in given
        for each in (known if role == EVERY_ROLE else [role])
    ]
    for role, model, at in (*pinned, *given):
        if role not in known:
            message = f"unknown role {role!r}: one of {', '.join(known)}"
            raise FixloopError(where.problem(at, "model", message))
        if not server_names and not valid_model(model):
            message = f"unknown model {model!r} for {role}: use {_claude_models()}"
            raise FixloopError(where.problem(at, "model", message))
        chosen[role] = model
        sources[role] = "--model" if at == "--model" else "settings"
    return ModelChoice(chosen, name, sources)


def _claude_models() -> str:
    return f"inherit, {', '.join(sorted(MODEL_ALIASES))} or a claude-* id"


def _or(names: Mapping[str, object]) -> str:
    listed = list(names)
    return ", ".join(listed[:-1]) + f" or {listed[-1]}"


class _Where:
    """Where a setting was written: the command line, or the settings file and the key's line."""

    def __init__(self, config: Config) -> None:
        self.config = config

    def at(self, key: str) -> str:
        return f"{key}@settings"

    def problem(self, at: str, rule: str, message: str) -> Diagnostic:
        if not at.endswith("@settings") or self.config.path is None:
            return Diagnostic(at, 1, 1, rule, message)
        key = at.removesuffix("@settings")
        line = 1
        try:
            text = self.config.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        for number, content in enumerate(text.splitlines(), 1):
            if re.match(rf'\s*"?{re.escape(key)}"?\s*=', content):
                line = number
                break
        return Diagnostic(display_path(self.config.path), line, 1, rule, message)


__all__ = ["ModelChoice", "choose_models", "parse_model_option", "profiles"]
