"""pytest plugin: a pack's contracts as test items, so its CI asserts them with plain `pytest`.

Registered through the `pytest11` entry point, so it loads in every pytest run of an environment
where fixloop is installed; it is therefore inert by default. It imports nothing of the checker
until pytest offers it a Markdown file that declares contracts (a `contracts:` list in its
frontmatter, or a `<stem>.contracts.yaml` sidecar next to it), or a document of a pack (a file
under a pack's `agents/`, `commands/`, `skills/` or `workflows/`). Such a document becomes one
test file: one item per contract, named after the contract's id, and for a pack's document a
`pack` item that fails with what `fixloop validate` finds in it. A document whose declarations do
not load gives one failing item, never a collection error; a `.contracts.yaml` whose document is
not next to it is a failing `orphan` item.

    pytest workflows/                 # every document with contracts under workflows/
    pytest workflows/review-fix.md    # one document

ini options: `fixloop_contracts = false` switches the plugin off; `fixloop_generic_rules = true`
adds one `generic-rules` item per document (the rules `fixloop check` applies without contracts).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from fixloop.documents.files import resolved

if TYPE_CHECKING:
    from fixloop.checker.check import Library
    from fixloop.checker.document import CheckedDocument
    from fixloop.checker.language import Contract
    from fixloop.diagnostics import Diagnostic

SIDECAR_SUFFIX = ".contracts.yaml"
_PACK_KINDS = ("agents", "commands", "skills", "workflows")
_VALIDATED = pytest.StashKey[dict[Path, list["Diagnostic"]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "fixloop_contracts",
        type="bool",
        default=True,
        help="collect the contracts declared in Markdown documents as test items (fixloop)",
    )
    parser.addini(
        "fixloop_generic_rules",
        type="bool",
        default=False,
        help="add a generic-rules item per document with contracts (fixloop)",
    )


def _declares_contracts(path: Path) -> bool:
    """Cheap test before any import: a sidecar exists, or the frontmatter mentions contracts."""
    if path.with_name(path.stem + SIDECAR_SUFFIX).is_file():
        return True
    try:
        with path.open(encoding="utf-8") as handle:
            if handle.readline().rstrip("\r\n") != "---":
                return False
            for line in handle:
                if line.rstrip("\r\n") in ("---", "..."):
                    return False
                if line.startswith("contracts:"):
                    return True
    except (OSError, UnicodeDecodeError):
        return False
    return False


def _pack_of(path: Path) -> Path | None:
    """The pack root when `path` is one of its documents (cheap: no checker import)."""
    from fixloop.documents.discovery import find_pack_root

    root = find_pack_root(path.parent)
    if root is None:
        return None
    parts = resolved(path).relative_to(root).parts
    return root if len(parts) > 1 and parts[0] in _PACK_KINDS else None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if not parent.config.getini("fixloop_contracts"):
        return None
    if file_path.name.endswith(SIDECAR_SUFFIX):
        document = file_path.name.removesuffix(SIDECAR_SUFFIX) + ".md"
        if file_path.with_name(document).is_file():
            return None
        return OrphanFile.from_parent(parent, path=file_path)
    if file_path.suffix != ".md":
        return None
    if not _declares_contracts(file_path) and _pack_of(file_path) is None:
        return None
    return ContractsFile.from_parent(parent, path=file_path)


def _validated(config: pytest.Config, root: Path) -> list[Diagnostic]:
    """`fixloop validate` of the pack, once per pack and session."""
    from fixloop.documents.validate import validate_pack
    from fixloop.schemas import registry

    cache = config.stash.setdefault(_VALIDATED, {})
    if root not in cache:
        cache[root] = validate_pack(root, Path(str(config.rootpath)), registry.is_known)[1]
    return cache[root]


class ContractViolation(Exception):
    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = diagnostics
        super().__init__("\n".join(d.format() for d in diagnostics))


class ContractsFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        from fixloop.checker.check import Library

        library = Library(Path(str(self.config.rootpath)))
        root = _pack_of(self.path)
        if root is not None:
            from fixloop.diagnostics import display_path

            shown = display_path(self.path, Path(str(self.config.rootpath)))
            found = [d for d in _validated(self.config, root) if d.path == shown]
            yield ContractItem.from_parent(self, name="pack", problems=found)
        document = library.get(self.path)
        if document is None:
            if root is None:
                yield ContractItem.from_parent(self, name="load", problems=library.failures)
            return
        if document.diagnostics:
            yield ContractItem.from_parent(
                self, name="contract-spec", problems=document.diagnostics
            )
        for contract in document.contracts.contracts:
            yield ContractItem.from_parent(
                self, name=contract.id, library=library, document=document, contract=contract
            )
        if self.config.getini("fixloop_generic_rules"):
            yield ContractItem.from_parent(
                self, name="generic-rules", library=library, document=document
            )


class OrphanFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        from fixloop.diagnostics import display_path
        from fixloop.documents.discovery import orphan_diagnostic

        shown = display_path(self.path, Path(str(self.config.rootpath)))
        yield ContractItem.from_parent(
            self, name="orphan", problems=[orphan_diagnostic(self.path, shown)]
        )


class ContractItem(pytest.Item):
    def __init__(
        self,
        *,
        library: Library | None = None,
        document: CheckedDocument | None = None,
        contract: Contract | None = None,
        problems: list[Diagnostic] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.library = library
        self.document = document
        self.contract = contract
        self.problems = problems

    def runtest(self) -> None:
        from fixloop.checker import bash_n
        from fixloop.checker.check import contract_diagnostics
        from fixloop.checker.rules import bash_refusals, check_rules
        from fixloop.checker.suppressions import apply
        from fixloop.diagnostics import Severity

        if self.problems is not None:
            found = list(self.problems)
        elif self.contract is not None and self.document is not None and self.library:
            found = contract_diagnostics(self.document, self.contract, self.library)
        elif self.document is not None:
            bash_n.start_check()  # each item asks bash about its own document
            found = check_rules(self.document) + bash_refusals([self.document])
        else:
            found = []
        if self.document is not None:  # `# fixloop: ignore[…]` silences here as in `fixloop check`
            found = apply(found, [self.document], {d.rule for d in found})
        errors = [d for d in found if d.severity is Severity.ERROR]
        if errors:
            raise ContractViolation(errors)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str:
        if isinstance(excinfo.value, ContractViolation):
            why = f" ({self.contract.spec.why})" if self.contract and self.contract.spec.why else ""
            header = (
                f"contract {self.name} is violated{why}:"
                if self.contract is not None
                else f"{self.name}: {self.path.name} has problems:"
            )
            return "\n".join([header, *(d.format() for d in excinfo.value.diagnostics)])
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.contract.line - 1 if self.contract is not None else None
        return self.path, line, f"contract {self.name}"
