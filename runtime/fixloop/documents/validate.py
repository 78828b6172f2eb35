"""Pack-wide rules: references between documents, template inputs, size budgets, manifest drift."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType

from fixloop.diagnostics import Diagnostic, FixloopError, Severity, display_path
from fixloop.documents.pack import MANIFEST, Pack, load_pack
from fixloop.documents.render import template_variables
from fixloop.documents.source import SourceDocument

# Every rule id a pack's loading and validation report, with what it means (SARIF's short
# description, and the ids a contract may not take).
PACK_RULES: Mapping[str, str] = MappingProxyType(
    {
        "frontmatter": "frontmatter that does not parse or does not fit its document's keys",
        "manifest": "a plugin manifest that is missing, does not parse or does not fit",
        "manifest-drift": "copies of the manifest that disagree",
        "unknown-key": "a frontmatter key neither Claude Code nor fixloop knows",
        "duplicate-name": "two documents of one kind with the same name",
        "name-mismatch": "an agent whose name differs from its file name",
        "unknown-reference": "a reference to an agent, command, workflow or file that is not there",
        "relative-path": "a '../' path that breaks once Claude Code copies the plugin",
        "template-input": "declared inputs and the variables a body uses disagree",
        "template-syntax": "jinja2 statements in a body Claude Code reads raw",
        "template": "a body that is not a valid template",
        "unknown-schema": "an output schema fixloop does not know",
        "size-budget": "an agent document over its size budget",
        "encoding": "a document that is not UTF-8 text",
        "io": "a document that cannot be read",
        "render": "a prompt that cannot be rendered with the inputs given",
        "pack": "a pack that cannot be found",
        "unknown-agent": "an agent name the pack does not define",
        "unknown-workflow": "a workflow name the pack does not define",
    }
)

# An agent document is loaded whole into a context window on every dispatch; keep it lean.
AGENT_MAX_LINES = 200
AGENT_MAX_CHARS = 12_000

_PLUGIN_ROOT_REF = re.compile(r"\$\{CLAUDE_PLUGIN_ROOT\}/(?P<path>[^\s`'\")]+)")
_PARENT_REF = re.compile(r"(?<![\w.])\.\./")
_JINJA_TAG = re.compile(r"\{[%#]")


def _body_line(source: SourceDocument, offset: int) -> int:
    return source.body_line + source.body.count("\n", 0, offset)


def _body_references(pack: Pack) -> Iterable[Diagnostic]:
    agent_ref = re.compile(rf"(?<![\w-]){re.escape(pack.name)}:(?P<name>[a-z0-9][a-z0-9-]*)")
    known = set(pack.agents) | set(pack.commands)
    documents = [
        *(a.source for a in pack.agents.values()),
        *(c.source for c in pack.commands.values()),
        *(w.source for w in pack.workflows.values()),
    ]
    for source in documents:
        for match in agent_ref.finditer(source.body):
            if match["name"] not in known:
                yield Diagnostic(
                    source.display, _body_line(source, match.start()), 1, "unknown-reference",
                    f"{match.group(0)!r} names no agent or command of this pack",
                )  # fmt: skip
        for match in _PLUGIN_ROOT_REF.finditer(source.body):
            if not (pack.root / match["path"]).exists():
                yield Diagnostic(
                    source.display, _body_line(source, match.start()), 1, "unknown-reference",
                    f"{match.group(0)!r} points to a file that is not in the pack",
                )  # fmt: skip
        for match in _PARENT_REF.finditer(source.body):
            yield Diagnostic(
                source.display, _body_line(source, match.start()), 1, "relative-path",
                "'../' breaks once Claude Code copies the plugin to its cache; "
                "use ${CLAUDE_PLUGIN_ROOT}/...",
                Severity.WARNING,
            )  # fmt: skip


def _declared_references(pack: Pack) -> Iterable[Diagnostic]:
    for workflow in pack.workflows.values():
        for index, name in enumerate(workflow.spec.agents):
            if name not in pack.agents:
                yield workflow.source.diagnostic(
                    "unknown-reference", f"agents: no agent named {name!r}", "agents", index
                )
    for command in pack.commands.values():
        ext = command.spec.fixloop
        if ext.workflow is not None and ext.workflow not in pack.workflows:
            yield command.source.diagnostic(
                "unknown-reference", f"fixloop.workflow: no workflow named {ext.workflow!r}",
                "fixloop", "workflow",
            )  # fmt: skip
        for index, name in enumerate(ext.agents):
            if name not in pack.agents:
                yield command.source.diagnostic(
                    "unknown-reference", f"fixloop.agents: no agent named {name!r}",
                    "fixloop", "agents", index,
                )  # fmt: skip


def _template_inputs(
    pack: Pack, known_outputs: Callable[[str], bool] | None
) -> Iterable[Diagnostic]:
    for agent in pack.agents.values():
        source = agent.source
        try:
            used = template_variables(source)
        except FixloopError as exc:
            yield from exc.diagnostics
            continue
        declared = set(agent.spec.fixloop.inputs)
        for name in sorted(used - declared):
            yield Diagnostic(
                source.display, source.line_of("fixloop", "inputs"), 1, "template-input",
                f"fixloop.inputs: the body uses {name!r} but it is not declared",
            )  # fmt: skip
        for name in sorted(declared - used):
            yield source.diagnostic(
                "template-input", f"fixloop.inputs.{name}: declared but never used in the body",
                "fixloop", "inputs", name,
            )  # fmt: skip
        output = agent.spec.fixloop.output
        if output is not None and known_outputs is not None and not known_outputs(output):
            yield source.diagnostic(
                "unknown-schema", f"fixloop.output: no schema named {output!r}", "fixloop", "output"
            )


def _raw_readable(pack: Pack) -> Iterable[Diagnostic]:
    """Claude Code loads agent bodies raw: only `{{ name }}` placeholders read well there."""
    for agent in pack.agents.values():
        source = agent.source
        for match in _JINJA_TAG.finditer(source.body):
            yield Diagnostic(
                source.display, _body_line(source, match.start()), 1, "template-syntax",
                f"{match.group(0)!r} is jinja2 statement/comment syntax; agent bodies use only "
                "{{ name }} placeholders (write '{ #' or '${ #' differently in bash)",
            )  # fmt: skip


def _size_budget(pack: Pack) -> Iterable[Diagnostic]:
    for agent in pack.agents.values():
        text = agent.source.text
        lines = text.count("\n") + 1
        if lines > AGENT_MAX_LINES or len(text) > AGENT_MAX_CHARS:
            yield Diagnostic(
                agent.source.display, 1, 1, "size-budget",
                f"{lines} lines / {len(text)} characters; an agent document must stay within "
                f"{AGENT_MAX_LINES} lines and {AGENT_MAX_CHARS} characters",
            )  # fmt: skip


def _manifest_drift(pack: Pack, base: Path) -> Iterable[Diagnostic]:
    if pack.manifest is None:
        return
    source_of_truth = json.loads((pack.root / MANIFEST).read_text(encoding="utf-8"))
    copy = pack.root / ".claude-plugin" / MANIFEST
    shown = display_path(copy, base)
    if not copy.is_file():
        yield Diagnostic(shown, 1, 1, "manifest-drift", "missing: copy plugin.json here")
    elif json.loads(copy.read_text(encoding="utf-8")) != source_of_truth:
        yield Diagnostic(
            shown, 1, 1, "manifest-drift", "differs from plugin.json (the source of truth)"
        )
    market = pack.root / ".claude-plugin" / "marketplace.json"
    if not market.is_file():
        return
    shown = display_path(market, base)
    try:
        entries = json.loads(market.read_text(encoding="utf-8")).get("plugins", [])
    except (json.JSONDecodeError, AttributeError):
        yield Diagnostic(shown, 1, 1, "manifest-drift", "marketplace.json is not a JSON object")
        return
    entry = next((e for e in entries if isinstance(e, dict) and e.get("name") == pack.name), None)
    if entry is None:
        yield Diagnostic(shown, 1, 1, "manifest-drift", f"lists no plugin named {pack.name!r}")
        return
    for key in ("version", "description"):
        if key in entry and entry[key] != source_of_truth.get(key):
            message = f"plugins[{pack.name}].{key} differs from plugin.json"
            yield Diagnostic(shown, 1, 1, "manifest-drift", message)


def validate_pack(
    root: Path, base: Path | None = None, known_outputs: Callable[[str], bool] | None = None
) -> tuple[Pack, list[Diagnostic]]:
    """Load `root` and apply every pack rule; diagnostics come back sorted by file and line."""
    base = base or Path.cwd()
    pack, diagnostics = load_pack(root, base)
    diagnostics += _body_references(pack)
    diagnostics += _declared_references(pack)
    diagnostics += _template_inputs(pack, known_outputs)
    diagnostics += _raw_readable(pack)
    diagnostics += _size_budget(pack)
    diagnostics += _manifest_drift(pack, base)
    return pack, sorted(set(diagnostics))
