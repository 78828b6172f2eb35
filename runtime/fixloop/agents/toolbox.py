"""Tools a workflow lends one role call: the only way that role may change the worktree.

Some workflows cannot let a model write files with the CLI's own Edit, Write or Bash: fix-issue's
edits must name the version of the file they were based on, and its tests run as preset argv in
a sandbox. Such a workflow hands the call a `Toolbox`; every backend serves the same tools:

- the claude backend as an in-process MCP server (`mcp__fixloop__<name>`), and it refuses the
  built-in tools the toolbox `replaces` (a denial the model sees, not a line in its prompt);
- the scripted backend plays a script's `tools:` calls against it, in order.

A tool answers with JSON text the model reads (`{"ok": true, ...}` or `{"ok": false, "error":
"stale_version", "message": ...}`) and whether it is an error, and may carry a picture; a
refused call never raises. A toolbox that only adds tools (a design executor's `screenshot`)
replaces nothing.

Versions: a tool result that names a file and its content version (`"path"`, `"version"`) tells
the model which version its next edit of that file is based on. A script writes `"@last"` for
"the version the last result about this path reported"; `latest_versions` and `with_version`
resolve it the way a model copies a version out of a read (both backends use them).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

TOOL_SERVER = "fixloop"
LAST_VERSION = "@last"
# What a toolbox that owns every change stands in for: with it, these built-ins are refused.
WRITING_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit", "Bash"})


@dataclass(frozen=True)
class ToolSpec:
    name: str  # without the `mcp__fixloop__` prefix
    description: str
    input_schema: Mapping[str, Any]  # a JSON schema for the tool's arguments


@dataclass(frozen=True)
class ToolReply:
    text: str  # JSON the model reads
    is_error: bool = False
    # A PNG shown to the model beside the text where the backend can (claude); elsewhere the
    # text names the file it is in, which the model Reads.
    image: bytes | None = None


class Toolbox(Protocol):
    """The tools of one role call. `call` is made one at a time and never raises."""

    @property
    def replaces(self) -> frozenset[str]: ...

    def specs(self) -> Sequence[ToolSpec]: ...

    def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply: ...


def qualified(name: str) -> str:
    """The name a model calls the tool by through the MCP server."""
    return f"mcp__{TOOL_SERVER}__{name}"


def unqualified(name: str) -> str:
    return name.removeprefix(f"mcp__{TOOL_SERVER}__")


def latest_versions(
    results: Iterable[str], versions: dict[str, str] | None = None
) -> dict[str, str]:
    """path → the last version the tool results (JSON texts, oldest first) reported for it."""
    found = {} if versions is None else versions
    for text in results:
        try:
            data = json.loads(text)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        path, version = data.get("path"), data.get("version")
        if isinstance(path, str) and isinstance(version, str):
            found[path] = version
    return found


def with_version(arguments: Mapping[str, Any], versions: Mapping[str, str]) -> dict[str, Any]:
    """`arguments` with a `"@last"` version replaced by the last one seen for its path (left
    as it is when none was seen: the tool then refuses it as a version it never gave out)."""
    resolved = dict(arguments)
    path = resolved.get("path")
    if resolved.get("version") == LAST_VERSION and isinstance(path, str) and path in versions:
        resolved["version"] = versions[path]
    return resolved


__all__ = [
    "LAST_VERSION",
    "TOOL_SERVER",
    "WRITING_TOOLS",
    "ToolReply",
    "ToolSpec",
    "Toolbox",
    "latest_versions",
    "qualified",
    "unqualified",
    "with_version",
]
