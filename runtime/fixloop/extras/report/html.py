"""One self-contained HTML page for a run: what a person opens to see what the run did.

It is made from the same `RunView` that `fixloop runs show` prints, so the page and the text say
the same: the run's outcome and totals, a row per item (status, attempts, cost, time, commit, its
one-line reason), a small chart of cost and time per item, then each item's diff coloured by line,
the verifier's evidence and the notes, and for execute-wave's design tasks each screenshot beside
its reference picture. Everything is inside the page — styles inline, pictures as `data:` URIs,
no script — and a Content-Security-Policy forbids anything else, so the page opens offline and
can be mailed or attached to a CI job. Jinja2 escapes every value (titles, diffs and notes are
the model's and the reviewer's text); the page is masked like every other run file.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from fixloop.documents.files import read_text
from fixloop.masking import mask_text
from fixloop.runs.run import read_run
from fixloop.runs.show import ItemView, RunView

TEMPLATE = Path(__file__).with_name("report.html.j2")
MAX_PICTURE_BYTES = 4 * 1024 * 1024  # a picture larger than this is named, not embedded
BAR_WIDTH = 240  # the chart's longest bar, in pixels


@dataclass(frozen=True)
class Picture:
    label: str
    uri: str  # a data: URI, or "" when it could not be embedded
    note: str = ""


@dataclass(frozen=True)
class DiffLine:
    kind: str  # add, del, hunk, meta, ctx
    text: str


def render_html(view: RunView, run_dir: Path) -> str:
    """The page for the run whose folder is `run_dir` and whose view is `view`."""
    environment = jinja2.Environment(
        autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True
    )
    template = environment.from_string(TEMPLATE.read_text(encoding="utf-8"))
    items = [_item(item, view) for item in view.items]
    page = template.render(
        view=view,
        items=items,
        pictures=_pictures(run_dir, view),
        cost_max=max((i["cost"] for i in items), default=0.0) or 1.0,
        time_max=max((i["time"] for i in items), default=0.0) or 1.0,
        bar_width=BAR_WIDTH,
    )
    return mask_text(page)


def write_html(view: RunView, run_dir: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_html(view, run_dir), encoding="utf-8")
    return target


def _item(item: ItemView, view: RunView) -> dict[str, Any]:
    time = item.usage.elapsed_s + sum(step.duration_s for step in item.steps)
    return {
        "view": item,
        "status_class": _status_class(item.status),
        "attempts": item.attempts,
        "cost": round(item.usage.cost_usd, 6),
        "time": round(time, 3),
        "diff": [_diff_line(line) for line in item.diff.splitlines()],
    }


def _status_class(status: str) -> str:
    word = status.split(":", 1)[0].strip().lower().replace(" ", "-")
    if word in {"fixed", "done", "committed", "resolved", "passed", "completed"}:
        return "good"
    if word in {"running", "pending"}:
        return "open"
    if word in {"skipped", "dropped", "deferred", "needs-human-verification", "escalated"}:
        return "neutral"
    return "bad"


def _diff_line(line: str) -> DiffLine:
    if line.startswith(("+++", "---", "diff --git", "index ")):
        return DiffLine("meta", line)
    if line.startswith("@@"):
        return DiffLine("hunk", line)
    if line.startswith("+"):
        return DiffLine("add", line)
    if line.startswith("-"):
        return DiffLine("del", line)
    return DiffLine("ctx", line)


def _pictures(run_dir: Path, view: RunView) -> dict[str, list[Picture]]:
    """item id → its screenshots (the run's `shots/task-ID-*.png`), its reference first."""
    shots = run_dir / "shots"
    found: dict[str, list[Picture]] = {}
    references = _references(run_dir) if view.workflow == "execute-wave" else {}
    for task_id, reference in references.items():
        found.setdefault(task_id, []).append(_embed(reference, "reference"))
    if shots.is_dir():
        for shot in sorted(shots.glob("task-*.png")):
            task_id, _, label = shot.stem.removeprefix("task-").partition("-")
            found.setdefault(task_id, []).append(_embed(shot, f"screenshot: {label or 'page'}"))
    return found


def _references(run_dir: Path) -> dict[str, Path]:
    """Each design task's reference picture, from the tasks file the run read."""
    try:
        state = json.loads(read_text(run_dir / "state.json"))
        repo = Path(str(read_run(run_dir).get("repo") or ""))
        tasks_path = Path(str(state.get("input_path") or ""))
        tasks_path = tasks_path if tasks_path.is_absolute() else repo / tasks_path
        loaded = json.loads(read_text(tasks_path))
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return {}
    tasks = loaded.get("tasks", []) if isinstance(loaded, dict) else loaded
    found: dict[str, Path] = {}
    for task in tasks if isinstance(tasks, list) else []:
        if isinstance(task, dict) and isinstance(task.get("referenceImage"), str):
            picture = (repo / task["referenceImage"]).resolve()
            if picture.is_relative_to(repo.resolve()):  # never a host file outside the project
                found[str(task.get("id"))] = picture
    return found


def _embed(path: Path, label: str) -> Picture:
    try:
        if path.stat().st_size > MAX_PICTURE_BYTES:
            return Picture(label, "", f"{path} (too large to embed)")
        data = path.read_bytes()
    except OSError as exc:
        return Picture(label, "", f"{path}: {exc.strerror or exc}")
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return Picture(label, "", f"{path}: not a PNG")
    return Picture(label, "data:image/png;base64," + base64.b64encode(data).decode("ascii"))


__all__ = ["render_html", "write_html"]
