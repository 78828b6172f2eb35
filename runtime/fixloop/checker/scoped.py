"""Which blocks a scope names, and the settings `checker.scoped` gives some blocks only.

One selection for contracts' `in:` and for scoped settings: steps by id (or all but some), then
narrowed to a bold label, a heading's section, or the N-th block. Scoped settings let a document
whose blocks run without `set -e` say that one step runs under it, and let a sidecar spare one
step or block a generic rule (a `# fixloop: ignore[…]` comment needs the document's own text).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fixloop.diagnostics import Diagnostic

if TYPE_CHECKING:
    from fixloop.checker.document import CheckedDocument, Unit
    from fixloop.checker.language import ScopeSpec


def steps_of(document: CheckedDocument, spec: ScopeSpec) -> tuple[list[Unit], list[str], str]:
    """The units of the steps `spec` names, the step names it names, and what they are."""
    named = [spec.step] if spec.step else (spec.steps or spec.except_steps or [])
    if spec.except_steps is not None:
        units = [u for u in document.units if u.step not in spec.except_steps]
        return units, named, f"the document except step(s) {', '.join(spec.except_steps)}"
    if named:
        return [u for u in document.units if u.step in named], named, f"step {', '.join(named)}"
    return list(document.units), named, "the document"


def narrowed(spec: ScopeSpec, units: list[Unit], what: str) -> tuple[list[Unit], str, str]:
    """The blocks of `units` a label, section or block number picks; what was not found."""
    # Here, not at the top: the contract language imports the rules, which need this module.
    from fixloop.checker.language import words_in

    if spec.label is not None:
        units = [u for u in units if u.label is not None and words_in(spec.label, u.label)]
        if not units:
            return units, what, f"block labelled {spec.label!r}"
        what = f"the block(s) labelled {spec.label!r} of {what}"
    if spec.section is not None:
        units = [u for u in units if any(words_in(spec.section, t) for t in u.block.section)]
        if not units:
            return units, what, f"block under a heading {spec.section!r}"
        what = f"section {spec.section!r} of {what}"
    if spec.block is not None:
        if spec.block > len(units):
            return [], what, f"block {spec.block} (there are {len(units)})"
        units = [units[spec.block - 1]]
        what = f"block {spec.block} of {what}"
    return units, what, ""


def units_in(document: CheckedDocument, spec: ScopeSpec) -> list[Unit]:
    units, _, what = steps_of(document, spec)
    return narrowed(spec, units, what)[0]


def errexit_of(document: CheckedDocument, unit: Unit) -> bool:
    """Does the shell of `unit` start under `set -e`? The last scoped setting naming it wins,
    then `checker.errexit`, then the runner's semantics."""
    checker = document.contracts.checker
    for setting in reversed(checker.scoped):
        if setting.errexit is not None and any(
            u is unit for u in units_in(document, setting.scope)
        ):
            return setting.errexit
    return document.runner if checker.errexit is None else checker.errexit


def spared(document: CheckedDocument, found: list[Diagnostic]) -> list[Diagnostic]:
    """`found` without what a scoped `ignore:` spares (findings inside the blocks it names)."""
    settings = [s for s in document.contracts.checker.scoped if s.ignore]
    if not settings:
        return found
    spans = [
        (set(setting.ignore), unit.block.fence_line, unit.block.end_line)
        for setting in settings
        for unit in units_in(document, setting.scope)
    ]
    return [
        d
        for d in found
        if d.path != document.display
        or not any(d.rule in rules and low <= d.line <= high for rules, low, high in spans)
    ]
