"""Start a dev server through `fixloop.extras.browser.devserver` and hold it until killed.

    python hold_dev_server.py FOLDER WORKTREE COMMAND

Prints the server's URL once it answers, then sleeps: a test SIGKILLs this process to leave the
server behind, as a crashed run would.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from fixloop.extras.browser.devserver import dev_server


def main() -> None:
    folder, worktree, command = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    with dev_server(command, worktree, folder, run_id="held") as server:
        print(server.url, flush=True)
        time.sleep(3600)


if __name__ == "__main__":
    main()
