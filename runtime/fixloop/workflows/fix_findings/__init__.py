"""fix-findings: confirmed P0/P1 findings fixed in at most two fix-and-verify rounds, staged."""

from fixloop.runs.state import LATEST
from fixloop.workflows.fix_findings.workflow import (
    MAX_ATTEMPTS,
    FixFindings,
    FixFindingsOptions,
    FixFindingsResult,
    run_fix_findings,
)

__all__ = [
    "LATEST",
    "MAX_ATTEMPTS",
    "FixFindings",
    "FixFindingsOptions",
    "FixFindingsResult",
    "run_fix_findings",
]
