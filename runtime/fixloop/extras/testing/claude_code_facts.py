"""The names Claude Code accepts, read out of the CLI bundled in claude-agent-sdk.

`fixloop validate` judges tool names, model aliases and frontmatter keys the way Claude Code
does. Those lists change with every CLI release, so they are not typed in by hand: this module
reads them from the bundled binary (a JavaScript bundle: the lists are array and object literals
in it) and writes `fixloop/documents/claude_code_names.py`. The slim install has no CLI, which is
why the result is committed rather than read at run time; a test reads the binary again and fails
when the committed names are stale.

    python -m fixloop.extras.testing.claude_code_facts      # after upgrading claude-agent-sdk
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from fixloop.extras.testing.claude_cli import bundled_cli

TARGET = Path(__file__).resolve().parents[2] / "documents" / "claude_code_names.py"

# The tool list: an array of 20+ tool names holding both TaskCreate and AskUserQuestion.
_NAME_ARRAY = re.compile(rb'\[(?:"[A-Za-z_]+",){20,}"[A-Za-z_]+"\]')
# Old tool names and what they became: `{Task:"Agent",KillShell:"TaskStop",…}`.
_ALIASES = re.compile(rb'\{Task:"Agent"(?:,[A-Za-z]+:"[A-Za-z]+")*\}')
# Model aliases: the array that holds "opusplan".
_MODELS = re.compile(rb'\[(?:"[a-z0-9\[\]]+",)*"opusplan"(?:,"[a-z0-9\[\]]+")*\]')
# Every frontmatter key any document kind knows: 30+ keys, among them argument-hint.
_KEY_ARRAY = re.compile(rb'\[(?:"[A-Za-z_-]+",){30,}"[A-Za-z_-]+"\]')
# Hook events: arrays of event names holding PreToolUse and SessionStart.
_EVENT_ARRAY = re.compile(rb'\[(?:"[A-Za-z]+",){8,}"[A-Za-z]+"\]')
# Effort levels: the longest array of them (`["low","medium","high","xhigh","max"]`).
_EFFORTS = re.compile(rb'\["low","medium","high"(?:,"[a-z]+")*\]')
# Agent colours: `{red:"red_FOR_SUBAGENTS_ONLY",…}`, the theme names of the agents panel.
_COLORS = re.compile(rb'\{(?:[a-z]+:"[a-z]+_FOR_SUBAGENTS_ONLY",?)+\}')
# The agent frontmatter schema: `u({name:Ek().describe("Agent identifier…` … `})`.
_AGENT_SCHEMA = b'({name:Ek().describe("Agent identifier'


@dataclass(frozen=True)
class Facts:
    version: str
    tools: frozenset[str]
    tool_aliases: dict[str, str]
    model_aliases: frozenset[str]
    agent_keys: frozenset[str]
    frontmatter_keys: frozenset[str]
    hook_events: frozenset[str]
    agent_colors: tuple[str, ...]
    efforts: tuple[str, ...]


def _strings(array: bytes) -> list[str]:
    return re.findall(r'"([^"]+)"', array.decode())


def _object_keys(data: bytes, start: int) -> list[str]:
    """The top-level keys of the JavaScript object literal that opens at `start` (`{`)."""
    keys: list[str] = []
    depth = 0
    quote: int | None = None
    index = start
    while index < len(data):
        char = data[index]
        if quote is not None:
            if char == 0x5C:  # backslash: skip the escaped character
                index += 1
            elif char == quote:
                quote = None
        elif char in b"\"'`":
            quote = char
        elif char in b"({[":
            depth += 1
        elif char in b")}]":
            depth -= 1
            if depth == 0:
                return keys
        elif depth == 1 and (index == start + 1 or data[index - 1] == 0x2C):
            key = re.match(rb"[A-Za-z_][A-Za-z0-9_]*(?=:)", data[index : index + 64])
            if key:
                keys.append(key.group(0).decode())
        index += 1
    return keys


def read_facts(binary: Path | None = None) -> Facts:
    path = binary or bundled_cli()
    data = path.read_bytes()
    tools: set[str] = set()
    for match in _NAME_ARRAY.finditer(data):
        if b'"TaskCreate"' in match.group(0) and b'"AskUserQuestion"' in match.group(0):
            tools |= set(_strings(match.group(0)))
    aliases_match = _ALIASES.search(data)
    aliases_text = aliases_match.group(0).decode() if aliases_match else ""
    aliases = dict(re.findall(r'([A-Za-z]+):"([A-Za-z]+)"', aliases_text))
    models = {m for found in _MODELS.finditer(data) for m in _strings(found.group(0))}
    frontmatter: set[str] = set()
    for match in _KEY_ARRAY.finditer(data):
        if b'"argument-hint"' in match.group(0) and b'"disallowedTools"' in match.group(0):
            frontmatter |= set(_strings(match.group(0)))
    events: set[str] = set()
    for match in _EVENT_ARRAY.finditer(data):
        if b'"PreToolUse"' in match.group(0) and b'"SessionStart"' in match.group(0):
            events |= set(_strings(match.group(0)))
    colors_match = _COLORS.search(data)
    colors = re.findall(r'([a-z]+):"', colors_match.group(0).decode()) if colors_match else []
    efforts = max((_strings(m.group(0)) for m in _EFFORTS.finditer(data)), key=len, default=[])
    schema = data.find(_AGENT_SCHEMA)
    agent_keys = set(_object_keys(data, schema + 1)) if schema >= 0 else set()
    version = subprocess.run(
        [str(path), "--version"], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()[0]
    found = (tools, aliases, models, frontmatter, agent_keys, events, colors, efforts)
    if not all(found):
        raise LookupError(f"the names were not found in {path}: the bundle changed its shape")
    return Facts(
        version,
        frozenset(tools),
        aliases,
        frozenset(models),
        frozenset(agent_keys),
        frozenset(frontmatter),
        frozenset(events),
        tuple(colors),
        tuple(efforts),
    )


def _names(values: frozenset[str]) -> str:
    return "".join(f'        "{value}",\n' for value in sorted(values))


def render(facts: Facts) -> str:
    aliases = "".join(f'    "{k}": "{v}",\n' for k, v in sorted(facts.tool_aliases.items()))
    colors = "".join(f'    "{color}",\n' for color in facts.agent_colors)
    efforts = "".join(f'    "{effort}",\n' for effort in facts.efforts)
    return (
        f'"""What Claude Code {facts.version} accepts, read from its binary. Generated: do not '
        "edit.\n"
        "\n"
        "Regenerate after upgrading claude-agent-sdk: "
        "`python -m fixloop.extras.testing.claude_code_facts`\n"
        "(tests/extras/testing/test_claude_code_facts.py fails when this is stale).\n"
        '"""\n'
        "\n"
        f'CLAUDE_CODE_VERSION = "{facts.version}"\n'
        "# Tool names an agent's `tools:` or a command's `allowed-tools:` may name.\n"
        f"TOOLS = frozenset(\n    {{\n{_names(facts.tools)}    }}\n)\n"
        "# Old names Claude Code still accepts, and the tool each became.\n"
        f"TOOL_ALIASES = {{\n{aliases}}}\n"
        "# `model:` aliases (besides `inherit` and full model ids).\n"
        f"MODEL_ALIASES = frozenset(\n    {{\n{_names(facts.model_aliases)}    }}\n)\n"
        "# The keys of agent frontmatter.\n"
        f"AGENT_KEYS = frozenset(\n    {{\n{_names(facts.agent_keys)}    }}\n)\n"
        "# Every frontmatter key some kind of document (agent, command, skill) knows.\n"
        f"FRONTMATTER_KEYS = frozenset(\n    {{\n{_names(facts.frontmatter_keys)}    }}\n)\n"
        "# Colours the agents panel shows, in its order (any other value is dropped).\n"
        f"AGENT_COLORS = (\n{colors})\n"
        "# `effort:` levels (an agent may also give a whole number).\n"
        f"EFFORTS = (\n{efforts})\n"
        "# Events a hooks.json may hook.\n"
        f"HOOK_EVENTS = frozenset(\n    {{\n{_names(facts.hook_events)}    }}\n)\n"
    )


def main() -> None:
    TARGET.write_text(render(read_facts()), encoding="utf-8")
    print(f"wrote {TARGET}")


if __name__ == "__main__":
    main()
