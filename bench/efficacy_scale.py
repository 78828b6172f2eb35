"""How well `bench efficacy --workers` scales: the same corpus at 1 worker and at K, side by side.

    .venv/bin/python bench/efficacy_scale.py [--workers 4] [--latency 0.5] [--sandbox local]
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
as the corpus grows: `--repeat 2` runs every task twice). Goal: >= 0.85
at K=4. With `--ray` (needs fixloop[ray]) a third side runs the same corpus on a local Ray
cluster at the same width (started before the clock starts), against the local pool's T(K):
goal within 15%. Printed, never asserted: timings belong here, not in tests.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

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
    """A task's scripted answer, given after `seconds` per turn the call took."""

    name = "scripted"

    def __init__(self, inner: ScriptedBackend, seconds: float) -> None:
        self.inner = inner
        self.seconds = seconds

    def dispatch(self, request: AgentRequest) -> AgentOutcome:
        outcome = self.inner.dispatch(request)
        time.sleep(self.seconds * max(1, outcome.usage.turns))
        return outcome


def one_run(
    pack: Pack,
    corpus: Path,
    *,
    workers: int,
    latency: float,
    sandbox: str,
    pool: TaskPool | None = None,
    repeat: int = 1,
) -> tuple[float, float]:
    """The run's wall time, and the sum of its tasks' own wall times."""

    def agent(task: Task) -> Backend:
        return Thinking(ScriptedBackend.from_file(task.answer), latency)

    options = BenchOptions(
        corpus=corpus,
        sandbox=sandbox,
        workers=workers,
        agent=agent,
        pool=pool,
        tasks=tuple(task.id for task in load_corpus(corpus).tasks) * repeat,
    )
    started = time.perf_counter()
    result: BenchResult = run_bench(options, pack)
    elapsed = time.perf_counter() - started
    if result.resolved != len(result.outcomes):
        failed = [(o.id, o.status, o.reason) for o in result.outcomes if o.status != "resolved"]
        raise SystemExit(f"a task was not resolved: {failed}")
    return elapsed, sum(outcome.wall_s for outcome in result.outcomes)


def ray_side(pack: Pack, args: argparse.Namespace, k: int) -> float:
    import ray

    from fixloop.extras.efficacy.ray_pool import RayPool

    ray.init(num_cpus=k, include_dashboard=False, log_to_driver=False)  # not on the clock
    try:
        times = [
            one_run(
                pack,
                args.corpus,
                workers=k,
                latency=args.latency,
                sandbox=args.sandbox,
                pool=RayPool("local", k),
                repeat=args.repeat,
            )[0]
            for _ in range(args.rounds)
        ]
    finally:
        ray.shutdown()
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per model turn")
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
    times: dict[int, list[float]] = {1: [], k: []}
    busy: dict[int, list[float]] = {1: [], k: []}
    for _ in range(args.rounds):
        for workers in (1, k):  # side by side, alternating
            wall, tasks = one_run(
                pack,
                args.corpus,
                workers=workers,
                latency=args.latency,
                sandbox=args.sandbox,
                repeat=args.repeat,
            )
            times[workers].append(wall)
            busy[workers].append(tasks)
    serial, parallel = statistics.median(times[1]), statistics.median(times[k])
    efficiency = serial / (k * parallel)
    print(
        f"corpus {args.corpus.name}: every task x{args.repeat}, {args.latency:g} s per model turn, "
        f"sandbox {args.sandbox}, {os.cpu_count()} cores"
    )
    print(f"T(1) = {serial:.2f} s   T({k}) = {parallel:.2f} s   speed-up {serial / parallel:.2f}x")
    # Where the rest goes: each task slower beside others (CPU, disk, the interpreter lock),
    # and workers idle at the end while the last tasks finish (the tail).
    slower = statistics.median(busy[k]) / statistics.median(busy[1])
    packing = statistics.median(busy[k]) / (k * parallel)
    print(f"a task's wall time beside {k - 1} others: {slower:.2f}x   workers busy {packing:.0%}")
    print(f"parallel efficiency T(1) / ({k} * T({k})) = {efficiency:.3f}   (goal >= 0.85)")
    if args.ray:
        on_ray = ray_side(pack, args, k)
        print(
            f"Ray T({k}) = {on_ray:.2f} s   against the local pool's: "
            f"{on_ray / parallel - 1:+.1%}   (goal within 15%)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
