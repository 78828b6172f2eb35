"""The Bash tool of a backend that runs a role's tools itself (`role_tools.py`).

A role given `Bash` whole may run any command line, as `bash -c` in its worktree; a role given
only `Bash(git diff:*)`-style entries may run those programs alone. Such a command is split as
words (`shlex`) and run as an argv, never through a shell: an entry is a promise about which
program runs, and `git diff; rm -rf .` or `git diff $(curl …)` would break it. A command with a
shell operator, redirection or substitution is refused for such a role, and so is `--output`
(git's diff, log and show write a file with it). The form of an entry is Claude Code's:
`Bash(git diff:*)` is that prefix of words and anything after it, `Bash(make test)` exactly that.

Commands run in the run's sandbox when it chose one (bwrap and docker keep writes inside the
worktree), else directly, with the environment's secrets (`*_API_KEY`, tokens, …) left out: a
model that runs `env` must not read the key it is called with. Output is capped, head and tail.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from fixloop import processes
from fixloop.documents.tools import ToolEntry
from fixloop.masking import is_secret_name
from fixloop.sandboxes.launcher import RunSandbox, working_tree_of

MAX_TIMEOUT_S = 600.0
DEFAULT_TIMEOUT_S = 120.0
OUTPUT_CAP = 30_000
_SHELL_SYNTAX = frozenset(";&|<>$`\n\\(){}")


@dataclass(frozen=True)
class ShellResult:
    exit_code: int
    output: str
    timed_out: bool


@dataclass(frozen=True)
class BashPolicy:
    """What a role may run: anything (`whole`), or the argv prefixes its entries name."""

    whole: bool = False
    prefixes: tuple[tuple[tuple[str, ...], bool], ...] = ()  # (words, prefix-only?)

    @classmethod
    def of(cls, entries: Iterable[ToolEntry]) -> BashPolicy | None:
        """The policy of a role's Bash entries; None when it has none."""
        bash = [entry for entry in entries if entry.name == "Bash"]
        if not bash:
            return None
        if any(entry.pattern is None for entry in bash):
            return cls(whole=True)
        prefixes = []
        for entry in bash:
            pattern = (entry.pattern or "").strip()
            open_ended = pattern.endswith(":*")
            words = tuple(shlex.split(pattern.removesuffix(":*")))
            if words:
                prefixes.append((words, open_ended))
        return cls(prefixes=tuple(prefixes))

    def describe(self) -> str:
        if self.whole:
            return "any command"
        return ", ".join(" ".join(w) + (" …" if more else "") for w, more in self.prefixes)

    def argv(self, command: str) -> list[str] | str:
        """The argv to run for a pattern-limited role (no shell), or why it is refused. A role
        with `whole` runs `bash -c command`."""
        if self.whole:
            return ["bash", "-c", command]
        allowed = f"this role may run only: {self.describe()}"
        if any(char in _SHELL_SYNTAX for char in command):
            return f"shell operators, redirection and substitution are refused; {allowed}"
        try:
            words = shlex.split(command)
        except ValueError as exc:
            return f"cannot split the command into words ({exc}); {allowed}"
        if any(word.startswith("--output") for word in words):
            return f"--output writes a file; {allowed}"
        for prefix, open_ended in self.prefixes:
            head = tuple(words[: len(prefix)])
            if head == prefix and (open_ended or len(words) == len(prefix)):
                return words
        return allowed


def run_command(
    argv: list[str], *, cwd: Path, sandbox: RunSandbox | None, timeout_s: float
) -> ShellResult:
    """Run `argv` in `cwd`: in the sandbox when there is one, else directly without secrets."""
    timeout = max(1.0, min(timeout_s, MAX_TIMEOUT_S))
    if sandbox is not None:
        done = sandbox.run(argv, cwd=cwd, worktree=working_tree_of(cwd), timeout_s=timeout)
        text = _joined(done.stdout, done.stderr)
        return ShellResult(done.exit_code, text, done.timed_out)
    env = {name: value for name, value in os.environ.items() if not is_secret_name(name)}
    try:
        finished = processes.run(
            argv, cwd=cwd, env=env, timeout_s=timeout, cap=OUTPUT_CAP, merge_stderr=True
        )
    except OSError as exc:
        return ShellResult(127, f"{argv[0]}: {exc.strerror or exc}", False)
    return ShellResult(finished.returncode, finished.stdout, finished.timed_out)


def _joined(stdout: str, stderr: str) -> str:
    text = stdout if not stderr else f"{stdout}\n{stderr}" if stdout else stderr
    if len(text) <= OUTPUT_CAP:
        return text
    half = OUTPUT_CAP // 2
    return f"{text[:half]}\n[… {len(text) - OUTPUT_CAP} characters left out …]\n{text[-half:]}"


__all__ = ["BashPolicy", "ShellResult", "run_command"]
