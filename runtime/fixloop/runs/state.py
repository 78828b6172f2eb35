"""A workflow's loop state on disk, and the stopped run a new run may resume.

Every workflow keeps all of its loop variables in one pydantic model derived from `RunState`,
saved to `<run dir>/state.json` after every change (a temporary file, then a rename: a kill leaves
the last complete state, never half of one). The model names the input the run read and its
digest, so a later run of the same workflow on the same input can find a stopped run and continue
from its state instead of replaying finished work:

    state = FixFindingsState(workflow="fix-findings", input_path=..., input_digest=digest(data))
    save_state(run.dir, state)
    ...
    for run_id, earlier in stopped_runs(state_dir, FixFindingsState, digest(data)): ...

The earlier run's folder is never changed by a resume: the new run is a run of its own (its own
lock and trace) that starts from a copy of the earlier state.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.masking import dumps_masked
from fixloop.runs.run import list_runs

STATE_FILE = "state.json"
LATEST = "latest"  # `--resume` alone, `runs show latest`: the latest run of its kind


class RunState(BaseModel):
    """What every workflow's state says about itself; workflows add their loop variables."""

    model_config = ConfigDict(extra="forbid")

    workflow: str
    input_path: str  # the input the run read, as the user named it (repository-relative if inside)
    input_digest: str  # sha256 of the input's bytes: resuming needs the very same input
    resumed_from: str | None = None
    done: bool = False


S = TypeVar("S", bound=RunState)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def save_state(run_dir: Path, state: RunState) -> None:
    target = run_dir / STATE_FILE
    temporary = target.with_name(f".{STATE_FILE}.{os.getpid()}.tmp")
    temporary.write_text(
        dumps_masked(state.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8"
    )
    temporary.replace(target)


def load_state(run_dir: Path, model: type[S]) -> S:
    """The state a run saved; a FixloopError (rule `resume`) when it is missing or not `model`."""
    target = run_dir / STATE_FILE
    shown = display_path(target)
    try:
        return model.model_validate_json(target.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FixloopError(Diagnostic(shown, 1, 1, "resume", exc.strerror or str(exc))) from None
    except ValueError as exc:
        problem = f"not a {model.__name__} state file: {str(exc).splitlines()[0]}"
        raise FixloopError(Diagnostic(shown, 1, 1, "resume", problem)) from None


def stopped_runs(state_dir: Path, model: type[S], input_digest: str) -> list[tuple[str, S]]:
    """Runs of `model`'s workflow that stopped without finishing (crashed, or failed part way)
    on the same input, oldest first, with their saved state. Live runs are never among them."""
    found: list[tuple[str, S]] = []
    workflow = model.model_fields["workflow"].default
    for info in list_runs(state_dir):
        run_id = str(info.get("id", ""))
        if info.get("live") or info.get("workflow") != workflow:
            continue
        if info.get("state") not in ("crashed", "failed"):
            continue
        run_dir = state_dir / "runs" / run_id
        if not (run_dir / STATE_FILE).is_file():
            continue
        try:
            state = load_state(run_dir, model)
        except FixloopError:
            continue
        if state.input_digest == input_digest and not state.done:
            found.append((run_id, state))
    return found


def finished_runs(
    state_dir: Path, model: type[S], input_digest: str
) -> list[tuple[str, S, dict[str, Any]]]:
    """Runs of `model`'s workflow that finished their work on the same input, newest first,
    with their saved state and `run.json`: what a workflow reads to tell that the work it is
    asked for is done already (each workflow says what else must still hold; docs/workflows.md,
    "Running again on finished input")."""
    found: list[tuple[str, S, dict[str, Any]]] = []
    workflow = model.model_fields["workflow"].default
    for info in reversed(list_runs(state_dir)):
        run_id = str(info.get("id", ""))
        if info.get("workflow") != workflow or info.get("state") != "finished":
            continue
        try:
            state = load_state(state_dir / "runs" / run_id, model)
        except FixloopError:
            continue
        if state.input_digest == input_digest and state.done:
            found.append((run_id, state, info))
    return found


__all__ = [
    "LATEST",
    "STATE_FILE",
    "RunState",
    "digest",
    "finished_runs",
    "load_state",
    "save_state",
    "stopped_runs",
]
