"""Fixtures of the fix-issue tests: the shipped pack."""

from __future__ import annotations

import pytest

from fixloop.documents.pack import Pack, default_pack_root, load_pack


@pytest.fixture(scope="module")
def pack() -> Pack:
    loaded, _ = load_pack(default_pack_root())
    return loaded
