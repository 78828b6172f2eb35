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
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

from claude_agent_sdk import SandboxSettings

_LITTER = (".claude", ".cc-writes")


def bash_sandbox_available() -> bool:
    return sys.platform == "linux" and all(shutil.which(tool) for tool in ("bwrap", "socat"))


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
