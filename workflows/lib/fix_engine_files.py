"""The files of a fix-engine section, for `fix_engine.py`: the runtime's own model, never a copy.

The mini-PRD, checklist.md and meta.yaml are read, checked and written by
`fixloop.workflows.fix_engine.files`, the model the headless runtime reads the section with; this
module only names it for the step library (`FIXLOOP_PYTHON` is the interpreter fixloop is
installed in), as `execute_wave.py` does for execute-wave.
"""

from __future__ import annotations

import sys

try:
    from fixloop.workflows.fix_engine.files import (
        ITEM_STATUSES,
        MAX_ATTEMPTS,
        SECTION_ID,
        SHA,
        STATUSES,
        VERDICTS,
        Item,
        Problem,
        State,
        check_meta,
        checklist_text,
        digest,
        dump_yaml,
        item_json,
        items_json,
        key_line,
        parse_checklist,
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
except ImportError as missing:  # pragma: no cover - depends on the interpreter it is run with
    sys.exit(f"fix_engine_files.py: needs the fixloop package ({missing}); set FIXLOOP_PYTHON")

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
