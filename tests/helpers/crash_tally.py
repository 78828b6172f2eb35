"""The crash matrices' shared parts: the crash switch's environment, the commands each step
ran, and how many kill points were covered, per workflow and step, for pytest's closing summary.

Each kill point is its own test, maybe on another pytest-xdist worker: a point's test records
what it covered as user properties of its report (`record`), and the main process tallies the
reports (`tally`, from tests/conftest.py), so the summary counts every worker's points.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from tests.helpers.kill_points import KillPoint

# workflow → step run → kill points covered; workflow → invariant violations.
_COVERED: dict[str, dict[str, int]] = {}
_VIOLATIONS: dict[str, int] = {}


def record(
    record_property: Callable[[str, object], None], point: KillPoint, violations: list[str]
) -> None:
    """Note that `point` was covered (with its violations) on the test's report."""
    record_property("kill_point", f"{point.workflow} {point.step}")
    record_property("kill_point_violations", len(violations))


def tally(properties: Iterable[tuple[str, object]]) -> None:
    """Count one finished test's kill point, if it covered one."""
    found = dict(properties)
    if "kill_point" not in found:
        return
    workflow, _, step = str(found["kill_point"]).partition(" ")
    steps = _COVERED.setdefault(workflow, {})
    steps[step] = steps.get(step, 0) + 1
    violations = found.get("kill_point_violations", 0)
    _VIOLATIONS[workflow] = _VIOLATIONS.get(workflow, 0) + (
        violations if isinstance(violations, int) else 0
    )


def summary() -> list[str]:
    lines = []
    for workflow, steps in _COVERED.items():
        detail = ", ".join(f"{step} {count}" for step, count in steps.items())
        lines.append(
            f"{workflow} crash matrix: {sum(steps.values())} kill points covered ({detail}); "
            f"{_VIOLATIONS.get(workflow, 0)} invariant violation(s)"
        )
    return lines


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
