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
not pass). The files themselves are the runtime's model (`fixloop.workflows.fix_engine.files`,
through `fix_engine_files.py`): `FIXLOOP_PYTHON` is the interpreter fixloop is installed in.

This file only starts `fix_engine_commands.py`: Python compiles the script it is given by path
every time, but reuses the cached bytecode of a module it imports, and every step starts a fresh
interpreter.
"""

from __future__ import annotations

from fix_engine_commands import main

if __name__ == "__main__":
    raise SystemExit(main())
