"""pytest plugin: a pack's contracts as test items, so its CI asserts them with plain `pytest`.

Registered through the `pytest11` entry point, so it loads in every pytest run of an environment
where fixloop is installed; it is therefore inert by default. It imports nothing of the checker
until pytest offers it a Markdown file that declares contracts (a `contracts:` list in its
frontmatter, or a `<stem>.contracts.yaml` sidecar next to it). Such a document becomes one test
file whose items are its contracts, one item per contract, named after the contract's id. A
document whose declarations do not load gives one failing item, never a collection error.

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

if TYPE_CHECKING:
    from fixloop.checker.check import Library
    from fixloop.checker.document import CheckedDocument
    from fixloop.checker.language import Contract
    from fixloop.diagnostics import Diagnostic

SIDECAR_SUFFIX = ".contracts.yaml"


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


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix != ".md" or not parent.config.getini("fixloop_contracts"):
        return None
    if not _declares_contracts(file_path):
        return None
    return ContractsFile.from_parent(parent, path=file_path)


class ContractViolation(Exception):
    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = diagnostics
        super().__init__("\n".join(d.format() for d in diagnostics))


class ContractsFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        from fixloop.checker.check import Library

        library = Library(Path(str(self.config.rootpath)))
        document = library.get(self.path)
        if document is None:
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
        from fixloop.checker.check import contract_diagnostics
        from fixloop.checker.rules import check_rules
        from fixloop.diagnostics import Severity

        if self.problems is not None:
            found = list(self.problems)
        elif self.contract is not None and self.document is not None and self.library:
            found = contract_diagnostics(self.document, self.contract, self.library)
        elif self.document is not None:
            found = check_rules(self.document)
        else:
            found = []
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
            header = f"contract {self.name} is violated{why}:"
            return "\n".join([header, *(d.format() for d in excinfo.value.diagnostics)])
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.contract.line - 1 if self.contract is not None else None
        return self.path, line, f"contract {self.name}"
