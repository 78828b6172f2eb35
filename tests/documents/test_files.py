"""Resolutions are remembered within a check only: a long-lived process sees links as they are."""

from __future__ import annotations

from pathlib import Path

from fixloop.checker.checking import check_paths
from fixloop.diagnostics import display_path, resolutions_remembered
from fixloop.documents.files import resolved


def test_a_link_retargeted_within_a_check_keeps_its_first_resolution(tmp_path: Path) -> None:
    first, second = tmp_path / "first.md", tmp_path / "second.md"
    link = tmp_path / "link.md"
    link.symlink_to(first)
    with resolutions_remembered():
        assert resolved(link) == first
        link.unlink()
        link.symlink_to(second)
        assert resolved(link) == first  # the check's files do not move while it runs
    assert resolved(link) == second  # after it, resolved afresh


def test_nothing_is_remembered_after_a_check(tmp_path: Path) -> None:
    document = tmp_path / "doc.md"
    document.write_text("# A document\n")
    link = tmp_path / "link.md"
    link.symlink_to(document)
    check_paths([link], base=tmp_path)
    link.unlink()
    link.symlink_to(tmp_path / "elsewhere" / "doc.md")
    assert resolved(link) == tmp_path / "elsewhere" / "doc.md"
    assert display_path(link, tmp_path) == "elsewhere/doc.md"


def test_a_looping_link_is_spelt_where_it_is(tmp_path: Path) -> None:
    loop = tmp_path / "loop.md"
    loop.symlink_to(loop)
    with resolutions_remembered():
        assert resolved(loop) == loop  # left unresolved, not an error
        assert display_path(loop, tmp_path) == "loop.md"
