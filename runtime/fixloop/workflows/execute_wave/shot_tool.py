"""A design executor's `screenshot` tool: its own page's picture, taken by the run for it.

Whatever shell the executor has, the run lends it this tool (a `Toolbox`, `agents/toolbox.py`):
under the claude backend its Bash runs in Claude Code's own sandbox, which reaches neither the
task's dev server nor the run's screenshot service (it refuses Unix sockets), so a command
cannot look at the page; the tool runs in the runtime and can. It adds a tool and replaces none:
the executor keeps its Edit, Write and Bash.

    screenshot {"url": "http://127.0.0.1:PORT/route", "name": "after-header", "viewport": [W, H]}
    → {"ok": true, "path": ".fixloop/shots/after-header.png", "width": W, "height": H, ...}
      and, under the claude backend, the picture itself

The agent is hostile, so is the page it edits: the picture is taken by the browser seam's
`shooter` (the screenshot service's own checks, confined browser and limit: only `http://` pages
of that task's dev server), and written only at `.fixloop/shots/NAME.png` in the executor's
worktree (a NAME with `/` or `..` is refused), reached without following a symbolic link and
never through a file that is already there (a hard link to a file elsewhere is replaced, not
written through). A refused call is a tool error the model reads; the tool never raises.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fixloop.agents.toolbox import ToolReply, ToolSpec
from fixloop.diagnostics import FixloopError
from fixloop.workflows.kernel.browser import Shots

TOOL = "screenshot"
SHOTS = (".fixloop", "shots")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC

SPEC = ToolSpec(
    TOOL,
    "Save a PNG of a page of your task's dev server (dev_server_url) at .fixloop/shots/NAME.png "
    "in your worktree and show it. Only pages of that dev server; NAME: letters, digits, - _.",
    {
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "A page of your task's dev server."},
            "name": {"type": "string", "description": "The picture's name, without .png."},
            "viewport": {
                "type": "array",
                "items": {"type": "integer"},
                "minItems": 2,
                "maxItems": 2,
                "description": "[WIDTH, HEIGHT]; the run's viewport when left out.",
            },
        },
        "required": ["url", "name"],
    },
)


class ScreenshotTool:
    """The `screenshot` tool of one design executor's call (a `Toolbox`)."""

    def __init__(self, shots: Shots, worktree: Path, viewport: tuple[int, int]) -> None:
        self.shots = shots
        self.worktree = worktree
        self.viewport = viewport

    @property
    def replaces(self) -> frozenset[str]:
        return frozenset()

    def specs(self) -> Sequence[ToolSpec]:
        return (SPEC,)

    def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        if name != TOOL:
            return _refused("unknown_tool", f"{name}: this call has only {TOOL}")
        shot = arguments.get("name")
        if not isinstance(shot, str) or not _NAME.fullmatch(shot):  # no `.`, so no `..`
            return _refused(
                "bad_name", "name: letters, digits, - and _ only (no /, no .., no .png)"
            )
        try:
            viewport = arguments.get("viewport", self.viewport)
            picture = self.shots.take(arguments.get("url"), viewport)
        except FixloopError as exc:
            return _refused("browser_failed", str(exc).splitlines()[0])
        except ValueError as exc:  # the shooter's refusal: another host, port, scheme...
            return _refused("refused", str(exc))
        relative = "/".join((*SHOTS, f"{shot}.png"))
        try:
            _write_new(self.worktree, SHOTS, f"{shot}.png", picture.png)
        except OSError as exc:
            return _refused("not_written", f"{relative}: {exc.strerror or exc}")
        answer = {
            "ok": True,
            "path": relative,
            "file": str(self.worktree / relative),
            "width": picture.width,
            "height": picture.height,
            "bytes": len(picture.png),
        }
        return ToolReply(json.dumps(answer), image=picture.png)


def _refused(error: str, message: str) -> ToolReply:
    return ToolReply(json.dumps({"ok": False, "error": error, "message": message}), True)


def _write_new(root: Path, folders: tuple[str, ...], name: str, data: bytes) -> None:
    """`data` as a new file `root/folders.../name`, each folder opened without following a
    symbolic link (the agent writes this tree: a link in it could point anywhere)."""
    directory = os.open(root, _DIRECTORY)
    try:
        for folder in folders:
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder, 0o755, dir_fd=directory)
            inner = os.open(folder, _DIRECTORY, dir_fd=directory)
            os.close(directory)
            directory = inner
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=directory)  # never written through: it may be a hard link
        with os.fdopen(os.open(name, _NEW_FILE, 0o644, dir_fd=directory), "wb") as out:
            out.write(data)
    finally:
        os.close(directory)


__all__ = ["SPEC", "TOOL", "ScreenshotTool"]
