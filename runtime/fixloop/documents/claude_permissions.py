"""The Claude Code permission rules the pack's slash commands need, and merging them into a
project's settings file.

Inside Claude Code, in the default permission mode, every Bash command and every file edit asks
first. The commands run each workflow step through `fixloop step run` and their subagents edit
inside the run's worktree, `.fixloop/worktrees/RUN_ID` (outside `.git/`: Claude Code refuses an
edit under a `.git` folder whatever the rules say), after reading the pack's workflow documents
(outside the project, so reading them asks too). These are the allow rules that let a command
finish without asking at every step, and nothing more: reading needs no rule inside the project,
dispatching a subagent none, and a fixer's own test commands stay the user's to allow (they run
the user's code). `fixloop init --claude` writes them; the README lists them (a test holds the
two to this tuple). Measured with the Claude Code CLI of claude-agent-sdk (docs/claude-code.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Rule:
    rule: str
    why: str


ALLOW_RULES: tuple[Rule, ...] = (
    Rule("Bash(fixloop step run:*)", "every workflow step, run as the document writes it"),
    Rule("Bash(fixloop recover:*)", "/fixloop:recover, and the clean-up before a run"),
    Rule("Bash(fixloop runs:*)", "/fixloop:status: the runs of this repository"),
    Rule("Edit(/.fixloop/worktrees/**)", "subagents' edits and writes in the run's worktree"),
    Rule(
        "Read(~/.claude/plugins/**)", "the pack's workflow documents, where Claude Code installs it"
    ),
)

PLUGINS = Path("~/.claude/plugins")


def pack_read_rule(root: Path) -> Rule | None:
    """Reading the pack's documents where Claude Code loads it from a folder of its own choosing
    (`--plugin-dir`, a directory marketplace): outside the project, so it asks first. None when
    the folder is under `~/.claude/plugins`, which `ALLOW_RULES` already covers."""
    root = root.expanduser().resolve()
    if root.is_relative_to(PLUGINS.expanduser().resolve()):
        return None
    return Rule(
        f"Read(/{root}/**)", "the pack's workflow documents, in the folder it is loaded from"
    )


SETTINGS = ".claude/settings.json"  # shared with the team; honoured once the workspace is trusted
LOCAL_SETTINGS = ".claude/settings.local.json"  # yours alone; honoured in any workspace


class SettingsError(ValueError):
    """The settings file is not what Claude Code reads: the reason, for a located message."""


def merged(text: str | None, rules: tuple[Rule, ...] = ALLOW_RULES) -> tuple[str, list[str]]:
    """The settings file `text` (None: no file yet) with every rule of `rules` in its
    `permissions.allow`, and the rules that were added. Everything else is kept as it was, in
    its order; an unchanged file comes back byte for byte."""
    settings: dict[str, Any] = {}
    if text is not None and text.strip():
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SettingsError(f"line {exc.lineno}: not JSON: {exc.msg}") from None
        if not isinstance(loaded, dict):
            raise SettingsError("line 1: the settings must be a JSON object")
        settings = loaded
    permissions = settings.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise SettingsError("key permissions: must be an object")
    allow = permissions.setdefault("allow", [])
    if not isinstance(allow, list) or not all(isinstance(entry, str) for entry in allow):
        raise SettingsError("key permissions.allow: must be a list of strings")
    added = [rule.rule for rule in rules if rule.rule not in allow]
    if not added and text is not None:
        return text, []
    allow.extend(added)
    return json.dumps(settings, indent=2) + "\n", added


__all__ = [
    "ALLOW_RULES",
    "LOCAL_SETTINGS",
    "SETTINGS",
    "Rule",
    "SettingsError",
    "merged",
    "pack_read_rule",
]
