"""Which sandbox: the one asked for, or with `auto` the strongest that works here.

`auto` takes docker when a Docker daemon answers AND an image was given (an image that does not
exist is an error, not a reason to fall back: the user asked for it); else bwrap when bubblewrap
can start its namespaces; else local, which confines nothing. The choice carries a one-line
reason naming what was missing, so a user sees why their commands are less confined than
they hoped.

A sandbox asked for by name is checked here too, so that a command can refuse it before it
changes anything: `--sandbox bwrap` where bubblewrap cannot start, `--sandbox docker` without
`--image`, without a daemon, or with an image the daemon does not have.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from fixloop.sandboxes import bubblewrap, container, local
from fixloop.sandboxes.daemon import connect, daemon_address, daemon_problem, image_problem
from fixloop.sandboxes.protocol import OUTPUT_CAP_BYTES, Sandbox, SandboxChoice, sandbox_error

KINDS = ("auto", "local", "bwrap", "docker")


def _image_missing(image: str) -> str | None:
    client = connect()
    try:
        return image_problem(client, image)
    finally:
        client.close()


def _named(kind: str, image: str | None) -> SandboxChoice:
    """The sandbox asked for by name, once it is known to work here."""
    asked = f"asked for with --sandbox {kind}"
    if kind == "local":
        return SandboxChoice(kind, f"{asked}; {local.NOT_ISOLATED}")
    if kind == "bwrap":
        problem = bubblewrap.unavailable()
        if problem is not None:
            raise sandbox_error(f"--sandbox bwrap: {problem}")
        return SandboxChoice(kind, asked)
    if not image:
        raise sandbox_error(container.NEEDS_IMAGE)
    if (no_daemon := daemon_problem()) is not None:
        raise sandbox_error(no_daemon)
    if (missing := _image_missing(image)) is not None:
        raise sandbox_error(missing, "--image")
    return SandboxChoice(kind, f"{asked}; image {image}", image=image)


def choose_sandbox(kind: str = "auto", *, image: str | None = None) -> SandboxChoice:
    """The sandbox `kind` stands for here, and why; a FixloopError (one line, exit 2) for a
    choice that cannot work here."""
    if kind not in KINDS:
        raise sandbox_error(f"unknown sandbox {kind!r}; choose one of {', '.join(KINDS)}")
    if image and kind in ("local", "bwrap"):
        raise sandbox_error(f"--image applies to the docker sandbox, not to --sandbox {kind}")
    if kind != "auto":
        return _named(kind, image)
    if not image:
        why_not_docker = "no --image given for docker"
    elif (problem := daemon_problem()) is not None:
        why_not_docker = problem
    else:
        if (missing := _image_missing(image)) is not None:
            raise sandbox_error(missing, "--image")
        reason = f"image {image} on the Docker daemon at {daemon_address()}"
        return SandboxChoice("docker", reason, image=image)
    why_not_bwrap = bubblewrap.unavailable()
    if why_not_bwrap is None:
        return SandboxChoice("bwrap", f"{why_not_docker}; bubblewrap works here")
    return SandboxChoice("local", f"{why_not_docker}; {why_not_bwrap}; {local.NOT_ISOLATED}")


def open_chosen(
    choice: SandboxChoice,
    *,
    worktree: Path,
    run_id: str | None = None,
    read_only: Sequence[Path] = (),
    writable: Sequence[Path] = (),
    memory: str = container.DEFAULT_MEMORY,
    pids: int = container.DEFAULT_PIDS,
    output_cap: int = OUTPUT_CAP_BYTES,
    services: Mapping[str, Path] | None = None,
) -> Sandbox:
    """The sandbox `choice` names, on `worktree`, without choosing again (its reason stays the
    one `choose_sandbox` gave). `read_only`: folders the commands also see, read-only at their
    own paths (in a container; under bwrap's private /tmp; local sees the host's files anyway).
    `writable`: folders outside the worktree the commands may also write (a test runner's report
    folder), read-write at their own paths; local writes anywhere anyway. `services`: host
    sockets handed in on purpose (variable → path; `host_services.checked_services`)."""
    if choice.kind == "local":
        return local.LocalSandbox(
            worktree, reason=choice.reason, output_cap=output_cap, services=services
        )
    if choice.kind == "bwrap":
        return bubblewrap.BubblewrapSandbox(
            worktree,
            reason=choice.reason,
            output_cap=output_cap,
            read_only=read_only,
            writable=writable,
            services=services,
        )
    if choice.kind != "docker":
        raise sandbox_error(f"unknown sandbox {choice.kind!r}; choose one of {', '.join(KINDS)}")
    return container.DockerSandbox(
        worktree,
        image=choice.image,
        run_id=run_id,
        memory=memory,
        pids=pids,
        reason=choice.reason,
        output_cap=output_cap,
        read_only=read_only,
        writable=writable,
        services=services,
    )


def open_sandbox(
    kind: str = "auto",
    *,
    worktree: Path,
    image: str | None = None,
    run_id: str | None = None,
    writable: Sequence[Path] = (),
    memory: str = container.DEFAULT_MEMORY,
    pids: int = container.DEFAULT_PIDS,
    output_cap: int = OUTPUT_CAP_BYTES,
    services: Mapping[str, Path] | None = None,
) -> Sandbox:
    """A sandbox for commands in `worktree` (use it as a context manager). `run_id` labels
    docker containers so that recovery can remove those of a dead run; `writable` and
    `services` as in `open_chosen`."""
    return open_chosen(
        choose_sandbox(kind, image=image),
        worktree=worktree,
        run_id=run_id,
        writable=writable,
        memory=memory,
        pids=pids,
        output_cap=output_cap,
        services=services,
    )
