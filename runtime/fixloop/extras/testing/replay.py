"""Replaying a scripted-backend script through the real Claude Code CLI.

A script written for `ScriptedBackend` (call key → edits and output) becomes the moves a model
would make: call the workflow's own tools its `tools:` name (`mcp__fixloop__<name>`, a
`"@last"` version copied from the last tool result about that path, as a model copies it), read
each file it edits, `Edit`/`Write` it (or `rm` it), then return the output through the
StructuredOutput tool. The claude backend tags every model request with its call key
(the `X-Fixloop-Call` header), so `ScriptReplay` answers each call by key, as the scripted backend
does, however the workflow orders its calls. One script, both backends: a test can run a
workflow on each and compare.

    with MessagesServer(ScriptReplay(script)) as server:
        ...run with ClaudeBackend(env=server.env())...
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from collections.abc import Mapping
from typing import Any

from fixloop.agents.scripted import ScriptedReply, parse_script
from fixloop.agents.toolbox import latest_versions, qualified, with_version
from fixloop.extras.testing.responders import RecordedRequest
from fixloop.extras.testing.turns import (
    STRUCTURED_OUTPUT_TOOL,
    ToolUseBlock,
    Turn,
    error,
    slow,
    structured,
    text,
    tool_use,
)

# The CLI insists once on a structured answer before giving up on prose; two covers both asks.
_PROSE_REPEATS = 2
_TIMEOUT_DELAY_S = 3600.0


def wants_wrapper(request: RecordedRequest) -> bool:
    """True when the role's schema was wrapped as `{"output": ...}` by the claude backend."""
    tool = request.tool(STRUCTURED_OUTPUT_TOOL)
    schema = (tool or {}).get("input_schema") or {}
    return set(schema.get("properties") or {}) == {"output"} and schema.get("required") == [
        "output"
    ]


def reply_turns(reply: ScriptedReply, *, wrap: bool) -> list[Turn]:
    """The tool calls and final answer a model would make to play `reply`."""
    paths = list(dict.fromkeys(edit.path for edit in reply.edits if not edit.delete))
    turns = [tool_use(qualified(call.name), call.input) for call in reply.tools]
    turns += [tool_use("Read", {"file_path": path}) for path in paths]
    for edit in reply.edits:
        if edit.delete:
            turns.append(tool_use("Bash", {"command": f"rm -- {shlex.quote(edit.path)}"}))
        elif edit.content is not None:
            turns.append(tool_use("Write", {"file_path": edit.path, "content": edit.content}))
        else:
            change = {"file_path": edit.path, "old_string": edit.old, "new_string": edit.new}
            turns.append(tool_use("Edit", change))
    if reply.fail == "crash":
        return [*turns, error(529, "overloaded_error", "scripted crash")]
    if reply.fail == "timeout":
        return [*turns, slow(text("too late"), _TIMEOUT_DELAY_S)]
    if reply.fail == "malformed":
        return [*turns, *[text(reply.raw or "I could not finish.")] * _PROSE_REPEATS]
    output = reply.output
    if isinstance(output, str):
        output = json.loads(output)
    return [*turns, structured({"output": output} if wrap else output)]


def _result_texts(request: RecordedRequest) -> list[str]:
    texts: list[str] = []
    for result in request.tool_results():
        content = result.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [str(b.get("text", "")) for b in content if isinstance(b, dict)]
    return texts


def _versions_copied(turn: Turn, request: RecordedRequest) -> Turn:
    """The turn with each `"@last"` version replaced by the one the tool results reported."""
    if not any(isinstance(b, ToolUseBlock) and b.input.get("version") for b in turn.blocks):
        return turn
    versions = latest_versions(_result_texts(request))
    blocks = tuple(
        ToolUseBlock(b.name, with_version(b.input, versions), b.id)
        if isinstance(b, ToolUseBlock)
        else b
        for b in turn.blocks
    )
    return dataclasses.replace(turn, blocks=blocks)


class ScriptReplay:
    """A responder playing a scripted-backend script, call by call, keyed by `X-Fixloop-Call`."""

    def __init__(self, script: Mapping[str, Any], *, origin: str = "<script>") -> None:
        self.replies = parse_script(script, origin)
        self.started: dict[str, int] = {}

    def __call__(self, request: RecordedRequest) -> Turn:
        key = request.call_key
        answered = sum(1 for message in request.messages if message.get("role") == "assistant")
        if answered == 0:
            self.started[key] = self.started.get(key, 0) + 1
        index = self.started.get(key, 0) - 1
        replies = self.replies.get(key, [])
        if not 0 <= index < len(replies):
            return error(500, "api_error", f"fixloop ScriptReplay: no scripted reply for {key!r}")
        turns = reply_turns(replies[index], wrap=wants_wrapper(request))
        if answered >= len(turns):
            return error(500, "api_error", f"fixloop ScriptReplay: {key!r} has no turn left")
        return _versions_copied(turns[answered], request)

    def unplayed(self) -> list[str]:
        """Keys with replies no call asked for (a finished run usually leaves none)."""
        return sorted(
            key for key, replies in self.replies.items() if self.started.get(key, 0) < len(replies)
        )


__all__ = ["ScriptReplay", "reply_turns", "wants_wrapper"]
