"""A real TypeScript compiler for the tests of review-fix's TypeScript check, installed by npm."""

from __future__ import annotations

import subprocess
from pathlib import Path


def install_typescript(folder: Path) -> Path:
    """`npm install typescript@5` into `folder`; returns its `node_modules`."""
    done = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--silent", "typescript@5"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return folder / "node_modules"
