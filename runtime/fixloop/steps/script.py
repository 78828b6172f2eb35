"""Turning a document step into one bash script, and the crash-injection switch.

A step's bash blocks run in one bash process, in document order, under `set -euo pipefail`. The
script is the blocks' text and nothing else: inputs reach it only as environment variables.

Every command the step's shell runs is traced by a DEBUG trap into a NUL-separated file (the
trap sees the command's *source text*, never expanded values). The trace tells a user which
command failed, and it numbers the crash points. Commands inside a function of the step library
marked for tracing (`declare -ft`, e.g. `fixloop_index_from_head`) are traced too, located at
their line of the library file; other functions count as the one command that called them.

Crash injection (for proving recovery): `FIXLOOP_CRASH_AT=STEP:K` in the runtime's environment
makes the runtime SIGKILL itself, together with the step's whole process group, right after the
K-th command of step STEP has finished (K counts from 1, in trace order; a K at or beyond the
number of commands the step ran kills once its shell has exited, before the runtime records the
step). It fires in the first run of that step that reaches command K; `STEP#N:K` arms only the
N-th run of STEP in the runtime's process. `STEP` may be `WORKFLOW/STEP` to pick one workflow's
step. Nothing catches SIGKILL: this is the closest a test
gets to a power cut. A document that sets its own DEBUG trap replaces the runtime's, and with it
tracing and crash injection for that step.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.documents.blocks import FencedBlock

CRASH_ENV = "FIXLOOP_CRASH_AT"
_CRASH = re.compile(
    r"^(?:(?P<workflow>[A-Za-z0-9_.-]+)/)?(?P<step>[A-Za-z0-9_.-]+)"
    r"(?:#(?P<occurrence>[0-9]+))?:(?P<k>[0-9]+)$"
)

# The trap runs before each command: it records the command and its line, and when a crash is
# armed and K commands have already completed it kills the runtime and this process group (`0`).
# $LINENO is read first: later lines of a multi-line trap would count themselves.
_PREAMBLE = """\
set -euo pipefail
__fixloop_commands=0
trap '__fixloop_line=$LINENO __fixloop_commands=$((__fixloop_commands + 1))
if [ -n "${FIXLOOP_CRASH_AFTER:-}" ] && [ "$__fixloop_commands" -gt "$FIXLOOP_CRASH_AFTER" ]; then
  kill -KILL "$FIXLOOP_RUNTIME_PID" 0
fi
printf "%s\\t%s\\t%s\\0" "$__fixloop_line" "${BASH_SOURCE[0]-}" "$BASH_COMMAND" \\
  >> "$FIXLOOP_TRACE"' DEBUG
"""


@dataclass(frozen=True)
class CrashPoint:
    """Where `FIXLOOP_CRASH_AT` asks the runtime to die: after `after` commands of `step`."""

    step: str
    after: int
    workflow: str | None = None
    occurrence: int | None = None  # the N-th run of the step in this process; None: any

    def matches(self, workflow: str, step: str, occurrence: int = 1) -> bool:
        return (
            self.step == step
            and self.workflow in (None, workflow)
            and self.occurrence in (None, occurrence)
        )


def crash_point(environ: Mapping[str, str]) -> CrashPoint | None:
    raw = environ.get(CRASH_ENV, "").strip()
    if not raw:
        return None
    match = _CRASH.match(raw)
    occurrence = int(match["occurrence"]) if match and match["occurrence"] else None
    if match is None or int(match["k"]) < 1 or occurrence == 0:
        raise FixloopError(
            Diagnostic(
                CRASH_ENV,
                1,
                1,
                "usage",
                f"{raw!r}: expected [WORKFLOW/]STEP[#N]:K with N, K >= 1",
            )
        )
    return CrashPoint(match["step"], int(match["k"]), match["workflow"], occurrence)


@dataclass(frozen=True)
class Script:
    """A step's bash, and where each of its lines came from in the document."""

    text: str
    display: str
    # (first script line of a block, its first line in the document, its line count)
    spans: tuple[tuple[int, int, int], ...]

    def document_line(self, script_line: int, source: str = "") -> str | None:
        """`file:line` in the document for a line of the script (None for the preamble), or in
        the sourced file `source` (a library helper) for a command traced there."""
        if source:
            parts = Path(source).parts
            shown = "/".join(parts[-3:]) if parts[-3:-1] == ("workflows", "lib") else source
            return f"{shown}:{script_line}"
        for first, document_first, count in self.spans:
            if first <= script_line < first + count:
                return f"{self.display}:{document_first + script_line - first}"
        return None


@dataclass(frozen=True)
class TracedCommand:
    text: str
    line: int  # script line, as bash's $LINENO saw it
    source: str = ""  # the sourced file it ran in (a library helper); "" for the step itself


def compose(blocks: Iterable[FencedBlock], display: str) -> Script:
    """The script for a step: strict preamble, then each block marked with its document line."""
    parts = [_PREAMBLE]
    line = _PREAMBLE.count("\n") + 1
    spans: list[tuple[int, int, int]] = []
    for block in blocks:
        parts.append(f"# {display}:{block.content_line}\n")
        line += 1
        content = block.content if block.content.endswith("\n") else block.content + "\n"
        count = content.count("\n")
        spans.append((line, block.content_line, count))
        parts.append(content)
        line += count
    return Script("".join(parts), display, tuple(spans))


def read_trace(data: bytes) -> list[TracedCommand]:
    """Commands from a trace file (`LINENO<TAB>SOURCE<TAB>command<NUL>` records), in the order
    they ran."""
    commands: list[TracedCommand] = []
    for item in data.split(b"\0"):
        if not item:
            continue
        number, _, rest = item.decode("utf-8", "replace").partition("\t")
        source, _, text = rest.partition("\t")
        commands.append(TracedCommand(text, int(number) if number.isdigit() else 0, source))
    return commands
