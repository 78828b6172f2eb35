"""The files of a fix-engine section: the mini-PRD, checklist.md and meta.yaml, read and written.

The one model of them: the document's steps (`workflows/lib/fix_engine.py`, through its thin
`fix_engine_files.py`) read and write the files with it, and the runtime reads what those steps
report (`section.py`). Reading checks everything and raises `Problem` (file, line, key, message)
for bad input: a mini-PRD without acceptance criteria or with duplicate ids, a checklist.md in
another shape, a meta.yaml that does not parse (read bounded, as every YAML file a user gives
fixloop: `fixloop.documents.located_yaml`) or lacks a key. Writing goes through a temporary file
and a rename; meta.yaml is dumped whole by PyYAML.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fixloop.diagnostics import FixloopError
from fixloop.documents.located_yaml import LocatedYaml, load_located

MAX_ATTEMPTS = 3
STATUSES = ("in_progress", "completed", "escalated")
ITEM_STATUSES = ("pending", "passed", "done", "failed")
VERDICTS = ("confirmed", "demoted", "rejected")
# An id a mini-PRD may give an item: letters, a hyphen, a number (`AC-1`, `check-2`, `AUTH-01`).
ITEM_ID = r"[A-Za-z][A-Za-z0-9]*-[0-9][A-Za-z0-9.-]*"
SECTION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_CRITERIA_HEADING = re.compile(r"acceptance criteria|验收标准|验收条件", re.IGNORECASE)
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BULLET = re.compile(r"^\s*(?:[-*+]|[0-9]+[.)])\s+(?:\[[ xX]\]\s+)?(.*)$")
_EXPLICIT_ID = re.compile(rf"^(?P<id>{ITEM_ID})\s*[:：]\s*(?P<text>.*)$")
_CHECKLIST_ITEM = re.compile(rf"^- \[(?P<box>[ xX])\] (?P<id>{ITEM_ID}): (?P<text>\S.*)$")
_PROGRESS = re.compile(r"^\*\*Progress: [0-9]+/[0-9]+\*\*$")
SHA = re.compile(r"^[0-9a-f]{40}$")


class Problem(Exception):
    """Bad input: where (file, line), which key, what is wrong."""

    def __init__(self, path: str, line: int, rule: str, key: str, message: str) -> None:
        super().__init__(message)
        self.path, self.line, self.rule, self.key, self.message = path, line, rule, key, message

    def format(self) -> str:
        return f"{self.path}:{self.line}:1: {self.rule}: {self.key}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        message = f"{self.key}: {self.message}"
        return {
            "path": self.path,
            "line": self.line,
            "col": 1,
            "rule": self.rule,
            "message": message,
        }


@dataclass
class Item:
    id: str
    text: str
    line: int = 0  # where the mini-PRD or checklist.md names it


@dataclass
class State:
    """A section's state folder, read and checked."""

    folder: Path
    meta: dict[str, Any]
    items: list[Item] = field(default_factory=list)  # from checklist.md

    @property
    def meta_path(self) -> Path:
        return self.folder / "meta.yaml"

    def record(self, item_id: str) -> dict[str, Any]:
        record: dict[str, Any] = self.meta["items"][item_id]
        return record


# -- the mini-PRD ----------------------------------------------------------------------------


def section_id_of(mini_prd: str) -> str:
    """The folder's name for `…/auth/mini-prd.md`, else the file's stem (`auth.md` -> auth)."""
    path = Path(mini_prd)
    name = (
        path.parent.name if path.name.lower() == "mini-prd.md" and path.parent.name else path.stem
    )
    if not SECTION_ID.match(name):
        raise Problem(
            mini_prd, 1, "mini-prd", "section", f"{name!r} (from the path) is not a usable id"
        )
    return name


def parse_mini_prd(text: str, shown: str) -> tuple[str, list[Item]]:
    """The title (first heading) and the checklist items: the bullets under every heading that
    says "Acceptance Criteria" (or 验收标准), to the next heading of the same or a higher level."""
    title, items, inside, seen_heading = "", [], 0, 0
    fence, base = "", -1  # base: the indent of the section's top-level bullets
    current: Item | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        opened = _FENCE.match(line)
        if fence:
            fence = "" if opened and opened.group(1)[0] == fence[0] else fence
            continue
        if opened:
            fence, current = opened.group(1), None
            continue
        heading = _HEADING.match(line)
        if heading:
            level, words = len(heading.group(1)), heading.group(2)
            title = title or words
            if _CRITERIA_HEADING.search(words):
                inside, seen_heading, base = level, seen_heading or number, -1
            elif inside and level <= inside:
                inside = 0
            current = None
            continue
        if not inside or not line.strip():
            continue
        bullet = _BULLET.match(line)
        indent = len(line) - len(line.lstrip())
        if bullet and (current is None or base < 0 or indent <= base):
            base = indent if base < 0 else base
            current = Item("", bullet.group(1).strip(), number)
            items.append(current)
        elif current is not None and indent > base:
            # A continuation line or a nested bullet: part of the item's text.
            detail = bullet.group(1).strip() if bullet else line.strip()
            current.text = f"{current.text} {detail}"
        else:
            current = None
    if not items:
        where = seen_heading or 1
        why = (
            "no bullet items under the heading"
            if seen_heading
            else "no 'Acceptance Criteria' (or 验收标准) heading with bullet items"
        )
        raise Problem(shown, where, "mini-prd", "acceptance criteria", f"{why}: nothing to do")
    return title, _with_ids(items, shown)


def _with_ids(items: list[Item], shown: str) -> list[Item]:
    seen: dict[str, int] = {}
    for position, item in enumerate(items, start=1):
        explicit = _EXPLICIT_ID.match(item.text)
        if explicit:
            item.id, item.text = explicit.group("id"), explicit.group("text").strip()
        else:
            item.id = f"check-{position}"
        if not item.text:
            raise Problem(shown, item.line, "mini-prd", item.id, "the criterion is empty")
        if item.id in seen:
            first = seen[item.id]
            raise Problem(
                shown, item.line, "mini-prd", item.id, f"duplicate id (also line {first})"
            )
        seen[item.id] = item.line
    return items


# -- checklist.md ------------------------------------------------------------------------------


def checklist_text(title: str, items: Sequence[Item], meta: Mapping[str, Any]) -> str:
    """The seed's checklist: a box per item, ticked when its last verdict passed."""
    lines = [f"## {title} checklist" if title else "## Checklist", ""]
    for item in items:
        ticked = meta["items"][item.id]["status"] in ("passed", "done")
        lines.append(f"- [{'x' if ticked else ' '}] {item.id}: {item.text}")
    lines += ["", f"**Progress: {meta['progress']}**", ""]
    return "\n".join(lines)


def parse_checklist(text: str, shown: str) -> list[Item]:
    items: list[Item] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or _PROGRESS.match(stripped):
            continue
        match = _CHECKLIST_ITEM.match(line)
        if match is None:
            key = "item"
            loose = re.search(ITEM_ID, line)
            if loose:
                key = loose.group(0)
            raise Problem(
                shown,
                number,
                "checklist",
                key,
                f"{stripped[:60]!r} is not '- [ ] ID: criterion', a heading or the progress line",
            )
        item_id = match.group("id")
        if item_id in seen:
            raise Problem(
                shown, number, "checklist", item_id, f"duplicate id (also line {seen[item_id]})"
            )
        seen[item_id] = number
        items.append(Item(item_id, match.group("text").strip(), number))
    return items


# -- meta.yaml ---------------------------------------------------------------------------------


def key_line(text: str, path: Sequence[str]) -> int:
    """The line of the key at `path` in the YAML `text` (the deepest one found; 1 without)."""
    try:
        return load_located(text, display="meta.yaml", rule="meta").line_of(*path)
    except FixloopError:
        return 1


def read_meta(path: Path, shown: str) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    try:
        located = load_located(text, display=shown, rule="meta")
    except FixloopError as exc:
        where = exc.diagnostics[0]
        problem = where.message.removeprefix("invalid YAML: ").strip()
        key = _key_before(text, where.line)
        raise Problem(shown, where.line, "meta", key, f"not valid YAML ({problem})") from None
    if not isinstance(located.data, dict):
        raise Problem(shown, 1, "meta", "meta.yaml", "must be a mapping of keys to values")
    check_meta(located, shown)
    return located.data


def _key_before(text: str, line: int) -> str:
    for candidate in reversed(text.splitlines()[:line]):
        match = re.match(r"^\s*([^\s:#][^:#]*?):(\s|$)", candidate)
        if match:
            return match.group(1).strip("'\"")
    return "meta.yaml"


def check_meta(located: LocatedYaml, shown: str) -> None:
    data = located.data

    def problem(path: Sequence[str], message: str) -> Problem:
        return Problem(shown, located.line_of(*path), "meta", ".".join(path), message)

    expected: dict[str, Callable[[Any], bool]] = {
        "section_id": lambda v: isinstance(v, str) and bool(SECTION_ID.match(v)),
        "mini_prd": lambda v: isinstance(v, str) and bool(v),
        "prd_digest": lambda v: isinstance(v, str) and bool(re.fullmatch(r"[0-9a-f]{64}", v)),
        "status": lambda v: v in STATUSES,
        "progress": lambda v: isinstance(v, str) and bool(re.fullmatch(r"[0-9]+/[0-9]+", v)),
        "items": lambda v: isinstance(v, dict) and bool(v),
    }
    for key, valid in expected.items():
        if key not in data:
            raise problem([key], "missing")
        if not valid(data[key]):
            raise problem([key], f"unexpected value {data[key]!r}")
    for item_id, record in data["items"].items():
        where = ["items", str(item_id)]
        if not isinstance(record, dict):
            raise problem(where, "must be a mapping (status, commit, attempts)")
        if record.get("status") not in ITEM_STATUSES:
            raise problem([*where, "status"], f"expected one of {', '.join(ITEM_STATUSES)}")
        commit = record.get("commit")
        if record["status"] == "done" and commit != "" and not SHA.match(str(commit)):
            raise problem([*where, "commit"], "a done item needs its commit (or '' for none)")
        attempts = record.get("attempts")
        if not isinstance(attempts, list) or not all(
            isinstance(a, dict)
            and isinstance(a.get("attempt"), int)
            and isinstance(a.get("passed"), bool)
            for a in attempts
        ):
            raise problem([*where, "attempts"], "a list of {attempt: N, passed: true|false, …}")


def set_progress(state: State) -> None:
    """The seed's progress summary: items whose last verdict passed, of all items."""
    items = state.meta["items"]
    passed = sum(record["status"] in ("passed", "done") for record in items.values())
    state.meta["progress"] = f"{passed}/{len(items)}"


def write_meta(state: State) -> None:
    set_progress(state)
    write_atomically(state.meta_path, dump_yaml(state.meta))


def dump_yaml(data: Mapping[str, Any]) -> str:
    """YAML a person reads: keys in the order written, text as it is (no \\u escapes)."""
    return yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True, width=100)


def write_checklist(state: State) -> None:
    text = checklist_text(str(state.meta.get("title") or ""), state.items, state.meta)
    write_atomically(state.folder / "checklist.md", text)


def write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)


def read_state(folder: Path) -> State:
    """meta.yaml and checklist.md, each checked, and checked against each other."""
    meta_path, checklist_path = folder / "meta.yaml", folder / "checklist.md"
    meta = read_meta(meta_path, shown(meta_path))
    if not checklist_path.is_file():
        raise Problem(shown(checklist_path), 1, "checklist", "checklist.md", "missing")
    listed = shown(checklist_path)
    items = parse_checklist(checklist_path.read_text(encoding="utf-8"), listed)
    recorded = list(meta["items"])
    for item in items:
        if item.id not in meta["items"]:
            raise Problem(listed, item.line, "checklist", item.id, "not an item of meta.yaml")
    for item_id in recorded:
        if item_id not in {item.id for item in items}:
            raise Problem(
                listed, 1, "checklist", item_id, "meta.yaml records it; the list lacks it"
            )
    if [item.id for item in items] != recorded:
        raise Problem(listed, items[0].line, "checklist", "order", "items differ from meta.yaml")
    return State(folder, meta, items)


def shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def items_json(state: State) -> list[dict[str, Any]]:
    return [item_json(item, state.record(item.id)) for item in state.items]


def item_json(item: Item, record: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": item.id,
        "text": item.text,
        "status": record["status"],
        "commit": record.get("commit") or "",
        "attempts": record.get("attempts") or [],
    }


def digest(data: bytes) -> str:
    import hashlib  # here: most of the steps that import this module never hash anything

    return hashlib.sha256(data).hexdigest()


__all__ = [
    "ITEM_STATUSES",
    "MAX_ATTEMPTS",
    "SECTION_ID",
    "SHA",
    "STATUSES",
    "VERDICTS",
    "Item",
    "Problem",
    "State",
    "check_meta",
    "checklist_text",
    "digest",
    "dump_yaml",
    "item_json",
    "items_json",
    "key_line",
    "parse_checklist",
    "parse_mini_prd",
    "read_meta",
    "read_state",
    "section_id_of",
    "set_progress",
    "shown",
    "write_atomically",
    "write_checklist",
    "write_meta",
]
