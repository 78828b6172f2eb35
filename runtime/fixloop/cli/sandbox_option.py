"""`--sandbox auto|local|bwrap|docker` and `--image IMG`: where a command's verification
commands run, for every command that runs a workflow.

The choice is made from the command line before the workflow changes anything
(`sandbox_from_args`): a sandbox that cannot be had here (`--sandbox bwrap` where bubblewrap
cannot start, `--sandbox docker` without `--image`, a daemon or the image) is one line, exit 2,
with nothing changed. The run then says which sandbox it uses, and why, in its progress.
"""

from __future__ import annotations

import argparse

from fixloop.sandboxes import KINDS, SandboxChoice, choose_sandbox


def add_sandbox_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sandbox",
        choices=KINDS,
        default="auto",
        help="where verification commands (tests, builds, syntax checks) and a scripted "
        "model's shell run: auto (the strongest that works here; it says which), local (no "
        "isolation), bwrap (read-only root, no network), docker (needs --image)",
    )
    parser.add_argument(
        "--image", metavar="IMG", help="the Docker image those commands run in (never pulled)"
    )


def sandbox_from_args(args: argparse.Namespace) -> SandboxChoice:
    """The sandbox `--sandbox`/`--image` stand for here; a FixloopError (exit 2) if none."""
    return choose_sandbox(args.sandbox, image=args.image)


__all__ = ["add_sandbox_arguments", "sandbox_from_args"]
