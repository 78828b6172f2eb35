"""Replaying a scripted-backend script through the openai backend, as Chat Completions tool calls.

The Chat Completions twin of `replay.ScriptReplay`: a script written for `ScriptedBackend` (call
key → tools, edits, bash and output) becomes the moves a model would make through fixloop's own
tools: call the lent tools its `tools:` name (a `"@last"` version copied from the last tool
result about that path), `Read` each file it edits, `Write` or `Edit` it (`Bash rm` to delete),
run its `bash:` lines with `Bash`, then answer through `submit_result`. The openai backend tags
every request with its call key (`X-Fixloop-Call`), so each call is answered by key however the
workflow orders its calls. One script, three backends: a test can run a workflow on each.

    with ChatServer(ChatReplay(script)) as server:
        ...fixloop … --backend openai --base-url server.base_url...
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from typing import Any

from fixloop.agents.scripted import ScriptedReply, parse_script
from fixloop.agents.toolbox import latest_versions, with_version
from fixloop.extras.testing.chat_server import ChatRequest, ChatTurn, call, failure, say, slow

SUBMIT = "submit_result"  # the openai backend's answer tool
_TIMEOUT_DELAY_S = 3600.0


def wants_wrapper(request: ChatRequest) -> bool:
    """True when the role's schema was wrapped as `{"output": ...}` (a union, say)."""
    schema = (request.tool(SUBMIT) or {}).get("parameters") or {}
    return set(schema.get("properties") or {}) == {"output"}


def reply_turns(reply: ScriptedReply, *, wrap: bool) -> list[ChatTurn]:
    """The tool calls and final answer a model would make to play `reply`."""
    paths = list(dict.fromkeys(edit.path for edit in reply.edits if not edit.delete))
    turns = [call(tool.name, tool.input) for tool in reply.tools]
    turns += [call("Read", {"file_path": path}) for path in paths]
    for edit in reply.edits:
        if edit.delete:
            turns.append(call("Bash", {"command": f"rm -- {shlex.quote(edit.path)}"}))
        elif edit.content is not None:
            turns.append(call("Write", {"file_path": edit.path, "content": edit.content}))
        else:
            change = {"file_path": edit.path, "old_string": edit.old, "new_string": edit.new}
            turns.append(call("Edit", change))
    turns += [call("Bash", {"command": line}) for line in reply.bash]
    if reply.fail == "crash":
        return [*turns, failure(500, "scripted crash")]
    if reply.fail == "timeout":
        return [*turns, slow(say("too late"), _TIMEOUT_DELAY_S)]
    if reply.fail == "malformed":
        return [*turns, say(reply.raw or "I could not finish."), say("Still no result.")]
    output = reply.output
    if isinstance(output, str):
        output = json.loads(output)
    return [*turns, call(SUBMIT, {"output": output} if wrap else output)]


def _versions_copied(turn: ChatTurn, request: ChatRequest) -> ChatTurn:
    """The turn with each `"@last"` version replaced by the one the tool results reported."""
    versions = latest_versions(request.tool_results())
    resolved: list[tuple[str, Mapping[str, Any] | str]] = [
        (name, with_version(arguments, versions) if isinstance(arguments, Mapping) else arguments)
        for name, arguments in turn.tool_calls
    ]
    return ChatTurn(
        turn.content,
        tuple(resolved),
        turn.prompt_tokens,
        turn.completion_tokens,
        turn.delay_s,
        turn.error_status,
        turn.error_message,
    )


class ChatReplay:
    """A responder playing a scripted-backend script, call by call, keyed by `X-Fixloop-Call`."""

    def __init__(self, script: Mapping[str, Any], *, origin: str = "<script>") -> None:
        self.replies = parse_script(script, origin)
        self.started: dict[str, int] = {}

    def __call__(self, request: ChatRequest) -> ChatTurn:
        key = request.call_key
        answered = request.answered
        if answered == 0 and request.retry == 0:  # a retry is the same call, not the next
            self.started[key] = self.started.get(key, 0) + 1
        index = self.started.get(key, 0) - 1
        replies = self.replies.get(key, [])
        if not 0 <= index < len(replies):
            return failure(500, f"fixloop ChatReplay: no scripted reply for {key!r}")
        turns = reply_turns(replies[index], wrap=wants_wrapper(request))
        if answered >= len(turns):
            return failure(500, f"fixloop ChatReplay: {key!r} has no turn left")
        return _versions_copied(turns[answered], request)

    def unplayed(self) -> list[str]:
        """Keys with replies no call asked for (a finished run usually leaves none)."""
        return sorted(
            key for key, replies in self.replies.items() if self.started.get(key, 0) < len(replies)
        )


__all__ = ["SUBMIT", "ChatReplay", "reply_turns", "wants_wrapper"]
