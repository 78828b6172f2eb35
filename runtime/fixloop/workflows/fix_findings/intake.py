"""Reading a findings file: schema-checked, paths confined to the repository, then filtered.

Every finding is validated on its own, so an error names the finding (`finding 3: severity: …`);
a finding's `file` must be a repository path (`steps.paths.path_problem`, the one safe-path rule;
it also refuses a symbolic link that leads out, which a fixer editing it would write through); a
finding the intake takes (confirmed, P0 or P1) must name its `criterion`, as the schema says.
Nothing here touches the repository: bad input is refused before the loop starts.

The intake filter and the pre-gate trigger are here too, as small named predicates, and so is
`load_state`: the loop state a run starts from, new from the findings file, or a stopped run's
(`--resume`), checked before the repository is touched.
"""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from fixloop import gitrepo
from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.runs.run import RUN_ID_PATTERN, read_run
from fixloop.runs.state import LATEST, digest, finished_runs, stopped_runs
from fixloop.runs.state import load_state as load_run_state
from fixloop.schemas.findings import Finding
from fixloop.steps.paths import check_path, path_problem
from fixloop.workflows.fix_findings.state import FindingRecord, FixFindingsState

IN_SCOPE_SEVERITIES = ("P0", "P1")
UNVERIFIED_EVIDENCE_PREFIX = "Orchestrator-confirmed"


def load_findings(path: Path, repo: Path) -> list[Finding]:
    """All findings in `path` (a ReviewOutput envelope or a list), validated; else FixloopError."""
    shown = display_path(path)

    def refuse(message: str, line: int = 1, col: int = 1) -> FixloopError:
        return FixloopError(Diagnostic(shown, line, col, "findings", message))

    try:
        data = json.loads(_read_bytes(path).decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise refuse("not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise refuse(f"invalid JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except RecursionError:
        raise refuse("invalid JSON: nested too deeply") from None
    raw_findings = _raw_findings(data, refuse)
    findings: list[Finding] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_findings, start=1):
        name = _name(raw, index)
        try:
            finding = Finding.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            key = ".".join(str(part) for part in first["loc"]) or "(finding)"
            message = str(first["msg"]).removeprefix("Value error, ")
            raise refuse(f"{name}: {key}: {message}") from None
        if str(finding.id) in seen:
            raise refuse(f"{name}: id is used by an earlier finding")
        if in_scope(finding) and not (finding.criterion or "").strip():
            # The fixer fixes against it and the verifier judges by it: without one, a fix of
            # a P0 would be checked against nothing. Findings the intake leaves out need none.
            raise refuse(
                f"{name}: criterion: required for a {finding.severity} finding (name the "
                "criterion it violates)"
            )
        seen.add(str(finding.id))
        if finding.file is not None:
            problem = path_problem(repo, finding.file)
            if problem is not None:
                raise refuse(f"{name}: file: {problem}")
        findings.append(finding)
    return findings


def _raw_findings(data: Any, refuse: Any) -> list[Any]:
    if isinstance(data, list):
        return data
    if isinstance(data, dict) and isinstance(data.get("findings"), list):
        if data.get("schema_version") != "v1":
            raise refuse("schema_version: expected 'v1' (a ReviewOutput envelope)")
        unknown = sorted(set(data) - {"schema_version", "findings", "checks_run"})
        if unknown:
            raise refuse(f"{unknown[0]}: not a ReviewOutput key")
        return list(data["findings"])
    raise refuse("expected a ReviewOutput envelope or a JSON list of findings")


def _name(raw: Any, index: int) -> str:
    if isinstance(raw, dict) and isinstance(raw.get("id"), int | str):
        return f"finding {raw['id']!r}" if isinstance(raw["id"], str) else f"finding {raw['id']}"
    return f"finding #{index}"


def in_scope(finding: Finding) -> bool:
    """The intake filter: verdict confirmed AND severity P0/P1, whatever the source."""
    return finding.verdict == "confirmed" and finding.severity in IN_SCOPE_SEVERITIES


def needs_pre_gate(finding: Finding) -> bool:
    """No independent verifier pass: evidence null/missing or `Orchestrator-confirmed…`.

    Confidence does not trigger the pre-gate: it is an honest signal, not a lack of verification.
    Blank evidence counts as missing: it vouches for nothing.
    """
    evidence = (finding.evidence or "").strip()
    return not evidence or evidence.startswith(UNVERIFIED_EVIDENCE_PREFIX)


def first_calls(state: FixFindingsState) -> list[str]:
    """The call each undecided finding starts with: its pre-gate, or its Round 1 fixer."""
    return [
        f"verifier/{r.finding.id}/pre-gate"
        if needs_pre_gate(r.finding)
        else f"fixer/{r.finding.id}/round-1"
        for r in state.records
        if r.bucket is None
    ]


def load_state(findings_path: Path, repo: Path, resume: str | None) -> FixFindingsState:
    """A new run's state from the findings file, or with `resume` (a run id, or `latest`) the
    state of a stopped run that read the very same file. FixloopError on any bad input."""
    root = gitrepo.toplevel(repo)
    data = _read_bytes(findings_path)
    if resume is not None:
        return _resumed(root, findings_path, digest(data), resume)
    findings = load_findings(findings_path, root)
    records = [
        FindingRecord(finding=f, scope=[check_path(root, f.file)] if f.file else [])
        for f in findings
        if in_scope(f)
    ]
    return FixFindingsState(
        input_path=str(findings_path),
        input_digest=digest(data),
        repo=str(root),
        records=records,
        ignored=[f.id for f in findings if not in_scope(f)],
    )


MAX_FINDINGS_BYTES = 16 << 20


def _read_bytes(path: Path) -> bytes:
    """The findings file's bytes: a regular file only (a FIFO would block the read forever)."""

    def refuse(problem: str) -> FixloopError:
        return FixloopError(Diagnostic(display_path(path), 1, 1, "findings", problem))

    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise refuse("not a regular file")
        if info.st_size > MAX_FINDINGS_BYTES:
            raise refuse(f"{info.st_size} bytes; a findings file may hold {MAX_FINDINGS_BYTES}")
        return path.read_bytes()
    except OSError as exc:
        raise refuse(f"cannot read: {exc.strerror or exc}") from None


def _resumed(root: Path, findings_path: Path, wanted: str, run_id: str) -> FixFindingsState:
    state_dir = gitrepo.state_dir_of(root)
    shown = display_path(findings_path)
    if run_id == LATEST:
        stopped = stopped_runs(state_dir, FixFindingsState, wanted)
        if not stopped:
            problem = "no stopped fix-findings run of this findings file to resume"
            raise FixloopError(Diagnostic(shown, 1, 1, "resume", problem))
        run_id = stopped[-1][0]
    if not re.match(RUN_ID_PATTERN, run_id):
        raise FixloopError(Diagnostic(run_id, 1, 1, "resume", "not a run id"))
    run_dir = state_dir / "runs" / run_id
    if read_run(run_dir).get("live"):
        raise FixloopError(Diagnostic(run_id, 1, 1, "resume", "that run is still running"))
    state = load_run_state(run_dir, FixFindingsState)
    if state.input_digest != wanted:
        problem = f"run {run_id} read a different findings file; resume it with that file"
        raise FixloopError(Diagnostic(shown, 1, 1, "resume", problem))
    return state.model_copy(update={"resumed_from": run_id})


def finished_earlier(state: FixFindingsState) -> str | None:
    """Why this very findings file needs no run, or None: the latest finished run of it decided
    every finding with none escalated, and what it staged is still in the index, entry for
    entry (staged still, or committed since: a commit leaves the index as it was). A finding it
    escalated, or a fix unstaged or changed since, and the file runs again."""
    if state.resumed_from:
        return None
    repo = Path(state.repo)
    state_dir = gitrepo.state_dir_of(repo)
    for run_id, earlier, _ in finished_runs(state_dir, FixFindingsState, state.input_digest):
        if any(record.bucket in (None, "escalated") for record in earlier.records):
            return None
        if gitrepo.index_entries(repo, earlier.staged_by_run) != earlier.staged_by_run:
            return None
        output = earlier.output()
        return (
            f"{state.input_path} was settled by run {run_id} ({len(output.resolved)} resolved, "
            f"{len(output.dropped)} dropped, {len(output.demoted)} demoted; its fixes are still "
            "in your index): nothing to do; change the findings file to run again"
        )
    return None
