"""What a task's verdict rests on, kept with its outcome: the patch graded, every selected
test's status at the base, after the fix (in the fixer's worktree, when an agent ran) and at
acceptance, the runner's output tail there, and the reason. It goes into `--json` and, with
`--out DIR`, into `DIR/<task>/evidence.json` beside the patch and the traces, with `--patches`
as without.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from fixloop.extras.efficacy.outcome import TaskOutcome
from fixloop.masking import dumps_masked, mask_text
from fixloop.workflows.fix_issue.acceptance import Acceptance
from fixloop.workflows.fix_issue.grading import merged
from fixloop.workflows.fix_issue.runners import TestReport, TestStatus
from fixloop.workflows.fix_issue.suite import CommandRun

OUTPUT_TAIL_CHARS = 2000
PATCH_CHARS = 200_000
NOT_RUN = "not run"


def _tail(runs: Sequence[CommandRun]) -> str:
    joined = "\n".join(f"$ {run.command}\n{run.output}" for run in runs)
    return mask_text(joined[-OUTPUT_TAIL_CHARS:])


def record(
    outcome: TaskOutcome,
    acceptance: Acceptance | None,
    *,
    after_fix: Sequence[CommandRun] | None = None,
    patch: Path | None = None,
) -> None:
    """Fill `outcome`'s evidence from the acceptance (None: none ran) and the fixer's last runs."""
    if patch is not None and patch.is_file():
        outcome.model_patch = mask_text(patch.read_text(encoding="utf-8", errors="replace"))
        outcome.patch = outcome.model_patch[:PATCH_CHARS]
    if acceptance is None:
        return
    outcome.output = _tail(acceptance.results or acceptance.base_results)
    grade = acceptance.grade
    if grade is None:
        return
    f2p, p2p = grade.count("fail_to_pass"), grade.count("pass_to_pass")
    outcome.fail_to_pass, outcome.pass_to_pass = f"{f2p[0]}/{f2p[1]}", f"{p2p[0]}/{p2p[1]}"
    fixed = merged(after_fix) if after_fix is not None else None
    outcome.tests = [
        {
            "id": row.id,
            "role": row.role,
            "base": str(row.base),
            "after_fix": NOT_RUN if fixed is None else str(_after(fixed, row.key)),
            "accepted": str(row.accepted),
        }
        for row in grade.rows
    ]


def _after(fixed: dict[str, TestReport], key: str) -> str:
    found = fixed.get(key)
    return str(TestStatus.MISSING if found is None else found.status)


def keep(out: Path | None, outcome: TaskOutcome, files: Sequence[tuple[Path, str]]) -> None:
    """`OUT/<task>/`: the evidence, and the files named (patch, result, traces: a source and
    the name it is kept under) that exist."""
    if out is None:
        return
    folder = out / outcome.id
    folder.mkdir(parents=True, exist_ok=True)
    for source, name in files:
        if source.is_file():
            shutil.copyfile(source, folder / name)
    (folder / "evidence.json").write_text(
        dumps_masked(outcome.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )


__all__ = ["keep", "record"]
