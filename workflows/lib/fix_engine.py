"""fix-engine's state on disk: mini-prd.md -> checklist.md, meta.yaml, error_report.yaml, COMPLETE.

    "${FIXLOOP_PYTHON:-python3}" "$FIXLOOP_LIB/fix_engine.py" COMMAND [OPTIONS]

One command per step of `workflows/fix-engine.md`; each writes its outputs (`NAME=value` lines)
to the file named by `--output` (the step's `$FIXLOOP_OUTPUT`):

  load      check the mini-PRD and whatever state the section already has; change nothing
  make      a fresh state: mini-prd.md (a copy), checklist.md, then meta.yaml (last)
  record    one attempt's verdict for one item: meta.yaml, then checklist.md
  commit    the commit of a passed item: the item is done
  commits   the commits of the done items, NUL-separated, for the complete step to check
  report    error_report.yaml, then meta.yaml's status `escalated`
  complete  meta.yaml's status `completed`, then the COMPLETE marker (last)

meta.yaml is the record (statuses, attempts, verdicts, commits) and is written with PyYAML, whole,
through a temporary file and a rename; checklist.md is its readable view, rewritten from it after
every change, so a kill between the two files is repaired by the next write.

Exit 0 done; 2 bad input (the mini-PRD, checklist.md or meta.yaml): one line on stderr,
`file:line:col: rule: key: message`, the same problem as the PROBLEM output (JSON), and nothing
written; 1 the state does not allow the command (say, recording a commit for an item that did
not pass). Standard library and PyYAML only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import yaml
except ImportError:  # pragma: no cover - depends on the interpreter a person picked
    sys.exit("fixloop: fix_engine.py needs PyYAML: set FIXLOOP_PYTHON to a Python that has it")

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
_SHA = re.compile(r"^[0-9a-f]{40}$")


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


class Refused(Exception):
    """The state does not allow the command; exit 1."""


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
                shown, number, "checklist", key,
                f"{stripped[:60]!r} is not '- [ ] ID: criterion', a heading or the progress line",
            )  # fmt: skip
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
        node = yaml.compose(text)
    except yaml.YAMLError:
        return 1
    line = 1
    for key in path:
        if not isinstance(node, yaml.MappingNode):
            break
        found = next((pair for pair in node.value if pair[0].value == key), None)
        if found is None:
            break
        line = found[0].start_mark.line + 1
        node = found[1]
    return line


def read_meta(path: Path, shown: str) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else 1
        key = _key_before(text, line)
        problem = str(getattr(exc, "problem", None) or exc).strip()
        raise Problem(shown, line, "meta", key, f"not valid YAML ({problem})") from None
    if not isinstance(data, dict):
        raise Problem(shown, 1, "meta", "meta.yaml", "must be a mapping of keys to values")
    check_meta(data, text, shown)
    return data


def _key_before(text: str, line: int) -> str:
    for candidate in reversed(text.splitlines()[:line]):
        match = re.match(r"^\s*([^\s:#][^:#]*?):(\s|$)", candidate)
        if match:
            return match.group(1).strip("'\"")
    return "meta.yaml"


def check_meta(data: dict[str, Any], text: str, shown: str) -> None:
    def problem(path: Sequence[str], message: str) -> Problem:
        return Problem(shown, key_line(text, path), "meta", ".".join(path), message)

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
        if record["status"] == "done" and commit != "" and not _SHA.match(str(commit)):
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
    text = yaml.safe_dump(state.meta, sort_keys=False, allow_unicode=True, width=100)
    write_atomically(state.meta_path, text)


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


# -- the commands ------------------------------------------------------------------------------


def load(args: argparse.Namespace) -> dict[str, str]:
    prd = Path(args.mini_prd)
    if not prd.is_file():
        raise Problem(args.mini_prd, 1, "mini-prd", "mini-prd.md", "no such file")
    data = prd.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Problem(args.mini_prd, 1, "mini-prd", "mini-prd.md", f"not UTF-8 ({exc})") from None
    section = section_id_of(args.mini_prd)
    folder = Path(args.state_root) / section
    mode, state = _mode(folder, args.mini_prd, digest(data), args.resume == "yes")
    if state is None:
        title, items = parse_mini_prd(text, args.mini_prd)
        listed = [item_json(i, {"status": "pending"}) for i in items]
    else:
        title, listed = str(state.meta.get("title") or section), items_json(state)
    return {
        "SECTION_ID": section,
        "STATE": str(folder.resolve()),
        "MODE": mode,
        "TITLE": title,
        "TOTAL": str(len(listed)),
        "ITEMS": json.dumps(listed, ensure_ascii=False),
    }


def _mode(folder: Path, mini_prd: str, prd_digest: str, resume: bool) -> tuple[str, State | None]:
    """start (a fresh checklist), resume (a stopped run's) or complete (nothing to do)."""
    meta_path = folder / "meta.yaml"
    if not meta_path.is_file():
        if resume:
            raise Problem(mini_prd, 1, "mini-prd", "resume", "no stopped run of this section")
        return "start", None
    meta = read_meta(meta_path, shown(meta_path))
    text = meta_path.read_text(encoding="utf-8")

    def problem(key: str, message: str) -> Problem:
        return Problem(shown(meta_path), key_line(text, [key]), "meta", key, message)

    if meta["mini_prd"] != mini_prd:
        raise problem("mini_prd", f"this section's state belongs to {meta['mini_prd']}")
    same = meta["prd_digest"] == prd_digest
    finished = meta["status"] == "completed" and (folder / "COMPLETE").is_file()
    if finished:
        return ("complete", read_state(folder)) if same else ("start", None)
    if meta["status"] == "escalated":
        if resume:
            raise problem(
                "status", "escalated: the last run finished (error_report.yaml); nothing to "
                "resume: run it again without --resume to retry the items that failed",
            )  # fmt: skip
        return "start", None
    if not resume:
        raise problem("status", "a stopped run left this section in progress: add --resume")
    if not same:
        raise Problem(
            mini_prd, 1, "mini-prd", "prd_digest",
            f"changed since the stopped run made its checklist: restore it, or remove {folder}",
        )  # fmt: skip
    return "resume", read_state(folder)


def make(args: argparse.Namespace) -> dict[str, str]:
    """A fresh state. An escalated one of the same mini-PRD passes on its done items (their
    commits are on the branch); anything there before is kept under history/N/."""
    prd = Path(args.mini_prd)
    data = prd.read_bytes()
    title, items = parse_mini_prd(data.decode("utf-8"), args.mini_prd)
    folder = Path(args.state)
    folder.mkdir(parents=True, exist_ok=True)
    carried = _carried_over(folder, digest(data))
    _set_aside(folder)
    records = {item.id: carried.get(item.id) or _pending() for item in items}
    meta = {
        "section_id": section_id_of(args.mini_prd),
        "title": title,
        "mini_prd": args.mini_prd,
        "prd_digest": digest(data),
        "status": "in_progress",
        "progress": "",
        "max_attempts": MAX_ATTEMPTS,
        "run_id": args.run_id,
        "items": records,
    }
    state = State(folder, meta, items)
    (folder / "mini-prd.md").write_bytes(data)
    set_progress(state)
    write_checklist(state)
    write_meta(state)  # last: a state folder without meta.yaml is started afresh
    return {"TOTAL": str(len(items)), "ITEMS": json.dumps(items_json(state), ensure_ascii=False)}


def _pending() -> dict[str, Any]:
    return {"status": "pending", "commit": "", "attempts": []}


def _carried_over(folder: Path, prd_digest: str) -> dict[str, dict[str, Any]]:
    meta_path = folder / "meta.yaml"
    if not meta_path.is_file():
        return {}
    meta = read_meta(meta_path, shown(meta_path))
    if meta["status"] != "escalated" or meta["prd_digest"] != prd_digest:
        return {}
    return {
        item_id: record
        for item_id, record in meta["items"].items()
        if record["status"] == "done" and (not record["commit"] or on_branch(record["commit"]))
    }


def on_branch(commit: str) -> bool:
    """True when `commit` is on the branch checked out here (a read; nothing changes)."""
    done = subprocess.run(
        ["git", "merge-base", "--is-ancestor", commit, "HEAD"], capture_output=True, check=False
    )
    return done.returncode == 0


def _set_aside(folder: Path) -> None:
    entries = [entry for entry in folder.iterdir() if entry.name != "history"]
    if not entries:
        return
    history = folder / "history"
    number = 1 + max((int(p.name) for p in history.glob("*") if p.name.isdigit()), default=0)
    target = history / str(number)
    target.mkdir(parents=True)
    # meta.yaml first: from then on the folder reads as "no state", and `make` starts again.
    for entry in sorted(entries, key=lambda e: e.name != "meta.yaml"):
        entry.rename(target / entry.name)


def record(args: argparse.Namespace) -> dict[str, str]:
    state = read_state(Path(args.state))
    item = _item(state, args.item)
    entry = state.record(item.id)
    if entry["status"] in ("done", "failed"):
        raise Refused(f"{item.id} is already {entry['status']}")
    passed, verdict, evidence = judge(args.verdict, item.id)
    if not passed and args.reason:
        evidence = f"{args.reason}; {evidence}" if verdict else args.reason
    executor = _executor_result(args.impl_result)
    attempt = {
        "attempt": int(args.attempt),
        "passed": passed,
        "verdict": verdict,
        "evidence": evidence,
        "executor_status": executor.get("status", "missing"),
        "executor_notes": executor.get("notes", ""),
        "files": executor.get("filesModified", []),
    }
    attempts = [a for a in entry["attempts"] if a["attempt"] != attempt["attempt"]]
    entry["attempts"] = sorted([*attempts, attempt], key=lambda a: int(a["attempt"]))
    failed = sum(not a["passed"] for a in entry["attempts"])
    entry["status"] = "passed" if passed else ("failed" if failed >= MAX_ATTEMPTS else "pending")
    state.meta["run_id"] = args.run_id
    write_meta(state)
    write_checklist(state)
    return {
        "PASSED": "yes" if passed else "no",
        "PROGRESS": state.meta["progress"],
        "ITEM": json.dumps(item_json(item, entry), ensure_ascii=False),
    }


def judge(path: str, item_id: str) -> tuple[bool, str | None, str]:
    """(passed, verdict, evidence) from the verifier's ReviewOutput; a missing or malformed one,
    or one about another finding, is a failed attempt, never a pass."""
    target = Path(path) if path else None
    if target is None or not target.is_file():
        return False, None, "no verdict (the verifier's answer is missing or inconclusive)"
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
        finding = data["findings"][0]
        verdict, evidence = finding["verdict"], finding["evidence"]
        about = str(finding["id"])
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        return False, None, f"no valid verdict ({type(exc).__name__}: {exc})"
    if about != item_id:
        return False, None, f"no valid verdict (it judges {about!r}, not {item_id!r})"
    if verdict not in VERDICTS or not isinstance(evidence, str) or not evidence.strip():
        return False, None, f"no valid verdict (verdict {verdict!r} with evidence {evidence!r})"
    return verdict == "rejected", str(verdict), evidence.strip()


def _executor_result(path: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8")) if path else None
    except (OSError, ValueError):
        data = None
    if not isinstance(data, dict):
        return {"status": "missing", "notes": "", "filesModified": []}
    files = data.get("filesModified")
    return {
        "status": str(data.get("status", "missing")),
        "notes": str(data.get("notes") or ""),
        "filesModified": [str(f) for f in files] if isinstance(files, list) else [],
    }


def _item(state: State, item_id: str) -> Item:
    for item in state.items:
        if item.id == item_id:
            return item
    raise Refused(f"{item_id} is not an item of {shown(state.folder / 'checklist.md')}")


def commit(args: argparse.Namespace) -> dict[str, str]:
    state = read_state(Path(args.state))
    item = _item(state, args.item)
    entry = state.record(item.id)
    if args.commit and not _SHA.match(args.commit):
        raise Refused(f"{args.commit!r} is not a full commit id")
    if entry["status"] == "done" and entry["commit"] == args.commit:
        pass  # recorded already (a step run again after a kill)
    elif entry["status"] != "passed":
        raise Refused(f"{item.id} is {entry['status']}: only a passed item gets its commit")
    entry["status"], entry["commit"] = "done", args.commit
    write_meta(state)
    write_checklist(state)
    return {"PROGRESS": state.meta["progress"], "ITEM": json.dumps(item_json(item, entry))}


def commits(args: argparse.Namespace) -> dict[str, str]:
    state = read_state(Path(args.state))
    open_items = [i.id for i in state.items if state.record(i.id)["status"] != "done"]
    if open_items:
        raise Refused(f"not every item is done ({', '.join(open_items)}): the section is open")
    made = [state.record(i.id)["commit"] for i in state.items if state.record(i.id)["commit"]]
    Path(args.list).write_bytes(b"".join(c.encode() + b"\0" for c in made))
    return {}


def report(args: argparse.Namespace) -> dict[str, str]:
    state = read_state(Path(args.state))
    failed = [i for i in state.items if state.record(i.id)["status"] == "failed"]
    if not failed:
        raise Refused("no item failed: there is nothing to report")
    final, history = [], []
    for item in failed:
        attempts = state.record(item.id)["attempts"]
        last = attempts[-1] if attempts else {}
        final.append(
            {
                "check_id": item.id,
                "expected": item.text,
                "actual": last.get("evidence", ""),
                "last_verdict": last.get("verdict") or "none (inconclusive)",
                "attempts": len(attempts),
            }
        )
        history += [{"check_id": item.id, **attempt} for attempt in attempts]
    done = [i.id for i in state.items if state.record(i.id)["status"] == "done"]
    error_report = {
        "error_report": {
            "section_id": state.meta["section_id"],
            "mini_prd": state.meta["mini_prd"],
            "attempts": max(entry["attempts"] for entry in final),
            "final_failures": final,
            "history": history,
            "done": done,
        }
    }
    path = state.folder / "error_report.yaml"
    write_atomically(path, yaml.safe_dump(error_report, sort_keys=False, allow_unicode=True))
    state.meta["status"] = "escalated"  # after the report exists
    write_meta(state)
    return {"STATUS": "escalated", "ERROR_REPORT": str(path)}


def complete(args: argparse.Namespace) -> dict[str, str]:
    state = read_state(Path(args.state))
    open_items = [i.id for i in state.items if state.record(i.id)["status"] != "done"]
    if open_items:
        raise Refused(f"not every item is done ({', '.join(open_items)})")
    made = [state.record(i.id)["commit"] for i in state.items if state.record(i.id)["commit"]]
    state.meta["status"] = "completed"
    write_meta(state)
    marker = state.folder / "COMPLETE"
    body = yaml.safe_dump(
        {"section_id": state.meta["section_id"], "commits": made}, sort_keys=False
    )
    write_atomically(marker, body)  # last: the completion signal
    return {"STATUS": "completed", "COMPLETE": str(marker)}


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


COMMANDS: dict[str, Callable[[argparse.Namespace], dict[str, str]]] = {
    "load": load,
    "make": make,
    "record": record,
    "commit": commit,
    "commits": commits,
    "report": report,
    "complete": complete,
}


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="fix_engine.py", description=__doc__.splitlines()[0])
    commands = top.add_subparsers(dest="command", required=True)
    for name, options in {
        "load": ["mini-prd", "state-root", "resume"],
        "make": ["mini-prd", "state", "run-id"],
        "record": ["state", "item", "attempt", "impl-result", "verdict", "reason", "run-id"],
        "commit": ["state", "item", "commit"],
        "commits": ["state", "list"],
        "report": ["state"],
        "complete": ["state"],
    }.items():
        command = commands.add_parser(name)
        for option in options:
            optional = option in ("reason", "impl-result", "verdict")
            command.add_argument(f"--{option}", required=not optional, default="")
        command.add_argument("--output", default="", help="the step's $FIXLOOP_OUTPUT")
    return top


def write_outputs(target: str, outputs: Mapping[str, str]) -> None:
    if not target:
        for name, value in outputs.items():
            print(f"{name}={value}")
        return
    with Path(target).open("a", encoding="utf-8") as handle:
        for name, value in outputs.items():
            if "\n" in value:
                handle.write(f"{name}<<FIXLOOP_EOF\n{value}\nFIXLOOP_EOF\n")
            else:
                handle.write(f"{name}={value}\n")


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        outputs = COMMANDS[args.command](args)
    except Problem as problem:
        print(problem.format(), file=sys.stderr)
        write_outputs(args.output, {"PROBLEM": json.dumps(problem.to_json(), ensure_ascii=False)})
        return 2
    except Refused as refused:
        print(f"fixloop: fix-engine: {refused}", file=sys.stderr)
        return 1
    write_outputs(args.output, outputs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
