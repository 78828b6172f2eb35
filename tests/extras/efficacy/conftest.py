"""Fixtures of the efficacy tests: the shipped pack and corpus, a corpus copy to change, and
`python3` meaning the interpreter that runs this suite."""

from __future__ import annotations

import os
import shutil
import sys
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


@pytest.fixture(autouse=True)
def suite_python_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """The corpora's commands say `python3`; on the host (the local and bwrap sandboxes take
    this process's PATH) that is the interpreter running this suite, whose dev extra has pytest.
    Otherwise it is whichever `python3` comes first on the machine's PATH: another interpreter,
    whose pytest may be missing or load every plugin of its site-packages on each run (seconds),
    behind a version manager's shell shim (a third of a second per start). A container runs its
    image's python3 whatever this says."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
