"""Typed frontmatter of the pack's documents (pydantic): the values the runtime works with.

What Claude Code accepts, refuses or drops (tool names, models, colours, unknown keys) is judged
before these models see the data, in `claude_code.py`, so the specs hold only values Claude Code
would load. Our own `fixloop:` blocks forbid unknown keys, so a typo there is an error.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")

InputType = Literal["string", "integer", "number", "boolean", "list", "object"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class InputSpec(Strict):
    type: InputType
    description: str = ""
    required: bool = True
    default: Any = None
    pattern: str | None = None

    @field_validator("pattern")
    @classmethod
    def _pattern_compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"pattern is not a valid regular expression: {exc}") from None
        return value


def _check_name(value: str) -> str:
    if ":" in value:
        raise ValueError("must not contain ':' (Claude Code namespaces names as pack:name)")
    if not _NAME.match(value):
        raise ValueError("must be kebab-case: lower-case letters, digits and '-'")
    return value


Name = Annotated[str, Field(min_length=1)]


class AgentExtension(Strict):
    inputs: dict[str, InputSpec] = Field(default_factory=dict)
    output: str | None = None


class AgentSpec(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    name: Name
    description: str = ""
    tools: list[str] = Field(default_factory=list)
    disallowed_tools: list[str] = Field(default_factory=list, alias="disallowedTools")
    model: str = "inherit"
    color: str | None = None
    max_turns: int | None = Field(default=None, alias="maxTurns", ge=1)
    isolation: Literal["worktree"] | None = None
    fixloop: AgentExtension = Field(default_factory=AgentExtension)


class CommandExtension(Strict):
    workflow: str | None = None
    agents: list[str] = Field(default_factory=list)


class CommandSpec(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    description: str = ""
    argument_hint: str | None = Field(default=None, alias="argument-hint")
    allowed_tools: list[str] = Field(default_factory=list, alias="allowed-tools")
    model: str | None = None
    fixloop: CommandExtension = Field(default_factory=CommandExtension)


class SkillSpec(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    name: Name
    description: str = ""
    allowed_tools: list[str] = Field(default_factory=list, alias="allowed-tools")


class WorkflowSpec(Strict):
    name: Name
    description: Annotated[str, Field(min_length=1)]
    inputs: dict[str, InputSpec] = Field(default_factory=dict)
    outputs: dict[str, str] = Field(default_factory=dict)
    agents: list[str] = Field(default_factory=list)
    # Owned by the contract checker (fixloop.checker); kept raw here so the pack model does not
    # depend on it.
    contracts: list[dict[str, Any]] = Field(default_factory=list)
    checker: dict[str, Any] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _check_name(value)


class Manifest(BaseModel):
    """plugin.json as the runtime needs it; Claude Code's own rules are in `claude_code.py`."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: Name
    version: str | None = None
    description: str | None = None
