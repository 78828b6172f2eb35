"""Bash inside Claude Code's own sandbox: a role's shell commands can write only in its worktree.

The write-scope hook (`scope.py`) checks file-writing tools by path; a shell command can write
anywhere, so the hook cannot vouch for it. On Linux with bubblewrap (and socat, which the CLI's
sandbox uses for its network proxy) the CLI runs every Bash command in a sandbox whose filesystem
is read-only outside the working directory. Commands may not opt out of it, and being sandboxed
does not auto-approve them: a role limited to `Bash(git diff:*)` stays limited.

The sandbox keeps an empty `.claude/.cc-writes` folder in the working directory; `SandboxLitter`
removes what the call created there, so the user's tree is left as it was found.
"""

from __future__ import annotations

import contextlib
import functools
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from claude_agent_sdk import SandboxSettings

_LITTER = (".claude", ".cc-writes")


@functools.cache
def bash_sandbox_available() -> bool:
    """True when bubblewrap and socat are installed and bubblewrap can actually start a sandbox
    here (some containers forbid the namespaces it needs)."""
    if sys.platform != "linux" or not all(shutil.which(t) for t in ("bwrap", "socat")):
        return False
    probe = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def sandbox_settings() -> SandboxSettings:
    return {"enabled": True, "allowUnsandboxedCommands": False, "autoAllowBashIfSandboxed": False}


@contextlib.contextmanager
def sandbox_litter_removed(cwd: Path) -> Iterator[None]:
    """Remove the sandbox's scratch folders from `cwd` after the call, if the call made them."""
    folder = cwd / _LITTER[0]
    scratch = folder / _LITTER[1]
    had_folder, had_scratch = folder.exists(), scratch.exists()
    try:
        yield
    finally:
        for path, existed in ((scratch, had_scratch), (folder, had_folder)):
            if not existed and path.is_dir() and not path.is_symlink():
                with contextlib.suppress(OSError):  # not empty, or gone: leave it be
                    path.rmdir()


__all__ = ["bash_sandbox_available", "sandbox_litter_removed", "sandbox_settings"]
