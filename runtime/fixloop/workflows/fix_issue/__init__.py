"""fix-issue: an issue in, a patch out, accepted only on a clean checkout of its base."""

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
