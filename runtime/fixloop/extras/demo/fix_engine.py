"""The demo's fix-engine case: a small mini-PRD for the shelf, and the model that plays it.

The section `restock-report` asks for two things. `RR-1`, a restock list, is implemented wrongly
first (sorted by name, where the criterion asks for the shop's own order); the verifier says so and
the second attempt gets it right: one commit. `RR-2`, mailing the list to the supplier, cannot be
done in this code base: three attempts leave a stub the verifier rejects each time, its file is
rolled back, and the error report names the item, its attempts and the last verdict.

The mini-PRD is written into the example repository untracked, as a person's draft would be; the
run never commits it. Only new files are touched, so fix-findings' staged fixes stay as they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fixloop import gitrepo
from fixloop.agents.backend import Backend
from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.pack import Pack
from fixloop.events import EventStream
from fixloop.workflows.fix_engine import FixEngineOptions, FixEngineResult, run_fix_engine
from fixloop.workflows.kernel.workflow import Context

MINI_PRD = ".planning/sections/restock-report/mini-prd.md"
PRD = """\
# Restock report

The shop wants a list of what to reorder, and the supplier wants it by mail.

## Acceptance Criteria

- RR-1: `shelf.report.restock_lines(levels, threshold)` returns one `name: level` line per item
  below the threshold, in the shop's own order (the order of `levels`)
- RR-2: the restock list is mailed to the supplier
"""
REPORT = "shelf/report.py"
MAIL = "shelf/mail.py"
_SORTED = '''\
"""The restock report."""

from shelf.stock import restock_needed


def restock_lines(levels, threshold):
    """One `name: level` line per item below `threshold`."""
    return [f"{name}: {levels[name]}" for name in sorted(restock_needed(levels, threshold))]
'''
_IN_ORDER = _SORTED.replace(
    "sorted(restock_needed(levels, threshold))", "restock_needed(levels, threshold)"
)


def _executor(item: str, path: str, content: str, notes: str) -> dict[str, Any]:
    return {
        "edits": [{"path": path, "content": content}],
        "output": {"id": item, "status": "done", "filesModified": [path], "notes": notes},
    }


def _verifier(item: str, verdict: str, evidence: str) -> dict[str, Any]:
    finding = {
        "id": item,
        "severity": "P1",
        "title": item,
        "body": item,
        "file": None,
        "confidence": 0.95,
        "criterion": item,
        "verdict": verdict,
        "evidence": evidence,
    }
    return {"output": {"schema_version": "v1", "findings": [finding], "checks_run": [evidence]}}


def _mail_stub(attempt: int) -> str:
    return (
        f'"""Mail to the supplier (attempt {attempt})."""\n\n\ndef send(lines):\n    return False\n'
    )


SCRIPT: dict[str, Any] = {
    "executor/RR-1/attempt-1": _executor(
        "RR-1", REPORT, _SORTED, "restock_lines lists the items to reorder, sorted by name"
    ),
    "verifier/RR-1/attempt-1": _verifier(
        "RR-1", "confirmed", "shelf/report.py:8 sorts by name, not in the order of levels"
    ),
    "executor/RR-1/attempt-2": _executor(
        "RR-1", REPORT, _IN_ORDER, "kept the order of levels, as the failure asked"
    ),
    "verifier/RR-1/attempt-2": _verifier(
        "RR-1", "rejected", "shelf/report.py:8 keeps the order of levels; one line per item below"
    ),
    **{
        f"executor/RR-2/attempt-{n}": _executor(
            "RR-2", MAIL, _mail_stub(n), "no mail server or supplier address in this code base"
        )
        for n in (1, 2, 3)
    },
    **{
        f"verifier/RR-2/attempt-{n}": _verifier(
            "RR-2", "confirmed", "shelf/mail.py:5 send() returns False: nothing is mailed"
        )
        for n in (1, 2, 3)
    },
}


def run_case(
    repo: Path, pack: Pack, backend: Backend | None, events: EventStream
) -> FixEngineResult:
    """Write the section's mini-PRD (untracked) and run fix-engine on it."""
    prd = repo / MINI_PRD
    prd.parent.mkdir(parents=True, exist_ok=True)
    prd.write_text(PRD, encoding="utf-8")
    context = Context(pack, backend or ScriptedBackend(SCRIPT), events)
    return run_fix_engine(FixEngineOptions(prd, repo), context)


def self_check(result: FixEngineResult | None, repo: Path, *, scripted: bool = True) -> list[str]:
    """The case's promises, checked against the repository and the section's state. Any model:
    each done item's commit is on the branch, each failed item is in the error report, and
    COMPLETE exists exactly when the section completed. The scripted model: also how each ended."""
    if result is None:
        return ["fix-engine did not run"]
    problems: list[str] = []
    for item in result.done:
        if item.commit and not gitrepo.is_ancestor(repo, item.commit):
            problems.append(f"fix-engine: {item.id}'s commit is not on the branch")
    report = Path(result.error_report) if result.error_report else None
    text = report.read_text(encoding="utf-8") if report is not None and report.is_file() else ""
    problems += [
        f"fix-engine's error report does not name {item.id}"
        for item in result.failed
        if f"check_id: {item.id}" not in text
    ]
    if bool(result.complete) != (result.status == "completed"):
        problems.append(f"fix-engine: COMPLETE {result.complete or 'missing'}, {result.status}")
    if scripted:
        ends = {item.id: (item.status, len(item.attempts)) for item in result.items}
        if ends != {"RR-1": ("done", 2), "RR-2": ("failed", 3)}:
            problems.append(f"fix-engine's items ended {ends}")
        if not (repo / REPORT).is_file() or (repo / MAIL).exists():
            problems.append("fix-engine: RR-1's file is not on the branch, or RR-2's is")
    return problems


def summary_lines(result: FixEngineResult) -> list[str]:
    lines = [
        f"fix-engine    {len(result.done)} item(s) done, {len(result.failed)} failed, "
        f"{result.attempts} attempt(s), {len(result.commits)} commit(s); section {result.status}"
    ]
    for item in result.items:
        commit = f" [{item.commit[:7]}]" if item.commit else ""
        lines.append(f"                {item.id}: {result.item_json(item)['message']}{commit}")
    if result.error_report:
        lines.append(f"                error report: {result.error_report}")
    return lines


__all__ = ["MINI_PRD", "SCRIPT", "run_case", "self_check", "summary_lines"]
