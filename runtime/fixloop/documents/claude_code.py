"""What Claude Code does with a pack's frontmatter and JSON files: refuse, ignore, or coerce.

`fixloop validate` must not reject what Claude Code loads, so every value is judged by what the
bundled CLI does with it (observed with `claude plugin validate` and a headless start; the names
come from `claude_code_names.py`, read from the CLI itself):

- Claude Code REFUSES frontmatter that does not parse even after its lenient re-read, frontmatter
  that is not a mapping, a `name` that is not text, a `description` that is a list or mapping, a
  command's `allowed-tools` that is not text or a list of text, and a manifest, `hooks.json` or
  `.mcp.json` that does not fit its schema. These are errors in every profile.
- Claude Code IGNORES an unknown tool, colour, `maxTurns`, `isolation`, `memory` or `effort`
  value, and keys it does not know: the agent loads without them. A warning by default; under the
  `fixloop` profile an error, because fixloop's runtime would run the agent differently.
- Claude Code COERCES a number or a boolean `description` to text, takes the file name as the
  name when there is none, reads `argument-hint: [x]` (a YAML list) as text, and re-reads YAML that
  does not parse after quoting values that hold `: `, `#`, `[` and the like. Accepted silently, or
  a warning for the re-read, which says what the author may not have meant.
- fixloop's HOUSE rules (a kebab-case name equal to the file name, required descriptions, a full
  manifest) apply only under the `fixloop` profile.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from enum import Enum
from typing import Any

from fixloop.documents.claude_code_names import (
    AGENT_COLORS,
    AGENT_KEYS,
    CLAUDE_CODE_VERSION,
    EFFORTS,
    FRONTMATTER_KEYS,
    HOOK_EVENTS,
    MODEL_ALIASES,
)
from fixloop.documents.located_yaml import KeyPath
from fixloop.documents.tools import parse_tool, split_tools
from fixloop.records import record

# fixloop's own frontmatter keys, which Claude Code ignores.
FIXLOOP_KEYS = frozenset({"fixloop", "contracts", "checker"})
COLORS = AGENT_COLORS
MEMORY_SCOPES = ("user", "project", "local")
_MODEL_ID = re.compile(r"^claude-[a-z0-9][a-z0-9.-]*(?:\[1m\])?$")
_KEBAB = re.compile(r"^[a-z0-9][a-z0-9-]*$")
# Characters that make Claude Code quote a plain value before its second YAML read.
_LOSSY = re.compile(r"[{}\[\]*&#!|>%@`]|: ")
_PLAIN_KEY_LINE = re.compile(r"^([a-zA-Z_-]+):\s+(\S.*)$")


class Level(Enum):
    REFUSED = "refused"  # Claude Code refuses it: an error in every profile
    IGNORED = "ignored"  # Claude Code loads the document without it: warning, or error (fixloop)
    NOTE = "note"  # Claude Code accepts it, maybe not as meant: a warning in every profile
    HOUSE = "house"  # fixloop's own rule: an error under the fixloop profile, else silent


@record(frozen=True)
class Finding:
    keys: KeyPath
    message: str
    level: Level
    rule: str = "frontmatter"


def quote_lossy_values(raw: str) -> tuple[str, list[str]] | None:
    """Claude Code's second reading of frontmatter that does not parse: the values of top-level
    `key: value` lines holding YAML syntax characters are quoted. The text and the quoted keys, or
    None when there was nothing to quote."""
    lines: list[str] = []
    quoted: list[str] = []
    for line in raw.split("\n"):
        match = _PLAIN_KEY_LINE.match(line)
        value = match[2] if match else ""
        keep = (
            not match
            or value[:1] + value[-1:] in ('""', "''")
            or (value.startswith("[") and value.endswith("]"))
            or not _LOSSY.search(value)
        )
        if keep:
            lines.append(line)
            continue
        assert match is not None
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        lines.append(f'{match[1]}: "{escaped}"')
        quoted.append(match[1])
    if not quoted:
        return None
    text = "\n".join(re.sub(r"^\t+", lambda m: "  " * len(m[0]), x) for x in lines)
    return text, quoted


def _text_value(
    meta: dict[str, Any], key: str, findings: list[Finding], refuse_lists: bool = True
) -> str | None:
    value = meta.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        findings.append(Finding((key,), f"expected text, got {value!r}", Level.HOUSE))
        return str(value).lower() if isinstance(value, bool) else str(value)
    level = Level.REFUSED if refuse_lists else Level.IGNORED
    kind = "a list" if isinstance(value, list) else "a mapping"
    findings.append(Finding((key,), f"expected text, got {kind}; Claude Code drops it", level))
    return None


def _tools(meta: dict[str, Any], key: str, findings: list[Finding], refused: bool) -> list[str]:
    value = meta.get(key)
    try:
        entries = split_tools(value)
    except ValueError as exc:
        findings.append(Finding((key,), str(exc), Level.REFUSED if refused else Level.IGNORED))
        return []
    unknown = [entry for entry in entries if parse_tool(entry) is None]
    if unknown:
        names = ", ".join(repr(u) for u in unknown)
        message = f"{names}: no such tool in Claude Code {CLAUDE_CODE_VERSION}; it is not granted"
        findings.append(Finding((key,), message, Level.IGNORED))
    return [entry for entry in entries if parse_tool(entry) is not None]


def valid_model(text: str) -> bool:
    """A `model:` value Claude Code takes: inherit, an alias it knows, or a claude-* id."""
    return text.lower() == "inherit" or text in MODEL_ALIASES or bool(_MODEL_ID.match(text))


def _model(meta: dict[str, Any], findings: list[Finding]) -> str | None:
    value = meta.get("model")
    if value is None:
        return None
    text = str(value).strip()
    if valid_model(text):
        return "inherit" if text.lower() == "inherit" else text
    aliases = ", ".join(sorted(MODEL_ALIASES))
    message = f"unknown model {text!r}: use inherit, {aliases} or a claude-* id"
    findings.append(Finding(("model",), message, Level.IGNORED))
    return None


def _choice(
    meta: dict[str, Any], key: str, allowed: Iterable[str], findings: list[Finding]
) -> str | None:
    value = meta.get(key)
    if value is None:
        return None
    options = tuple(allowed)
    if isinstance(value, str) and value in options:
        return value
    message = f"unknown value {value!r}: Claude Code ignores it (use {', '.join(options)})"
    findings.append(Finding((key,), message, Level.IGNORED))
    return None


def _positive_int(meta: dict[str, Any], key: str, findings: list[Finding]) -> int | None:
    value = meta.get(key)
    if value is None:
        return None
    number = value if isinstance(value, int) and not isinstance(value, bool) else None
    if isinstance(value, str) and value.strip().isdigit():
        number = int(value)
    if number is not None and number > 0:
        return number
    message = f"{value!r} is not a positive whole number; Claude Code ignores it"
    findings.append(Finding((key,), message, Level.IGNORED))
    return None


def _name(meta: dict[str, Any], default: str, findings: list[Finding]) -> str:
    value = meta.get("name")
    if value is None:
        findings.append(Finding((), "required key 'name' is missing", Level.HOUSE))
        return default
    if not isinstance(value, str):
        findings.append(Finding(("name",), f"expected text, got {value!r}", Level.REFUSED))
        return default
    if ":" in value:
        message = "must not contain ':' (Claude Code namespaces names as pack:name)"
        findings.append(Finding(("name",), message, Level.HOUSE))
    elif not _KEBAB.match(value):
        message = "must be kebab-case: lower-case letters, digits and '-'"
        findings.append(Finding(("name",), message, Level.HOUSE))
    return value


def _description(meta: dict[str, Any], findings: list[Finding], kind: str) -> str:
    aliases = ("description", "when_to_use", "when-to-use") if kind == "agent" else ("description",)
    for key in aliases:
        text = _text_value(meta, key, findings)
        if text is not None and text.strip():
            return text
    message = f"no description: it tells Claude Code when to use this {kind}"
    findings.append(Finding((), message, Level.IGNORED))
    return ""


def unknown_keys(meta: Mapping[str, Any], kind: str) -> list[Finding]:
    """Keys Claude Code does not know. For agents it warns about them itself; for commands and
    skills it is silent, and packs keep metadata of their own there (`requires:`), so only a key
    that looks like a misspelt known one is reported."""
    agent_keys = AGENT_KEYS | {"when_to_use", "when-to-use"}
    known = agent_keys if kind == "agent" else FRONTMATTER_KEYS
    found = []
    for key in meta:
        if key in known or key in FIXLOOP_KEYS:
            continue
        import difflib  # here: only a misspelt key needs it, and every validation imports this

        close = difflib.get_close_matches(str(key), sorted(known), n=1, cutoff=0.8)
        hint = f"; did you mean {close[0]!r}?" if close else " (typo?)"
        if kind == "agent" or close:
            message = f"a key Claude Code does not know{hint}"
            found.append(Finding((str(key),), message, Level.NOTE, "unknown-key"))
    return found


def agent_frontmatter(meta: dict[str, Any], stem: str) -> tuple[dict[str, Any], list[Finding]]:
    """The agent as Claude Code loads it (values it drops are left out), and the findings."""
    findings: list[Finding] = []
    name = _name(meta, stem, findings)
    if name != stem and isinstance(meta.get("name"), str):
        message = f"{name!r} differs from the file name {stem!r}"
        findings.append(Finding(("name",), message, Level.HOUSE, "name-mismatch"))
    loaded: dict[str, Any] = {
        "name": name,
        "description": _description(meta, findings, "agent"),
        "tools": _tools(meta, "tools", findings, refused=False),
        "disallowedTools": _tools(meta, "disallowedTools", findings, refused=False),
        "model": _model(meta, findings) or "inherit",
        "color": _choice(meta, "color", COLORS, findings),
        "maxTurns": _positive_int(meta, "maxTurns", findings),
        "isolation": _choice(meta, "isolation", ("worktree",), findings),
    }
    _choice(meta, "memory", MEMORY_SCOPES, findings)
    if "effort" in meta and not isinstance(meta["effort"], int):
        _choice(meta, "effort", EFFORTS, findings)
    for key in ("permissionMode", "hooks", "mcpServers"):
        if key in meta:
            message = f"{key}: Claude Code ignores it for plugin agents"
            findings.append(Finding((key,), message, Level.IGNORED))
    if "fixloop" in meta:
        loaded["fixloop"] = meta["fixloop"]
    return loaded, findings + unknown_keys(meta, "agent")


def command_frontmatter(meta: dict[str, Any]) -> tuple[dict[str, Any], list[Finding]]:
    findings: list[Finding] = []
    hint = meta.get("argument-hint")
    if isinstance(hint, list):  # `argument-hint: [x]` is a YAML list; Claude Code shows it
        hint = "[" + ", ".join(str(item) for item in hint) + "]"
    loaded: dict[str, Any] = {
        "description": _description(meta, findings, "command"),
        "argument-hint": None if hint is None else str(hint),
        "allowed-tools": _tools(meta, "allowed-tools", findings, refused=True),
        "model": _model(meta, findings),
    }
    if "fixloop" in meta:
        loaded["fixloop"] = meta["fixloop"]
    return loaded, findings + unknown_keys(meta, "command")


def skill_frontmatter(meta: dict[str, Any], folder: str) -> tuple[dict[str, Any], list[Finding]]:
    """A skill is named by its folder (`pack:folder`), whatever its frontmatter `name` says."""
    findings: list[Finding] = []
    name = meta.get("name")
    if name is not None and not isinstance(name, str):
        findings.append(Finding(("name",), f"expected text, got {name!r}", Level.REFUSED))
    loaded = {
        "name": folder,
        "description": _description(meta, findings, "skill"),
        "allowed-tools": _tools(meta, "allowed-tools", findings, refused=True),
    }
    return loaded, findings + unknown_keys(meta, "skill")


_BAD_PLUGIN_NAME = re.compile(r"[\s:@/\\]")


def manifest_findings(data: dict[str, Any]) -> list[Finding]:
    """A plugin.json as Claude Code reads it: only `name` is required."""
    findings: list[Finding] = []
    name = data.get("name")
    if not isinstance(name, str) or not name:
        findings.append(Finding(("name",), "required text 'name' is missing", Level.REFUSED))
    elif _BAD_PLUGIN_NAME.search(name):
        message = "must not contain whitespace, ':', '@' or a path separator"
        findings.append(Finding(("name",), message, Level.REFUSED))
    elif not _KEBAB.match(name):
        message = "is not kebab-case; marketplaces list only kebab-case names"
        findings.append(Finding(("name",), message, Level.NOTE))
    elif _reserved(name):
        message = (
            "is reserved for Anthropic's own plugins (a name starting with claude-, anthropic-, "
            "anthropics- or cc-plugin-, or with `official` beside claude or anthropic)"
        )
        findings.append(Finding(("name",), message, Level.REFUSED))
    findings += _component_paths(data)
    for key in ("version", "description", "homepage", "repository", "license"):
        if key in data and not isinstance(data[key], str):
            message = f"expected text, got {data[key]!r}; Claude Code refuses the manifest"
            findings.append(Finding((key,), message, Level.REFUSED))
    if "author" in data and not isinstance(data["author"], dict):
        message = "expected a mapping such as {name: ..., email: ...}"
        findings.append(Finding(("author",), message, Level.REFUSED))
    for key in ("version", "description", "author"):
        if key not in data:
            findings.append(Finding((), f"required key {key!r} is missing", Level.HOUSE))
    return findings


_RESERVED_PREFIXES = ("claude-", "anthropic-", "anthropics-", "cc-plugin-")
_RESERVED_NAMES = {"claude", "anthropic", "anthropics", "claude-code", "claude-mods"}
_OFFICIAL = re.compile(r"official[^a-z0-9]*(anthropic|claude)|(anthropic|claude)[^a-z0-9]*official")


def _reserved(name: str) -> bool:
    """Claude Code's `plugin validate` refuses a name that passes as one of Anthropic's own."""
    lowered = name.lower()
    return (
        lowered in _RESERVED_NAMES
        or lowered.startswith(_RESERVED_PREFIXES)
        or _OFFICIAL.search(lowered) is not None
    )


# Manifest keys naming files or folders of the plugin: Claude Code takes only paths that start
# with `./` (skills also `.`), never with `..` in them, and agents only as `.md` files.
_COMPONENT_KEYS = ("agents", "commands", "skills", "hooks", "mcpServers", "outputStyles")


def _component_paths(data: dict[str, Any]) -> list[Finding]:
    findings = []
    for key in _COMPONENT_KEYS:
        value = data.get(key)
        entries = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        for index, entry in enumerate(entries):
            if not isinstance(entry, str):
                continue  # hooks and servers may be inline objects, judged by their shape
            where: tuple[str | int, ...] = (key,) if isinstance(value, str) else (key, index)
            problem = None
            if not (entry.startswith("./") or (key == "skills" and entry == ".")):
                problem = "must start with './' (a path relative to the plugin root)"
            elif ".." in entry:
                problem = "must not contain '..' (Claude Code refuses a path leaving the plugin)"
            elif key == "agents" and not entry.endswith(".md"):
                problem = "must name an agent file ending in '.md', not a folder"
            if problem is not None:
                findings.append(Finding(where, f"{entry!r} {problem}", Level.REFUSED))
    return findings


def hooks_findings(data: Any) -> list[Finding]:
    if not isinstance(data, dict) or not isinstance(data.get("hooks"), dict):
        return [Finding(("hooks",), 'expected {"hooks": {EVENT: [...]}}', Level.REFUSED)]
    return [
        Finding(
            ("hooks", event), f"unknown hook event {event!r}; Claude Code ignores it", Level.IGNORED
        )
        for event in data["hooks"]
        if event not in HOOK_EVENTS
    ]


def mcp_findings(data: Any) -> list[Finding]:
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        message = "mcpServers must map server names to server configurations"
        return [Finding(("mcpServers",), message, Level.REFUSED)]
    return []
