"""fix-findings' dry run: after intake and every check a run makes, what it would do; no change.

Intake (the findings file parsed and checked, the scope filtered), the index lock and the backend
are checked exactly as a run checks them; then each finding in scope is described: whether it
gets a pre-gate, the file the fixer may edit, whether that file already holds hunks you staged
(Round 1 would ask about them). It only reads: no run folder, no lock file, nothing in `.git`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fixloop import gitrepo
from fixloop.runs.exclusive import holder
from fixloop.workflows.fix_findings.intake import needs_pre_gate
from fixloop.workflows.fix_findings.state import FixFindingsState

if TYPE_CHECKING:
    from fixloop.workflows.fix_findings.findings_run import FindingsRun


def plan_only(flow: FindingsRun, state: FixFindingsState) -> list[str]:
    """What a run would do, one line each."""
    options = flow.options
    lines: list[str] = []
    decided = [r for r in state.records if r.bucket is not None]
    if state.resumed_from:
        lines.append(
            f"would resume run {state.resumed_from}: {len(decided)} of {len(state.records)} "
            "finding(s) already decided"
        )
    ignored = ", ".join(map(str, state.ignored)) or "none"
    lines.append(f"{len(state.records)} finding(s) in scope (confirmed P0/P1); ignored: {ignored}")
    busy = holder(gitrepo.state_dir_of(flow.repo), flow.name)
    if busy is not None:
        wait = f"wait up to {options.wait_s:g}s for it" if options.wait_s else "refuse to start"
        lines.append(f"another fix-findings run ({busy}) is working here: a run would {wait}")
    staged_by_user = _staged_files(flow, state)
    todo = [r for r in state.records if r.bucket is None]
    for number, record in enumerate(todo, start=1):
        finding = record.finding
        scope = ", ".join(record.scope) or "(no file: a global finding)"
        first = "a pre-gate (no verifier pass yet), then " if needs_pre_gate(finding) else ""
        lines.append(
            f"[{number}/{len(todo)}] {finding.id} ({finding.severity}) {finding.title}: "
            f"{first}at most 2 fix+verify rounds on {scope}; fixes staged, never committed"
        )
        for path in record.scope:
            if path in staged_by_user:
                lines.append(
                    f"    {path} holds hunks you staged: Round 1 would settle them first "
                    f"(--on-prestaged {options.on_prestaged})"
                )
    return lines


def _staged_files(flow: FindingsRun, state: FixFindingsState) -> set[str]:
    """The scope files whose index entry differs from HEAD's (staged by the user, or a run)."""
    files = sorted({path for record in state.records for path in record.scope})
    if not files:
        return set()
    entries = gitrepo.index_entries(flow.repo, files)
    repo = gitrepo.git_repo(flow.repo)
    found: set[str] = set()
    for path in files:
        try:
            blob = repo.head.commit.tree / path
            at_head: str | None = f"{blob.mode:06o} {blob.hexsha}"
        except (KeyError, ValueError):
            at_head = None
        if entries.get(path) != at_head and state.staged_by_run.get(path) != entries.get(path):
            found.add(path)
    return found


__all__ = ["plan_only"]
