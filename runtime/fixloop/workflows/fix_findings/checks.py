"""Whether a fixer call is a failed attempt, and why: the checks run before anything is staged.

A call fails when it wrote (or tried to write) where no scope expansion can reach, or changed a
file that could not be put back (`Denials.forbidden`); when it was inconclusive; when, already
re-dispatched after a scope question, it asked again or reached past its files again; or when
its report names an unsafe path, a file outside its scope, or a file that does not exist.
"""

from __future__ import annotations

from pathlib import Path

from fixloop.agents.backend import AgentOutcome
from fixloop.schemas.results import FixReport, ScopeExpansionRequest
from fixloop.steps.paths import check_path, path_problem
from fixloop.workflows.fix_findings.state import FindingRecord, RoundRecord
from fixloop.workflows.kernel.denied_writes import Denials


def fix_failure(
    repo: Path,
    outcome: AgentOutcome,
    result: FixReport | ScopeExpansionRequest | None,
    *,
    denials: Denials,
    record: FindingRecord,
    before: RoundRecord,
) -> str | None:
    """Why this call is a failed attempt (its round's summary), or None when it may be staged."""
    if denials.forbidden:
        where = "; ".join(denials.forbidden)
        return (
            f"fixer wrote, or tried to write, where no scope expansion can reach ({where}); "
            "nothing staged"
        )
    if result is None:
        return f"fixer inconclusive ({outcome.reason}): {outcome.detail}"
    if isinstance(result, ScopeExpansionRequest):
        return "fixer asked for a scope expansion again; counted as a failed attempt"
    if denials.outside_scope or denials.unasked:
        tried = ", ".join([*denials.outside_scope, *denials.unasked])
        return (
            f"fixer again tried to edit {tried}, outside its scope {record.scope}; counted "
            "as a failed attempt, nothing staged"
        )
    for path in result.files_changed:
        problem = path_problem(repo, path)
        if problem is not None:
            return f"fixer reported an unsafe path, nothing staged: {problem}"
        clean = check_path(repo, path)
        if clean not in record.scope:
            return f"fixer changed {path!r} outside its scope {record.scope}; nothing staged"
        if not (repo / clean).exists() and clean not in before.index_before:
            return f"fixer reported {path!r}, which exists neither on disk nor in the index"
    return None
