"""The user's own git configuration in a test's HOME (`~/.gitconfig`), and a stand-in for gpg.

`fake_gpg` answers git's signing call as gpg does (a `SIG_CREATED` status line, an armoured
signature), so a test can tell a signed commit from an unsigned one without keys.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_FAKE_GPG = """#!/bin/sh
cat >/dev/null
echo "[GNUPG:] SIG_CREATED D 1 8 00 1 0" >&2
printf -- '-----BEGIN PGP SIGNATURE-----\\n\\nZmFrZQ==\\n-----END PGP SIGNATURE-----\\n'
"""


def set_user_config(**settings: str) -> Path:
    """Write `section.key=value` settings into the test HOME's `~/.gitconfig`."""
    config = Path(os.environ["HOME"]) / ".gitconfig"
    for key, value in settings.items():
        subprocess.run(
            ["git", "config", "--file", str(config), key.replace("__", "."), value], check=True
        )
    return config


def fake_gpg(folder: Path) -> Path:
    program = folder / "fake-gpg"
    program.write_text(_FAKE_GPG, encoding="utf-8")
    program.chmod(0o755)
    return program


def is_signed(repo: Path, commit: str = "HEAD") -> bool:
    raw = subprocess.run(
        ["git", "cat-file", "commit", commit], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    return "\ngpgsig " in raw.split("\n\n", 1)[0]


__all__ = ["fake_gpg", "is_signed", "set_user_config"]
