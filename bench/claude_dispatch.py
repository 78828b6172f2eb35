"""What one role call through the real Claude Code CLI costs in wall time and prompt size, offline.

    .venv/bin/python bench/claude_dispatch.py [--repeat N]

For each role of the bundled pack: the role document rendered with the render-golden inputs,
dispatched through `ClaudeBackend` to the bundled CLI talking to a scripted Messages API. Prints
the characters of the rendered role prompt, of the whole system prompt the CLI sent and of the
tool schemas it sent (what a real run pays for on every model turn), and the median wall time of
a one-turn call. Then the wall
time of a four-turn fixer call that reads, edits and runs git in a real worktree.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from fixloop.agents.claude import ClaudeBackend
from fixloop.agents.dispatch import build_request
from fixloop.documents.pack import default_pack_root, load_pack
from fixloop.extras.testing.messages_server import MessagesServer, structured, text, tool_use

REPO = Path(__file__).resolve().parent.parent
VARS = REPO / "tests" / "documents" / "goldens" / "render"
ROLES = ("wave-runner", "executor", "verifier", "reviewer", "fixer", "fix-loop")


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def worktree(base: Path) -> Path:
    repo = base / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    git(repo, "add", "calc.py")
    git(repo, "-c", "user.name=bench", "-c", "user.email=b@b", "commit", "-q", "-m", "init")
    tree = base / "wt"
    git(repo, "worktree", "add", "-q", "-b", "bench", str(tree))
    return tree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    os.environ["HOME"] = tempfile.mkdtemp(prefix="fixloop-bench-home-")
    pack, _ = load_pack(default_pack_root())
    with tempfile.TemporaryDirectory() as scratch:
        tree = worktree(Path(scratch))
        print(
            f"{'role':<12} {'role prompt':>12} {'sent system':>12} {'tool schemas':>13} "
            f"{'one-turn call':>14}"
        )
        for role in ROLES:
            variables = json.loads((VARS / f"{role}.vars.json").read_text())
            request = build_request(pack, role, variables, f"Run as {role}.", tree)
            times, sent, tools = [], 0, 0
            for _ in range(args.repeat):
                with MessagesServer([text("stop")]) as server:
                    started = time.perf_counter()
                    ClaudeBackend(env=server.env()).dispatch(request)
                    times.append(time.perf_counter() - started)
                    sent = len(server.conversation[0].system)
                    tools = len(json.dumps(server.conversation[0].tools))
            print(
                f"{role:<12} {len(request.system_prompt):>12,} {sent:>12,} {tools:>13,} "
                f"{statistics.median(times):>13.2f}s"
            )
        fixer = build_request(
            pack,
            "fixer",
            json.loads((VARS / "fixer.vars.json").read_text()),
            "Fix it.",
            tree,
            writable=["calc.py"],
        )
        calc = str(tree / "calc.py")
        script = [
            tool_use("Read", {"file_path": calc}),
            tool_use("Edit", {"file_path": calc, "old_string": "a - b", "new_string": "a + b"}),
            tool_use("Bash", {"command": "git diff --stat"}),
            structured({"output": {"files_changed": ["calc.py"], "summary": "fixed"}}),
        ]
        with MessagesServer(script) as server:
            started = time.perf_counter()
            outcome = ClaudeBackend(env=server.env()).dispatch(fixer)
            elapsed = time.perf_counter() - started
        print(
            f"\nfour-turn fixer call (read, edit, git diff, result): {elapsed:.2f}s, "
            f"ok={outcome.ok}, turns={outcome.usage.turns}"
        )


if __name__ == "__main__":
    main()
