"""Loading a pack: manifest, agents, commands, skills and workflows as typed, located documents.

Loading never stops at the first problem: every document is read, and each problem becomes a
Diagnostic naming the file, the line and the key. The files are found as Claude Code finds them
(`discovery.py`), and read as it reads them (`reading.py`), judged by the pack's profile.
Cross-document rules live in `validate.py`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.documents.blocks import MarkdownDocument, StepStyle, parse_markdown
from fixloop.documents.claude_code import manifest_findings
from fixloop.documents.config import Profile, find_config
from fixloop.documents.digest import pack_digest
from fixloop.documents.discovery import (
    CLAUDE_MANIFEST,
    MANIFEST,
    bundled_pack_root,
    manifest_path,
    pack_files,
)
from fixloop.documents.files import load_json, read_text, resolved
from fixloop.documents.reading import agent_data, command_data, located, read_source, skill_data
from fixloop.documents.source import SourceDocument
from fixloop.documents.spec_errors import spec_diagnostics
from fixloop.documents.specs import AgentSpec, CommandSpec, Manifest, SkillSpec, WorkflowSpec

SpecT = TypeVar("SpecT", bound=BaseModel)
__all__ = ["MANIFEST", "Pack", "default_pack_root", "load_pack", "validate_spec"]


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
class SkillDoc:
    spec: SkillSpec
    source: SourceDocument

    @property
    def name(self) -> str:
        return self.spec.name


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
    commands: dict[str, CommandDoc] = field(default_factory=dict)  # by name: `x`, `ns:x`
    workflows: dict[str, WorkflowDoc] = field(default_factory=dict)
    skills: dict[str, SkillDoc] = field(default_factory=dict)
    profile: Profile = Profile.CLAUDE
    # Names of documents that are there but did not load (their own errors say why): a
    # reference to one is a follow-on problem, not a second root cause.
    broken: set[str] = field(default_factory=set)
    folded: int = 0  # follow-on problems left out by validation (see `validate.py`)
    scripts: list[str] = field(default_factory=list)  # Claude Code's JavaScript workflows
    _digest: str = field(default="", repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.manifest.name if self.manifest else self.root.name

    @property
    def digest(self) -> str:
        """`pack_digest` of the root, read once per loaded pack: every task of a bench run
        records the same pack, and reading each of its documents again per task (on the
        interpreter lock, beside the other workers) would cost each task that much more."""
        if not self._digest:
            self._digest = pack_digest(self.root)
        return self._digest

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
                display_path(folder),
                1,
                1,
                f"unknown-{kind}",
                f"no {kind} named {asked!r} in this pack ({kind}s: {known})",
            )
        )
    return documents[key]


def default_pack_root() -> Path:
    """The pack shipped with fixloop (see `discovery.bundled_pack_root`)."""
    return bundled_pack_root()


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


def _load_manifest(
    root: Path, base: Path, profile: Profile
) -> tuple[Manifest | None, dict[str, Any], list[Diagnostic]]:
    path = manifest_path(root, source_of_truth_first=profile is Profile.FIXLOOP)
    if path is None:
        if profile is Profile.FIXLOOP or (root / ".claude-plugin").is_dir():
            shown = display_path(root / CLAUDE_MANIFEST, base)
            return None, {}, [Diagnostic(shown, 1, 1, "manifest", "the plugin manifest is missing")]
        return None, {}, []
    shown = display_path(path, base)
    try:
        data = load_json(read_text(path))
    except json.JSONDecodeError as exc:
        problem = Diagnostic(shown, exc.lineno, exc.colno, "manifest", f"invalid JSON: {exc.msg}")
        return None, {}, [problem]
    except (OSError, UnicodeDecodeError) as exc:
        return None, {}, [Diagnostic(shown, 1, 1, "manifest", f"cannot read it: {exc}")]
    if not isinstance(data, dict):
        return None, {}, [Diagnostic(shown, 1, 1, "manifest", "expected a JSON object")]
    source = SourceDocument(path, shown, "", data, "", 1)
    diagnostics = located(manifest_findings(data), profile, shown, source.line_of, "manifest")
    if path != root / CLAUDE_MANIFEST and profile is not Profile.FIXLOOP:
        message = f"Claude Code reads the manifest from {CLAUDE_MANIFEST}, not from {MANIFEST}"
        diagnostics.append(Diagnostic(shown, 1, 1, "manifest", message))
    for key, relative in pack_files(root, data).missing:
        message = f"{key}: {relative!r} is not in the pack; Claude Code fails to load it"
        diagnostics.append(Diagnostic(shown, source.line_of(key), 1, "manifest", message))
    manifest, _ = validate_spec(Manifest, source, "manifest")
    return manifest, data, diagnostics


def load_pack(
    root: Path, base: Path | None = None, profile: Profile | None = None
) -> tuple[Pack, list[Diagnostic]]:
    """Read every document under `root`; return the pack and the problems found while reading.

    `profile`: the rules to judge by; by default the one the pack's settings name (`config.py`).
    """
    base = base or Path.cwd()
    root = resolved(root)  # `.` and "$PWD" are one pack, with one name (`Pack.name`)
    profile = profile or find_config(root).profile()
    manifest, data, diagnostics = _load_manifest(root, base, profile)
    files = pack_files(root, data)
    pack = Pack(root, manifest, profile=profile, scripts=files.scripts)
    for path in files.agents:
        read = _read(path, base, pack, diagnostics, judge=agent_data, model=AgentSpec)
        if read is None:
            pack.broken.add(path.stem)
        elif read[1].name in pack.agents:
            first = pack.agents[read[1].name].source.display
            message = f"name: agent {read[1].name!r} is already defined in {first}"
            diagnostics.append(read[0].diagnostic("duplicate-name", message, "name"))
        else:
            pack.agents[read[1].name] = AgentDoc(read[1], read[0])
    for name, path in files.commands:
        command = _read(path, base, pack, diagnostics, judge=command_data, model=CommandSpec)
        if command is None:
            pack.broken.add(name)
        else:
            pack.commands[name] = CommandDoc(name, command[1], command[0])
    for folder, path in files.skills:
        skill = _read(path, base, pack, diagnostics, judge=skill_data, model=SkillSpec)
        if skill is None:
            pack.broken.add(folder)
        else:
            pack.skills[skill[1].name] = SkillDoc(skill[1], skill[0])
    for path in files.workflows:
        _load_workflow(pack, path, base, diagnostics)
    return pack, diagnostics


Judge = Callable[[SourceDocument, Profile], tuple[dict[str, Any], list[Diagnostic]]]


def _read(
    path: Path,
    base: Path,
    pack: Pack,
    diagnostics: list[Diagnostic],
    *,
    judge: Judge,
    model: type[SpecT],
) -> tuple[SourceDocument, SpecT] | None:
    """One document read as Claude Code reads it and typed; None when it does not load."""
    source = read_source(path, base, pack.profile, diagnostics)
    if source is None:
        return None
    values, found = judge(source, pack.profile)
    spec, problems = validate_spec(model, source, "frontmatter", values)
    diagnostics += found + problems
    return None if spec is None else (source, spec)


def _load_workflow(pack: Pack, path: Path, base: Path, diagnostics: list[Diagnostic]) -> None:
    """A fixloop workflow. Claude Code reads no Markdown in workflows/, so outside the fixloop
    profile a document there that is not a fixloop workflow is skipped, not reported."""
    strict = pack.profile is Profile.FIXLOOP
    problems: list[Diagnostic] = []
    source = read_source(path, base, pack.profile, problems)
    workflow, found = validate_spec(WorkflowSpec, source, "frontmatter") if source else (None, [])
    if strict or workflow is not None:
        diagnostics += problems + found
    if source is None or workflow is None:
        pack.broken.add(path.stem)
        return
    if workflow.name in pack.workflows:
        first = pack.workflows[workflow.name].source.display
        message = f"name: workflow {workflow.name!r} is already defined in {first}"
        diagnostics.append(source.diagnostic("duplicate-name", message, "name"))
        return
    pack.workflows[workflow.name] = WorkflowDoc(workflow, source)
