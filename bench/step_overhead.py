"""What the runtime costs on top of the git commands it runs: setup + N commits + cleanup.

    .venv/bin/python bench/step_overhead.py [--findings N] [--rounds R]

Both sides do the same work on fresh copies of one repository (a user's staged hunk, unstaged
change and untracked file included), alternating, in one process:

- runtime: `git_session` (preflight, recovery scan, setup-worktree, baseline tag), then per
  finding one file written and `commit-paths`, then cleanup — every step a separate traced bash
  with its outputs parsed and an event appended, locks taken, paths checked;
- floor: ONE plain bash process running the very same step blocks, taken from
  `workflows/git-protocol.md` (each in a subshell, inputs as variables), with no tracing, no
  Python, no events: what the git commands themselves cost.

Interpreter start-up is excluded from both (the runtime is timed in-process). Prints the median
of each side, the best of each, and their ratios. Goal: ratio <= 1.5.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from tests.helpers.gitrepo import copy_repo, make_user_repo  # noqa: E402

from fixloop.documents.pack import WorkflowDoc  # noqa: E402
from fixloop.runs.git_session import git_session, load_protocol  # noqa: E402
from fixloop.runs.run import Run, new_run_id  # noqa: E402
from fixloop.steps.runner import find_step  # noqa: E402


def _block(protocol: WorkflowDoc, step: str) -> str:
    found = find_step(protocol, step)
    return "".join(block.content for block in found.blocks if block.lang == "bash")


def floor_script(protocol: WorkflowDoc) -> str:
    """The document's own step blocks, sequenced by plain bash instead of the runtime."""
    return f"""set -euo pipefail
export FIXLOOP_OUTPUT=/dev/null
( {_block(protocol, "preflight")} )
( {_block(protocol, "setup-worktree")} )
( TAG=baseline
{_block(protocol, "tag")} )
for i in $(seq 1 "$FINDINGS"); do
  printf 'fix %s\\n' "$i" > "$WORKTREE/src/fix_$i.py"
  printf 'src/fix_%s.py\\0' "$i" > "$PATHS_DIR/$i"
  ( PATHS_FILE="$PATHS_DIR/$i"
    MESSAGE="fix(01): finding $i"
{_block(protocol, "commit-paths")} )
done
( {_block(protocol, "cleanup")} )
"""


def time_floor(script: str, repo: Path, findings: int, scratch: Path) -> float:
    run_id = new_run_id()
    paths_dir = scratch / f"paths-{run_id}"
    paths_dir.mkdir()
    env = {
        **os.environ,
        "RUN_ID": run_id,
        "FINDINGS": str(findings),
        "PATHS_DIR": str(paths_dir),
        "WORKTREE": str(repo / ".git" / "fixloop" / "worktrees" / run_id),
        "FIXLOOP_LIB": str(REPO_ROOT / "workflows" / "lib"),  # the step library the steps source
    }
    start = time.perf_counter()
    subprocess.run(["bash", "--noprofile", "--norc", "-c", script], cwd=repo, env=env, check=True)
    return time.perf_counter() - start


def time_runtime(protocol: WorkflowDoc, repo: Path, findings: int) -> float:
    start = time.perf_counter()
    run = Run.start(repo, "bench")
    with git_session(run, protocol=protocol) as git:
        for i in range(1, findings + 1):
            (git.worktree / "src" / f"fix_{i}.py").write_text(f"fix {i}\n")
            assert git.commit([f"src/fix_{i}.py"], f"fix(01): finding {i}") is not None
    assert git.outcome is not None and git.outcome.fast_forwarded
    run.finish("finished")
    return time.perf_counter() - start


def _check(repo: Path, findings: int) -> None:
    log = subprocess.run(
        ["git", "log", "--format=%s", "main"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert len(log) == findings + 1, log
    worktrees = subprocess.run(
        ["git", "worktree", "list"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert len(worktrees) == 1, worktrees


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--findings", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    protocol = load_protocol()
    script = floor_script(protocol)
    with tempfile.TemporaryDirectory(prefix="fixloop-bench-") as folder:
        scratch = Path(folder)
        template = make_user_repo(scratch / "template").path
        runtime: list[float] = []
        floor: list[float] = []
        for index in range(args.rounds):
            for side in ("runtime", "floor") if index % 2 == 0 else ("floor", "runtime"):
                repo = copy_repo(template, scratch / f"{side}-{index}").path
                if side == "runtime":
                    runtime.append(time_runtime(protocol, repo, args.findings))
                else:
                    floor.append(time_floor(script, repo, args.findings, scratch))
                _check(repo, args.findings)
                shutil.rmtree(repo)
    median_runtime, median_floor = statistics.median(runtime), statistics.median(floor)
    print(f"findings: {args.findings}, rounds: {args.rounds} (alternating; same machine, same run)")
    print(
        f"runtime (git_session, traced steps): median {median_runtime * 1000:8.1f} ms, "
        f"best {min(runtime) * 1000:8.1f} ms"
    )
    print(
        f"floor   (plain bash, same commands):  median {median_floor * 1000:8.1f} ms, "
        f"best {min(floor) * 1000:8.1f} ms"
    )
    # On a shared machine the best of each side is the least disturbed measurement.
    print(
        f"ratio runtime / floor: median {median_runtime / median_floor:.2f}x, "
        f"best {min(runtime) / min(floor):.2f}x (goal <= 1.5x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
