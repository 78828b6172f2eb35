"""`fixloop check` as a library call: collect documents, apply generic rules and contracts.

A path may be a pack root (its documents as Claude Code finds them, plus fixloop's `workflows/`;
the pack validation of `fixloop validate` runs too), any other folder (every Markdown file below
it), a Markdown document, or a `<stem>.contracts.yaml` sidecar (its document is checked). Each
document is judged by the profile of the settings that apply where it lives (`config.py`), unless
one is given; a sidecar whose document is not next to it is an error.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import field
from pathlib import Path

from fixloop.checker import bash_n, suppressions
from fixloop.checker.document import CheckedDocument, check_document
from fixloop.checker.evaluate import Evaluator
from fixloop.checker.language import Contract
from fixloop.checker.rules import RULES, bash_refusals, check_rules
from fixloop.checker.scoped import spared
from fixloop.diagnostics import (
    Diagnostic,
    FixloopError,
    Severity,
    display_path,
    resolutions_remembered,
)
from fixloop.documents.config import Profile, find_config
from fixloop.documents.discovery import (
    SIDECAR_SUFFIX,
    is_pack_root,
    manifest_data,
    orphan_diagnostic,
    orphan_sidecars,
    pack_files,
)
from fixloop.documents.files import resolved
from fixloop.documents.pack_rules import PACK_RULES
from fixloop.documents.reading import read_source
from fixloop.documents.source import forget_read_documents
from fixloop.records import record, replace

_SKIP_DIRS = {".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"}
_NOTHING_TO_CHECK = "no Markdown document below this folder, and it is not a pack"
_KINDS = {"agents": "agent", "commands": "command", "workflows": "workflow", "skills": "skill"}


@record
class CheckResult:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    documents: list[CheckedDocument] = field(default_factory=list)
    rule_help: dict[str, str] = field(default_factory=dict)
    folded: int = 0  # follow-on problems of documents that did not load, left out

    @property
    def contracts(self) -> list[tuple[CheckedDocument, Contract]]:
        return [(d, c) for d in self.documents for c in d.contracts.contracts]


def kind_of(path: Path) -> str:
    """What a document is to its pack: agent, command, skill or workflow by the nearest folder
    so named (`commands/ns/x.md` is a command), else a plain document."""
    for folder in resolved(path).parents:
        if folder.name in _KINDS:
            return _KINDS[folder.name]
        if is_pack_root(folder):
            break
    return "document"


class Library:
    """Checked documents by path, loaded once, so briefs shared by workflows parse once."""

    def __init__(self, base: Path | None, profile: Profile | None = None) -> None:
        self.base = base
        self.profile = profile
        self.cache: dict[Path, CheckedDocument | None] = {}
        self.failures: list[Diagnostic] = []
        self.broken: set[Path] = set()  # documents that are there but do not load
        self.profiles: dict[Path, Profile] = {}  # by folder, found once per check

    def profile_of(self, path: Path) -> Profile:
        if self.profile is not None:
            return self.profile
        folder = resolved(path).parent
        if folder not in self.profiles:
            self.profiles[folder] = find_config(folder).profile()
        return self.profiles[folder]

    def get(self, path: Path) -> CheckedDocument | None:
        key = resolved(path)
        if key not in self.cache:
            self.cache[key] = None
            if key.exists() or path.is_symlink():  # reading reports what is not a file
                profile = self.profile_of(key)
                base = self.base or Path.cwd()
                source = read_source(path, base, profile, self.failures)
                if source is None:
                    self.broken.add(key)
                else:
                    self.cache[key] = check_document(source, kind_of(path), self.base, profile)
        return self.cache[key]


def is_pack(path: Path) -> bool:
    return path.is_dir() and is_pack_root(path)


def _markdown_below(folder: Path) -> Iterator[Path]:
    for found in sorted(folder.rglob("*.md")):
        if not _SKIP_DIRS & set(found.relative_to(folder).parts):
            yield found


def _documents(path: Path) -> Iterator[Path]:
    if is_pack(path):
        files = pack_files(path, manifest_data(path))
        yield from files.markdown()
        # A skill's other documents (`references/*.md`) are read by the model with its SKILL.md,
        # and their bash is run as much as the skill's own.
        for _, skill in files.skills:
            if skill.parent != path:  # a skill at the root: its folder is the whole pack
                yield from (p for p in _markdown_below(skill.parent) if p != skill)
    elif path.is_dir():
        yield from _markdown_below(path)
    elif path.name.endswith(SIDECAR_SUFFIX):
        yield path.with_name(path.name.removesuffix(SIDECAR_SUFFIX) + ".md")
    else:
        yield path


def contract_diagnostics(
    document: CheckedDocument, contract: Contract, library: Library
) -> list[Diagnostic]:
    return Evaluator(document, library.get, library.broken).check(contract)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Run without the cycle collector; afterwards, what was built joins the oldest generation.

    A check keeps every document's syntax tree and events alive until it returns and builds no
    reference cycles, so each collection re-scanned every tree built so far: a third of the time
    of a 1,000-document check. `freeze` + `unfreeze` moves the objects into the oldest generation
    without scanning them, so the first collection after the check does not pay for them either.
    Left alone when the collector is off or the process froze objects of its own.
    """
    if not gc.isenabled() or gc.get_freeze_count():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.unfreeze()
        gc.enable()


def check_paths(
    paths: Sequence[Path], base: Path | None = None, profile: Profile | None = None
) -> CheckResult:
    """Check every document under `paths`; a path that is not there is a FixloopError (exit 2).

    `profile`: judge every document by it, instead of by the settings where each lives.
    """
    forget_read_documents()  # every check reads its documents afresh, once
    bash_n.start_check()
    try:
        with _collector_paused(), resolutions_remembered():
            return _check_paths(paths, base, profile)
    finally:
        forget_read_documents()


def _check_paths(paths: Sequence[Path], base: Path | None, profile: Profile | None) -> CheckResult:
    missing = [p for p in paths if not p.exists()]
    # A folder with nothing to check is a wrong path (a typo, a checkout not made), not a pass.
    empty = [
        p for p in paths if p.is_dir() and not is_pack(p) and next(_documents(p), None) is None
    ]
    if empty:
        raise FixloopError(
            [Diagnostic(display_path(p, base), 1, 1, "usage", _NOTHING_TO_CHECK) for p in empty]
        )
    if missing:
        raise FixloopError(
            [
                Diagnostic(display_path(p, base), 1, 1, "usage", "no such file or directory")
                for p in missing
            ]
        )
    library = Library(base, profile)
    result = CheckResult(rule_help={**PACK_RULES, **{k: r.help for k, r in RULES.items()}})
    seen: set[Path] = set()
    for path in paths:
        if is_pack(path):
            result.diagnostics += _pack_problems(path, base, profile, result)
        elif path.is_dir():
            result.diagnostics += [
                orphan_diagnostic(s, display_path(s, base)) for s in orphan_sidecars(path)
            ]
        elif path.name.endswith(SIDECAR_SUFFIX) and not _documented(path):
            result.diagnostics.append(orphan_diagnostic(path, display_path(path, base)))
            continue
        for document_path in _documents(path):
            if resolved(document_path) in seen:
                continue
            seen.add(resolved(document_path))
            if not (document_path.exists() or document_path.is_symlink()):
                result.diagnostics.append(
                    Diagnostic(display_path(document_path, base), 1, 1, "usage", "no such document")
                )
                continue
            document = library.get(document_path)
            if document is None:
                continue
            result.documents.append(document)
            result.diagnostics += check_document_rules(document, library, result)
    result.diagnostics += library.failures
    result.diagnostics += bash_refusals(result.documents)
    for _document, contract in result.contracts:
        result.rule_help[contract.id] = contract.spec.why or f"{contract.kind} contract"
    loaded = [d for d in library.cache.values() if d is not None]
    known = set(result.rule_help) | {c.id for d in loaded for c in d.contracts.contracts}
    result.diagnostics = folded(sorted(set(suppressions.apply(result.diagnostics, loaded, known))))
    return result


# A reason in parentheses at the end; compiled on first use (`re` keeps it): a clean check has
# nothing to fold.
_WHY = r" \([^()]*\)$"


def folded(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """One line per finding: the same command found by contracts of several documents (two
    workflows dispatching one brief) is one line naming every contract, not a line each."""
    kept: dict[tuple[str, int, int, str], Diagnostic] = {}
    for diagnostic in diagnostics:
        key = (
            diagnostic.path,
            diagnostic.line,
            diagnostic.col,
            re.sub(_WHY, "", diagnostic.message),
        )
        first = kept.get(key)
        if first is None:
            kept[key] = diagnostic
        elif diagnostic.rule != first.rule and diagnostic.rule not in first.message:
            kept[key] = replace(first, message=f"{first.message} [also {diagnostic.rule}]")
    return list(kept.values())


def _documented(sidecar: Path) -> bool:
    return sidecar.with_name(sidecar.name.removesuffix(SIDECAR_SUFFIX) + ".md").is_file()


def _pack_problems(
    root: Path, base: Path | None, profile: Profile | None, result: CheckResult
) -> list[Diagnostic]:
    # Imported here: checking documents needs neither the pack model nor the result schemas.
    from fixloop.documents.validate import validate_pack
    from fixloop.schemas import registry

    pack, found = validate_pack(root, base, known_outputs=registry.is_known, profile=profile)
    result.folded += pack.folded
    return found


def check_document_rules(
    document: CheckedDocument, library: Library, result: CheckResult | None = None
) -> list[Diagnostic]:
    """Generic rules plus every contract of one document."""
    found = list(document.diagnostics)
    evaluator = Evaluator(document, library.get, library.broken)
    try:
        found += check_rules(document)
        for contract in document.contracts.contracts:
            found += evaluator.check(contract)
    except RecursionError:  # a last guard: nesting is capped where it is parsed (syntax.py)
        message = "nested too deeply for the checker's analysis; not all of it was checked"
        found.append(Diagnostic(document.display, 1, 1, "bash-syntax", message, Severity.WARNING))
    if result is not None:
        result.folded += evaluator.folded
    return spared(document, found)
