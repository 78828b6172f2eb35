"""Finding a pack and its documents as Claude Code does; sidecars that lost their document."""

from __future__ import annotations

import json
from pathlib import Path

from fixloop.documents.discovery import (
    find_pack_root,
    orphan_sidecars,
    pack_files,
)


def write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_pack_is_found_from_any_folder_inside_it(tmp_path: Path) -> None:
    write(tmp_path, {"team/.claude-plugin/plugin.json": "{}", "team/agents/deep/x.md": ""})
    assert find_pack_root(tmp_path / "team/agents/deep") == tmp_path / "team"
    assert find_pack_root(tmp_path / "team/agents/deep/x.md") == tmp_path / "team"
    write(tmp_path, {"other/commands/go.md": ""})
    assert find_pack_root(tmp_path / "other/commands") == tmp_path / "other"
    assert find_pack_root(tmp_path) is None or find_pack_root(tmp_path) != tmp_path


def test_documents_are_found_as_claude_code_finds_them(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "agents/a.md": "",
            "agents/notes/not-an-agent.md": "",
            "commands/top.md": "",
            "commands/ns/deep/x.md": "",
            "skills/write/SKILL.md": "",
            "skills/write/reference.md": "",
            "workflows/w.md": "",
        },
    )
    files = pack_files(tmp_path)
    assert [p.name for p in files.agents] == ["a.md"]
    assert [name for name, _ in files.commands] == ["ns:deep:x", "top"]
    assert [name for name, _ in files.skills] == ["write"]
    assert [p.name for p in files.workflows] == ["w.md"]


def test_manifest_paths_replace_the_default_folders(tmp_path: Path) -> None:
    write(tmp_path, {"agents/ignored.md": "", "roles/r.md": "", "cmds/c.md": ""})
    manifest = json.loads('{"agents": ["./roles/r.md"], "commands": "./cmds", "skills": "./no"}')
    files = pack_files(tmp_path, manifest)
    assert [p.name for p in files.agents] == ["r.md"]
    assert [name for name, _ in files.commands] == ["c"]
    assert files.missing == [("skills", "./no")]


def test_a_sidecar_without_its_document_is_found(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "workflows/kept.md": "",
            "workflows/kept.contracts.yaml": "",
            "workflows/renamed.contracts.yaml": "",
            "elsewhere/far.contracts.yaml": "",
        },
    )
    assert [p.name for p in orphan_sidecars(tmp_path)] == [
        "far.contracts.yaml",
        "renamed.contracts.yaml",
    ]
    assert [p.name for p in orphan_sidecars(tmp_path, pack=True)] == ["renamed.contracts.yaml"]
