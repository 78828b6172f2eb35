"""Fixtures of the efficacy tests: the shipped pack and corpus, and a corpus copy to change."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT
from tests.helpers.sandbox_image import docker_client, docker_image

from fixloop.documents.pack import Pack, default_pack_root, load_pack

CORPUS = REPO_ROOT / "bench" / "efficacy" / "corpus"

__all__ = ["CORPUS", "docker_client", "docker_image"]


@pytest.fixture(scope="module")
def pack() -> Pack:
    loaded, _ = load_pack(default_pack_root())
    return loaded


@pytest.fixture
def corpus_copy(tmp_path: Path) -> Path:
    target = tmp_path / "corpus"
    shutil.copytree(CORPUS, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target
