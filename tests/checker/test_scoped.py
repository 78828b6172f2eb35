"""`checker.scoped`: errexit and generic-rule ignores for some steps or blocks only."""

from __future__ import annotations

from pathlib import Path

from fixloop.checker.check import check_paths

from .conftest import rules

DOCUMENT = """---
name: ship
description: d
---

# Ship

## Merge {#merge}

```bash
git merge --ff-only "$branch"
git branch -D "$branch"
```

## Tidy {#tidy}

```bash
echo "$LEFT_BY_THE_CALLER"
```
"""

SIDECAR = """checker:
  env: [branch]
  scoped:
SCOPED
contracts:
  - id: delete-after-merge
    guarded: git branch -D
    by: git merge --ff-only
"""


def check(tmp_path: Path, scoped: str) -> list[tuple[str, int]]:
    agents = tmp_path / "pack" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "ship.md").write_text(DOCUMENT, encoding="utf-8")
    (agents / "ship.contracts.yaml").write_text(SIDECAR.replace("SCOPED", scoped), encoding="utf-8")
    return rules(check_paths([tmp_path / "pack"], base=tmp_path).diagnostics)


def test_errexit_for_one_step_of_a_document_that_runs_without_it(tmp_path: Path) -> None:
    # Without `set -e` the branch is deleted whether or not the merge succeeded.
    assert ("delete-after-merge", 12) in check(tmp_path, "    - {in: {step: tidy}, errexit: true}")
    assert check(tmp_path, "    - {in: {step: merge}, errexit: true}") == [
        ("undefined-variable", 18)
    ]


def test_a_generic_rule_ignored_for_one_step_only(tmp_path: Path) -> None:
    ignored = (
        "    - {in: {step: merge}, errexit: true}\n"
        "    - {in: {step: tidy}, ignore: [undefined-variable]}"
    )
    assert check(tmp_path, ignored) == []
    elsewhere = "    - {in: {step: merge}, errexit: true, ignore: [undefined-variable]}"
    assert check(tmp_path, elsewhere) == [("undefined-variable", 18)]
