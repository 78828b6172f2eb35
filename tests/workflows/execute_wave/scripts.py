"""Scripted-model replies for execute-wave tests: executors, scorers and fixers, as data.

Every role writes its result file where the workflow reads it (inside its worktree, under
`.fixloop/context/`) and answers with its schema's JSON, as a real model would.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fixloop.workflows.execute_wave.scoring import DESIGN_WEIGHTS, LOGIC_WEIGHTS

REVIEW_OUTPUT = {"schema_version": "v1", "findings": [], "checks_run": ["scored"]}


def implement(
    task_id: int | str, files: Mapping[str, str], *, status: str = "done", raw: str | None = None
) -> dict[str, Any]:
    """An executor that writes `files` and reports `status` (or writes `raw` as its result)."""
    result = {"id": task_id, "status": status, "filesModified": sorted(files), "notes": "done"}
    text = raw if raw is not None else json.dumps(result)
    edits = [{"path": path, "content": content} for path, content in files.items()]
    edits.append({"path": f".fixloop/context/impl-result-{task_id}.json", "content": text})
    return {"edits": edits, "output": result}


def scores(kind: str, value: float, **overrides: float) -> dict[str, float]:
    weights = DESIGN_WEIGHTS if kind == "design" else LOGIC_WEIGHTS
    return {dimension: overrides.get(dimension, value) for dimension in weights}


def score(
    task_id: int | str,
    values: Mapping[str, object] | None,
    *,
    kind: str = "logic",
    raw: str | None = None,
    analysis: str = "",
) -> dict[str, Any]:
    """A reviewer (logic) or verifier (design) writing its scores file."""
    name = "verify" if kind == "design" else "review"
    body: dict[str, object] = {
        "taskId": task_id,
        "scores": dict(values or {}),
        "analysis": analysis,
        "findings": [],
    }
    text = raw if raw is not None else json.dumps(body)
    edits = [{"path": f".fixloop/context/{name}-result-{task_id}.json", "content": text}]
    return {"edits": edits, "output": REVIEW_OUTPUT}


def fix(files: Mapping[str, str], summary: str = "fixed: raised the scores") -> dict[str, Any]:
    edits = [{"path": path, "content": content} for path, content in files.items()]
    return {"edits": edits, "output": {"files_changed": sorted(files), "summary": summary}}
