"""Paths as data: refused when they could leave the repository, written NUL-separated."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.diagnostics import FixloopError
from fixloop.steps.paths import check_path, write_paths_file


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (tmp_path / "link").symlink_to(outside)
    (tmp_path / "file-link").symlink_to(tmp_path / "src")
    return tmp_path


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("/etc/passwd", "absolute paths are refused"),
        ("../x", "'..' could leave the repository"),
        ("src/../../x", "'..' could leave the repository"),
        (".git/config", "inside .git"),
        ("sub/.git/hooks/pre-commit", "inside .git"),
        ("link/file.txt", "passes through the symbolic link link"),
        ("", "empty"),
        ("a\nb", "newline"),
        (".", "names the repository itself"),
    ],
)
def test_unsafe_paths_are_refused(root: Path, raw: str, reason: str) -> None:
    with pytest.raises(FixloopError) as caught:
        check_path(root, raw)
    message = caught.value.diagnostics[0].format()
    assert "unsafe-path" in message and reason in message


def test_clean_paths_are_normalised(root: Path) -> None:
    assert check_path(root, "./src//a.py") == "src/a.py"
    assert check_path(root, "new dir/$(x) 'q'.txt") == "new dir/$(x) 'q'.txt"
    assert check_path(root, "file-link") == "file-link"  # the link itself is data, not followed


def test_paths_file_is_nul_separated(root: Path) -> None:
    target = write_paths_file(root / "out" / "paths", root, ["src/a.py", "b c.txt"])
    assert target.read_bytes() == b"src/a.py\0b c.txt\0"


def test_one_bad_path_writes_nothing(root: Path) -> None:
    with pytest.raises(FixloopError):
        write_paths_file(root / "paths", root, ["src/a.py", "../b"])
    assert not (root / "paths").exists()
