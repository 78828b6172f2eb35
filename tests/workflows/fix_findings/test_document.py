"""workflows/fix-findings.md: its contracts hold, catch the defects they name; its brief loads."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fixloop.checker.checking import check_paths
from fixloop.diagnostics import FixloopError
from fixloop.documents.pack import WorkflowDoc, default_pack_root, load_pack
from fixloop.documents.source import load_document
from fixloop.documents.specs import WorkflowSpec
from fixloop.workflows.fix_findings.briefs import fix_brief

PACK = default_pack_root()
WORKFLOWS = PACK / "workflows"


def copy(tmp_path: Path) -> Path:
    """The document, its contracts and the agents it dispatches (whose bash is its brief)."""
    (tmp_path / "workflows").mkdir()
    (tmp_path / "agents").mkdir()
    for name in ("fix-findings.md", "fix-findings.contracts.yaml"):
        shutil.copy(WORKFLOWS / name, tmp_path / "workflows" / name)
    for name in ("fixer.md", "verifier.md"):
        shutil.copy(PACK / "agents" / name, tmp_path / "agents" / name)
    return tmp_path / "workflows" / "fix-findings.md"


def test_the_document_passes_its_contracts_and_the_generic_rules() -> None:
    result = check_paths([WORKFLOWS / "fix-findings.md"])
    assert [d.format() for d in result.diagnostics] == []
    ids = {contract.id for _, contract in result.contracts}
    assert {"nothing-is-committed", "no-tree-wide-git", "only-files-changed-are-staged"} <= ids
    assert {"fingerprint-only-reads", "index-entry-back-before-its-bytes"} <= ids


@pytest.mark.parametrize(
    ("old", "new", "rule"),
    [
        (
            '  git add -- "${files[@]}"\n',
            '  git add -- "${files[@]}"\n  git commit -m fix\n',
            "nothing-is-committed",
        ),
        ('  git add -- "${files[@]}"\n', "  git add -A\n", "no-tree-wide-git"),
        ('  git add -- "${files[@]}"\n', '  git stash push -- "${files[@]}"\n', "no-tree-wide-git"),
        (
            '  git add -- "${files[@]}"\n',
            '  git add -- "${files[@]}"\n  git update-ref HEAD "$c"\n',
            "head-moves-only-on-the-users-choice",
        ),
        (
            'git update-ref "$SAVED_REF" "$saved"\n',
            'git apply --reverse --cached -- "$PATCH_FILE"\ngit update-ref "$SAVED_REF" "$saved"\n',
            "user-hunks-saved-before-taken-out",
        ),
        (
            'git diff --staged --stat --no-color -- "${files[@]}"',
            "git diff --staged --stat",
            "escalation-summary-is-scoped",
        ),
        (
            ': > "$HASH_FILE"\n',
            ': > "$HASH_FILE"\ngit update-index -q --refresh\n',
            "fingerprint-only-reads",
        ),
        (
            '  git checkout-index --force -- "${files[@]}"\n',
            "  git checkout-index --force --all\n",
            "clean-files-back-by-name",
        ),
        (
            '  git checkout-index --force -- "${files[@]}"\n',
            "  git checkout-index --force --all\n",
            "no-tree-wide-checkout-index",
        ),
        (
            '  git checkout-index --force -- "${files[@]}"\n',
            '  git checkout-index --force -- "${files[@]}"\n'
            '  for path in "${files[@]}"; do git update-index --force-remove -- "$path"; done\n',
            "index-entry-back-before-its-bytes",
        ),
    ],
)
def test_the_contracts_catch_what_they_name(tmp_path: Path, old: str, new: str, rule: str) -> None:
    document = copy(tmp_path)
    text = document.read_text(encoding="utf-8")
    assert old in text
    document.write_text(text.replace(old, new, 1), encoding="utf-8")
    rules = {d.rule for d in check_paths([document]).diagnostics}
    assert rule in rules


def test_the_fix_brief_carries_the_seed_rules() -> None:
    pack, _ = load_pack(default_pack_root())
    brief = fix_brief(pack.workflow("fix-findings"))
    for rule in (
        "never run `git stash`",
        "`git checkout -- .`",
        "`git reset`",
        "changes the whole tree",
        "Scope every Git read to assigned paths",
        "git show HEAD:<path>",
        "needs_scope_expansion",
        "decide first whether the code or the test is wrong, then fix that one",
    ):
        assert rule in brief


def test_a_document_without_a_brief_is_a_located_error(tmp_path: Path) -> None:
    document = copy(tmp_path)
    text = document.read_text(encoding="utf-8").replace("```text\n", "```\n", 1)
    document.write_text(text, encoding="utf-8")
    source = load_document(document, tmp_path)
    workflow = WorkflowDoc(WorkflowSpec.model_validate(source.metadata), source)
    with pytest.raises(FixloopError) as caught:
        fix_brief(workflow)
    assert caught.value.diagnostics[0].format().startswith("workflows/fix-findings.md:")
    assert ": fix-brief: " in caught.value.diagnostics[0].format()
