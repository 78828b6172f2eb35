"""StagingSteps needs what its steps declare: a missing or malformed output fails closed."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.gitrepo import UserRepo
from tests.helpers.workflows import write_workflow

from fixloop.runs.run import Run
from fixloop.steps.result import StepFailed
from fixloop.workflows.fix_findings.staging import StagingSteps

# Steps that succeed but report wrongly: nothing for COMMIT, a word where a count belongs.
LOOSE = """\
---
name: fix-findings
description: Staging steps that succeed without reporting what the caller needs.
inputs:
  FILES_LIST: {type: string}
  COMMIT_MESSAGE: {type: string, required: false}
outputs:
  COMMIT: Never written here.
  STAT: A diffstat.
  ADDED: Not a count here.
  REMOVED: Lines removed.
---

## Commit {#commit-prestaged}

```bash
true
```

## Summary {#staged-summary}

```bash
printf 'STAT=x\\nADDED=lots\\nREMOVED=0\\n' >> "$FIXLOOP_OUTPUT"
```
"""


def test_a_missing_or_malformed_output_fails_closed(user_repo: UserRepo, tmp_path: Path) -> None:
    flow = write_workflow(tmp_path / "pack", LOOSE, name="fix-findings")
    run = Run.start(user_repo.path, "demo")
    steps = StagingSteps(flow, user_repo.path, run, tmp_path / "scratch")
    with pytest.raises(StepFailed, match=r"fix-findings#commit-prestaged: reported nothing for"):
        steps.commit_prestaged(["src/app.py"], "keep")
    with pytest.raises(StepFailed, match=r"reported 'lots' for ADDED \(not a count\)$"):
        steps.staged_summary(["src/app.py"])
    run.finish("failed")
