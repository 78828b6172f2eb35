"""Reading one document of a pack: its frontmatter as Claude Code loads it, judged by a profile.

`claude_code.py` says what Claude Code does with each value (refuse, ignore, coerce); this module
turns those findings into diagnostics at the key's line, with the severity the profile gives
them, and hands the values Claude Code would load to the typed specs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fixloop.diagnostics import Diagnostic, FixloopError, Severity
from fixloop.documents.claude_code import (
    Finding,
    Level,
    agent_frontmatter,
    command_frontmatter,
    skill_frontmatter,
)
from fixloop.documents.config import Profile
from fixloop.documents.source import SourceDocument, load_document


def severity(level: Level, profile: Profile) -> Severity | None:
    """How a profile reports what Claude Code does with a value; None: not at all."""
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
    data, findings = agent_frontmatter(source.metadata, source.path.stem)
    return data, located(findings, profile, source.display, source.line_of)


def command_data(
    source: SourceDocument, profile: Profile
) -> tuple[dict[str, Any], list[Diagnostic]]:
    data, findings = command_frontmatter(source.metadata)
    return data, located(findings, profile, source.display, source.line_of)


def skill_data(source: SourceDocument, profile: Profile) -> tuple[dict[str, Any], list[Diagnostic]]:
    data, findings = skill_frontmatter(source.metadata, source.path.parent.name)
    return data, located(findings, profile, source.display, source.line_of)
