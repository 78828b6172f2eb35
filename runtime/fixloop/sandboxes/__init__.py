"""Sandboxes: where verification commands run — local · bwrap · docker, behind one protocol.

    from fixloop.sandboxes import open_sandbox
    with open_sandbox("auto", worktree=wt, image=image, run_id=run.id) as sandbox:
        print(sandbox.choice)        # sandbox: bwrap (no --image given for docker; …)
        result = sandbox.run(["python3", "-m", "pytest", "-q"], cwd=wt, timeout_s=600)

`protocol.py` the Sandbox protocol, SandboxResult and SandboxChoice; `local.py`, `bubblewrap.py`,
`container.py` the three sandboxes; `choose.py` `auto` and `open_sandbox`; `daemon.py` the Docker
daemon and the containers a killed run left behind (`sweep.py`: recovery's sweeper of them);
`process.py` the process group (`fixloop.processes`) that local and bwrap share; `background.py`
what `Sandbox.start` returns for a command that runs until stopped. See
docs/sandboxes.md.
"""

from fixloop.sandboxes.choose import KINDS, choose_sandbox, open_sandbox
from fixloop.sandboxes.daemon import LeftoverContainer, leftover_containers, remove_leftovers
from fixloop.sandboxes.protocol import Sandbox, SandboxChoice, SandboxResult

__all__ = [
    "KINDS",
    "LeftoverContainer",
    "Sandbox",
    "SandboxChoice",
    "SandboxResult",
    "choose_sandbox",
    "leftover_containers",
    "open_sandbox",
    "remove_leftovers",
]
