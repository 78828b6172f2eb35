"""Sorting refused writes: real paths (symlinks included) in a real directory, no model."""

from __future__ import annotations

from pathlib import Path

from fixloop.agents.backend import DeniedWrite
from fixloop.workflows.kernel.denied_writes import Denials, sort_denials


def refused(*paths: str) -> list[DeniedWrite]:
    return [DeniedWrite("Write", path, "refused") for path in paths]


def test_other_repository_files_are_scope_in_clean_form_once_each(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    paths = ("./helper.py", "src//b.py", "helper.py", str(tmp_path / "src" / "c.py"))
    denials = sort_denials(tmp_path, refused(*paths), ["calc.py"])
    assert denials == Denials(outside_scope=("helper.py", "src/b.py", "src/c.py"))


def test_assigned_files_and_pathless_refusals_want_nothing(tmp_path: Path) -> None:
    denials = sort_denials(tmp_path, refused("calc.py", "./calc.py", "", "  "), ["./calc.py"])
    assert not denials


def test_git_metadata_parent_directories_and_other_places_are_forbidden(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "out").symlink_to(tmp_path)
    (repo / "src" / "leak.py").symlink_to(tmp_path / "elsewhere.py")
    paths = (".git/config", "src/../../x", "/etc/passwd", "out/x.py", "src/leak.py")
    denials = sort_denials(repo, refused(*paths), ["calc.py"])
    assert denials.outside_scope == ()
    assert [entry.split(":")[0] for entry in denials.forbidden] == list(paths)
    assert denials.forbidden[0].endswith("paths inside .git are refused")
    assert denials.forbidden[2] == "/etc/passwd: outside the repository"
    assert "symbolic link" in denials.forbidden[3] and "symbolic link" in denials.forbidden[4]
