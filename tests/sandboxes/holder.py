"""A fixloop process using a sandbox, for the tests to SIGKILL: it opens the sandbox and runs
`probe.py hold TOKEN READY` in it, which never returns by itself.

    python holder.py KIND WORKTREE PYTHON TOKEN READY [IMAGE RUN_ID]
"""

from __future__ import annotations

import sys
from pathlib import Path

from fixloop.sandboxes import open_sandbox


def main(argv: list[str]) -> int:
    kind, worktree, python, token, ready, *docker = argv
    image, run_id = docker or (None, None)
    with open_sandbox(kind, worktree=Path(worktree), image=image, run_id=run_id) as sandbox:
        sandbox.run([python, "probe.py", "hold", token, ready], timeout_s=600)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
