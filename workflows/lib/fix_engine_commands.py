"""The commands of `fix_engine.py` (its docstring says what each does), and their arguments.

`COMMAND --OPTION VALUE …` is read by hand, not by argparse: each step starts a fresh interpreter
for one command, and building argparse's parsers (and importing what their help text needs) cost
more than the command's own work. An unknown command or option, one given twice, a missing value
or a required option left out is refused as argparse refused it: usage on stderr, exit 2.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace as Arguments
from typing import Any

from fix_engine_files import (
    MAX_ATTEMPTS,
    SHA,
    VERDICTS,
    Item,
    Problem,
    State,
    digest,
    dump_yaml,
    item_json,
    items_json,
    key_line,
    parse_mini_prd,
    read_meta,
    read_state,
    section_id_of,
    set_progress,
    shown,
    write_atomically,
    write_checklist,
    write_meta,
)


class Refused(Exception):
    """The state does not allow the command; exit 1."""


# -- the commands ------------------------------------------------------------------------------


def load(args: Arguments) -> dict[str, str]:
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


def make(args: Arguments) -> dict[str, str]:
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
    import subprocess  # here: only a retried section asks, and every step pays for an import

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


def record(args: Arguments) -> dict[str, str]:
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
        "put_back": _put_back(args.put_back),
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


def _put_back(listed: str) -> list[str]:
    """The files the runtime put back after the attempt (a JSON list of paths; empty: none)."""
    try:
        paths = json.loads(listed) if listed.strip() else []
    except ValueError:
        raise Refused(f"--put-back: {listed[:60]!r} is not a JSON list of paths") from None
    if not isinstance(paths, list) or not all(isinstance(path, str) for path in paths):
        raise Refused(f"--put-back: {listed[:60]!r} is not a JSON list of paths")
    return paths


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


def commit(args: Arguments) -> dict[str, str]:
    state = read_state(Path(args.state))
    item = _item(state, args.item)
    entry = state.record(item.id)
    if args.commit and not SHA.match(args.commit):
        raise Refused(f"{args.commit!r} is not a full commit id")
    if entry["status"] == "done" and entry["commit"] == args.commit:
        pass  # recorded already (a step run again after a kill)
    elif entry["status"] != "passed":
        raise Refused(f"{item.id} is {entry['status']}: only a passed item gets its commit")
    entry["status"], entry["commit"] = "done", args.commit
    write_meta(state)
    write_checklist(state)
    return {"PROGRESS": state.meta["progress"], "ITEM": json.dumps(item_json(item, entry))}


def finished_commits(state: State, refusal: str = "") -> list[str]:
    """The commits of a section whose every item is done; Refused (with `refusal` after the
    open items) while one is not."""
    open_items = [i.id for i in state.items if state.record(i.id)["status"] != "done"]
    if open_items:
        raise Refused(f"not every item is done ({', '.join(open_items)}){refusal}")
    return [state.record(i.id)["commit"] for i in state.items if state.record(i.id)["commit"]]


def commits(args: Arguments) -> dict[str, str]:
    made = finished_commits(read_state(Path(args.state)), ": the section is open")
    Path(args.list).write_bytes(b"".join(c.encode() + b"\0" for c in made))
    return {}


def report(args: Arguments) -> dict[str, str]:
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
    # Items a run that stopped at the first escalation never tried.
    not_tried = [i.id for i in state.items if state.record(i.id)["status"] == "pending"]
    error_report = {
        "error_report": {
            "section_id": state.meta["section_id"],
            "mini_prd": state.meta["mini_prd"],
            "attempts": max(entry["attempts"] for entry in final),
            "final_failures": final,
            "history": history,
            "done": done,
            **({"not_tried": not_tried} if not_tried else {}),
        }
    }
    path = state.folder / "error_report.yaml"
    write_atomically(path, dump_yaml(error_report))
    state.meta["status"] = "escalated"  # after the report exists
    write_meta(state)
    return {"STATUS": "escalated", "ERROR_REPORT": str(path)}


def complete(args: Arguments) -> dict[str, str]:
    state = read_state(Path(args.state))
    made = finished_commits(state)
    state.meta["status"] = "completed"
    write_meta(state)
    marker = state.folder / "COMPLETE"
    body = dump_yaml({"section_id": state.meta["section_id"], "commits": made})
    write_atomically(marker, body)  # last: the completion signal
    return {"STATUS": "completed", "COMPLETE": str(marker)}


COMMANDS: dict[str, Callable[[Arguments], dict[str, str]]] = {
    "load": load,
    "make": make,
    "record": record,
    "commit": commit,
    "commits": commits,
    "report": report,
    "complete": complete,
}


# Each command's options, all `--NAME VALUE`; every command also takes `--output`.
OPTIONS: dict[str, tuple[str, ...]] = {
    "load": ("mini-prd", "state-root", "resume"),
    "make": ("mini-prd", "state", "run-id"),
    "record": (
        "state",
        "item",
        "attempt",
        "impl-result",
        "verdict",
        "reason",
        "put-back",
        "run-id",
    ),
    "commit": ("state", "item", "commit"),
    "commits": ("state", "list"),
    "report": ("state",),
    "complete": ("state",),
}
OPTIONAL = frozenset({"reason", "impl-result", "verdict", "put-back", "output"})
USAGE = f"usage: fix_engine.py {{{','.join(OPTIONS)}}} --OPTION VALUE ... [--output FILE]"


class UsageError(Exception):
    """The command line is not one of the commands'; exit 2."""


def parse(argv: Sequence[str]) -> Arguments:
    """The command and its options (`mini-prd` as `mini_prd`; an optional one left out: "")."""
    if not argv or argv[0] not in OPTIONS:
        raise UsageError(f"the command is one of {', '.join(OPTIONS)}, not {argv[:1]}")
    command, known = argv[0], (*OPTIONS[argv[0]], "output")
    given: dict[str, str] = {}
    words = iter(argv[1:])
    for word in words:
        name, equals, value = word.removeprefix("--").partition("=")
        if not word.startswith("--") or name not in known:
            raise UsageError(f"{command}: unrecognized argument {word!r}")
        if name in given:
            raise UsageError(f"{command}: --{name} given twice")
        if not equals:
            following = next(words, None)
            if following is None:
                raise UsageError(f"{command}: --{name} expects one value")
            value = following
        given[name] = value
    missing = [f"--{name}" for name in known if name not in given and name not in OPTIONAL]
    if missing:
        raise UsageError(f"{command}: the following arguments are required: {', '.join(missing)}")
    values = {name.replace("-", "_"): given.get(name, "") for name in known}
    return Arguments(command=command, **values)


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
    try:
        args = parse(sys.argv[1:] if argv is None else argv)
    except UsageError as wrong:
        print(f"{USAGE}\nfix_engine.py: error: {wrong}", file=sys.stderr)
        return 2
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
