"""fix-issue: an issue in, a patch out, accepted only on a clean checkout of its base."""

from fixloop.lazy import exports

# Imported on first use (fixloop/lazy.py says why); the imports below are for type checkers.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from fixloop.workflows.fix_issue.acceptance import Acceptance, PatchCheck, verify_patch
    from fixloop.workflows.fix_issue.plan import FixIssueOptions, HiddenTests, SandboxOpener
    from fixloop.workflows.fix_issue.result import FixIssueResult, IssueStatus
    from fixloop.workflows.fix_issue.suite import CommandRun, PresetTest
    from fixloop.workflows.fix_issue.workflow import FixIssue, run_fix_issue

__all__ = [
    "Acceptance",
    "CommandRun",
    "FixIssue",
    "FixIssueOptions",
    "FixIssueResult",
    "HiddenTests",
    "IssueStatus",
    "PatchCheck",
    "PresetTest",
    "SandboxOpener",
    "run_fix_issue",
    "verify_patch",
]

__getattr__ = exports(
    __name__,
    {
        "Acceptance": "fixloop.workflows.fix_issue.acceptance:Acceptance",
        "CommandRun": "fixloop.workflows.fix_issue.suite:CommandRun",
        "FixIssue": "fixloop.workflows.fix_issue.workflow:FixIssue",
        "FixIssueOptions": "fixloop.workflows.fix_issue.plan:FixIssueOptions",
        "FixIssueResult": "fixloop.workflows.fix_issue.result:FixIssueResult",
        "HiddenTests": "fixloop.workflows.fix_issue.plan:HiddenTests",
        "IssueStatus": "fixloop.workflows.fix_issue.result:IssueStatus",
        "PatchCheck": "fixloop.workflows.fix_issue.acceptance:PatchCheck",
        "PresetTest": "fixloop.workflows.fix_issue.suite:PresetTest",
        "SandboxOpener": "fixloop.workflows.fix_issue.plan:SandboxOpener",
        "run_fix_issue": "fixloop.workflows.fix_issue.workflow:run_fix_issue",
        "verify_patch": "fixloop.workflows.fix_issue.acceptance:verify_patch",
    },
)
