"""bash itself as the judge of syntax: which blocks `bash -n` refuses, in few processes.

tree-sitter-bash recovers from errors, and its recovery can swallow what bash refuses: an
unclosed quote turns every later command of the block into text, so a contract that forbids one
of them passes. So every block tree-sitter parsed cleanly is also read by `bash -n` (read, never
run). One process per block would dominate a check of a large pack, so the blocks go to bash
together, each as the body of a function of its own, and only a batch that bash refuses is split
in two and read again, down to the single block, which bash then reads alone for its own message
and line. A block that is broken only inside a batch (a `}` that closes its wrapper early) is
caught by tree-sitter, which reports any unbalanced brace or unclosed quote by itself.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence

from fixloop.records import record

_TIMEOUT = 30  # seconds for one batch; bash reads megabytes of script in well under one
_LINE = re.compile(r"^bash: (?:line (\d+): )?")


@record(frozen=True)
class Refusal:
    line: int | None  # 1-based line in the block when bash names one
    message: str  # bash's first line of complaint, without its `bash: line N:` prefix


def _environment() -> dict[str, str]:
    # No BASH_ENV or ENV: a non-interactive bash would read the file they name.
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}


# Blocks tree-sitter cannot parse are asked about one by one (bash may accept what tree-sitter
# refuses: then it is only a warning). A pack of thousands of broken blocks would take a process
# each; past this many in one check, they stay errors without asking (failing closed).
MAX_SINGLE_QUESTIONS = 256
_asked = [0]


def start_check() -> None:
    """A new check: the budget of single questions is full again."""
    _asked[0] = 0


def accepts(script: str) -> bool:
    """`bash -n` ran and accepts `script`; False too once the check's budget is spent."""
    if _asked[0] >= MAX_SINGLE_QUESTIONS:
        return False
    _asked[0] += 1
    return _run(script) == (True, None)


def _bash_n(script: str) -> str | None:
    """bash's complaint about `script`, or None when it accepts it (or cannot be run: then
    tree-sitter's reading stands)."""
    return _run(script)[1]


def _run(script: str) -> tuple[bool, str | None]:
    try:
        done = subprocess.run(
            ["bash", "-n"],
            input=script,
            capture_output=True,
            text=True,
            timeout=_TIMEOUT,
            check=False,
            env=_environment(),
        )
    except (OSError, subprocess.TimeoutExpired):
        return False, None
    if done.returncode == 0:
        return True, None
    return True, next((line for line in done.stderr.splitlines() if line.strip()), "syntax error")


def _wrapped(blocks: Sequence[str]) -> str:
    return "".join(f"__fixloop_block_{i}() {{\n{text}\n}}\n" for i, text in enumerate(blocks))


def refusals(blocks: Sequence[str]) -> dict[int, Refusal]:
    """Index → what bash says, for each block `bash -n` refuses on its own."""
    found: dict[int, Refusal] = {}
    pending = [list(range(len(blocks)))] if blocks else []
    while pending:
        group = pending.pop()
        if len(group) == 1:
            complaint = _bash_n(blocks[group[0]])
            if complaint is not None:
                match = _LINE.match(complaint)
                line = int(match[1]) if match and match[1] else None
                found[group[0]] = Refusal(line, complaint[match.end() :] if match else complaint)
            continue
        if _bash_n(_wrapped([blocks[i] for i in group])) is not None:
            half = len(group) // 2
            pending += [group[:half], group[half:]]
    return found
