"""Tools some tests need from the machine (bubblewrap, socat, a Docker daemon, Chromium, npm).

A test says `@pytest.mark.needs("bwrap", "socat")`. Without the tool it is skipped on a
developer's machine, with the reason; under `CI=true` it FAILS instead: CI installs every tool
(`.ci/run`), so a missing one there is a broken CI, not a reason to quietly test less.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Callable


@functools.cache
def _bwrap() -> bool:
    if shutil.which("bwrap") is None:
        return False
    probe = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"]
    try:
        return subprocess.run(probe, capture_output=True, timeout=30, check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@functools.cache
def _docker() -> bool:
    """A daemon answers (at DOCKER_HOST, or the default socket)."""
    try:
        import docker

        client = docker.from_env(timeout=10)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:  # no SDK, no socket, no daemon: all mean "not here"
        return False


PROBES: dict[str, Callable[[], bool]] = {
    "bwrap": _bwrap,
    "socat": lambda: shutil.which("socat") is not None,
    "docker": _docker,
    "chromium": lambda: shutil.which("chromium") is not None,
    "node": lambda: shutil.which("node") is not None,
    "npm": lambda: shutil.which("npm") is not None,  # installs TypeScript for its check
}


def missing(tools: tuple[str, ...]) -> list[str]:
    unknown = [tool for tool in tools if tool not in PROBES]
    if unknown:
        raise ValueError(f"unknown tool(s) {unknown}; known: {sorted(PROBES)}")
    return [tool for tool in tools if not PROBES[tool]()]


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"
