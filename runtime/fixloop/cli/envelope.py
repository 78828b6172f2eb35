"""One JSON shape for every command's `--json`: what a script or CI job reads first.

    {"ok": false, "command": "review-fix", "run_id": "2026…", "exit_code": 1,
     "counts": {"fixed": 2, "skipped": 1}, "items": [{"id": "CR-01", "status": "fixed", …}],
     "result": {…the command's own details…}}

`ok` is `exit_code == 0`; `counts` maps each status (a value of the workflow's own status enum)
to how many items ended in it; `items` lists each item with its typed `status`; `result`
carries the rest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from fixloop.masking import dumps_masked


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


__all__ = ["dumps", "envelope"]
