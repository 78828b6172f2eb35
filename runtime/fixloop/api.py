"""The two public entry points that are not a class of their own: loading a pack, checking one."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fixloop.checker.checking import CheckResult, check_paths
from fixloop.diagnostics import FixloopError, Severity
from fixloop.documents.pack import Pack, default_pack_root
from fixloop.documents.pack import load_pack as _load_pack


def load_pack(root: Path | None = None) -> Pack:
    """The pack at `root` (default: the one fixloop ships); FixloopError when it has errors."""
    pack, diagnostics = _load_pack(root or default_pack_root())
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    if errors:
        raise FixloopError(errors, exit_code=1)
    return pack


def check(paths: Sequence[Path]) -> CheckResult:
    """The contract checker over documents or packs (`fixloop check`): its diagnostics."""
    return check_paths(paths)


__all__ = ["check", "load_pack"]
