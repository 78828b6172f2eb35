"""How well a wave's executors run in parallel: K at once against one at a time, side by side.

    .venv/bin/python bench/wave_efficiency.py [--tasks 8] [--k 4] [--latency 3.0] [--rounds 1]

Both sides run the same real wave on fresh copies of one repository: N independent logic tasks,
each implemented by an executor in its own worktree, merged by id, reviewed and committed, with
the scripted model answering every role call after a simulated latency (a model's think time,
during which a real call waits on the network). Only `--parallel` differs: 1, then K.

Parallel efficiency = T(1) / (K * T(K)): 1.0 would be perfect scaling. What does not scale is
the work the wave does in series by design: creating the task worktrees and merging them by id
(under the repository lock), the wave commit, setup and cleanup. Goal: >= 0.85 at K=4 on a wave
of 8 tasks. Printed, never asserted: timings belong here, not in tests.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from tests.helpers.gitrepo import copy_repo, make_user_repo  # noqa: E402
from tests.workflows.execute_wave.scripts import implement, score, scores  # noqa: E402

from fixloop.agents.backend import AgentOutcome, AgentRequest  # noqa: E402
from fixloop.agents.scripted import ScriptedBackend  # noqa: E402
from fixloop.documents.pack import Pack, default_pack_root, load_pack  # noqa: E402
from fixloop.workflows.execute_wave import ExecuteWaveOptions, run_execute_wave  # noqa: E402
from fixloop.workflows.kernel.workflow import Context  # noqa: E402


class Latency:
    """The scripted model, answering each call after `seconds` (as a real model's call waits)."""

    name = "scripted"

    def __init__(self, inner: ScriptedBackend, seconds: float) -> None:
        self.inner = inner
        self.seconds = seconds

    def dispatch(self, request: AgentRequest) -> AgentOutcome:
        time.sleep(self.seconds)
        return self.inner.dispatch(request)


def script(tasks: int) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for n in range(1, tasks + 1):
        found[f"executor/{n}/implement"] = implement(n, {f"src/task_{n}.py": f"value = {n}\n"})
        found[f"reviewer/{n}/verify"] = score(n, scores("logic", 9))
    return found


def one_wave(
    template: Path, folder: Path, pack: Pack, *, tasks: int, k: int, latency: float
) -> float:
    repo = copy_repo(template, folder / "repo")
    plan = folder / "tasks.json"
    plan.write_text(json.dumps([{"id": n, "name": f"task {n}"} for n in range(1, tasks + 1)]))
    backend = Latency(ScriptedBackend(script(tasks)), latency)
    options = ExecuteWaveOptions(tasks=plan, repo=repo.path, parallel=k)
    started = time.perf_counter()
    result = run_execute_wave(options, Context(pack, backend))
    elapsed = time.perf_counter() - started
    if result.exit_code != 0:
        raise SystemExit(f"the wave failed: {result.to_json()}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--latency", type=float, default=3.0, help="seconds per role call")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    os.environ.setdefault("GIT_AUTHOR_NAME", "bench")
    os.environ.setdefault("GIT_AUTHOR_EMAIL", "bench@fixloop.invalid")
    os.environ.setdefault("GIT_COMMITTER_NAME", "bench")
    os.environ.setdefault("GIT_COMMITTER_EMAIL", "bench@fixloop.invalid")
    pack, _ = load_pack(default_pack_root())
    times: dict[int, list[float]] = {1: [], args.k: []}
    with tempfile.TemporaryDirectory(prefix="fixloop-wave-bench-") as scratch:
        root = Path(scratch)
        template = make_user_repo(root / "template").path
        for round_number in range(args.rounds):
            for k in (1, args.k):  # side by side, alternating
                folder = root / f"round-{round_number}-k{k}"
                times[k].append(
                    one_wave(template, folder, pack, tasks=args.tasks, k=k, latency=args.latency)
                )
    serial, parallel = statistics.median(times[1]), statistics.median(times[args.k])
    efficiency = serial / (args.k * parallel)
    calls = 2 * args.tasks
    print(f"wave of {args.tasks} tasks, {calls} role calls of {args.latency:g} s each")
    speed_up = serial / parallel
    print(f"T(1) = {serial:.2f} s   T({args.k}) = {parallel:.2f} s   speed-up {speed_up:.2f}x")
    print(
        f"parallel efficiency T(1) / ({args.k} * T({args.k})) = {efficiency:.3f}   (goal >= 0.85)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
