"""Loading a pack: manifest, agents, commands and workflows as typed, located documents.

Loading never stops at the first problem: every document is read, and each problem becomes a
Diagnostic naming the file, the line and the key. Cross-document rules live in `validate.py`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from fixloop.diagnostics import Diagnostic, FixloopError, Severity, display_path
from fixloop.documents.blocks import MarkdownDocument, StepStyle, parse_markdown
from fixloop.documents.source import SourceDocument, load_document
from fixloop.documents.spec_errors import spec_diagnostics
from fixloop.documents.specs import (
    AGENT_KEYS,
    COMMAND_KEYS,
    AgentSpec,
    CommandSpec,
    Manifest,
    WorkflowSpec,
)

SpecT = TypeVar("SpecT", bound=BaseModel)

MANIFEST = "plugin.json"


@dataclass(frozen=True)
class AgentDoc:
    spec: AgentSpec
    source: SourceDocument

    @property
    def name(self) -> str:
        return self.spec.name


@dataclass(frozen=True)
class CommandDoc:
    name: str
    spec: CommandSpec
    source: SourceDocument


@dataclass(frozen=True)
class WorkflowDoc:
    spec: WorkflowSpec
    source: SourceDocument

    @property
    def name(self) -> str:
        return self.spec.name

    def markdown(self) -> MarkdownDocument:
        style = StepStyle(self.spec.checker.get("steps", StepStyle.HEADING.value))
        return parse_markdown(self.source, style, str(self.spec.checker.get("step_tag", "step")))

    def step_names(self) -> list[str]:
        return [step.name for step in self.markdown().steps]


@dataclass
class Pack:
    root: Path
    manifest: Manifest | None
    agents: dict[str, AgentDoc] = field(default_factory=dict)
    commands: dict[str, CommandDoc] = field(default_factory=dict)
    workflows: dict[str, WorkflowDoc] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.manifest.name if self.manifest else self.root.name

    def agent(self, name: str) -> AgentDoc:
        """The agent `name` or `<pack>:name`; a FixloopError naming the known ones otherwise."""
        bare = name.split(":", 1)[1] if name.startswith(f"{self.name}:") else name
        return _lookup(self.agents, bare, name, self.root / "agents", "agent")

    def workflow(self, name: str) -> WorkflowDoc:
        return _lookup(self.workflows, name, name, self.root / "workflows", "workflow")


DocT = TypeVar("DocT")


def _lookup(documents: dict[str, DocT], key: str, asked: str, folder: Path, kind: str) -> DocT:
    if key not in documents:
        known = ", ".join(sorted(documents)) or "none"
        raise FixloopError(
            Diagnostic(
                display_path(folder), 1, 1, f"unknown-{kind}",
                f"no {kind} named {asked!r} in this pack ({kind}s: {known})",
            )
        )  # fmt: skip
    return documents[key]


def default_pack_root() -> Path:
    """The pack shipped with fixloop: inside the installed package, or the checkout it runs from."""
    package = Path(__file__).resolve().parent.parent
    installed = package / "pack"
    if (installed / MANIFEST).is_file():
        return installed
    checkout = package.parent.parent
    if (checkout / MANIFEST).is_file():
        return checkout
    raise FixloopError(
        Diagnostic(str(package), 1, 1, "pack", "the fixloop pack documents are not installed")
    )


def validate_spec(
    model: type[SpecT], source: SourceDocument, rule: str, data: dict[str, Any] | None = None
) -> tuple[SpecT | None, list[Diagnostic]]:
    value = source.metadata if data is None else data
    try:
        return model.model_validate(value), []
    except ValidationError as exc:
        return None, spec_diagnostics(
            exc,
            model=model,
            data=value,
            display=source.display,
            rule=rule,
            key_lines=source.key_lines,
        )


def _unknown_keys(source: SourceDocument, allowed: frozenset[str]) -> list[Diagnostic]:
    return [
        Diagnostic(
            source.display, source.line_of(key), 1, "unknown-key",
            f"{key}: not a key Claude Code or fixloop knows (typo?)", Severity.WARNING,
        )
        for key in source.metadata
        if key not in allowed
    ]  # fmt: skip


def _load_manifest(root: Path, base: Path) -> tuple[Manifest | None, list[Diagnostic]]:
    path = root / MANIFEST
    shown = display_path(path, base)
    if not path.is_file():
        return None, [Diagnostic(shown, 1, 1, "manifest", "plugin.json is missing")]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        problem = Diagnostic(shown, exc.lineno, exc.colno, "manifest", f"invalid JSON: {exc.msg}")
        return None, [problem]
    if not isinstance(data, dict):
        return None, [Diagnostic(shown, 1, 1, "manifest", "plugin.json must hold a JSON object")]
    source = SourceDocument(path, shown, "", data, "", 1)
    return validate_spec(Manifest, source, "manifest")


def _documents(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.md")) if folder.is_dir() else []


def load_pack(root: Path, base: Path | None = None) -> tuple[Pack, list[Diagnostic]]:
    """Read every document under `root`; return the pack and the problems found while reading."""
    base = base or Path.cwd()
    manifest, diagnostics = _load_manifest(root, base)
    pack = Pack(root, manifest)
    for path in _documents(root / "agents"):
        source = _read(path, base, diagnostics)
        if source is None:
            continue
        diagnostics += _unknown_keys(source, AGENT_KEYS)
        agent, found = validate_spec(AgentSpec, source, "frontmatter")
        diagnostics += found
        if agent is None:
            continue
        if agent.name in pack.agents:
            first = pack.agents[agent.name].source.display
            diagnostics.append(
                source.diagnostic(
                    "duplicate-name", f"name: agent {agent.name!r} is already defined in {first}",
                    "name",
                )
            )  # fmt: skip
            continue
        if agent.name != path.stem:
            diagnostics.append(
                source.diagnostic(
                    "name-mismatch",
                    f"name: {agent.name!r} differs from the file name {path.stem!r}",
                    "name",
                )
            )
        pack.agents[agent.name] = AgentDoc(agent, source)
    for path in _documents(root / "commands"):
        source = _read(path, base, diagnostics)
        if source is None:
            continue
        diagnostics += _unknown_keys(source, COMMAND_KEYS)
        command, found = validate_spec(CommandSpec, source, "frontmatter")
        diagnostics += found
        if command is not None:
            pack.commands[path.stem] = CommandDoc(path.stem, command, source)
    for path in _documents(root / "workflows"):
        source = _read(path, base, diagnostics)
        if source is None:
            continue
        workflow, found = validate_spec(WorkflowSpec, source, "frontmatter")
        diagnostics += found
        if workflow is None:
            continue
        if workflow.name in pack.workflows:
            first = pack.workflows[workflow.name].source.display
            diagnostics.append(
                source.diagnostic(
                    "duplicate-name",
                    f"name: workflow {workflow.name!r} is already defined in {first}",
                    "name",
                )
            )
            continue
        pack.workflows[workflow.name] = WorkflowDoc(workflow, source)
    return pack, diagnostics


def _read(path: Path, base: Path, diagnostics: list[Diagnostic]) -> SourceDocument | None:
    try:
        return load_document(path, base)
    except FixloopError as exc:
        diagnostics.extend(exc.diagnostics)
        return None
