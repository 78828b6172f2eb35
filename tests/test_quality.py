"""Lint, format and strict typing are part of the test suite, so `pytest` alone proves them."""

from __future__ import annotations

import subprocess
import sys

import pytest
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.slow


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_ruff_lint() -> None:
    result = _run("ruff", "check", "runtime", "tests", "bench", "workflows/lib")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format() -> None:
    result = _run("ruff", "format", "--check", "runtime", "tests", "bench", "workflows/lib")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict() -> None:
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr
