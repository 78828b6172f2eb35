"""Tools a workflow lends a role call: played by the scripted backend, served to Claude Code as an
in-process MCP server (the built-ins they replace refused), replayed through the real CLI."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fixloop.agents.backend import AgentRequest
from fixloop.agents.claude import ClaudeBackend
from fixloop.agents.scripted import ScriptedBackend
from fixloop.agents.toolbox import (
    LAST_VERSION,
    WRITING_TOOLS,
    ToolReply,
    ToolSpec,
    latest_versions,
    qualified,
    with_version,
)
from fixloop.extras.testing.messages_server import MessagesServer, structured, tool_use
from fixloop.extras.testing.replay import ScriptReplay

NOTE_SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "version": {"type": "string"}},
    "required": ["path"],
}


@dataclass
class Notebook:
    """A toolbox of two tools: `stamp` hands out a version, `write` needs the latest one."""

    versions: dict[str, int] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    @property
    def replaces(self) -> frozenset[str]:
        return WRITING_TOOLS

    def specs(self) -> Sequence[ToolSpec]:
        return [ToolSpec("stamp", "Stamp.", NOTE_SCHEMA), ToolSpec("write", "Write.", NOTE_SCHEMA)]

    def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        self.calls.append((name, dict(arguments)))
        path = str(arguments["path"])
        current = f"v{self.versions.get(path, 0)}"
        if name == "stamp":
            self.versions[path] = self.versions.get(path, 0) + 1
            current = f"v{self.versions[path]}"
            return ToolReply(json.dumps({"ok": True, "path": path, "version": current}))
        if arguments.get("version") != current:
            return ToolReply(json.dumps({"ok": False, "error": "stale_version"}), is_error=True)
        return ToolReply(json.dumps({"ok": True, "path": path, "written": True}))


OUTPUT = {"id": "N", "status": "done", "filesModified": [], "notes": "stamped and written"}
SCRIPT = {
    "notes/N/attempt-1": {
        "tools": [
            {"name": "stamp", "input": {"path": "a"}},
            {"name": "stamp", "input": {"path": "a"}},
            {"name": "write", "input": {"path": "a", "version": LAST_VERSION}},
            {"name": "write", "input": {"path": "a", "version": "v1"}},
        ],
        "output": OUTPUT,
    }
}


def request(cwd: Path, toolbox: Notebook | None, tools: tuple[str, ...] = ()) -> AgentRequest:
    return AgentRequest(
        role="notes",
        system_prompt="You keep notes.",
        task="stamp and write",
        tools=tools,
        model="sonnet",
        output_schema="ImplResult",
        cwd=cwd,
        key="notes/N/attempt-1",
        toolbox=toolbox,
    )


def test_the_last_version_a_result_reported_is_the_one_copied() -> None:
    texts = [
        json.dumps({"ok": True, "path": "a", "version": "1"}),
        "not json",
        json.dumps({"ok": True, "path": "b", "version": "7"}),
        json.dumps({"ok": True, "path": "a", "version": "2"}),
    ]
    versions = latest_versions(texts)
    assert versions == {"a": "2", "b": "7"}
    assert with_version({"path": "a", "version": LAST_VERSION}, versions)["version"] == "2"
    assert with_version({"path": "c", "version": LAST_VERSION}, versions)["version"] == LAST_VERSION
    assert qualified("read_file") == "mcp__fixloop__read_file"


def test_the_scripted_model_plays_the_tools_in_order(tmp_path: Path) -> None:
    notebook = Notebook()
    outcome = ScriptedBackend(SCRIPT).dispatch(request(tmp_path, notebook))
    assert outcome.ok and outcome.usage.turns == 5
    assert [call[1].get("version") for call in notebook.calls] == [None, None, "v2", "v1"]


def test_a_script_with_tools_for_a_call_lent_none_is_inconclusive(tmp_path: Path) -> None:
    outcome = ScriptedBackend(SCRIPT).dispatch(request(tmp_path, None))
    assert not outcome.ok and "none were lent" in outcome.detail


@pytest.mark.cli
def test_claude_code_calls_the_tools_and_may_not_use_its_own_edit_or_bash(tmp_path: Path) -> None:
    notebook = Notebook()
    page = tmp_path / "a.txt"
    page.write_text("a\n")
    script = [
        tool_use(qualified("stamp"), {"path": "a"}),
        tool_use("Edit", {"file_path": str(page), "old_string": "a", "new_string": "b"}),
        tool_use("Bash", {"command": "echo b > a.txt"}),
        tool_use(qualified("write"), {"path": "a", "version": "v1"}),
        structured(OUTPUT),
    ]
    # The role lists Edit and Bash, yet with the toolbox lent they are refused.
    tools = ("Read", "Edit", "Bash", qualified("stamp"), qualified("write"))
    with MessagesServer(script) as server:
        outcome = ClaudeBackend(env=server.env(), sandbox_bash=False).dispatch(
            request(tmp_path, notebook, tools)
        )
    assert outcome.ok, outcome.detail
    assert notebook.calls == [("stamp", {"path": "a"}), ("write", {"path": "a", "version": "v1"})]
    assert (tmp_path / "a.txt").read_text() == "a\n"
    assert {denied.tool for denied in outcome.denied} == {"Edit", "Bash"}
    offered = server.conversation[0].tool_names
    assert {qualified("stamp"), qualified("write")} <= set(offered)
    results = [str(r.get("content")) for r in server.conversation[-1].tool_results()]
    assert '"version": "v1"' in results[0] and "mcp__fixloop__" in results[1]


@pytest.mark.cli
def test_a_replayed_script_copies_versions_from_the_tool_results(tmp_path: Path) -> None:
    notebook = Notebook()
    replay = ScriptReplay(SCRIPT)
    tools = (qualified("stamp"), qualified("write"))
    with MessagesServer(replay) as server:
        outcome = ClaudeBackend(env=server.env(), sandbox_bash=False).dispatch(
            request(tmp_path, notebook, tools)
        )
    assert outcome.ok, outcome.detail
    assert [call[1].get("version") for call in notebook.calls] == [None, None, "v2", "v1"]
    assert replay.unplayed() == [] and server.unscripted == 0
