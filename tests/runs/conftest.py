"""Report the crash matrix's coverage at the end of the test session."""

from __future__ import annotations

import pytest
from tests.helpers.crash_tally import summary


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    line = summary()
    if line is not None:
        terminalreporter.write_line(line)
