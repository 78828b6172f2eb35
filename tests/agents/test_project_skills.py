"""The project's skills index: what the fixer is handed, bounded, never led out of the project."""

from __future__ import annotations

from pathlib import Path

from fixloop.agents.project_skills import MAX_DESCRIPTION, project_skills


def _skill(root: Path, folder: str, name: str, text: str) -> None:
    path = root / folder / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_both_skill_folders_are_indexed_by_their_frontmatter(tmp_path: Path) -> None:
    _skill(
        tmp_path,
        ".claude/skills",
        "money",
        "---\nname: money\ndescription: |\n  Cents,\n  never floats.\n---\nbody\n",
    )
    _skill(tmp_path, ".agents/skills", "logging", "no frontmatter at all\n")
    _skill(tmp_path, ".claude/skills", "long", f"---\ndescription: {'x' * 500}\n---\n")
    assert project_skills(tmp_path) == [
        {
            "name": "long",
            "description": "x" * MAX_DESCRIPTION,
            "path": ".claude/skills/long/SKILL.md",
        },
        {
            "name": "money",
            "description": "Cents, never floats.",
            "path": ".claude/skills/money/SKILL.md",
        },
        {"name": "logging", "description": "", "path": ".agents/skills/logging/SKILL.md"},
    ]


def test_no_skills_folder_is_an_empty_index(tmp_path: Path) -> None:
    assert project_skills(tmp_path) == []


def test_links_out_of_the_project_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    _skill(outside, "skills", "secret", "---\ndescription: host file\n---\n")
    root = tmp_path / "project"
    (root / ".claude").mkdir(parents=True)
    (root / ".claude" / "skills").symlink_to(outside / "skills")  # the whole folder, a link
    (root / ".agents" / "skills" / "evil").mkdir(parents=True)
    (root / ".agents" / "skills" / "evil" / "SKILL.md").symlink_to(
        outside / "skills" / "secret" / "SKILL.md"
    )
    assert project_skills(root) == []


def test_a_fifo_is_passed_over_and_bad_yaml_listed_by_its_folder(tmp_path: Path) -> None:
    import os

    _skill(tmp_path, ".claude/skills", "broken", "---\nname: [unclosed\n---\n")
    fifo = tmp_path / ".claude/skills/pipe/SKILL.md"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    assert [s["name"] for s in project_skills(tmp_path)] == ["broken"]
