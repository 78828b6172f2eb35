"""The demo's closing summary: what happened, where to look, and that the model was scripted."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from fixloop.extras.demo.execute_wave import wave_summary_lines
from fixloop.extras.demo.fix_engine import summary_lines as fix_engine_summary
from fixloop.extras.demo.fix_issue import issue_summary_lines
from fixloop.extras.demo.run import DemoResult
from fixloop.workflows.review_fix.outcome import FindingStatus

SCRIPTED_NOTICE = (
    "The model in this demo is SCRIPTED: every edit and verdict was written in advance and "
    "played through the real workflows, real git, real worktrees and real bash. "
    "No network, no API key."
)
REAL_MODEL_NOTICE = (
    "The roles in this demo were played by a REAL MODEL through Claude Code, with the same "
    "documents; its edits and verdicts were its own. Costs are in the run traces listed below."
)


def summary_lines(result: DemoResult) -> list[str]:
    notice = SCRIPTED_NOTICE if result.backend == "scripted" else REAL_MODEL_NOTICE
    lines = [notice, ""]
    review_fix, findings = result.review_fix, result.fix_findings
    if review_fix is not None:
        human = sum(o.status is FindingStatus.NEEDS_HUMAN for o in review_fix.fixed)
        lines.append(
            f"review-fix    {len(review_fix.fixed)} fixed ({human} of them "
            f"{'needs' if human == 1 else 'need'} human verification), "
            f"{len(review_fix.skipped)} skipped"
        )
        lines += [f"                {o.finding.id}: {o.label}" for o in review_fix.skipped]
    if findings is not None:
        lines.append(
            f"fix-findings  {len(findings.resolved)} resolved (staged, not committed), "
            f"{len(findings.escalated)} escalated, {len(findings.dropped)} dropped"
        )
        lines += [
            f"                finding {item.id}: escalated after {len(item.attempts)} attempt(s)"
            for item in findings.escalated
        ]
    if result.fix_engine is not None:
        lines += fix_engine_summary(result.fix_engine)
    if result.execute_wave is not None:
        lines += wave_summary_lines(result.execute_wave)
    if result.fix_issue is not None:
        lines += issue_summary_lines(result.fix_issue)
    after = result.tests_after.describe() if result.tests_after else "not run"
    lines += [
        f"tests         before: {result.tests_before.describe()}    after: {after}",
        f"commits       {len(result.commits)} on main since the example's first commit:",
        *(f"                {line}" for line in result.commits),
        "reports",
    ]
    if review_fix is not None and review_fix.report_path:
        lines.append(f"                {result.repo / review_fix.report_path}")
    if result.fix_findings_output is not None:
        lines.append(f"                {result.fix_findings_output}")
    if result.execute_wave is not None:
        lines.append(f"                {result.execute_wave.run_dir} (execute-wave's run)")
    lines += [
        f"                {result.repo / '.git' / 'fixloop' / 'runs'} (every step and agent call)",
        f"the model     {result.directory / 'model'}"
        + ("" if result.backend == "scripted" else " (the script, unused: a real model played)"),
        f"look          cd {result.repo} && git log --stat && git diff --staged",
    ]
    lines += [f"PROBLEM: {problem}" for problem in result.problems]
    return lines


def print_summary(result: DemoResult, console: Console) -> None:
    console.print()
    for line in summary_lines(result):
        style = "bold red" if line.startswith("PROBLEM") else None
        console.print(escape(line), style=style, highlight=False, soft_wrap=True)
