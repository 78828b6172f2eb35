"""Fixtures of the fix-issue tests: the shipped pack; the crash matrix's coverage at the end."""

from __future__ import annotations

import sys

import pytest
from tests.helpers.crash_tally import summary

from fixloop.documents.pack import Pack, default_pack_root, load_pack


@pytest.fixture(scope="module")
def pack() -> Pack:
    loaded, _ = load_pack(default_pack_root())
    return loaded


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The crash matrix's coverage (when tests/runs/ did not already print it)."""
    if "tests.runs.conftest" in sys.modules:
        return
    line = summary()
    if line is not None:
        terminalreporter.write_line(line)
