"""A real run of the git protocol, as its own process, for crash and concurrency tests.

    python tests/helpers/protocol_run.py REPO [--prefix NAME] [--go FILE] [--diverge]

It starts a run, opens a git session (preflight, recovery, worktree, baseline tag), makes two
fix commits (new, modified, deleted, binary and mode changes), tags a checkpoint, rolls a failed
attempt back, exports a patch, and cleans up. With `FIXLOOP_CRASH_AT` set, the runtime kills
itself at that point; the test then recovers and checks the invariants. `--prefix` picks which
files it fixes (so two runs at once touch different files); `--go FILE` makes it wait until FILE
exists, so that concurrent runs start together. `--diverge` makes the user commit to their branch
(`user: …`) before cleanup, so the fast-forward fails and the temp branch must be kept. Prints one
JSON line with what it did.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

from fixloop.runs.git_session import git_session
from fixloop.runs.run import Run


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo", type=Path)
    parser.add_argument("--prefix", default="a")
    parser.add_argument("--go", type=Path)
    parser.add_argument("--diverge", action="store_true")
    args = parser.parse_args()
    if args.go is not None:
        while not args.go.exists():
            time.sleep(0.005)
    run = Run.start(args.repo, "protocol-run")
    commits: list[str | None] = []
    with git_session(run) as git:
        wt = git.worktree
        fixed = f"src/{args.prefix}_fixed.py"
        (wt / fixed).write_text(f"# fixed by {run.id}\n", encoding="utf-8")
        app = wt / "src" / "app.py"
        if args.prefix == "a":
            app.write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
        first = [fixed, "src/app.py"] if args.prefix == "a" else [fixed]
        commits.append(git.commit(first, f"fix(01): CR-01 {args.prefix} $(touch pwned)"))
        git.tag("checkpoint-1")
        (wt / "src" / "util.py").write_text("broken attempt\n", encoding="utf-8")
        git.rollback(["src/util.py"])
        second = f"src/{args.prefix}_second.txt"
        (wt / second).write_text("second fix\n", encoding="utf-8")
        paths = [second]
        if args.prefix == "a":
            (wt / "old.txt").unlink()
            (wt / "assets" / "logo.bin").write_bytes(bytes(reversed(range(256))))
            (wt / "tools" / "run.sh").chmod(0o755)
            paths += ["old.txt", "assets/logo.bin", "tools/run.sh"]
        commits.append(git.commit(paths, f"fix(01): WR-02 {args.prefix} second"))
        git.export_patch(run.dir / "fix.patch")
        if args.diverge:
            (args.repo / "src" / "util.py").write_text("the user's own commit\n", encoding="utf-8")
            subprocess.run(
                ["git", "commit", "--quiet", "-m", "user: meanwhile", "--", "src/util.py"],
                cwd=args.repo,
                check=True,
            )
    outcome = git.outcome
    assert outcome is not None
    state = "finished" if outcome.fast_forwarded else "kept-branch"
    run.finish(state, kept_branch=outcome.kept_branch)
    print(
        json.dumps(
            {"run": run.id, "commits": commits, "state": state, "kept_branch": outcome.kept_branch}
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
