"""Phases as the GSD commands name them: `2`, `02` or `2.1`, and their `.planning/phases/` folder.

A phase folder is `.planning/phases/<padded>-<slug>/` (or just `<padded>/`), where the padded
phase has at least two digits before any decimal part: phase `2` is `02`, phase `2.1` is `02.1`.
"""

from __future__ import annotations

import re
from pathlib import Path

from fixloop.diagnostics import Diagnostic, FixloopError

PHASES_DIR = ".planning/phases"
_PHASE_NUMBER = re.compile(r"^[0-9]+(\.[0-9]+)*$")


def is_phase_number(text: str) -> bool:
    return bool(_PHASE_NUMBER.match(text))


def padded_phase(phase: str) -> str:
    """`2` → `02`, `2.1` → `02.1`, `12` → `12`."""
    whole, dot, rest = phase.partition(".")
    return f"{int(whole):02d}{dot}{rest}"


def phase_directory(repo: Path, phase: str) -> Path | None:
    """The one folder of `phase` under `.planning/phases/`, or None when there is none.

    Two folders for one phase (`02-auth`, `02-login`) are a FixloopError: guessing would fix, or
    review, the wrong phase."""
    root = repo / PHASES_DIR
    if not root.is_dir():
        return None
    padded = padded_phase(phase)
    found = sorted(
        path
        for path in root.iterdir()
        if path.is_dir() and (path.name == padded or path.name.startswith(f"{padded}-"))
    )
    if len(found) > 1:
        names = ", ".join(path.name for path in found)
        problem = f"phase {phase} names several folders in {PHASES_DIR}: {names}"
        raise FixloopError(Diagnostic(phase, 1, 1, "review-path", problem))
    return found[0] if found else None


__all__ = ["PHASES_DIR", "is_phase_number", "padded_phase", "phase_directory"]
