"""The contract checker: bash read as bash, generic rules, and the contracts documents declare.

The one public entry is `check`: paths in, the report out (`CheckResult`: diagnostics sorted by
file and line, the documents and contracts checked, what each rule id means).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fixloop.checker.checking import CheckResult
    from fixloop.documents.config import Profile

__all__ = ["check"]


def check(
    paths: Sequence[Path | str], *, profile: Profile | None = None, base: Path | None = None
) -> CheckResult:
    """Check packs, folders, documents or sidecars; a path that is not there, or a folder with
    nothing to check, is a FixloopError (its diagnostics say which).

    `profile`: judge every document by it instead of by the settings where each lives; `base`:
    the folder the reported paths are relative to (default: the current one).
    """
    # Imported here: the checker's modules import this package, and most of them need none of
    # what a whole check loads.
    from fixloop.checker.checking import check_paths

    return check_paths([Path(p) for p in paths], base=base, profile=profile)
