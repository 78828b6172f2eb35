"""One script, both backends: a scripted-backend script replayed through the real CLI."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fixloop.agents.backend import AgentOutcome, AgentRequest, Backend, StopReason
from fixloop.agents.claude import ClaudeBackend
from fixloop.agents.scripted import ScriptedBackend
from fixloop.extras.testing.messages_server import MessagesServer
from fixloop.extras.testing.replay import ScriptReplay

pytestmark = pytest.mark.cli

SCRIPT: dict[str, Any] = {
    "fixer/CR-01/round-1": {
        "edits": [
            {"path": "calc.py", "old": "a - b", "new": "a + b"},
            {"path": "notes.md", "content": "# notes\nadd fixed\n"},
            {"path": "old.py", "delete": True},
        ],
        "output": {"files_changed": ["calc.py", "notes.md", "old.py"], "summary": "fixed"},
    },
    "fixer/CR-02/round-1": [
        {"fail": "malformed", "raw": "Done, trust me."},
        {"output": '{"files_changed": [], "summary": "skipped: not reproducible"}'},
    ],
    "verifier/CR-01/round-1": {
        "output": {"schema_version": "v1", "findings": [], "checks_run": ["calc.py"]},
    },
}


def make_tree(path: Path) -> Path:
    path.mkdir()
    (path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (path / "old.py").write_text("OLD = True\n")
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    return path


def request(tree: Path, key: str) -> AgentRequest:
    role = key.split("/", maxsplit=1)[0]
    return AgentRequest(
        role=role,
        system_prompt=f"You are the {role}.",
        task=f"Do {key}.",
        tools=("Read", "Edit", "Write", "Bash"),
        model="sonnet",
        output_schema="FixerResult" if role == "fixer" else "ReviewOutput",
        cwd=tree,
        key=key,
    )


CALLS = [
    "fixer/CR-01/round-1",
    "fixer/CR-02/round-1",
    "verifier/CR-01/round-1",
    "fixer/CR-02/round-1",
]


def play(backend: Backend, tree: Path) -> list[AgentOutcome]:
    return [backend.dispatch(request(tree, key)) for key in CALLS]


def snapshot(tree: Path) -> dict[str, str]:
    return {
        str(path.relative_to(tree)): path.read_text()
        for path in sorted(tree.rglob("*"))
        if path.is_file() and ".git" not in path.parts
    }


def test_the_same_script_gives_the_same_run_on_both_backends(tmp_path: Path) -> None:
    scripted_tree = make_tree(tmp_path / "scripted")
    claude_tree = make_tree(tmp_path / "claude")
    replay = ScriptReplay(SCRIPT)

    scripted = play(ScriptedBackend(SCRIPT), scripted_tree)
    with MessagesServer(replay) as server:
        claude = play(ClaudeBackend(env=server.env()), claude_tree)

    assert snapshot(claude_tree) == snapshot(scripted_tree)
    assert not (claude_tree / "old.py").exists()
    assert [o.ok for o in claude] == [o.ok for o in scripted] == [True, False, True, True]
    assert [o.output for o in claude] == [o.output for o in scripted]
    assert claude[1].reason in {StopReason.MISSING, StopReason.MALFORMED}
    assert replay.unplayed() == []
    assert {r.call_key for r in server.conversation} == set(CALLS)


def test_a_hostile_call_key_cannot_inject_headers(tmp_path: Path) -> None:
    tree = make_tree(tmp_path / "tree")
    key = "fixer/CR-01\r\nX-Injected: yes/round-1"
    script = {key: {"output": {"files_changed": [], "summary": "nothing"}}}

    with MessagesServer(ScriptReplay(script)) as server:
        outcome = ClaudeBackend(env=server.env()).dispatch(
            dataclasses.replace(request(tree, "fixer/x"), key=key)
        )

    assert outcome.ok, outcome.detail
    sent = server.conversation[0]
    assert sent.call_key == key
    assert not any(name.lower() == "x-injected" for name in sent.headers)


def test_a_call_nobody_scripted_fails_closed(tmp_path: Path) -> None:
    tree = make_tree(tmp_path / "tree")
    with MessagesServer(ScriptReplay(SCRIPT)) as server:
        outcome = ClaudeBackend(env=server.env()).dispatch(request(tree, "fixer/CR-99/round-1"))

    assert not outcome.ok
    assert outcome.reason is StopReason.BACKEND_ERROR
    assert "no scripted reply for 'fixer/CR-99/round-1'" in outcome.detail
