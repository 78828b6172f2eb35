"""The digest of a pack's documents: what a run records it ran, and what a contract check's
verdict is remembered by.

It covers every file of the pack the checker or a step can read (Markdown, contract sidecars,
settings, manifests, the step library's scripts), by path and content, in path order; caches and
virtual environments are left out.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

_READ = frozenset({".md", ".yaml", ".yml", ".json", ".toml", ".sh", ".bash", ".py"})
_SKIP = frozenset({".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"})


def pack_digest(root: Path) -> str:
    """sha256 over the pack's documents: each one's path and bytes."""
    digest = hashlib.sha256()
    for path in _documents(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _documents(root: Path) -> Iterator[Path]:
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP)
        for name in sorted(files):
            path = Path(folder) / name
            if path.suffix in _READ and path.is_file():
                yield path


__all__ = ["pack_digest"]
