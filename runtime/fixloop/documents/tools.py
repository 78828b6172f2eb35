"""Claude Code tool names, and the grammar of a `tools:` entry.

The list is the union of the tools the bundled CLI offers in its `init` message and the
long-standing names that agent documents in the wild still use (Grep, Glob, MultiEdit,
TodoWrite...). An entry may carry a permission pattern, `Bash(git diff:*)`; MCP tools are
`mcp__<server>__<tool>`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KNOWN_TOOLS: frozenset[str] = frozenset(
    {
        "Agent", "AskUserQuestion", "Bash", "BashOutput", "CronCreate", "CronDelete", "CronList",
        "Edit", "EnterWorktree", "ExitPlanMode", "ExitWorktree", "Glob", "Grep", "KillBash",
        "KillShell", "LS", "ListAgents", "Monitor", "MultiEdit", "NotebookEdit", "NotebookRead",
        "Read", "ReportFindings", "ScheduleWakeup", "SendMessage", "Skill", "SlashCommand", "Task",
        "TaskStop", "TodoWrite", "ToolSearch", "WebFetch", "WebSearch", "Workflow", "Write",
    }
)  # fmt: skip

_ENTRY = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:\((?P<pattern>[^()]*)\))?$")
_MCP = re.compile(r"^mcp__[A-Za-z0-9_-]+(?:__[A-Za-z0-9_-]+)?$")


@dataclass(frozen=True)
class ToolEntry:
    raw: str
    name: str
    pattern: str | None


def split_tools(value: object) -> list[str]:
    """`tools:` as Claude Code accepts it: a comma-separated string or a YAML list of strings."""
    if value is None:
        return []
    if isinstance(value, str):
        return _split_commas(value)
    if isinstance(value, list):
        return [str(item).strip() for item in value if str(item).strip()]
    raise TypeError("tools must be a comma-separated string or a list of tool names")


def _split_commas(text: str) -> list[str]:
    """Split on commas outside parentheses, so `Bash(git diff:*, git log:*)` stays one entry."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        if char == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    parts.append("".join(current).strip())
    return [part for part in parts if part]


def parse_tool(raw: str) -> ToolEntry | None:
    """The entry's tool name and permission pattern, or None when it is not a known tool."""
    if _MCP.match(raw):
        return ToolEntry(raw, raw, None)
    match = _ENTRY.match(raw)
    if not match or match["name"] not in KNOWN_TOOLS:
        return None
    pattern = match["pattern"]
    if pattern is not None and not pattern.strip():
        return None
    return ToolEntry(raw, match["name"], pattern)
