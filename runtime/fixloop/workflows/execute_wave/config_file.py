"""`config.jsonc` beside tasks.json: fe-harness's own settings file, read as its users keep it.

fe-harness keeps its settings (thresholds, retries, the dev server and backpressure commands) in
a `config.jsonc` next to its tasks; execute-wave reads the same keys from there, and tasks.json's
object form (`{"tasks": [...], "maxRetries": 3}`) wins over it key by key, so a plan can override
its project's defaults. JSON with comments and trailing commas is read by json5. Keys
execute-wave has no use for (fe-harness's own tool paths and the like) are left alone: the file
is fe-harness's, not ours; a key execute-wave does use is checked like the same key in tasks.json,
and a file that does not parse is one line naming its line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import json5

from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.documents.files import UnreadableFile, read_text

CONFIG_NAMES = ("config.jsonc", "config.json")
_AT_LINE = re.compile(r":(\d+) (.*?)(?: at column (\d+))?$")


def read_config(tasks_path: Path) -> tuple[str, dict[str, Any]]:
    """(the file as shown, its settings) of the config file beside `tasks_path`; ("", {})
    when there is none."""
    for name in CONFIG_NAMES:
        path = tasks_path.parent / name
        if path.exists():
            return display_path(path), _load(path)
    return "", {}


def _load(path: Path) -> dict[str, Any]:
    shown = display_path(path)
    try:
        data = json5.loads(read_text(path))
    except UnreadableFile as exc:
        raise FixloopError(Diagnostic(shown, 1, 1, "config", str(exc))) from None
    except UnicodeDecodeError:
        raise FixloopError(Diagnostic(shown, 1, 1, "config", "not UTF-8 text")) from None
    except RecursionError:
        raise FixloopError(Diagnostic(shown, 1, 1, "config", "nested too deeply")) from None
    except ValueError as exc:
        found = _AT_LINE.search(str(exc))
        line, message, column = (
            (int(found[1]), found[2], int(found[3] or 1)) if found else (1, str(exc), 1)
        )
        problem = f"invalid JSON with comments: {message}"
        raise FixloopError(Diagnostic(shown, line, column, "config", problem)) from None
    if not isinstance(data, dict):
        raise FixloopError(Diagnostic(shown, 1, 1, "config", "expected an object of settings"))
    return data


__all__ = ["CONFIG_NAMES", "read_config"]
