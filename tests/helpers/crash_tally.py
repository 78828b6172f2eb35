"""The crash matrices' shared parts: the crash switch's environment, the commands each step
ran, and how many crash points were covered, per step, for pytest's closing summary."""

from __future__ import annotations

import json
import os
from pathlib import Path

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


def crash_env(crash_at: str | None) -> dict[str, str]:
    """This process's environment for a fixloop process: killed at `crash_at` (the crash
    switch, FIXLOOP_CRASH_AT=STEP#N:K), or not at all."""
    env = {key: value for key, value in os.environ.items() if key != "FIXLOOP_CRASH_AT"}
    if crash_at is not None:
        env["FIXLOOP_CRASH_AT"] = crash_at
    return env


def step_commands(events: Path) -> dict[tuple[str, int], int]:
    """Commands each run of each step ran, by (step, N) as FIXLOOP_CRASH_AT=STEP#N:K counts,
    from a run's events.jsonl."""
    counts: dict[tuple[str, int], int] = {}
    for line in events.read_text().splitlines():
        event = json.loads(line)
        if event["event"] == "step":
            occurrence = 1 + sum(1 for step, _ in counts if step == event["step"])
            counts[event["step"], occurrence] = event["commands"]
    return counts
