"""What the sandbox tests share besides fixtures: where the probe programs are, and how to find
the processes a sandbox left (or did not leave) on the host."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fixloop.sandboxes import Sandbox

PROBE = Path(__file__).with_name("probe.py")
HOLDER = Path(__file__).with_name("holder.py")

NEEDS_DOCKER = pytest.mark.needs("docker")
NEEDS_BWRAP = pytest.mark.needs("bwrap")

OpenSandbox = Callable[..., Sandbox]  # the `sandbox_of` fixture: open_sandbox on the worktree


def kinds(*names: str) -> list[Any]:
    """Sandbox kinds as test parameters, each marked with the tool it needs."""
    marks = {"local": [], "bwrap": [NEEDS_BWRAP], "docker": [NEEDS_DOCKER]}
    return [pytest.param(name, marks=marks[name], id=name) for name in names]


def python_in(kind: str) -> str:
    """The interpreter a probe runs with: the host's (bwrap sees the host's files), or the
    image's."""
    return "python3" if kind == "docker" else sys.executable


def processes_holding(token: str) -> list[int]:
    """Host pids of the processes whose command line holds `token` (in any namespace)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if token.encode() in words:
            found.append(int(entry.name))
    return found


def wait_until(condition: Callable[[], bool], timeout_s: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()
