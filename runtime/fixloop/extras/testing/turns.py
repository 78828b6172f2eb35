"""What the scripted model says: one `Turn` per model call, built with small constructors.

    [tool_use("Read", {"file_path": "a.py"}), structured({"output": {...}})]

A turn is a list of content blocks (text, tool calls) or an API error, optionally held back for
a while. `MessagesServer` streams it to the CLI as the Messages API would.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TextBlock:
    text: str


@dataclass(frozen=True)
class ToolUseBlock:
    name: str
    input: Mapping[str, Any]
    id: str = ""


Block = TextBlock | ToolUseBlock


@dataclass(frozen=True)
class Turn:
    """One model answer: content blocks, or an API error; optionally after a delay."""

    blocks: tuple[Block, ...] = ()
    input_tokens: int = 100
    output_tokens: int = 20
    delay_s: float = 0.0
    error_status: int | None = None
    error_type: str = ""
    error_message: str = ""

    @property
    def stop_reason(self) -> str:
        has_tool = any(isinstance(block, ToolUseBlock) for block in self.blocks)
        return "tool_use" if has_tool else "end_turn"


def text(message: str, *, input_tokens: int = 100, output_tokens: int = 20) -> Turn:
    """A final answer: a text block that ends the turn."""
    return Turn((TextBlock(message),), input_tokens, output_tokens)


def tool_use(
    name: str,
    tool_input: Mapping[str, Any],
    *,
    say: str = "",
    input_tokens: int = 100,
    output_tokens: int = 20,
) -> Turn:
    """A tool call (optionally preceded by a line of text); the CLI runs it and calls back."""
    blocks: tuple[Block, ...] = (TextBlock(say),) if say else ()
    return Turn((*blocks, ToolUseBlock(name, dict(tool_input))), input_tokens, output_tokens)


def tool_uses(*calls: tuple[str, Mapping[str, Any]]) -> Turn:
    """Several tool calls in one answer (the CLI runs them, then sends all results back)."""
    return Turn(tuple(ToolUseBlock(name, dict(args)) for name, args in calls))


STRUCTURED_OUTPUT_TOOL = "StructuredOutput"


def structured(data: object, *, input_tokens: int = 100, output_tokens: int = 20) -> Turn:
    """The final structured result: the CLI offers a `StructuredOutput` tool when asked for a
    JSON-schema output format, and takes its input as `ResultMessage.structured_output`."""
    payload = data if isinstance(data, Mapping) else {"output": data}
    return tool_use(
        STRUCTURED_OUTPUT_TOOL, payload, input_tokens=input_tokens, output_tokens=output_tokens
    )


def error(status: int, error_type: str, message: str) -> Turn:
    """An API error answer (e.g. 400 invalid_request_error, 529 overloaded_error)."""
    return Turn(error_status=status, error_type=error_type, error_message=message)


def slow(turn: Turn, delay_s: float) -> Turn:
    """The same answer, sent only after `delay_s` seconds (for timeouts and budgets)."""
    return Turn(
        turn.blocks,
        turn.input_tokens,
        turn.output_tokens,
        delay_s,
        turn.error_status,
        turn.error_type,
        turn.error_message,
    )
