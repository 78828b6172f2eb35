"""Typed frontmatter of the pack's documents (pydantic), checking what Claude Code does not.

Claude Code silently drops an unknown `color`, accepts any `model` string and never checks that
a tool exists. These specs make each of those a located error. Our own `fixloop:` blocks forbid
unknown keys, so a typo there is an error too; unknown top-level keys are only warned about,
because Claude Code grows new ones.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from fixloop.documents.tools import parse_tool, split_tools

COLORS = ("red", "blue", "green", "yellow", "purple", "orange", "pink", "cyan")
MODEL_ALIASES = ("sonnet", "opus", "haiku", "inherit")
_MODEL_ID = re.compile(r"^claude-[a-z0-9][a-z0-9.-]*$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")

InputType = Literal["string", "integer", "number", "boolean", "list", "object"]

AGENT_KEYS = frozenset(
    {
        "name", "description", "tools", "disallowedTools", "model", "color", "maxTurns",
        "isolation", "permissionMode", "hooks", "mcpServers", "skills", "effort", "memory",
        "fixloop",
    }
)  # fmt: skip
COMMAND_KEYS = frozenset(
    {
        "description", "argument-hint", "allowed-tools", "model", "disable-model-invocation",
        "fixloop",
    }
)  # fmt: skip


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


def _known_tools(value: object) -> list[str]:
    """A `tools:`-style value as entries, every one a tool Claude Code knows."""
    entries = split_tools(value)
    unknown = [entry for entry in entries if parse_tool(entry) is None]
    if unknown:
        raise ValueError(f"unknown tool {', '.join(repr(u) for u in unknown)}")
    return entries


class AgentExtension(Strict):
    inputs: dict[str, InputSpec] = Field(default_factory=dict)
    output: str | None = None


class AgentSpec(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    name: Name
    description: Annotated[str, Field(min_length=1)]
    tools: list[str] = Field(default_factory=list)
    disallowed_tools: list[str] = Field(default_factory=list, alias="disallowedTools")
    model: str = "inherit"
    color: Literal["red", "blue", "green", "yellow", "purple", "orange", "pink", "cyan"] | None = (
        None
    )
    max_turns: int | None = Field(default=None, alias="maxTurns", ge=1)
    isolation: Literal["worktree"] | None = None
    fixloop: AgentExtension = Field(default_factory=AgentExtension)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _check_name(value)

    @field_validator("tools", "disallowed_tools", mode="before")
    @classmethod
    def _tools(cls, value: object) -> list[str]:
        return _known_tools(value)

    @field_validator("model")
    @classmethod
    def _model(cls, value: str) -> str:
        if value in MODEL_ALIASES or _MODEL_ID.match(value):
            return value
        raise ValueError(
            f"unknown model {value!r}: use {', '.join(MODEL_ALIASES)} or a claude-* model id"
        )


class CommandExtension(Strict):
    workflow: str | None = None
    agents: list[str] = Field(default_factory=list)


class CommandSpec(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    description: Annotated[str, Field(min_length=1)]
    argument_hint: str | None = Field(default=None, alias="argument-hint")
    allowed_tools: list[str] = Field(default_factory=list, alias="allowed-tools")
    model: str | None = None
    fixloop: CommandExtension = Field(default_factory=CommandExtension)

    @field_validator("allowed_tools", mode="before")
    @classmethod
    def _tools(cls, value: object) -> list[str]:
        return _known_tools(value)


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


class Author(Strict):
    name: Annotated[str, Field(min_length=1)]
    email: str | None = None
    url: str | None = None


class Manifest(BaseModel):
    """plugin.json; unknown keys are Claude Code's business and pass through untouched."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: Name
    version: str
    description: Annotated[str, Field(min_length=1)]
    author: Author
    license: str | None = None
    homepage: str | None = None
    repository: str | None = None
    keywords: list[str] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _check_name(value)
