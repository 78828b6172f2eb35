"""Fixtures of the fix-findings tests: the shipped pack and a repository holding the user's work.

Test modules that need another repository (execute-wave, fix-engine) define their own `repo`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.fix_findings import make_repo

from fixloop.documents.pack import Pack, default_pack_root, load_pack


@pytest.fixture(scope="module")
def pack() -> Pack:
    loaded, _ = load_pack(default_pack_root())
    return loaded


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)
