"""How well `bench efficacy --workers` scales: the same corpus at 1 worker and at K, side by side.

    .venv/bin/python bench/efficacy_scale.py [--workers 4] [--latency 0.5] [--jitter 0]
                                             [--sandbox local]
                                             [--rounds 1] [--corpus bench/efficacy/corpus]
                                             [--repeat 1] [--ray]

Both sides run every task of the corpus (the shipped one has 8) through the real harness: the
task's repository built from its snapshot, fix-issue with the task's scripted answer, its tests
and the hidden acceptance tests run in the chosen sandbox. The scripted model answers each call
after a simulated think time of `--latency` seconds per turn (a real model's call takes a turn
per tool round trip, and the run waits on the network meanwhile). Only `--workers` differs.

Parallel efficiency = T(1) / (K * T(K)): 1.0 would be perfect scaling. What does not scale is
the work each task does on the CPU (git, the test runs, the sandbox's start) when the machine
has fewer cores than workers, and the tail: the last task to start runs alone (its share shrinks
as the corpus grows: `--repeat 2` runs every task twice), shorter when the longest tasks start
first: the K side runs twice, in corpus order and longest first by what each task took in the
serial run of the same round (`BenchOptions.expected`). Goal: >= 0.85 at K=4. With `--ray`
(needs fixloop[ray]) the same corpus runs on a local Ray cluster at the same width (started
before the clock starts), in both orders, each side in turn within a round, against the local
pool's T(K): goal within 15%.
Printed, never asserted: timings belong here, not in tests.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from fixloop.agents.backend import AgentOutcome, AgentRequest, Backend  # noqa: E402
from fixloop.agents.scripted import ScriptedBackend  # noqa: E402
from fixloop.documents.pack import Pack, default_pack_root, load_pack  # noqa: E402
from fixloop.extras.efficacy import (  # noqa: E402
    BenchOptions,
    BenchResult,
    Task,
    load_corpus,
    run_bench,
)
from fixloop.extras.efficacy.executor import TaskPool  # noqa: E402

CORPUS = REPO_ROOT / "bench" / "efficacy" / "corpus"


class Thinking:
    """A task's scripted answer, given after `seconds` per turn the call took. With `jitter`
    j, each turn takes seconds × a factor drawn evenly from [1 - j, 1 + j], from a generator
    seeded by the task: the same draws on every side of the comparison, so T(1) and T(K) wait
    the same total; only how the tasks' turns fall against each other differs."""

    name = "scripted"

    def __init__(
        self, inner: ScriptedBackend, seconds: float, jitter: float = 0.0, seed: str = ""
    ) -> None:
        self.inner = inner
        self.seconds = seconds
        self.jitter = jitter
        self.draws = random.Random(seed)

    def dispatch(self, request: AgentRequest) -> AgentOutcome:
        outcome = self.inner.dispatch(request)
        turns = max(1, outcome.usage.turns)
        factors = [1 + self.jitter * (2 * self.draws.random() - 1) for _ in range(turns)]
        time.sleep(self.seconds * sum(factors))
        return outcome


def one_run(
    pack: Pack,
    corpus: Path,
    *,
    workers: int,
    latency: float,
    sandbox: str,
    jitter: float = 0.0,
    pool: TaskPool | None = None,
    repeat: int = 1,
    expected: dict[str, float] | None = None,
) -> tuple[float, float, dict[str, float]]:
    """The run's wall time, the sum of its tasks' own wall times, and each task's (the mean of
    its runs)."""

    def agent(task: Task) -> Backend:
        return Thinking(ScriptedBackend.from_file(task.answer), latency, jitter, seed=task.id)

    options = BenchOptions(
        corpus=corpus,
        sandbox=sandbox,
        workers=workers,
        agent=agent,
        pool=pool,
        tasks=tuple(task.id for task in load_corpus(corpus).tasks) * repeat,
        expected=expected or {},
    )
    started = time.perf_counter()
    result: BenchResult = run_bench(options, pack)
    elapsed = time.perf_counter() - started
    if result.resolved != len(result.outcomes):
        failed = [(o.id, o.status, o.reason) for o in result.outcomes if o.status != "resolved"]
        raise SystemExit(f"a task was not resolved: {failed}")
    took: dict[str, list[float]] = {}
    for outcome in result.outcomes:
        took.setdefault(outcome.id, []).append(outcome.wall_s)
    each = {task: statistics.mean(walls) for task, walls in took.items()}
    return elapsed, sum(outcome.wall_s for outcome in result.outcomes), each


ORDERS = ("corpus", "longest")  # tasks started in corpus order; the longest (by T(1)) first


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per model turn")
    parser.add_argument(
        "--jitter",
        type=float,
        default=0.0,
        help="each turn's think time varies by up to this fraction (0: every turn the same)",
    )
    parser.add_argument("--sandbox", default="local")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1, help="every task this many times")
    parser.add_argument("--ray", action="store_true", help="also on a local Ray cluster")
    args = parser.parse_args()
    for name in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        os.environ.setdefault(name, "bench")
    for name in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        os.environ.setdefault(name, "bench@fixloop.invalid")
    pack, _ = load_pack(default_pack_root())
    k = args.workers
    # Every side once a round, one after another, so a swing of the machine's load (it is
    # shared) falls on all of them alike, Ray's too.
    sides = ["1", *ORDERS, *(f"ray {order}" for order in ORDERS if args.ray)]
    times: dict[str, list[float]] = {side: [] for side in sides}
    busy: dict[str, list[float]] = {side: [] for side in sides}
    expected: dict[str, float] = {}
    ray = _start_ray(k) if args.ray else None  # the cluster up before any clock starts
    loads = [os.getloadavg()[0]]
    try:
        for _ in range(args.rounds):
            for side in sides:
                pool: TaskPool | None = None
                if side.startswith("ray "):
                    from fixloop.extras.efficacy.ray_pool import RayPool

                    pool = RayPool("local", k)
                wall, tasks, each = one_run(
                    pack,
                    args.corpus,
                    workers=1 if side == "1" else k,
                    latency=args.latency,
                    sandbox=args.sandbox,
                    pool=pool,
                    repeat=args.repeat,
                    # Longest first by what each task took in this round's serial run.
                    expected=expected if side.endswith("longest") else None,
                )
                if side == "1":
                    expected = each
                times[side].append(wall)
                busy[side].append(tasks)
                loads.append(os.getloadavg()[0])
    finally:
        if ray is not None:
            ray.shutdown()
    serial = statistics.median(times["1"])
    print(
        f"corpus {args.corpus.name}: every task x{args.repeat}, {args.latency:g} s per model turn "
        f"(jitter {args.jitter:g}), "
        f"sandbox {args.sandbox}, {os.cpu_count()} cores, {args.rounds} round(s), "
        f"load average {min(loads):.2f} to {max(loads):.2f}"
    )
    print(f"T(1) = {serial:.2f} s")
    parallel = {side: statistics.median(times[side]) for side in sides[1:]}
    for side in sides[1:]:
        # Where the rest goes: each task slower beside others (CPU, disk, the interpreter
        # lock), and workers idle at the end while the last tasks finish (the tail).
        slower = statistics.median(busy[side]) / statistics.median(busy["1"])
        packing = statistics.median(busy[side]) / (k * parallel[side])
        line = (
            f"{side + ' order':>19}: T({k}) = {parallel[side]:.2f} s   "
            f"speed-up {serial / parallel[side]:.2f}x   a task beside {k - 1} others "
            f"{slower:.2f}x   workers busy {packing:.0%}   "
            f"efficiency T(1) / ({k} * T({k})) = {serial / (k * parallel[side]):.3f}"
        )
        if side.startswith("ray "):
            local = parallel[side.removeprefix("ray ")]
            line += f"   against the local pool's: {parallel[side] / local - 1:+.1%}"
        print(line)
    print("goal: efficiency >= 0.85; Ray within 15% of the local pool")
    return 0


def _start_ray(k: int) -> Any:
    import ray

    ray.init(num_cpus=k, include_dashboard=False, log_to_driver=False)
    return ray


if __name__ == "__main__":
    raise SystemExit(main())
