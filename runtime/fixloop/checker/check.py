"""`fixloop check` as a library call: collect documents, apply generic rules and contracts.

A path may be a pack root (a folder with `agents/`, `commands/` or `workflows/`; with a
`plugin.json` the pack validation runs too), any other folder (every Markdown file below it), a
Markdown document, or a `<stem>.contracts.yaml` sidecar (its document is checked).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from fixloop.checker.document import CheckedDocument, check_document, kind_of
from fixloop.checker.evaluate import Evaluator
from fixloop.checker.language import SIDECAR_SUFFIX, Contract
from fixloop.checker.rules import RULES, check_rules
from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.documents.pack import MANIFEST
from fixloop.documents.source import load_document
from fixloop.documents.validate import PACK_RULES, validate_pack
from fixloop.schemas import registry

PACK_FOLDERS = ("workflows", "agents", "commands")
_SKIP_DIRS = {".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"}


@dataclass
class CheckResult:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    documents: list[CheckedDocument] = field(default_factory=list)
    rule_help: dict[str, str] = field(default_factory=dict)

    @property
    def contracts(self) -> list[tuple[CheckedDocument, Contract]]:
        return [(d, c) for d in self.documents for c in d.contracts.contracts]


class Library:
    """Checked documents by path, loaded once, so briefs shared by workflows parse once."""

    def __init__(self, base: Path | None) -> None:
        self.base = base
        self.cache: dict[Path, CheckedDocument | None] = {}
        self.failures: list[Diagnostic] = []

    def get(self, path: Path) -> CheckedDocument | None:
        key = path.resolve()
        if key not in self.cache:
            if not key.is_file():
                self.cache[key] = None
            else:
                try:
                    source = load_document(path, self.base)
                except FixloopError as exc:
                    self.failures += exc.diagnostics
                    self.cache[key] = None
                else:
                    self.cache[key] = check_document(source, kind_of(path), self.base)
        return self.cache[key]


def is_pack(path: Path) -> bool:
    return path.is_dir() and any((path / folder).is_dir() for folder in PACK_FOLDERS)


def _documents(path: Path) -> Iterator[Path]:
    if is_pack(path):
        for folder in PACK_FOLDERS:
            yield from sorted((path / folder).glob("*.md"))
    elif path.is_dir():
        for found in sorted(path.rglob("*.md")):
            if not _SKIP_DIRS & set(found.relative_to(path).parts):
                yield found
    elif path.name.endswith(SIDECAR_SUFFIX):
        yield path.with_name(path.name.removesuffix(SIDECAR_SUFFIX) + ".md")
    else:
        yield path


def contract_diagnostics(
    document: CheckedDocument, contract: Contract, library: Library
) -> list[Diagnostic]:
    return Evaluator(document, library.get).check(contract)


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


def check_paths(paths: Sequence[Path], base: Path | None = None) -> CheckResult:
    """Check every document under `paths`; a path that is not there is a FixloopError (exit 2)."""
    with _collector_paused():
        return _check_paths(paths, base)


def _check_paths(paths: Sequence[Path], base: Path | None) -> CheckResult:
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise FixloopError(
            [
                Diagnostic(display_path(p, base), 1, 1, "usage", "no such file or directory")
                for p in missing
            ]
        )
    library = Library(base)
    result = CheckResult(rule_help={**PACK_RULES, **{k: r.help for k, r in RULES.items()}})
    seen: set[Path] = set()
    for path in paths:
        if is_pack(path) and (path / MANIFEST).is_file():
            _, found = validate_pack(path, base, known_outputs=registry.is_known)
            result.diagnostics += found
        for document_path in _documents(path):
            if document_path.resolve() in seen:
                continue
            seen.add(document_path.resolve())
            if not document_path.is_file():
                result.diagnostics.append(
                    Diagnostic(display_path(document_path, base), 1, 1, "usage", "no such document")
                )
                continue
            document = library.get(document_path)
            if document is None:
                continue
            result.documents.append(document)
            result.diagnostics += check_document_rules(document, library)
    result.diagnostics += library.failures
    for _document, contract in result.contracts:
        result.rule_help[contract.id] = contract.spec.why or f"{contract.kind} contract"
    result.diagnostics = sorted(set(result.diagnostics))
    return result


def check_document_rules(document: CheckedDocument, library: Library) -> list[Diagnostic]:
    """Generic rules plus every contract of one document."""
    found = list(document.diagnostics) + check_rules(document)
    for contract in document.contracts.contracts:
        found += contract_diagnostics(document, contract, library)
    return found
