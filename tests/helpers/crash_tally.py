"""How many crash points the crash matrix covered, per step, for pytest's closing summary."""

from __future__ import annotations

COVERED: dict[str, int] = {}
VIOLATIONS: list[str] = []


def summary() -> str | None:
    if not COVERED:
        return None
    total = sum(COVERED.values())
    detail = ", ".join(f"{step} {count}" for step, count in COVERED.items())
    return (
        f"crash matrix: {total} crash points covered ({detail}); "
        f"{len(VIOLATIONS)} invariant violation(s)"
    )
