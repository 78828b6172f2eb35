"""Reading one document of a pack: its frontmatter as Claude Code loads it, judged by a profile.

`claude_code.py` says what Claude Code does with each value (refuse, ignore, coerce); this module
turns those findings into diagnostics at the key's line, with the severity the profile gives
them, and hands the values Claude Code would load to the typed specs.

`claude_code` is imported by the functions that judge frontmatter, not here: `fixloop check` of a
workflow reads its document (`read_source`) and judges no agent's, command's or skill's
frontmatter, and importing the judging module with its tables of Claude Code's names and tools
was 2 ms of a one-document check's start (bench/startup.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from fixloop.diagnostics import Diagnostic, FixloopError, Severity
from fixloop.documents.config import Profile
from fixloop.documents.source import SourceDocument, load_document

if TYPE_CHECKING:
    from fixloop.documents.claude_code import Finding, Level


def severity(level: Level, profile: Profile) -> Severity | None:
    """How a profile reports what Claude Code does with a value; None: not at all."""
    from fixloop.documents.claude_code import Level

    if level is Level.REFUSED:
        return Severity.ERROR
    if level is Level.NOTE:
        return Severity.WARNING
    if level is Level.IGNORED:
        return Severity.ERROR if profile is Profile.FIXLOOP else Severity.WARNING
    return Severity.ERROR if profile is Profile.FIXLOOP else None


def located(
    findings: list[Finding],
    profile: Profile,
    display: str,
    line_of: Any,
    rule: str = "frontmatter",
) -> list[Diagnostic]:
    found = []
    for finding in findings:
        level = severity(finding.level, profile)
        if level is None:
            continue
        keys = finding.keys
        where = ".".join(str(k) for k in keys)
        message = f"{where}: {finding.message}" if where else finding.message
        found.append(
            Diagnostic(
                display,
                line_of(*keys) if keys else 1,
                1,
                finding.rule if finding.rule != "frontmatter" else rule,
                message,
                level,
            )
        )
    return found


def read_source(
    path: Path, base: Path, profile: Profile, diagnostics: list[Diagnostic]
) -> SourceDocument | None:
    """The document, read as leniently as Claude Code reads it; problems go to `diagnostics`."""
    try:
        source = load_document(path, base, lenient=True)
    except FixloopError as exc:
        diagnostics.extend(exc.diagnostics)
        return None
    error = source.yaml_error
    if error is not None:
        if profile is Profile.FIXLOOP:  # the house rule: frontmatter parses as written
            diagnostics.append(error)
            return None
        keys = ", ".join(source.requoted)
        message = (
            f"{error.message}; Claude Code reads it only after quoting the value of {keys} "
            "(quote it yourself to be sure what it reads)"
        )
        diagnostics.append(
            Diagnostic(error.path, error.line, error.col, error.rule, message, Severity.WARNING)
        )
    return source


def agent_data(source: SourceDocument, profile: Profile) -> tuple[dict[str, Any], list[Diagnostic]]:
    from fixloop.documents.claude_code import agent_frontmatter

    data, findings = agent_frontmatter(source.metadata, source.path.stem)
    return data, located(findings, profile, source.display, source.line_of)


def command_data(
    source: SourceDocument, profile: Profile
) -> tuple[dict[str, Any], list[Diagnostic]]:
    from fixloop.documents.claude_code import command_frontmatter

    data, findings = command_frontmatter(source.metadata)
    return data, located(findings, profile, source.display, source.line_of)


def skill_data(source: SourceDocument, profile: Profile) -> tuple[dict[str, Any], list[Diagnostic]]:
    from fixloop.documents.claude_code import skill_frontmatter

    data, findings = skill_frontmatter(source.metadata, source.path.parent.name)
    return data, located(findings, profile, source.display, source.line_of)
