"""workflows/fix-engine.md as a program: its steps, its bash, its contracts.

The logic lives where tools see it: the steps call `workflows/lib/fix_engine.py` (checked by
ruff, mypy and its own tests), never a program inside a bash string. The contracts hold on the
document and fail on the mutants a careless edit would make.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT
from tests.workflows.fix_engine.scenario import shipped_pack

from fixloop.cli.main import main

DOCUMENT = REPO_ROOT / "workflows" / "fix-engine.md"
STEPS = {
    "load-section",
    "make-checklist",
    "resume-interrupted",
    "fix-item",
    "implement-item",
    "verify-item",
    "record-verdict",
    "record-commit",
    "error-report",
    "complete",
}
# A program inside a bash string: `python3 -c '…'`, `python - <<'PY'`, `node -e`, `perl -e`.
INLINE_PROGRAM = re.compile(r"\b(python3?|node|perl|ruby)\b[^\n]*\s(-c|-e|-)\s|<<-?\s*'?PY")


def _bash() -> dict[str, str]:
    flow = shipped_pack().workflow("fix-engine")
    return {
        step.name: "".join(block.content for block in step.blocks if block.lang == "bash")
        for step in flow.markdown().steps
    }


def test_the_document_has_its_steps_and_each_bash_block_parses() -> None:
    steps = _bash()
    assert set(steps) == STEPS
    for name, script in steps.items():
        if script:
            done = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True)
            assert done.returncode == 0, f"{name}: {done.stderr}"


def test_no_program_hides_in_a_bash_string() -> None:
    for name, script in _bash().items():
        assert INLINE_PROGRAM.search(script) is None, name
        for line in script.splitlines():
            if "python" in line.lower():
                assert '"$FIXLOOP_LIB/fix_engine.py"' in line, f"{name}: {line}"


def test_the_contracts_hold(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(DOCUMENT)]) == 0, capsys.readouterr().out


@pytest.mark.parametrize(
    ("old", "new", "contract"),
    [
        ('fixloop_refuse_unsafe_path "$MINI_PRD"\n', "", "mini-prd-path-checked-before-it-is-read"),
        (
            '  if ! git merge-base --is-ancestor "$commit" HEAD; then',
            "  if false; then",
            "commits-checked-on-the-branch",
        ),
        (
            '--state "$STATE" --list "$commits"\n',
            '--state "$STATE" --list "$commits"\n'
            '"${FIXLOOP_PYTHON:-python3}" "$FIXLOOP_LIB/fix_engine.py" complete --state "$STATE"\n',
            "complete-written-once",
        ),
        (
            '  --output "$FIXLOOP_OUTPUT"\n```\n',
            '  --output "$FIXLOOP_OUTPUT"\ngit add -A\n```\n',
            "no-tree-wide-git",
        ),
    ],
    ids=["path-unchecked", "commits-unchecked", "complete-twice", "tree-wide-add"],
)
def test_a_careless_edit_breaks_a_contract(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, contract: str
) -> None:
    text = DOCUMENT.read_text(encoding="utf-8")
    assert old in text
    mutant = tmp_path / "workflows" / "fix-engine.md"
    mutant.parent.mkdir(parents=True)
    mutant.write_text(text.replace(old, new, 1), encoding="utf-8")
    (mutant.parent / "lib").symlink_to(DOCUMENT.parent / "lib")
    assert main(["check", str(mutant)]) == 1
    out = capsys.readouterr().out
    # Its own line, or folded into the line of another contract the same edit breaks.
    assert f": {contract}: " in out or f"[also {contract}]" in out
