"""The step output file: how a step hands values back to the runtime.

A step writes to the file named by `$FIXLOOP_OUTPUT` (the format GitHub Actions uses for
`$GITHUB_OUTPUT`, so it is familiar):

    printf 'COMMIT=%s\n' "$commit" >> "$FIXLOOP_OUTPUT"

    {   # a value that may hold newlines: NAME<<DELIMITER … DELIMITER
        printf 'SUMMARY<<FIXLOOP_EOF\n%s\nFIXLOOP_EOF\n' "$summary"
    } >> "$FIXLOOP_OUTPUT"

Names are shell identifiers. A later line for the same name wins (as in GitHub Actions): a
step may write a default first and the real value after. Anything else in the file (a line
without `=`, a heredoc never closed, a bad name) makes the step fail: an output the runtime
cannot read is never guessed at.

Every name a step writes must be declared: by the step's interface when it has one (a
```yaml step block listing `outputs:`), else under the workflow's `outputs:`; a name that is not
(a typo: `REVIEW_PATH` written, `FIX_REPORT_PATH` declared) makes the step fail with a message
naming the document, the step, the undeclared name and the declared ones (`undeclared_outputs`).
A declared output a step does not write is not an error here: outputs are per step, and most
steps write only a few of the workflow's outputs. A caller that needs a value must fail closed
when it is missing (`fixloop.runs.session.required_output`), never default it.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from fixloop.documents.interface import StepInterface

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class OutputError(ValueError):
    """The output file is malformed; the message names the line."""


def parse_outputs(text: str) -> dict[str, str]:
    outputs: dict[str, str] = {}
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    index = 0
    while index < len(lines):
        line = lines[index]
        number = index + 1
        index += 1
        if not line.strip():
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, _, delimiter = line.partition("<<")
            _check_name(name, number)
            if not delimiter:
                raise OutputError(f"output line {number}: heredoc {name}<< has no delimiter")
            body: list[str] = []
            while index < len(lines) and lines[index] != delimiter:
                body.append(lines[index])
                index += 1
            if index == len(lines):
                raise OutputError(
                    f"output line {number}: heredoc {name}<<{delimiter} is never closed"
                )
            index += 1
            outputs[name] = "\n".join(body)
            continue
        name, sep, value = line.partition("=")
        if not sep:
            raise OutputError(f"output line {number}: expected NAME=value or NAME<<DELIMITER")
        _check_name(name, number)
        outputs[name] = value
    return outputs


def undeclared_outputs(
    outputs: dict[str, str],
    declared: Collection[str],
    document: str,
    step: str,
    interface: StepInterface | None = None,
) -> str | None:
    """The error for names written but not declared (by the step's interface when it has one,
    else under `outputs:`); None when all are."""
    unknown = sorted(set(outputs) - set(declared))
    if not unknown:
        return None
    names = ", ".join(unknown)
    known = ", ".join(sorted(declared)) or "none"
    if interface is not None:
        return (
            f"{document}:{interface.line}: step {step!r} wrote output {names}, which its "
            f"interface does not declare under `outputs:` (declared: {known})"
        )
    return (
        f"{document}: step {step!r} wrote output {names}, which the workflow does not declare "
        f"under `outputs:` (declared: {known})"
    )


def _check_name(name: str, number: int) -> None:
    if not _NAME.match(name):
        raise OutputError(f"output line {number}: {name!r} is not a valid output name")
