"""`fixloop sandbox exec --config CONFIG -- CMD ARG…`: one command in a run's sandbox.

A workflow run writes its sandbox's configuration and a launcher into its folder
(`fixloop.sandboxes.launcher`); document steps reach the launcher through the step library's
`fixloop_sandboxed CMD ARG…`, and the launcher runs this command. It opens the sandbox the
configuration names on the git working tree holding the current directory, runs the argv there
(never through a shell), and hands back the command's stdout, stderr and exit code (127: not
found; 137: killed, also on timeout). A configuration that cannot be read is one line naming
the file, exit 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TypeAlias

from fixloop.sandboxes.launcher import read_run_sandbox, working_tree_of

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
COMMAND = "sandbox"
EXIT_USAGE = 2


def _add_exec(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        type=Path,
        required=True,
        metavar="CONFIG",
        help="the run's sandbox configuration (RUN_DIR/sandbox/config.json)",
    )
    parser.add_argument(
        "argv",
        nargs=argparse.REMAINDER,
        metavar="-- CMD ARG…",
        help="the command and its arguments, as words (no shell parses them)",
    )
    parser.set_defaults(handler=run_exec)


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        COMMAND,
        help="run a command in a run's sandbox (used by workflow steps)",
        description="Commands of a workflow run's sandbox. Workflow steps call them through "
        "the step library's `fixloop_sandboxed`; they are rarely typed by hand.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    _add_exec(
        actions.add_parser(
            "exec",
            help="run CMD ARG… in the sandbox a run chose, in the working tree holding the "
            "current directory",
            description="Run CMD ARG… in the sandbox CONFIG names (local, bwrap or docker), "
            "confined to the git working tree that holds the current directory; relays its "
            "output and exit code.",
        )
    )


def run_exec(args: argparse.Namespace) -> int:
    words = list(args.argv)
    if words[:1] == ["--"]:
        words = words[1:]
    if not words:
        print("fixloop sandbox exec: no command given (-- CMD ARG…)", file=sys.stderr)
        return EXIT_USAGE
    sandbox = read_run_sandbox(args.config)
    cwd = Path.cwd()
    result = sandbox.run(words, cwd=cwd, worktree=working_tree_of(cwd))
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    return result.exit_code


__all__ = ["register", "run_exec"]
