"""Claude Code tool names, and the grammar of a `tools:` entry.

The names are the ones the bundled CLI knows (`claude_code_names.py`, read from its binary), old
names it still maps to new tools (`Task` → `Agent`), and these forms:

    Read                      a tool
    Bash(git diff:*)          a tool with a permission pattern
    mcp__server               every tool of an MCP server; mcp__server__tool one of them;
    mcp__server__*            a wildcard over them
    *                         every tool
"""

from __future__ import annotations

import re

from fixloop.documents.claude_code_names import TOOL_ALIASES, TOOLS
from fixloop.records import record

KNOWN_TOOLS: frozenset[str] = TOOLS | frozenset(TOOL_ALIASES)

_ENTRY = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:\((?P<pattern>.*)\))?$", re.DOTALL)
_MCP = re.compile(r"^mcp__[A-Za-z0-9_.-]+(?:__[A-Za-z0-9_.*-]+)?$")


@record(frozen=True)
class ToolEntry:
    raw: str
    name: str
    pattern: str | None


def split_tools(value: object) -> list[str]:
    """`tools:` as Claude Code accepts it: a comma-separated string or a YAML list of strings.

    Raises ValueError (never TypeError) for anything else, so callers report it as a value.
    """
    if value is None:
        return []
    if isinstance(value, str):
        return _split_commas(value)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [item.strip() for item in value if item.strip()]
    raise ValueError("expected a comma-separated string or a list of tool names")


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
    if raw == "*" or _MCP.match(raw):
        return ToolEntry(raw, raw, None)
    match = _ENTRY.match(raw)
    if not match or match["name"] not in KNOWN_TOOLS:
        return None
    pattern = match["pattern"]
    if pattern is not None and not pattern.strip():
        return None
    return ToolEntry(raw, TOOL_ALIASES.get(match["name"], match["name"]), pattern)
