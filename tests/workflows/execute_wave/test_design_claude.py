"""A design executor under the claude backend looks at its page through the run's screenshot tool.

Claude Code's Bash runs in Claude Code's own sandbox, which reaches neither the task's dev server
nor the run's screenshot service, so the run lends every design executor its `screenshot` tool
(`mcp__fixloop__screenshot`, served in-process). Here the real Claude Code CLI bundled in
claude-agent-sdk plays the executor, its model the scripted Messages API on loopback: it edits
the page with Write, calls the tool on its dev server's page, then makes the calls a hostile
model would make. Real Chromium, a real dev server on the task's worktree.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import socket
from pathlib import Path
from typing import Any

import pytest
from tests.workflows.execute_wave.conftest import Wave
from tests.workflows.execute_wave.scripts import implement, score, scores
from tests.workflows.execute_wave.test_design import (
    RED,
    VIEWPORT,
    banner,
    banner_site,
    chromium,  # noqa: F401  (the module's autouse check that Chromium is there)
    looks_right,
    page,
)

from fixloop.agents.claude import ClaudeBackend
from fixloop.agents.scripted import parse_script
from fixloop.agents.toolbox import qualified
from fixloop.events import EventStream
from fixloop.extras.browser.seams import CHROMIUM
from fixloop.extras.testing.messages_server import MessagesServer
from fixloop.extras.testing.replay import ScriptReplay, reply_turns, wants_wrapper
from fixloop.extras.testing.responders import RecordedRequest
from fixloop.extras.testing.turns import Turn, tool_use
from fixloop.workflows.execute_wave import ExecuteWaveOptions, run_execute_wave
from fixloop.workflows.kernel.workflow import Context

pytestmark = [pytest.mark.cli, pytest.mark.slow]
EXECUTOR = "executor/1/implement"
SERVE = 'exec python3 -m http.server "$PORT" --bind "$HOST"'
SHOT = qualified("screenshot")


class LooksThroughItsTool:
    """The executor's scripted reply (Read, Write, the result file, the answer) with screenshot
    calls before the answer: its own page, then hostile ones. The other roles: the script.
    The picture the tool reports is kept (the worktree is gone after the run)."""

    def __init__(self, executor: dict[str, Any], others: dict[str, Any], keep: Path) -> None:
        (self.reply,) = parse_script({EXECUTOR: executor}, "<test>")[EXECUTOR]
        self.others = ScriptReplay(others)
        self.keep = keep
        self.hostile: list[dict[str, Any]] = []
        self.answered = 0
        self.last: RecordedRequest | None = None

    def __call__(self, request: RecordedRequest) -> Turn:
        if request.call_key != EXECUTOR:
            return self.others(request)
        found = re.search(r"^dev_server_url: (\S+)$", request.system, re.MULTILINE)
        assert found, "the executor was given no dev server"
        url = found.group(1)
        turns = reply_turns(self.reply, wrap=wants_wrapper(request))
        shots = [tool_use(SHOT, {"url": url, "name": "self-check"})]
        shots += [tool_use(SHOT, arguments) for arguments in self.hostile]
        turns = [*turns[:-1], *shots, turns[-1]]
        self.answered = sum(1 for m in request.messages if m.get("role") == "assistant")
        if self.answered == len(turns) - 1:
            self.last = request  # every tool's answer is in: the model gives its result now
        results = request.tool_results()
        if len(results) == len(turns) - len(shots):  # the first shot's answer just came back
            answer = json.loads(_texts(results[-1])[0])
            if answer.get("ok"):
                shutil.copyfile(answer["file"], self.keep)
        return turns[self.answered]


def _texts(result: dict[str, Any]) -> list[str]:
    content = result.get("content")
    if isinstance(content, str):
        return [content]
    return [
        str(b["text"]) for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
    ]


def _images(result: dict[str, Any]) -> list[bytes]:
    content = result.get("content")
    blocks = content if isinstance(content, list) else []
    return [
        base64.b64decode(b["source"]["data"])
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "image"
    ]


def test_a_design_executor_under_claude_takes_its_screenshot_through_the_runs_tool(
    wave: Wave, tmp_path: Path
) -> None:
    repo = banner_site(wave, SERVE)
    with socket.socket() as probe:  # a port of the host that is not the task's dev server
        probe.bind(("127.0.0.1", 0))
        other = probe.getsockname()[1]
    responder = LooksThroughItsTool(
        implement(1, {"site/index.html": page(RED, "Hello")}),
        {"verifier/1/verify": score(1, scores("design", 9), kind="design")},
        tmp_path / "self-check.png",
    )
    responder.hostile = [
        {"url": f"http://127.0.0.1:{other}/", "name": "other-port"},
        {"url": "file:///etc/passwd", "name": "a-file"},
        {"url": "http://127.0.0.1:1/", "name": "../../escaped"},
    ]
    with MessagesServer(responder) as server:
        backend = ClaudeBackend(env=server.env())
        context = Context(wave.pack, backend, EventStream(wave.events.append), browser=CHROMIUM)
        options = ExecuteWaveOptions(tasks=wave.tasks_path, repo=repo.path, viewport=VIEWPORT)
        result = run_execute_wave(options, context)

    (task,) = result.tasks
    assert task.status == "committed", task
    assert responder.others.unplayed() == [] and server.unscripted == 0
    assert wave.file("site/index.html") == page(RED, "Hello")
    request = responder.last
    assert request is not None
    assert SHOT in request.tool_names and {"Edit", "Write", "Bash"} <= set(request.tool_names)
    assert f"screenshot_tool: {SHOT}" in request.system
    # The tool's picture: the executor's edit, as its own dev server serves it, in its worktree,
    # and shown to the model beside the tool's answer.
    own, *hostile = request.tool_results()[-4:]
    assert not own.get("is_error"), own
    answer = json.loads(_texts(own)[0])
    assert answer["ok"] is True and answer["path"] == ".fixloop/shots/self-check.png"
    worktree = re.search(r"^worktree: (\S+)$", request.system, re.MULTILINE)
    assert worktree and answer["file"] == f"{worktree.group(1)}/.fixloop/shots/self-check.png"
    assert banner(looks_right(tmp_path / "self-check.png")) == RED
    assert _images(own) == [(tmp_path / "self-check.png").read_bytes()]
    # The hostile calls: tool errors the model reads, and no picture anywhere.
    errors = [json.loads(_texts(result)[0]) for result in hostile]
    assert all(result.get("is_error") for result in hostile), hostile
    assert [e["error"] for e in errors] == ["refused", "refused", "bad_name"]
    assert not list(tmp_path.rglob("escaped*")) and not list(repo.path.rglob("escaped*"))
    assert wave.leftovers() == []
