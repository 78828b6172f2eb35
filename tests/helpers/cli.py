"""`fixloop ARGS` as a user runs it: a process of its own, forked warm (warm_python.py)."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

from tests.helpers import warm_python


def fixloop(
    *args: str,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    stdin: str = "",
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """Run the command line with `args` in `cwd`; `env` replaces the environment when given."""
    return warm_python.run(["-m", "fixloop", *args], env=env, cwd=cwd, stdin=stdin, timeout=timeout)
