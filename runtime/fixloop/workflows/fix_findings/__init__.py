"""fix-findings: confirmed P0/P1 findings fixed in at most two fix-and-verify rounds, staged."""

from fixloop.lazy import exports

# Imported on first use (fixloop/lazy.py says why); the imports below are for type checkers.
TYPE_CHECKING = False
if TYPE_CHECKING:
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

__getattr__ = exports(
    __name__,
    {
        "LATEST": "fixloop.runs.state:LATEST",
        "FixFindings": "fixloop.workflows.fix_findings.workflow:FixFindings",
        "FixFindingsOptions": "fixloop.workflows.fix_findings.workflow:FixFindingsOptions",
        "FixFindingsResult": "fixloop.workflows.fix_findings.workflow:FixFindingsResult",
        "MAX_ATTEMPTS": "fixloop.workflows.fix_findings.workflow:MAX_ATTEMPTS",
        "run_fix_findings": "fixloop.workflows.fix_findings.workflow:run_fix_findings",
    },
)
