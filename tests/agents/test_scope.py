"""Write scope decisions on real paths (symlinks included), without a model."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.agents.scope import WriteScope


@pytest.fixture
def root(tmp_path: Path) -> Path:
    tree = tmp_path / "wt"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "a.py").write_text("a = 1\n")
    (tree / ".git").write_text("gitdir: /somewhere\n")
    return tree


@pytest.mark.parametrize("tool", ["Write", "Edit", "MultiEdit"])
def test_writes_inside_the_worktree_are_allowed(root: Path, tool: str) -> None:
    scope = WriteScope.create(root)

    assert scope.check(tool, {"file_path": "src/a.py"}) is None
    assert scope.check(tool, {"file_path": str(root / "src" / "new.py")}) is None


@pytest.mark.parametrize(
    "path", ["../escape.py", "/etc/passwd", "src/../../escape.py", "src/link-out.py"]
)
def test_writes_that_leave_the_worktree_are_denied(root: Path, path: str) -> None:
    (root / "src" / "link-out.py").symlink_to(root.parent / "elsewhere.py")
    scope = WriteScope.create(root)

    denied = scope.check("Write", {"file_path": path})

    assert denied is not None and denied.tool == "Write"
    assert "outside the worktree" in denied.reason


def test_a_notebook_edit_is_checked_by_its_own_key(root: Path) -> None:
    scope = WriteScope.create(root)

    denied = scope.check("NotebookEdit", {"notebook_path": "/tmp/x.ipynb"})

    assert denied is not None and denied.path == "/tmp/x.ipynb"


def test_git_metadata_is_never_writable(root: Path) -> None:
    denied = WriteScope.create(root).check("Write", {"file_path": ".git"})

    assert denied is not None and "git metadata" in denied.reason


def test_assigned_files_are_the_only_writable_ones(root: Path) -> None:
    scope = WriteScope.create(root, ("./src/a.py", str(root / "src" / "b.py")))

    assert scope.check("Edit", {"file_path": "src/a.py"}) is None
    assert scope.check("Edit", {"file_path": str(root / "src" / "a.py")}) is None
    assert scope.check("Write", {"file_path": "src/b.py"}) is None, "absolute assignments count"
    denied = scope.check("Edit", {"file_path": "src/c.py"})
    assert denied is not None and denied.path == "src/c.py"
    assert "src/a.py, src/b.py" in denied.reason
    assert "scope-expansion request" in denied.reason


def test_an_assigned_file_outside_the_worktree_grants_nothing(root: Path) -> None:
    outside = root.parent / "x.py"
    scope = WriteScope.create(root, (str(outside),))

    assert scope.check("Write", {"file_path": str(outside)}) is not None


def test_a_write_without_a_path_is_denied_and_reads_are_not_checked(root: Path) -> None:
    scope = WriteScope.create(root, ())

    assert scope.check("Write", {"content": "x"}) is not None
    assert scope.check("Read", {"file_path": "/etc/passwd"}) is None
    assert scope.check("Bash", {"command": "echo hi"}) is None
