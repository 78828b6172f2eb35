"""One JSON shape for every command's `--json`: what a script or CI job reads first.

    {"ok": false, "command": "review-fix", "run_id": "2026…", "exit_code": 1,
     "counts": {"fixed": 2, "skipped": 1}, "items": [{"id": "CR-01", "status": "fixed", …}],
     "result": {…the command's own details…}}

`ok` is `exit_code == 0`; `counts` maps each status (a value of the workflow's own status enum)
to how many items ended in it; `items` lists each item with its typed `status`; `result`
carries the rest. A command that stops on bad input prints the envelope too (`failed`), its
diagnostics as the items, so a script never has to tell "no JSON" from "no problems".
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fixloop.diagnostics import Diagnostic
from fixloop.masking import dumps_masked

# The keys of every envelope, in order (tests hold every command to them).
KEYS = ("ok", "command", "run_id", "exit_code", "counts", "items", "result")


def envelope(
    command: str,
    exit_code: int,
    *,
    run_id: str = "",
    items: Sequence[Mapping[str, Any]] = (),
    result: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    counts = Counter(str(item.get("status", "")) for item in items)
    return {
        "ok": exit_code == 0,
        "command": command,
        "run_id": run_id,
        "exit_code": exit_code,
        "counts": dict(sorted(counts.items())),
        "items": [dict(item) for item in items],
        "result": dict(result or {}),
    }


def dumps(data: Mapping[str, Any]) -> str:
    """The envelope as text, secrets masked: stdout is often a CI log, which is a file too."""
    return dumps_masked(dict(data), indent=2, ensure_ascii=False, default=str)


def emit(
    command: str,
    exit_code: int,
    *,
    run_id: str = "",
    items: Sequence[Mapping[str, Any]] = (),
    result: Mapping[str, Any] | None = None,
) -> int:
    """Print the envelope on stdout; returns `exit_code`, for `return emit(…)`."""
    print(dumps(envelope(command, exit_code, run_id=run_id, items=items, result=result)))
    return exit_code


def diagnostic_items(diagnostics: Iterable[Diagnostic]) -> list[dict[str, Any]]:
    """Problems as items: `id` is where (`file:line:col`), `status` the severity."""
    return [
        {"id": f"{d.path}:{d.line}:{d.col}", "status": str(d.severity), **d.to_json()}
        for d in diagnostics
    ]


# Where each command group keeps its action's name (`add_subparsers(dest=…)`).
_ACTIONS = ("agents_command", "step_command", "runs_command", "browser_command", "bench", "action")


def command_of(args: argparse.Namespace) -> str:
    """The command a parsed command line ran, as the envelope names it (`runs show`)."""
    action = next((str(getattr(args, name)) for name in _ACTIONS if getattr(args, name, None)), "")
    return f"{args.command} {action}".strip()


def wants_json(args: argparse.Namespace) -> bool:
    """Whether the command line asked for the envelope (`--json`, or `--format json`)."""
    return getattr(args, "json", False) is True or getattr(args, "format", None) == "json"


__all__ = [
    "KEYS",
    "command_of",
    "diagnostic_items",
    "dumps",
    "emit",
    "envelope",
    "wants_json",
]
