"""The project's skills, as an index a role reads: each skill's name, one line of what it is for,
and where its SKILL.md is.

A project keeps its own skills under `.claude/skills/NAME/SKILL.md` (Claude Code's place) or
`.agents/skills/NAME/SKILL.md`. The fixer is handed this index, not the skills themselves: it
reads the SKILL.md of a skill that applies, and that skill's `rules/*.md` only as it needs them
(a full AGENTS.md is never loaded: its size would crowd out the code). The index is read from the
run's worktree — the commit the run started from — so it is the project's, and bounded: at most
`MAX_SKILLS` entries, each description one line of at most `MAX_DESCRIPTION` characters; a
SKILL.md that is not a regular file, not UTF-8 or has no parseable frontmatter is listed by its
folder's name alone.
"""

from __future__ import annotations

from pathlib import Path

from fixloop.diagnostics import FixloopError
from fixloop.documents.files import read_text
from fixloop.documents.source import parse_document
from fixloop.steps.paths import unsafe_reason

SKILL_FOLDERS = (".claude/skills", ".agents/skills")
MAX_SKILLS = 50
MAX_DESCRIPTION = 200


def project_skills(root: Path) -> list[dict[str, str]]:
    """`{name, description, path}` for each skill under `root`, path relative to `root`."""
    found: list[dict[str, str]] = []
    for folder in SKILL_FOLDERS:
        base = root / folder
        if not base.is_dir() or unsafe_reason(root, folder) is not None:
            continue
        for skill in sorted(base.iterdir()):
            if len(found) >= MAX_SKILLS:
                return found
            relative = f"{folder}/{skill.name}/SKILL.md"
            # The one safe-path rule: no link may lead the index out of the project.
            if unsafe_reason(root, relative) is None and (root / relative).is_file():
                found.append(_entry(root, skill, root / relative))
    return found


def _entry(root: Path, skill: Path, manifest: Path) -> dict[str, str]:
    name, description = skill.name, ""
    try:
        meta = parse_document(read_text(manifest), manifest).metadata
    except (OSError, UnicodeDecodeError, FixloopError):
        meta = {}
    if isinstance(meta.get("name"), str) and meta["name"].strip():
        name = " ".join(meta["name"].split())[:MAX_DESCRIPTION]
    if isinstance(meta.get("description"), str):
        description = " ".join(meta["description"].split())[:MAX_DESCRIPTION]
    return {"name": name, "description": description, "path": manifest.relative_to(root).as_posix()}


__all__ = ["MAX_DESCRIPTION", "MAX_SKILLS", "SKILL_FOLDERS", "project_skills"]
