"""What one step run produced, and the one error a workflow raises when a step did not succeed."""

from __future__ import annotations

from dataclasses import dataclass, field

from fixloop.diagnostics import Diagnostic, FixloopError


@dataclass(frozen=True)
class StepResult:
    workflow: str
    step: str
    exit_code: int
    outputs: dict[str, str]
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool
    commands: list[str] = field(default_factory=list)  # commands the step's shell ran, in order
    error: str | None = None  # set when the outputs could not be read or were not declared
    last_command_at: str | None = None  # `file:line` of the last command in the document
    command_sites: list[str | None] = field(default_factory=list)  # `file:line` per command

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and self.error is None

    @property
    def last_command(self) -> str | None:
        return self.commands[-1] if self.commands else None

    def describe_failure(self) -> str:
        """One line for a user: what failed and where."""
        if self.timed_out:
            return f"{self.workflow}#{self.step}: timed out"
        if self.error:
            return f"{self.workflow}#{self.step}: {self.error}"
        where = f" ({self.last_command_at})" if self.last_command_at else ""
        return (
            f"{self.workflow}#{self.step}: exit {self.exit_code} "
            f"after `{self.last_command}`{where}: {self.cause()}"
        )

    def cause(self) -> str:
        """What went wrong, on one line: git's own `error:`/`fatal:` lines when there are (its
        hints follow them and say less; the reason is often the `error:` before a generic
        `fatal:`, as in "gpg failed to sign the data"), else the last line."""
        lines = [line.strip() for line in self.stderr.strip().splitlines() if line.strip()]
        said = list(dict.fromkeys(line for line in lines if line.startswith(("fatal:", "error:"))))
        return "; ".join(said[-3:]) if said else (lines or [""])[-1]


class StepFailed(FixloopError):
    """A step did not succeed; `result` says how (exit code, stderr, last command, document line).

    The repository is as the step left it: every step checks before it changes anything, and the
    git protocol's cleanup runs on every way out of a run."""

    def __init__(self, result: StepResult, problem: str | None = None) -> None:
        self.result = result
        where = f"{result.workflow}#{result.step}"
        message = (
            problem
            if problem and problem.startswith(where)
            else (f"{where}: {problem}" if problem else result.describe_failure())
        )
        # Located at the document line of the step's last command, when one ran.
        path, _, line = (result.last_command_at or "").rpartition(":")
        located = (path, int(line)) if path and line.isdigit() else (where, 1)
        super().__init__(Diagnostic(*located, 1, "step-failed", message), 1)


def required_output(result: StepResult, name: str, allowed: tuple[str, ...] = ()) -> str:
    """An output the step must have reported; a missing or unexpected one fails closed.

    The runner checks only that every name a step writes is declared; a declared output the step
    did not write is absent, and a caller that needs it comes here."""
    value = result.outputs.get(name)
    if value is None or (allowed and value not in allowed):
        shown = "nothing" if value is None else repr(value)
        expected = f" (expected {' or '.join(allowed)})" if allowed else ""
        raise StepFailed(result, f"reported {shown} for {name}{expected}")
    return value


def required_count(result: StepResult, name: str) -> int:
    """A count the step must have reported: digits only, anything else fails closed."""
    value = required_output(result, name).strip()
    if not value.isdigit():
        raise StepFailed(result, f"reported {value!r} for {name} (not a count)")
    return int(value)
