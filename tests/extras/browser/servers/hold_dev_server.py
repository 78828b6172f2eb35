"""Start a dev server through `fixloop.extras.browser.devserver` and hold it until killed.

    python hold_dev_server.py FOLDER WORKTREE COMMAND [SANDBOX [IMAGE]]

In the run's sandbox SANDBOX (bwrap, docker with IMAGE) when one is named. Prints the server's
URL once it answers, then sleeps: a test SIGKILLs this process to leave the
server behind, as a crashed run would.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from fixloop.extras.browser.devserver import dev_server
from fixloop.sandboxes.launcher import RunSandbox
from fixloop.sandboxes.protocol import SandboxChoice


def main() -> None:
    folder, worktree, command = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    sandbox = None
    if len(sys.argv) > 4:
        image = sys.argv[5] if len(sys.argv) > 5 else None
        sandbox = RunSandbox(SandboxChoice(sys.argv[4], "held", image=image), run_id="held")
    with dev_server(command, worktree, folder, run_id="held", sandbox=sandbox) as server:
        print(server.url, flush=True)
        time.sleep(3600)


if __name__ == "__main__":
    main()
