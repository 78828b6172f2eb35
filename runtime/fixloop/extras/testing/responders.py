"""What the scripted server received, and responders that choose the next turn from it.

`RecordedRequest` wraps one request body with the helpers tests assert on (system prompt, tool
names, user texts, tool results). A responder maps a request to a `Turn`; `Conversations` is the
one for runs that make several agent calls whose order depends on the run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from fixloop.agents.backend import CALL_HEADER
from fixloop.extras.testing.turns import Turn, error

JsonObject = dict[str, Any]


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received, with helpers for what tests usually assert on."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: JsonObject
    scripted: bool  # True when it consumed a scripted turn

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def system(self) -> str:
        """The system prompt as one string (the API allows a string or a list of text blocks)."""
        system = self.body.get("system", "")
        if isinstance(system, str):
            return system
        return "\n".join(str(part.get("text", "")) for part in system if isinstance(part, dict))

    @property
    def call_key(self) -> str:
        """The agent call this request belongs to, as the claude backend tagged it ('' if not)."""
        for name, value in self.headers.items():
            if name.lower() == CALL_HEADER.lower():
                return unquote(value)
        return ""

    @property
    def tools(self) -> list[JsonObject]:
        return [tool for tool in self.body.get("tools", []) if isinstance(tool, dict)]

    @property
    def tool_names(self) -> list[str]:
        return [str(tool.get("name", "")) for tool in self.tools]

    def tool(self, name: str) -> JsonObject | None:
        return next((tool for tool in self.tools if tool.get("name") == name), None)

    @property
    def messages(self) -> list[JsonObject]:
        return [message for message in self.body.get("messages", []) if isinstance(message, dict)]

    def user_texts(self) -> list[str]:
        """Every text the user side sent in this conversation, in order."""
        found: list[str] = []
        for message in self.messages:
            if message.get("role") != "user":
                continue
            content = message.get("content")
            if isinstance(content, str):
                found.append(content)
                continue
            for block in content or []:
                if isinstance(block, dict) and block.get("type") == "text":
                    found.append(str(block.get("text", "")))
        return found

    def tool_results(self) -> list[JsonObject]:
        """The `tool_result` blocks the CLI sent back, oldest first."""
        return [
            block
            for message in self.messages
            if message.get("role") == "user" and isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]


Responder = Callable[[RecordedRequest], Turn]


class Conversations:
    """A responder for runs that make several agent calls (a fixer, then a verifier, …).

    `key(request)` names the script a request belongs to, typically the role read from the system
    prompt. A request with no assistant turn yet starts that key's next conversation; later
    requests of the same call get the conversation's next turn, counted by the assistant turns
    already in the request. A call beyond its key's scripts gets an API error, so a run that
    asks more than the test expected fails loudly.
    """

    def __init__(
        self,
        scripts: Mapping[str, Sequence[Sequence[Turn]]],
        key: Callable[[RecordedRequest], str],
    ) -> None:
        self.scripts = {name: [list(turns) for turns in calls] for name, calls in scripts.items()}
        self.key = key
        self.started: dict[str, int] = {}

    def __call__(self, request: RecordedRequest) -> Turn:
        name = self.key(request)
        calls = self.scripts.get(name, [])
        answered = sum(1 for message in request.messages if message.get("role") == "assistant")
        if answered == 0:
            self.started[name] = self.started.get(name, 0) + 1
        index = self.started.get(name, 0) - 1
        if not 0 <= index < len(calls) or answered >= len(calls[index]):
            where = f"call {index + 1}, turn {answered + 1}"
            return error(500, "api_error", f"fixloop Conversations: no turn for {name!r} ({where})")
        return calls[index][answered]

    @property
    def unplayed(self) -> dict[str, int]:
        """Scripted calls per key that never started (a finished test usually expects none)."""
        return {
            name: len(calls) - self.started.get(name, 0)
            for name, calls in self.scripts.items()
            if len(calls) > self.started.get(name, 0)
        }
