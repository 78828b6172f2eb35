"""fix-findings' options: the findings file, the repository, and what to do when a person would
be asked (staged hunks of yours in a file to fix, a fixer asking for more files)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from fixloop.workflows.kernel.options import option, repo_option, resume_option, seconds
from fixloop.workflows.kernel.scope_policy import SCOPE_POLICIES, ScopePolicy

ESCALATION_EPILOG = """\
when a finding is escalated (not resolved after its last round):
  fixloop prints what was attempted, why it is still unresolved and what is staged for it, then
  asks (in a terminal; headless the answer is "Defer this finding"):
    1. Defer this finding (Recommended)  nothing changes; the finding is reported as escalated
    2. Manual fix                        nothing changes; you fix it by hand
    3. Try a different approach          nothing changes; run again on this finding with what
                                         you learned (there is never a Round 3 inside a run)
    4. Discard R2 changes and revert     the last round's files get back the index entries and
                                         the bytes they had before that round, file by file
  Whatever stays staged for an escalated finding was NOT verified to resolve it: the summary
  says so, and you decide whether to keep it before you commit.

exit codes: 0 every finding resolved, dropped or demoted (or --dry-run); 1 some were escalated;
2 bad input, a backend that cannot answer, or another fix-findings run working here.
"""

PrestagedPolicy = Literal["ask", "commit", "set-aside", "stash", "proceed"]  # stash: old name


@dataclass(frozen=True)
class FixFindingsOptions:
    epilog: ClassVar[str] = ESCALATION_EPILOG  # `fixloop fix-findings --help` ends with it

    findings: Path = option(type=Path, help="a ReviewOutput JSON file or a list of findings")
    repo: Path = repo_option()
    on_prestaged: PrestagedPolicy = option(
        "--on-prestaged",
        choices=("ask", "commit", "set-aside", "stash", "proceed"),
        default="ask",
        metavar="ask|commit|set-aside|proceed",
        help="a fixed file already holds your staged hunks: ask (in a terminal; headless the "
        "finding is escalated and nothing is touched), commit them first (only them), set them "
        "aside (saved in a ref and a patch; never `git stash`; `stash` is an old name for it), "
        "or stage them with the fix",
    )
    on_scope_expansion: ScopePolicy = option(
        "--on-scope-expansion",
        choices=SCOPE_POLICIES,
        default="ask",
        help="the fixer needs more files: ask (headless: defer), approve, reject, or defer",
    )
    resume: str | None = resume_option("findings file")  # a run id, or `latest`
    # intake, plan and preflight; say what would be done; change nothing
    dry_run: bool = option(
        "--dry-run",
        action="store_true",
        default=False,
        help="read and check the findings, the repository and the backend; say what would be "
        "done and change nothing: no run folder, nothing staged",
    )
    wait_s: float = option(
        "--wait",
        type=seconds,
        default=0.0,
        metavar="SECONDS",
        help="another fix-findings run is working in this repository: wait up to SECONDS for "
        "it (default 0: refuse at once, naming it)",
    )


__all__ = ["FixFindingsOptions", "PrestagedPolicy"]
