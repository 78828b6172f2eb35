"""Pack-wide rules: references between documents, hooks and MCP files, and fixloop's house rules.

Claude Code's own rules (and the `claude` profile) apply to every pack. fixloop's house rules —
template inputs, agent size budgets, the manifest copies — apply under the `fixloop` profile, and
the template rules also to an agent that opts in with a `fixloop:` block. A reference to a document
that did not load is not a second problem: it is folded under that document's own error, and the
pack counts how many were folded (`Pack.folded`).
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from fixloop.diagnostics import Diagnostic, FixloopError, Severity, display_path
from fixloop.documents.blocks import parse_markdown
from fixloop.documents.claude_code import hooks_findings, mcp_findings
from fixloop.documents.config import Profile
from fixloop.documents.discovery import (
    CLAUDE_MANIFEST,
    MANIFEST,
    MARKETPLACE,
    manifest_data,
    manifest_path,
    orphan_diagnostic,
    orphan_sidecars,
    pack_files,
)
from fixloop.documents.files import load_json, read_text, resolved
from fixloop.documents.interface_rules import interface_diagnostics
from fixloop.documents.pack import AgentDoc, Pack, load_pack
from fixloop.documents.reading import located
from fixloop.documents.render import template_variables
from fixloop.documents.source import SourceDocument

# An agent document is loaded whole into a context window on every dispatch; keep it lean.
AGENT_MAX_LINES = 200
AGENT_MAX_CHARS = 12_000

_PLUGIN_ROOT_REF = re.compile(r"\$\{CLAUDE_PLUGIN_ROOT\}/(?P<path>[^\s`'\")$]+)")
_PARENT_REF = re.compile(r"(?<![\w.])(?:\.\./)+[\w.-]*(?:/[\w.-]+)*")
_JINJA_TAG = re.compile(r"\{[%#]")


class _Folded:
    """Counts the follow-on problems left out: references to documents that did not load."""

    def __init__(self, pack: Pack) -> None:
        self.broken = pack.broken
        self.count = 0

    def keep(self, name: str) -> bool:
        if name in self.broken:
            self.count += 1
            return False
        return True


def _body_line(source: SourceDocument, offset: int) -> int:
    return source.body_line + source.body.count("\n", 0, offset)


def _documents(pack: Pack) -> list[SourceDocument]:
    return [
        *(a.source for a in pack.agents.values()),
        *(c.source for c in pack.commands.values()),
        *(s.source for s in pack.skills.values()),
        *(w.source for w in pack.workflows.values()),
    ]


def _example_lines(source: SourceDocument) -> set[int]:
    """Lines inside fenced blocks that show another file (```markdown, ```json …): examples,
    whose references are not the document's own. Shell blocks run, so they count."""
    lines: set[int] = set()
    for block in parse_markdown(source).blocks:
        if block.info.strip() and not block.is_shell:
            lines.update(range(block.content_line, block.end_line))
    return lines


Found = list[tuple[int, str, str, Severity]]  # (offset in the body, rule, message, severity)


def _body_references(pack: Pack, folded: _Folded) -> Iterable[Diagnostic]:
    # The pack's names, once: built per document, they made the check quadratic in pack size.
    known = set(pack.agents) | set(pack.commands) | set(pack.skills) | set(pack.scripts)
    for source in _documents(pack):
        body = source.body
        found = _names_referred(pack, source, folded, known) + _paths_referred(pack, source)
        if not found:
            continue
        examples = _example_lines(source)
        starts = [0, *(i + 1 for i, char in enumerate(body) if char == "\n")]
        for offset, rule, message, severity in found:
            line = source.body_line + bisect.bisect_right(starts, offset) - 1
            if line not in examples:
                yield Diagnostic(source.display, line, 1, rule, message, severity)


def _names_referred(pack: Pack, source: SourceDocument, folded: _Folded, known: set[str]) -> Found:
    """`pack:name` references to no agent, command, skill or workflow script of the pack."""
    if f"{pack.name}:" not in source.body:
        return []
    name = r"[a-z0-9][a-z0-9_-]*"
    reference = re.compile(rf"(?<![\w/-]){re.escape(pack.name)}:(?P<name>{name}(?::{name})*)")
    return [
        (
            match.start(),
            "unknown-reference",
            f"{match.group(0)!r} names no agent, command or skill of this pack",
            Severity.ERROR,
        )
        for match in reference.finditer(source.body)
        if match["name"] not in known and folded.keep(match["name"])
    ]


def _paths_referred(pack: Pack, source: SourceDocument) -> Found:
    """`${CLAUDE_PLUGIN_ROOT}/x` that is not in the pack; `../x` that leaves it."""
    body = source.body
    found: Found = []
    if "${CLAUDE_PLUGIN_ROOT}/" in body:
        for match in _PLUGIN_ROOT_REF.finditer(body):
            if not (pack.root / match["path"]).exists():
                message = f"{match.group(0)!r} points to a file that is not in the pack"
                found.append((match.start(), "unknown-reference", message, Severity.ERROR))
    if "../" not in body:
        return found
    root = resolved(pack.root)
    for match in _PARENT_REF.finditer(body):
        # Only a path that leaves the plugin breaks: Claude Code copies the whole plugin, so a
        # link to a sibling folder (`../other-skill/x.md`) keeps working.
        target = resolved(source.path.parent / match.group(0))
        if target == root or root in target.parents:
            continue
        message = (
            f"{match.group(0)!r} leads outside the plugin, which breaks once Claude Code copies "
            "the plugin to its cache; keep files inside it, named as ${CLAUDE_PLUGIN_ROOT}/..."
        )
        found.append((match.start(), "relative-path", message, Severity.WARNING))
    return found


def _declared_references(pack: Pack, folded: _Folded) -> Iterable[Diagnostic]:
    for workflow in pack.workflows.values():
        for index, name in enumerate(workflow.spec.agents):
            if name not in pack.agents and folded.keep(name):
                message = f"agents: no agent named {name!r}"
                yield workflow.source.diagnostic("unknown-reference", message, "agents", index)
    for command in pack.commands.values():
        ext = command.spec.fixloop
        wanted = ext.workflow
        if wanted is not None and wanted not in pack.workflows and folded.keep(wanted):
            message = f"fixloop.workflow: no workflow named {wanted!r}"
            yield command.source.diagnostic("unknown-reference", message, "fixloop", "workflow")
        for index, name in enumerate(ext.agents):
            if name not in pack.agents and folded.keep(name):
                message = f"fixloop.agents: no agent named {name!r}"
                yield command.source.diagnostic(
                    "unknown-reference", message, "fixloop", "agents", index
                )


def _rendered_by_fixloop(pack: Pack) -> list[AgentDoc]:
    """Agents whose bodies fixloop renders: all under the fixloop profile, else the opted-in."""
    return [
        agent
        for agent in pack.agents.values()
        if pack.profile is Profile.FIXLOOP or "fixloop" in agent.source.metadata
    ]


def _template_inputs(
    agents: list[AgentDoc], known_outputs: Callable[[str], bool] | None
) -> Iterable[Diagnostic]:
    for agent in agents:
        source = agent.source
        try:
            used = template_variables(source)
        except FixloopError as exc:
            yield from exc.diagnostics
            continue
        declared = set(agent.spec.fixloop.inputs)
        for name in sorted(used - declared):
            yield Diagnostic(
                source.display,
                source.line_of("fixloop", "inputs"),
                1,
                "template-input",
                f"fixloop.inputs: the body uses {name!r} but it is not declared",
            )
        for name in sorted(declared - used):
            message = f"fixloop.inputs.{name}: declared but never used in the body"
            yield source.diagnostic("template-input", message, "fixloop", "inputs", name)
        output = agent.spec.fixloop.output
        if output is not None and known_outputs is not None and not known_outputs(output):
            message = f"fixloop.output: no schema named {output!r}"
            yield source.diagnostic("unknown-schema", message, "fixloop", "output")


def _raw_readable(agents: list[AgentDoc]) -> Iterable[Diagnostic]:
    """Claude Code loads agent bodies raw: only `{{ name }}` placeholders read well there."""
    for agent in agents:
        source = agent.source
        for match in _JINJA_TAG.finditer(source.body):
            yield Diagnostic(
                source.display,
                _body_line(source, match.start()),
                1,
                "template-syntax",
                f"{match.group(0)!r} is jinja2 statement/comment syntax; agent bodies use only "
                "{{ name }} placeholders (write '{ #' or '${ #' differently in bash)",
            )


def _size_budget(pack: Pack) -> Iterable[Diagnostic]:
    for agent in pack.agents.values():
        text = agent.source.text
        lines = text.count("\n") + 1
        if lines > AGENT_MAX_LINES or len(text) > AGENT_MAX_CHARS:
            yield Diagnostic(
                agent.source.display,
                1,
                1,
                "size-budget",
                f"{lines} lines / {len(text)} characters; an agent document must stay within "
                f"{AGENT_MAX_LINES} lines and {AGENT_MAX_CHARS} characters",
            )


def _json(path: Path, shown: str, rule: str) -> tuple[Any, list[Diagnostic]]:
    try:
        return load_json(read_text(path)), []
    except json.JSONDecodeError as exc:
        return None, [Diagnostic(shown, exc.lineno, exc.colno, rule, f"invalid JSON: {exc.msg}")]
    except (OSError, UnicodeDecodeError) as exc:
        return None, [Diagnostic(shown, 1, 1, rule, f"cannot read it: {exc}")]


def _manifest_drift(pack: Pack, base: Path) -> Iterable[Diagnostic]:
    """fixloop's pack keeps plugin.json as its source of truth, copied where Claude Code reads."""
    truth = pack.root / MANIFEST
    if pack.manifest is None or not truth.is_file():
        return
    source_of_truth, _ = _json(truth, MANIFEST, "manifest-drift")
    copy = pack.root / CLAUDE_MANIFEST
    shown = display_path(copy, base)
    if not copy.is_file():
        yield Diagnostic(shown, 1, 1, "manifest-drift", "missing: copy plugin.json here")
    elif _json(copy, shown, "manifest-drift")[0] != source_of_truth:
        yield Diagnostic(
            shown, 1, 1, "manifest-drift", "differs from plugin.json (the source of truth)"
        )


def _marketplace(pack: Pack, base: Path) -> Iterable[Diagnostic]:
    market = pack.root / MARKETPLACE
    if pack.manifest is None or not market.is_file():
        return
    shown = display_path(market, base)
    data, problems = _json(market, shown, "manifest")
    yield from problems
    entries = data.get("plugins", []) if isinstance(data, dict) else None
    if not isinstance(entries, list):
        yield Diagnostic(shown, 1, 1, "manifest", "plugins: expected a list of plugin entries")
        return
    entry = next((e for e in entries if isinstance(e, dict) and e.get("name") == pack.name), None)
    if entry is None:
        return  # a marketplace may list other plugins than the one in its folder
    for key in ("version", "description"):
        if key in entry and entry[key] != getattr(pack.manifest, key):
            message = f"plugins[{pack.name}].{key} differs from the plugin's manifest"
            yield Diagnostic(shown, 1, 1, "manifest-drift", message, Severity.WARNING)


def _hooks_and_servers(pack: Pack, base: Path, manifest: dict[str, Any]) -> Iterable[Diagnostic]:
    """hooks/hooks.json, .mcp.json and the files or inline values the manifest declares."""
    files = pack_files(pack.root, manifest)
    for paths, rule, judge, key in (
        (files.hooks, "hooks", hooks_findings, "hooks"),
        (files.servers, "mcp", mcp_findings, "mcpServers"),
    ):
        for path in paths:
            shown = display_path(path, base)
            data, problems = _json(path, shown, rule)
            yield from problems
            if not problems:
                yield from located(judge(data), pack.profile, shown, lambda *_: 1, rule)
        inline = manifest.get(key)
        if inline is None or isinstance(inline, str):
            continue
        if isinstance(inline, list) and all(isinstance(item, str) for item in inline):
            continue
        manifest_file = manifest_path(pack.root, pack.profile is Profile.FIXLOOP)
        shown = display_path(manifest_file, base) if manifest_file else MANIFEST
        wrapped = {key: inline} if key == "mcpServers" else {"hooks": inline}
        yield from located(judge(wrapped), pack.profile, shown, lambda *_: 1, "manifest")


def _orphans(pack: Pack, base: Path) -> Iterable[Diagnostic]:
    for sidecar in orphan_sidecars(pack.root, pack=True):
        yield orphan_diagnostic(sidecar, display_path(sidecar, base))


def validate_pack(
    root: Path,
    base: Path | None = None,
    known_outputs: Callable[[str], bool] | None = None,
    profile: Profile | None = None,
) -> tuple[Pack, list[Diagnostic]]:
    """Load `root` and apply every pack rule; diagnostics come back sorted by file and line."""
    base = base or Path.cwd()
    pack, diagnostics = load_pack(root, base, profile)
    folded = _Folded(pack)
    diagnostics += _body_references(pack, folded)
    diagnostics += _declared_references(pack, folded)
    rendered = _rendered_by_fixloop(pack)
    diagnostics += _template_inputs(rendered, known_outputs)
    diagnostics += _raw_readable(rendered)
    diagnostics += _hooks_and_servers(
        pack, base, manifest_data(root, pack.profile is Profile.FIXLOOP)
    )
    diagnostics += _marketplace(pack, base)
    diagnostics += _orphans(pack, base)
    if pack.profile is Profile.FIXLOOP:
        diagnostics += _size_budget(pack)
        diagnostics += _manifest_drift(pack, base)
    diagnostics += interface_diagnostics(pack)
    pack.folded = folded.count
    return pack, sorted(set(diagnostics))
