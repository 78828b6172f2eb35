"""What masking costs beside what every trace line costs anyway: `json.dumps` of the event.

    .venv/bin/python bench/masking.py [--events N] [--rounds R]

Events shaped like the ones runs write (a passing step, a failing step with its stderr tail, an
agent call with its detail), in an environment holding a few secret-looking variables among the
usual ones. Measured side by side in this one run, alternating:

- dumps: `json.dumps(event)`, what a trace line cost before masking;
- dumps_masked: what every trace line costs now (`fixloop.masking.dumps_masked`: serialise, ask
  whether the text could hold a secret, and only then mask and serialise again);
- mask_json: the masked copy alone (what a caller pays that serialises by itself).

All three go through the process-wide masker, so its environment check is included. The events
hold no secret (the common case); a line that does costs one more walk and serialisation. For
scale, the same run also times the cheapest step a trace line can record: one `bash -c true`
(what every document step costs at least, before its commands do anything).

Prints microseconds per event, the ratios to dumps, and the share of that cheapest step a masked
line costs. Goal: at most 1% of the cheapest step (masking never shows in a run's time); the
ratio to dumps is printed to follow it over time. No assertion.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time
from collections.abc import Callable
from typing import Any

from fixloop.masking import dumps_masked, mask_json

_STDERR = (
    "\n".join(
        f'  File "/work/repo/src/module_{i}.py", line {i * 7}, in handler_{i}\n'
        "    value = compute(x)"
        for i in range(12)
    )
    + "\nZeroDivisionError: division by zero\n"
)

EVENTS: list[dict[str, Any]] = [
    {
        "time": "2026-01-01T00:00:00.000Z",
        "run": "20260101T000000Z-1234-abcdef",
        "event": "step",
        "workflow": "git-protocol",
        "step": "commit-paths",
        "started_at": "2026-01-01T00:00:00.000Z",
        "ended_at": "2026-01-01T00:00:00.120Z",
        "duration_s": 0.12,
        "exit_code": 0,
        "timed_out": False,
        "ok": True,
        "outputs": {"COMMIT": "0123456789abcdef0123456789abcdef01234567"},
        "commands": 7,
    },
    {
        "time": "2026-01-01T00:00:01.000Z",
        "run": "20260101T000000Z-1234-abcdef",
        "event": "step",
        "workflow": "review-fix",
        "step": "verify-syntax",
        "started_at": "2026-01-01T00:00:00.500Z",
        "ended_at": "2026-01-01T00:00:01.000Z",
        "duration_s": 0.5,
        "exit_code": 1,
        "timed_out": False,
        "ok": False,
        "outputs": {},
        "commands": 3,
        "last_command": 'python3 -m py_compile "$FILE"',
        "last_command_at": "workflows/review-fix.md:120",
        "error": None,
        "stderr_tail": _STDERR,
    },
    {
        "event": "agent",
        "at": "2026-01-01T00:00:02+00:00",
        "key": "fixer/CR-01/iteration-1",
        "role": "fixer",
        "model": "sonnet",
        "status": "ok",
        "reason": "none",
        "detail": "fixed: the handler now checks for an empty list before dividing; tests pass",
        "turns": 6,
        "cost_usd": 0.0123,
        "input_tokens": 5120,
        "output_tokens": 812,
        "elapsed_s": 12.5,
        "denied": [{"tool": "Write", "path": "../x", "reason": "'..'"}],
    },
]

_SECRETS = {
    "BENCH_ANTHROPIC_API_KEY": "sk-ant-api03-" + "a1B2c3D4" * 6,
    "BENCH_GITHUB_TOKEN": "ghp_" + "Z9y8X7w6" * 5,
    "BENCH_DB_PASSWORD": "correct-horse-battery-staple",
}


def _per_event_us(work: Callable[[dict[str, Any]], object], events: int) -> float:
    start = time.perf_counter()
    for index in range(events):
        work(EVENTS[index % len(EVENTS)])
    return (time.perf_counter() - start) / events * 1e6


def _bash_step_us() -> float:
    start = time.perf_counter()
    subprocess.run(["bash", "--noprofile", "--norc", "-c", "true"], check=True)
    return (time.perf_counter() - start) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    os.environ.update(_SECRETS)
    sides: dict[str, Callable[[dict[str, Any]], object]] = {
        "dumps": lambda event: json.dumps(event, ensure_ascii=False),
        "dumps_masked": lambda event: dumps_masked(event, ensure_ascii=False),
        "mask_json": mask_json,
    }
    for work in sides.values():  # warm up: compile patterns, take the environment snapshot
        _per_event_us(work, 100)
    times: dict[str, list[float]] = {name: [] for name in sides}
    for index in range(args.rounds):
        order = list(sides) if index % 2 == 0 else list(reversed(sides))
        for name in order:
            times[name].append(_per_event_us(sides[name], args.events))
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"events: {args.events} x {args.rounds} rounds, {len(os.environ)} environment variables")
    for name, median in medians.items():
        print(f"{name:<13} median {median:7.2f} us/event, best {min(times[name]):7.2f} us/event")
    step_us = statistics.median(_bash_step_us() for _ in range(args.rounds * 3))
    print(f"one bash -c true (cheapest step) median {step_us:9.1f} us")
    dumps = medians["dumps"]
    print(f"ratio dumps_masked / dumps: {medians['dumps_masked'] / dumps:.2f}x")
    print(f"ratio mask_json / dumps: {medians['mask_json'] / dumps:.2f}x")
    share = medians["dumps_masked"] / step_us * 100
    print(f"dumps_masked / cheapest step: {share:.2f}% (goal <= 1%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
