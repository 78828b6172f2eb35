"""The contract language: what a document promises about the commands it runs, declared in YAML.

Contracts live in the document's frontmatter (`contracts:` and `checker:`), in a sidecar file next
to it (`<stem>.contracts.yaml`, with `checker:`, `commands:` and `contracts:`), or both; the two are
merged. Each contract has an `id` and exactly one kind:

    order:     [A, B, …]       every B runs only after A has run, on every path (and so on);
                               `strict: false`: only "A never runs after B" (A may not run)
    count:     A               with exactly / at_most / at_least: N  (occurrences in the text)
    guarded:   B   by: A       B runs only when A succeeded (`when: failure`: only when it failed)
    forbidden: [A, …]          none of these commands appears
    required:  [A, …]          each of these commands appears
    cleanup:   E   after: A    once A ran, E runs before the run ends, on every path
                               (`when: success|failure` narrows it to A's outcome)

`in:` narrows where a contract looks: `document` (default), `briefs` (the bash the document hands
to the agents it dispatches), `{step: id}`, `{steps: [...]}`, `{except_steps: [...]}`,
`{agents: [...]}`, and narrower than a step: `{label: text}`, `{section: heading text}`,
`{block: N}` (with or without a step). A, B, E are command patterns (see patterns.py) or names
defined under `commands:`; a list means "any of these". See docs/contracts.md.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from fixloop.checker.patterns import Pattern, PatternError, parse_pattern
from fixloop.checker.rules import RESERVED_IDS
from fixloop.diagnostics import Diagnostic, FixloopError, Severity, display_path
from fixloop.documents.discovery import SIDECAR_SUFFIX
from fixloop.documents.files import present, read_text
from fixloop.documents.located_yaml import KeyPath, line_of, load_located
from fixloop.documents.plain_models import MinLength, Refused, StrictInt, built, keyed
from fixloop.documents.source import SourceDocument
from fixloop.records import record

KINDS = ("order", "count", "guarded", "forbidden", "required", "cleanup", "says")
# A contract id's characters (kebab-case, `[a-z0-9][a-z0-9-]*`): told with a set, not a regex
# compiled at every check's start.
_ID_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")

Operand = str | list[str]

# Plain classes, with pydantic's model made from them only to word a declaration's problems
# (plain_models.py): defining models, and importing what that needs, was a good part of
# `fixloop check`'s start. Unknown keys are refused, and a key is written as its alias.


@record(frozen=True, kw_only=True)
class ScopeSpec:
    step: str | None = None
    steps: list[str] | None = None
    except_steps: list[str] | None = None
    agents: list[str] | None = None
    # Narrower than a step: the blocks under a bold label or a heading whose words hold these,
    # then the N-th (from 1) of the blocks chosen so far.
    label: str | None = None
    section: str | None = None
    block: int | None = keyed(default=None, ge=1)


def words_in(wanted: str, text: str) -> bool:
    """Do `text`'s words hold every word of `wanted`? (case, punctuation and order aside)

    So `labels: [cleanup]` finds `**Cleanup tail:**` and `**Clean-up, always:**` alike, and a
    reworded label keeps its section as long as the word stays.
    """
    words = set(re.findall(r"[a-z0-9]+", text.lower().replace("clean-up", "cleanup")))
    return set(re.findall(r"[a-z0-9]+", wanted.lower())) <= words


@record(frozen=True, kw_only=True)
class FinallySpec:
    steps: list[str] = keyed(default_factory=lambda: ["cleanup"])
    labels: list[str] = keyed(default_factory=list)


@record(frozen=True, kw_only=True)
class ScopedSetting:
    """How some of a document's blocks run, or which generic rules they are spared: a document
    whose blocks run without `set -e` may have one step that runs under it, and a sidecar may
    spare one step a rule (`# fixloop: ignore[…]` needs the document's own text)."""

    scope: ScopeSpec = keyed(alias="in")
    errexit: bool | None = None
    ignore: list[str] = keyed(default_factory=list)


@record(frozen=True, kw_only=True)
class CheckerSpec:
    steps: Literal["heading", "xml"] = "heading"
    step_tag: str = "step"
    finally_: FinallySpec = keyed(default_factory=FinallySpec, alias="finally")
    inputs: list[str] = keyed(default_factory=list)
    env: list[str] = keyed(default_factory=list)
    briefs: list[str] = keyed(default_factory=list)
    shell: list[str] = keyed(default_factory=lambda: ["bash", "sh", "shell", "zsh"])
    # Does fixloop's runner execute the document? None: the default of its pack's profile.
    runner: bool | None = None
    # How the blocks run: None = fixloop's runner for workflows (a step's blocks in one shell
    # under `set -euo pipefail`), each block on its own without `set -e` for other documents.
    errexit: bool | None = None
    one_shell_per_step: bool | None = None
    commands: dict[str, Operand] = keyed(default_factory=dict)
    # Settings for some blocks only: `- {in: {step: deploy}, errexit: true, ignore: [rule]}`.
    scoped: list[ScopedSetting] = keyed(default_factory=list)


@record(frozen=True, kw_only=True)
class ContractSpec:
    id: Annotated[str, MinLength(1)]
    why: str = ""
    scope: Literal["document", "briefs"] | ScopeSpec = keyed(default="document", alias="in")
    order: list[Operand] | None = None
    count: Operand | None = None
    exactly: StrictInt | None = keyed(default=None, ge=0)  # `'3'` is text, not a count
    at_most: StrictInt | None = keyed(default=None, ge=0)
    at_least: StrictInt | None = keyed(default=None, ge=0)
    guarded: Operand | None = None
    by: Operand | None = None
    when: Literal["always", "success", "failure"] | None = None
    strict: bool = True  # order: B needs A to have run; False: only "A never runs after B"
    forbidden: Operand | None = None
    required: Operand | None = None
    cleanup: Operand | None = None
    after: Operand | None = None
    # Prose, not commands: sentences the document must keep saying (its words, in any line
    # breaks and letter case), for promises made to the model rather than in bash.
    says: str | list[Annotated[str, MinLength(1)]] | None = None

    def problem(self) -> str | None:
        """What makes these keys no contract, or None (also pydantic's check, on its model)."""
        if self.id[:1] in ("", "-") or not _ID_CHARACTERS.issuperset(self.id):
            return "id must be kebab-case: lower-case letters, digits and '-'"
        kinds = [k for k in KINDS if getattr(self, k) is not None]
        if len(kinds) != 1:
            found = ", ".join(kinds) or "none"
            return f"a contract has exactly one of {', '.join(KINDS)} (found: {found})"
        kind = kinds[0]
        if any(isinstance(op, list) and not op for op in _operands(self)):
            return "an empty list names no command"
        if kind == "says" and (not self.says or self.scope != "document"):
            return "says takes a sentence or a list of them, and reads the whole document"
        bounds = [b for b in ("exactly", "at_most", "at_least") if getattr(self, b) is not None]
        if (kind == "count") != bool(bounds):
            return "count takes exactly, at_most or at_least (and only count does)"
        if (kind == "guarded") != (self.by is not None):
            return "guarded needs by: (and only guarded takes it)"
        if (kind == "cleanup") != (self.after is not None):
            return "cleanup needs after: (and only cleanup takes it)"
        if kind == "order" and self.order is not None and len(self.order) < 2:
            return "order needs at least two commands"
        if not self.strict and kind != "order":
            return "strict: applies to order only"
        if self.when is not None and kind not in ("guarded", "cleanup"):
            return "when: applies to guarded and cleanup only"
        if kind == "guarded" and self.when == "always":
            return "guarded takes when: success or failure"
        return None

    @property
    def kind(self) -> str:
        return next(k for k in KINDS if getattr(self, k) is not None)


@record(frozen=True, kw_only=True)
class ContractFile:
    checker: CheckerSpec = keyed(default_factory=CheckerSpec)
    commands: dict[str, Operand] = keyed(default_factory=dict)
    contracts: list[dict[str, Any]] = keyed(default_factory=list)


class Contract:
    """A validated contract with where it was declared and its patterns resolved."""

    def __init__(
        self, spec: ContractSpec, origin: str, line: int, commands: dict[str, Operand]
    ) -> None:
        self.spec = spec
        self.origin = origin
        self.line = line
        self.commands = commands

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def kind(self) -> str:
        return self.spec.kind

    def patterns(self, operand: Operand) -> list[Pattern]:
        """An operand's patterns; a name defined under `commands:` expands to its patterns."""
        return Contract.expand(operand, self.commands)

    @staticmethod
    def expand(
        operand: Operand, commands: dict[str, Operand], expanding: tuple[str, ...] = ()
    ) -> list[Pattern]:
        items = [operand] if isinstance(operand, str) else operand
        found: list[Pattern] = []
        for item in items:
            expanded = commands.get(item)
            if expanded is None:
                found.append(parse_pattern(item))
            elif item in expanding:
                raise PatternError(f"command name {item!r} is defined in terms of itself")
            else:
                found += Contract.expand(expanded, commands, (*expanding, item))
        return found

    def label(self, operand: Operand) -> str:
        items = [operand] if isinstance(operand, str) else operand
        return " | ".join(items)


class Contracts:
    """Everything a document declares for the checker: how to read it, and what it promises."""

    def __init__(self, checker: CheckerSpec, contracts: list[Contract], origins: list[str]):
        self.checker = checker
        self.contracts = contracts
        self.origins = origins


def sidecar_of(path: Path) -> Path:
    return path.with_name(path.stem + SIDECAR_SUFFIX)


# Where a declaration came from: the file shown, its data, its key lines, its commented keys.
Layer = tuple[str, dict[str, Any], dict[KeyPath, int], frozenset[KeyPath]]
RawContract = tuple[str, dict[KeyPath, int], int, Any]


def _layers(source: SourceDocument, base: Path | None) -> tuple[list[Layer], list[Diagnostic]]:
    """The declarations of `source`: its frontmatter, then its sidecar file when there is one."""
    layers: list[Layer] = []
    diagnostics: list[Diagnostic] = []
    front: dict[str, Any] = {
        k: source.metadata[k] for k in ("contracts", "checker") if k in source.metadata
    }
    if front:
        layers.append((source.display, front, dict(source.key_lines), source.commented))
    sidecar = sidecar_of(source.path)
    if not present(sidecar):
        return layers, diagnostics
    shown = display_path(sidecar, base)
    try:
        located = load_located(read_text(sidecar), display=shown, rule="contract-spec")
    except FixloopError as exc:
        return layers, diagnostics + exc.diagnostics
    except (OSError, UnicodeDecodeError) as exc:
        diagnostics.append(Diagnostic(shown, 1, 1, "contract-spec", f"cannot read it: {exc}"))
        return layers, diagnostics
    data = {} if located.data is None else located.data
    if not isinstance(data, dict):
        diagnostics.append(Diagnostic(shown, 1, 1, "contract-spec", "expected a mapping"))
        return layers, diagnostics
    layers.append((shown, data, located.key_lines, located.commented))
    return layers, diagnostics


def _contract(
    raw: RawContract, commands: dict[str, Operand], seen: dict[str, str]
) -> Contract | list[Diagnostic]:
    """The contract, or every problem of its declaration at once (not the first of each stage:
    a fix should not reveal the next problem)."""
    shown, lines, index, item = raw
    line = line_of(lines, ("contracts", index))
    problems: list[Diagnostic] = []
    spec: ContractSpec | None = None
    try:
        spec = built(ContractSpec, item)
    except Refused as exc:
        problems += exc.diagnostics(
            display=shown, rule="contract-spec", key_lines=lines, prefix=("contracts", index)
        )
    ident = item.get("id") if isinstance(item, dict) else None
    if isinstance(ident, str) and ident in seen:
        message = f"duplicate contract id {ident!r} (first in {seen[ident]})"
        problems.append(Diagnostic(shown, line, 1, "contract-spec", message))
    elif isinstance(ident, str) and ident in RESERVED_IDS:
        message = f"contract id {ident!r} is the id of a rule fixloop reports; choose another"
        problems.append(Diagnostic(shown, line, 1, "contract-spec", message))
    for key, operand in _raw_operands(item):
        try:
            Contract.expand(operand, commands)
        except PatternError as exc:
            where = line_of(lines, ("contracts", index, key))
            message = f"contracts[{index}].{key}: {exc}"
            problems.append(Diagnostic(shown, where, 1, "contract-spec", message))
    if problems or spec is None:
        return problems
    seen[spec.id] = f"{shown}:{line}"
    return Contract(spec, shown, line, commands)


def _raw_operands(item: Any) -> list[tuple[str, Operand]]:
    """The command operands of a declaration that may not validate: the texts and lists of
    texts under the keys that take patterns."""
    if not isinstance(item, dict):
        return []
    found: list[tuple[str, Operand]] = []
    for key in ("count", "guarded", "by", "forbidden", "required", "cleanup", "after"):
        value = item.get(key)
        if isinstance(value, str) or (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):
            found.append((key, value))
    for value in item.get("order") or [] if isinstance(item.get("order"), list) else []:
        if isinstance(value, str) or (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):
            found.append(("order", value))
    return found


def load_contracts(
    source: SourceDocument, base: Path | None = None
) -> tuple[Contracts, list[Diagnostic]]:
    """Merge the frontmatter and sidecar declarations of `source`; problems become diagnostics."""
    layers, diagnostics = _layers(source, base)
    checker_data: dict[str, Any] = {}
    commands: dict[str, Operand] = {}
    raw: list[RawContract] = []
    for shown, data, lines, commented in layers:
        diagnostics += _cut_reasons(shown, lines, commented)
        try:
            parsed = built(ContractFile, data)
        except Refused as exc:
            diagnostics += exc.diagnostics(display=shown, rule="contract-spec", key_lines=lines)
            # The contracts are still read, so that each of their problems shows now too.
            listed = data.get("contracts")
            if isinstance(listed, list) and not any(
                e["loc"][:1] == ("contracts",) for e in exc.errors()
            ):
                raw += [(shown, lines, i, item) for i, item in enumerate(listed)]
            continue
        checker_data.update(data.get("checker") or {})
        commands.update(parsed.commands)
        commands.update(parsed.checker.commands)
        raw += [(shown, lines, i, item) for i, item in enumerate(parsed.contracts)]
    failed = any(d.severity is Severity.ERROR for d in diagnostics)
    checker = CheckerSpec() if failed else built(CheckerSpec, checker_data)
    contracts: list[Contract] = []
    seen: dict[str, str] = {}
    for item in raw:
        made = _contract(item, commands, seen)
        if isinstance(made, list):
            diagnostics += made
        else:
            contracts.append(made)
    return Contracts(checker, contracts, [layer[0] for layer in layers]), diagnostics


def _cut_reasons(
    shown: str, lines: dict[KeyPath, int], commented: frozenset[KeyPath]
) -> list[Diagnostic]:
    """A `why:` whose plain text runs into ` #`: YAML reads the rest of the line as a comment."""
    return [
        Diagnostic(
            shown,
            line_of(lines, path),
            1,
            "contract-spec",
            "why: YAML ends this text at ' #' (the rest of the line is a comment); "
            "quote the whole reason to keep it",
            Severity.WARNING,
        )
        for path in sorted(commented, key=str)
        if len(path) == 3 and path[0] == "contracts" and path[2] == "why"
    ]


def _operands(spec: ContractSpec) -> list[Operand]:
    found: list[Operand] = []
    for key in ("count", "guarded", "by", "forbidden", "required", "cleanup", "after"):
        value = getattr(spec, key)
        if value is not None:
            found.append(value)
    found += spec.order or []
    return found
