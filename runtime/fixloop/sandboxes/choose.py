"""Which sandbox: the one asked for, or with `auto` the strongest that works here.

`auto` takes docker when a Docker daemon answers AND an image was given (an image that does not
exist is an error, not a reason to fall back: the user asked for it); else bwrap when bubblewrap
can start its namespaces; else local, which confines nothing. The choice carries a one-line
reason naming what was missing, so a user sees why their commands are less confined than
they hoped.
"""

from __future__ import annotations

from pathlib import Path

from fixloop.sandboxes import bubblewrap, container, local
from fixloop.sandboxes.daemon import connect, daemon_address, daemon_problem, image_problem
from fixloop.sandboxes.protocol import OUTPUT_CAP_BYTES, Sandbox, SandboxChoice, sandbox_error

KINDS = ("auto", "local", "bwrap", "docker")


def choose_sandbox(kind: str = "auto", *, image: str | None = None) -> SandboxChoice:
    """The sandbox `kind` stands for here, and why; a FixloopError for input that cannot work."""
    if kind not in KINDS:
        raise sandbox_error(f"unknown sandbox {kind!r}; choose one of {', '.join(KINDS)}")
    if image and kind in ("local", "bwrap"):
        raise sandbox_error(f"--image applies to the docker sandbox, not to --sandbox {kind}")
    if kind != "auto":
        asked = f"asked for with --sandbox {kind}"
        return SandboxChoice(kind, f"{asked}; {local.NOT_ISOLATED}" if kind == "local" else asked)
    if not image:
        why_not_docker = "no --image given for docker"
    elif (problem := daemon_problem()) is not None:
        why_not_docker = problem
    else:
        client = connect()
        try:
            missing = image_problem(client, image)
        finally:
            client.close()
        if missing is not None:
            raise sandbox_error(missing, "--image")
        return SandboxChoice("docker", f"image {image} on the Docker daemon at {daemon_address()}")
    why_not_bwrap = bubblewrap.unavailable()
    if why_not_bwrap is None:
        return SandboxChoice("bwrap", f"{why_not_docker}; bubblewrap works here")
    return SandboxChoice("local", f"{why_not_docker}; {why_not_bwrap}; {local.NOT_ISOLATED}")


def open_sandbox(
    kind: str = "auto",
    *,
    worktree: Path,
    image: str | None = None,
    run_id: str | None = None,
    memory: str = container.DEFAULT_MEMORY,
    pids: int = container.DEFAULT_PIDS,
    output_cap: int = OUTPUT_CAP_BYTES,
) -> Sandbox:
    """A sandbox for commands in `worktree` (use it as a context manager). `run_id` labels
    docker containers so that recovery can remove those of a dead run."""
    choice = choose_sandbox(kind, image=image)
    if choice.kind == "local":
        return local.LocalSandbox(worktree, reason=choice.reason, output_cap=output_cap)
    if choice.kind == "bwrap":
        return bubblewrap.BubblewrapSandbox(worktree, reason=choice.reason, output_cap=output_cap)
    return container.DockerSandbox(
        worktree, image=image, run_id=run_id, memory=memory, pids=pids, reason=choice.reason,
        output_cap=output_cap,
    )  # fmt: skip
