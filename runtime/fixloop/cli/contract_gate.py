"""The document is the gate at run time too: a pack of your own is checked before it runs.

`fixloop check` proves a pack's promises in CI; a workflow command that runs a pack other than
the bundled one (`--pack PATH`) proves them again first, with the same checker
(`fixloop.checker.check`) and the pack's own settings (`fixloop.toml`: select, ignore). An error
refuses the run before anything is created, in one line naming the first broken contract (a
contract's error first, then any other rule's), exit 2; `--no-contract-check` runs it anyway.

The bundled pack is checked where it is built (its tests run every contract), so it pays nothing
here. A pack that passed is remembered by the digest of its documents, under the repository's
state folder (`.git/fixloop/contract-checks/<digest>`): the check's cost is paid once per change
of the pack. Only a pass is remembered: a refusal writes nothing, so a refused run leaves the
repository exactly as it was.

What the digest covers: `fixloop.documents.digest`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from fixloop import checker
from fixloop.diagnostics import Diagnostic, FixloopError, Severity, display_path
from fixloop.documents.config import find_config
from fixloop.documents.digest import pack_digest
from fixloop.documents.discovery import bundled_pack_root
from fixloop.gitrepo import state_dir_of

CACHE_FOLDER = "contract-checks"
FLAG = "--no-contract-check"


def is_bundled(root: Path) -> bool:
    return root.resolve() == bundled_pack_root().resolve()


@dataclass(frozen=True)
class Passed:
    """A pack that passed its check (or was remembered as passing)."""

    root: Path
    digest: str
    remembered: Path | None  # its entry in the state folder; None: no repository to hold it

    def remember(self) -> None:
        """Keep the pass, once the run has made the state folder: bad input creates nothing,
        not even this."""
        entry = self.remembered
        if entry is None or entry.is_file() or not entry.parent.parent.is_dir():
            return
        entry.parent.mkdir(exist_ok=True)
        entry.write_text(json.dumps({"pack": str(self.root.resolve()), "ok": True}) + "\n")


def gate(root: Path, state_dir: Path | None) -> Passed | None:
    """Check the pack at `root` unless it is the bundled one (None) or it passed before; a
    violation is a FixloopError (exit 2)."""
    if is_bundled(root):
        return None
    digest = pack_digest(root)
    entry = state_dir / CACHE_FOLDER / digest if state_dir is not None else None
    if entry is None or not entry.is_file():
        _refuse_violations(root)
    return Passed(root, digest, entry)


def state_dir_or_none(repo: object) -> Path | None:
    """The repository's state folder, where a pass is remembered; None when `repo` is not a
    repository (the command's own checks say so, after the gate)."""
    if not isinstance(repo, Path):
        return None
    try:
        return state_dir_of(repo)
    except FixloopError:
        return None


def _refuse_violations(root: Path) -> None:
    result = checker.check([root], base=root)
    config = find_config(root)
    errors = [
        d for d in result.diagnostics if d.severity is Severity.ERROR and config.wanted(d, root)
    ]
    if not errors:
        return
    contracts = {contract.spec.id for _, contract in result.contracts}
    first = min(errors, key=lambda d: d.rule not in contracts)  # a contract's error first
    kind = "contract" if first.rule in contracts else "rule"
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    shown = display_path(root)
    problem = (
        f"{first.message}{more}; the pack at {shown} breaks this {kind}, so it does not run "
        f"(`fixloop check {shown}` shows every problem; {FLAG} runs it anyway)"
    )
    where = Path(first.path) if Path(first.path).is_absolute() else root / first.path
    raise FixloopError(
        Diagnostic(display_path(where), first.line, first.col, first.rule, problem), exit_code=2
    )


__all__ = [
    "CACHE_FOLDER",
    "FLAG",
    "Passed",
    "gate",
    "is_bundled",
    "pack_digest",
    "state_dir_or_none",
]
