"""A pack in another house style, checked by writing contracts only (issue 3, item 7).

The fixture `fixtures/foreign/agents/code-fixer.md` uses XML-ish `<step name="…">` sections, a bold
"Cleanup tail" label, `${VAR}` placeholders and `node -e` helpers; its sidecar tells the checker
how to read it. Nothing in the checker knows that style.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fixloop.checker.checking import check_paths

from .conftest import FIXTURES

DOCUMENT = "agents/code-fixer.md"


@pytest.fixture
def foreign(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURES / "foreign", tmp_path / "foreign")
    return tmp_path / "foreign"


def check(root: Path) -> list[tuple[str, int]]:
    return [(d.rule, d.line) for d in check_paths([root], base=root).diagnostics]


def edit(root: Path, old: str, new: str) -> None:
    path = root / DOCUMENT
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_foreign_document_keeps_its_contracts(foreign: Path) -> None:
    result = check_paths([foreign], base=foreign)
    assert result.diagnostics == []
    document = result.documents[0]
    assert document.step_names == ["setup_worktree", "apply_fixes", "finish"]
    assert [u.finally_ for u in document.units] == [False, False, True]


def test_sentinel_before_worktree_add_is_caught(foreign: Path) -> None:
    edit(foreign, 'git worktree add -b "$reviewfix_branch" "$wt" "$branch"\n', "")
    edit(
        foreign,
        "node -e 'require",
        'git worktree add -b "$reviewfix_branch" "$wt" "$branch"\nnode -e \'require',
    )
    assert check(foreign) == []  # same order, just rewritten
    edit(foreign, 'git worktree add -b "$reviewfix_branch" "$wt" "$branch"\n', "")
    edit(
        foreign,
        "export REVIEW_PATH",
        'git worktree add -b "$reviewfix_branch" "$wt" "$branch"\nexport REVIEW_PATH',
    )
    assert check(foreign) == [("sentinel-after-worktree-add", 22)]


def test_the_cleanup_tail_label_makes_a_finally_section(foreign: Path) -> None:
    edit(
        foreign,
        "FIXED_COUNT=$((FIXED_COUNT + 1))",
        "FIXED_COUNT=$((FIXED_COUNT + 1))\ngit diff --quiet || exit 1",
    )
    assert check(foreign) == []
    edit(foreign, "**Cleanup tail:**", "Then:")
    assert check(foreign) == [("worktree-removed-on-every-path", 22)]


def test_branch_delete_outside_its_guard_and_a_stash(foreign: Path) -> None:
    edit(
        foreign,
        'rm -f "$sentinel"',
        'git branch -D "$reviewfix_branch"\ngit stash\nrm -f "$sentinel"',
    )
    assert check(foreign) == [
        ("branch-delete-only-on-ff-success", 55),
        ("commits-name-their-files", 56),
    ]
