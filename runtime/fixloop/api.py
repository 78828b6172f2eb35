"""The two public entry points that are not a class of their own: loading a pack, checking one."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fixloop.checker.checking import CheckResult, check_paths
from fixloop.diagnostics import Diagnostic, FixloopError, Severity, display_path
from fixloop.documents.discovery import NOT_A_PACK, is_pack_root
from fixloop.documents.pack import Pack, default_pack_root
from fixloop.documents.pack import load_pack as _load_pack


def load_pack(root: Path | str | None = None) -> Pack:
    """The pack at `root`, a path or a string (default: the one fixloop ships); FixloopError
    (one line naming the folder) when it is no pack, or when its documents have errors."""
    folder = default_pack_root() if root is None else Path(root)
    if not folder.is_dir() or not is_pack_root(folder):
        problem = "no such folder" if not folder.is_dir() else NOT_A_PACK
        raise FixloopError(Diagnostic(display_path(folder), 1, 1, "usage", problem), exit_code=2)
    pack, diagnostics = _load_pack(folder)
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    if errors:
        raise FixloopError(errors, exit_code=1)
    return pack


def check(paths: Sequence[Path]) -> CheckResult:
    """The contract checker over documents or packs (`fixloop check`): its diagnostics."""
    return check_paths(paths)


__all__ = ["check", "load_pack"]
