"""What one sandboxed verification command costs: review-fix's syntax check of one file, run
directly and through a run's sandbox launcher (`fixloop_sandboxed`) for local, bwrap and docker.

    .venv/bin/python bench/sandboxed_check.py [--rounds R] [--image IMG]

Every side runs the same command (`python syntax_check.py file.py` in a git working tree) as a
step would, a fresh process each time, alternating sides round by round in one run. Prints the
median and best of each side and each side's ratio to running it directly. Docker is measured
only with `--image` (an image holding python3; fixloop never pulls) and a daemon that answers.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "runtime"))

from fixloop.sandboxes import choose_sandbox  # noqa: E402
from fixloop.sandboxes.launcher import RunSandbox, write_launcher  # noqa: E402

LIBRARY = REPO_ROOT / "workflows" / "lib"


def _time(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]}: exit {done.returncode}: {done.stderr.decode()[-400:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--image", help="a Docker image with python3, to measure docker too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fixloop-bench-") as scratch:
        root = Path(scratch)
        worktree = root / "wt"
        subprocess.run(["git", "init", "-q", str(worktree)], check=True)
        (worktree / "app.py").write_text("def add(a, b):\n    return a + b\n" * 50)
        env = {"PATH": os.environ["PATH"], "FIXLOOP_PYTHON": sys.executable}
        env |= {key: os.environ[key] for key in ("DOCKER_HOST",) if key in os.environ}
        check = [sys.executable, str(LIBRARY / "syntax_check.py"), "app.py"]
        sides: dict[str, list[str]] = {"direct": check}
        kinds = ["local", "bwrap", *(["docker"] if args.image else [])]
        for kind in kinds:
            choice = choose_sandbox(kind, image=args.image if kind == "docker" else None)
            sandbox = RunSandbox(
                choice, run_id="bench", python=sys.executable, read_only=(str(LIBRARY),)
            )
            sides[kind] = [str(write_launcher(root / kind, sandbox)), *check]
        times: dict[str, list[float]] = {side: [] for side in sides}
        for _ in range(args.rounds):
            for side, argv in sides.items():
                times[side].append(_time(argv, worktree, env))
    direct = statistics.median(times["direct"])
    print(f"one syntax check, {args.rounds} rounds, median (best):")
    for side, measured in times.items():
        median = statistics.median(measured)
        print(
            f"  {side:7} {median * 1000:8.1f} ms ({min(measured) * 1000:.1f} ms)"
            f"  x{median / direct:.2f} of direct"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
