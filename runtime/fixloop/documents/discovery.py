"""Where a pack is, and which files are its documents, as Claude Code finds them.

A pack is found the way a linter finds its project: from the current directory (or a path given)
upwards, the first folder with `.claude-plugin/plugin.json`, `plugin.json`, or an `agents/`,
`commands/` or `skills/` folder (a plugin may hold skills alone). The pack fixloop ships is used
only when asked for (`--bundled`).

Inside a pack, Claude Code discovers: `agents/*.md`, `commands/**/*.md` (a nested `ns/x.md` is
the command `pack:ns:x`), `skills/<name>/SKILL.md`, `hooks/hooks.json` and `.mcp.json`; a
manifest that names its own `agents`, `commands`, `skills` or `hooks` paths replaces that default
folder. `workflows/*.md` are fixloop's workflows (Claude Code reads no Markdown there).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import field
from pathlib import Path
from typing import Any

from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.documents.files import load_json, present, read_text, resolved
from fixloop.records import record

MANIFEST = "plugin.json"
CLAUDE_MANIFEST = Path(".claude-plugin") / MANIFEST
MARKETPLACE = Path(".claude-plugin") / "marketplace.json"
SIDECAR_SUFFIX = ".contracts.yaml"
COMPONENT_KINDS = ("agents", "commands", "skills", "workflows")
_SKIP_DIRS = frozenset(
    {".git", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"}
)


NOT_A_PACK = "not a pack: no .claude-plugin/plugin.json, agents/, commands/ or skills/ here"


def is_pack_root(folder: Path) -> bool:
    return (
        present(folder / CLAUDE_MANIFEST)
        or present(folder / MANIFEST)
        or (folder / "agents").is_dir()
        or (folder / "commands").is_dir()
        or (folder / "skills").is_dir()
    )


def find_pack_root(start: Path) -> Path | None:
    """The pack `start` is in (or is): the nearest folder upwards that looks like a pack."""
    folder = resolved(start)
    if not folder.is_dir():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        if is_pack_root(candidate):
            return candidate
    return None


def pack_root_or_fail(start: Path) -> Path:
    found = find_pack_root(start)
    if found is None:
        raise FixloopError(
            Diagnostic(
                str(start),
                1,
                1,
                "pack",
                "no pack here or above (a folder with .claude-plugin/plugin.json, plugin.json, "
                "agents/, commands/ or skills/); name one, or use --bundled for the pack fixloop "
                "ships",
            )
        )
    return found


def bundled_pack_root() -> Path:
    """The pack shipped with fixloop: inside the installed package, or the checkout it runs from."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "pack", package.parent.parent):
        if (candidate / MANIFEST).is_file():
            return candidate
    raise FixloopError(
        Diagnostic(str(package), 1, 1, "pack", "the fixloop pack documents are not installed")
    )


def manifest_path(root: Path, source_of_truth_first: bool = False) -> Path | None:
    """The manifest Claude Code reads, else a root `plugin.json`, else None.

    `source_of_truth_first`: fixloop's own convention (the `fixloop` profile) keeps the manifest
    at the root and a copy where Claude Code reads it; the root one is then the one to judge.
    """
    order = [root / CLAUDE_MANIFEST, root / MANIFEST]
    for candidate in reversed(order) if source_of_truth_first else order:
        if present(candidate):
            return candidate
    return None


def manifest_data(root: Path, source_of_truth_first: bool = False) -> dict[str, Any]:
    """The manifest's JSON object, or {} when there is none or it does not parse (the pack
    validation reports that)."""
    path = manifest_path(root, source_of_truth_first)
    if path is None:
        return {}
    try:
        data = load_json(read_text(path))
    except (ValueError, OSError):
        return {}
    return data if isinstance(data, dict) else {}


@record(frozen=True)
class PackFiles:
    """The documents of a pack by kind, and the declared component paths that are not there."""

    agents: list[Path] = field(default_factory=list)
    commands: list[tuple[str, Path]] = field(default_factory=list)  # (name as `ns:x`, path)
    skills: list[tuple[str, Path]] = field(default_factory=list)  # (folder name, SKILL.md)
    workflows: list[Path] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)  # Claude Code workflows: workflows/*.js
    hooks: list[Path] = field(default_factory=list)  # hooks/hooks.json and the manifest's
    servers: list[Path] = field(default_factory=list)  # .mcp.json and the manifest's
    missing: list[tuple[str, str]] = field(default_factory=list)  # (manifest key, path)

    def markdown(self) -> list[Path]:
        """Every Markdown document of the pack, in kind order."""
        return [
            *self.workflows,
            *self.agents,
            *(path for _, path in self.commands),
            *(path for _, path in self.skills),
        ]


def _declared(manifest: dict[str, Any], kind: str) -> list[str] | None:
    value = manifest.get(kind)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def _markdown_under(folder: Path, recursive: bool) -> list[Path]:
    if not folder.is_dir():
        return []
    found = folder.rglob("*.md") if recursive else folder.glob("*.md")
    return sorted(p for p in found if not _SKIP_DIRS & set(p.relative_to(folder).parts))


def pack_files(root: Path, manifest: dict[str, Any] | None = None) -> PackFiles:
    """The pack's documents, found as Claude Code finds them (see the module docstring)."""
    manifest = manifest or {}
    files = PackFiles()
    for kind in ("agents", "commands", "skills"):
        declared = _declared(manifest, kind)
        places = [root / kind] if declared is None else []
        for relative in declared or []:
            place = resolved(root / relative)
            if not place.exists():
                files.missing.append((kind, relative))
            else:
                places.append(place)
        for place in places:
            _collect(files, kind, place)
    for key, default, found in (
        ("hooks", root / "hooks" / "hooks.json", files.hooks),
        ("mcpServers", root / ".mcp.json", files.servers),
    ):
        found.extend([default] if present(default) else [])
        for relative in _declared(manifest, key) or []:
            place = resolved(root / relative)
            if present(place):
                found.append(place)
            else:
                files.missing.append((key, relative))
    files.workflows.extend(_markdown_under(root / "workflows", recursive=False))
    if (root / "workflows").is_dir():
        files.scripts.extend(sorted(p.stem for p in (root / "workflows").glob("*.js")))
    return files


def _collect(files: PackFiles, kind: str, place: Path) -> None:
    if kind == "agents":
        files.agents.extend([place] if place.is_file() else _markdown_under(place, False))
    elif kind == "commands":
        if place.is_file():
            files.commands.append((place.stem, place))
            return
        for path in _markdown_under(place, recursive=True):
            relative = path.relative_to(place).with_suffix("")
            files.commands.append((":".join(relative.parts), path))
    else:
        skill_files = [place / "SKILL.md"] if (place / "SKILL.md").is_file() else []
        skill_files += sorted(place.glob("*/SKILL.md")) if place.is_dir() else []
        files.skills.extend((path.parent.name, path) for path in skill_files)


def orphan_sidecars(folder: Path, pack: bool = False) -> Iterator[Path]:
    """`<stem>.contracts.yaml` files below `folder` whose `<stem>.md` is not next to them.

    `pack`: `folder` is a pack root; look where its documents are (its top level and its
    component folders), not in every folder of the repository it may be.
    """
    if pack:
        found = [*folder.glob(f"*{SIDECAR_SUFFIX}")]
        for kind in COMPONENT_KINDS:
            found += (folder / kind).rglob(f"*{SIDECAR_SUFFIX}")
    else:
        found = [*folder.rglob(f"*{SIDECAR_SUFFIX}")]
    for sidecar in sorted(found):
        if _SKIP_DIRS & set(sidecar.relative_to(folder).parts):
            continue
        if not sidecar.with_name(sidecar.name.removesuffix(SIDECAR_SUFFIX) + ".md").is_file():
            yield sidecar


def orphan_diagnostic(sidecar: Path, shown: str) -> Diagnostic:
    stem = sidecar.name.removesuffix(SIDECAR_SUFFIX)
    siblings = sorted(p.name for p in sidecar.parent.glob("*.md"))
    hint = f" (documents here: {', '.join(siblings)})" if siblings else ""
    return Diagnostic(
        shown,
        1,
        1,
        "orphan-sidecar",
        f"declares contracts for {stem}.md, which is not next to it, so none of them is "
        f"checked{hint}",
    )
