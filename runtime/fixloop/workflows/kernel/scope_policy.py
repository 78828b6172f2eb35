"""Who may widen an agent's scope, and which files nobody widens it to without a person.

An agent that needs files outside its item asks (a scope-expansion request). The answer comes from
the run's declared policy (`--on-scope-expansion ask|approve|reject|defer`) or, with `ask`, from a
person at the terminal — never from text the agent or a reviewer wrote: a finding's Fix prose
naming `.github/workflows/ci.yml` grants nothing.

Some files are protected: git metadata and configuration (`.git*`), CI configuration, the agent
pack's own documents, and secret or credential files. A request for one of them is granted only by
a person answering the question; `approve` as a policy still refuses it, with the reason.

An agent in a worktree of the run's own (execute-wave's executor, fix-engine's) is confined after
the fact, whatever wrote the change (a file tool, a shell command): `not_granted` names every
changed path outside what the run declared for it, and the workflow puts those back with
git-protocol's `rollback-files`. Files the agent created may be kept where the workflow says so,
never a protected one: a planted `.github/workflows/*.yml` or `.gitattributes` is put back too.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Literal

from fixloop.secret_files import SecretFiles
from fixloop.steps.paths import path_problem
from fixloop.workflows.kernel.choices import Prompter, question

APPROVE, REJECT, DEFER = (
    "Approve expanded scope",
    "Reject — fix within original scope only",
    "Defer this finding",
)
ScopePolicy = Literal["ask", "approve", "reject", "defer"]
SCOPE_POLICIES: tuple[ScopePolicy, ...] = ("ask", "approve", "reject", "defer")

# (pattern of the repository-relative path, what it is); fnmatch against the whole path and
# against its file name, case-insensitively.
PROTECTED: tuple[tuple[str, str], ...] = (
    (".github/*", "CI configuration"),
    (".gitlab-ci.yml", "CI configuration"),
    (".gitlab/*", "CI configuration"),
    (".circleci/*", "CI configuration"),
    (".travis.yml", "CI configuration"),
    ("azure-pipelines.yml", "CI configuration"),
    ("jenkinsfile", "CI configuration"),
    (".buildkite/*", "CI configuration"),
    (".pre-commit-config.yaml", "CI configuration"),
    (".claude/*", "the assistant's own settings"),
    (".claude-plugin/*", "an agent pack's manifest"),
    ("plugin.json", "an agent pack's manifest"),
    ("agents/*.md", "an agent pack's documents"),
    ("workflows/*.md", "an agent pack's documents"),
    ("workflows/*.contracts.yaml", "an agent pack's contracts"),
    ("commands/*.md", "an agent pack's documents"),
    (".git*", "git metadata or configuration"),  # last: `*` crosses `/`, `.github/` is CI's
)


SECRET_FILES = SecretFiles()


def protected_reason(path: str) -> str | None:
    """What `path` (repository-relative) is, when no policy may grant it; None otherwise."""
    posix = PurePosixPath(path.replace("\\", "/"))
    whole, name = str(posix).lower(), posix.name.lower()
    parts = [part.lower() for part in posix.parts]
    if ".git" in parts:
        return "git metadata or configuration"
    if SECRET_FILES.pattern_of(str(posix)) is not None:  # the one list of secret files
        return "a secret or credential file"
    for pattern, what in PROTECTED:
        if fnmatch.fnmatchcase(whole, pattern) or fnmatch.fnmatchcase(name, pattern):
            return what
    return None


def not_granted(
    changed: Mapping[str, str],
    declared: Iterable[str],
    *,
    reported: Iterable[str] = (),
    created: bool = False,
) -> list[str]:
    """The changed paths an agent may not keep, sorted. `changed`: path → git's two status
    letters (`gitrepo.changed_paths`). Kept: the `declared` files (what the user's plan names);
    the files the agent `reported` and, with `created`, the files it added, unless protected
    (the agent's own word grants no protected file)."""
    declared = set(declared)
    reported = set(reported)
    refused = []
    for path, status in changed.items():
        if path in declared:
            continue
        new = status == "??" or status[0] == "A"
        if (path in reported or (created and new)) and protected_reason(path) is None:
            continue
        refused.append(path)
    return sorted(refused)


def answer_expansion(
    policy: ScopePolicy,
    prompter: Prompter,
    files: Sequence[str],
    asking: str,
    *,
    repo: Path,
    notes: list[str],
) -> str:
    """APPROVE, REJECT or DEFER for a request to also edit `files` (`asking`: the question a
    person is asked); `notes` says why when the answer is not a person's (a refusal by rule, or
    nobody to ask)."""
    unsafe = [path for path in files if path_problem(repo, path) is not None]
    if unsafe:
        notes.append(f"scope expansion to unsafe paths {unsafe} refused")
        return REJECT
    protected = {path: why for path in files if (why := protected_reason(path)) is not None}
    if protected and policy == "approve":  # a policy never grants them; reject and defer stand
        listed = ", ".join(f"{path} ({why})" for path, why in protected.items())
        notes.append(f"scope expansion to protected files refused without a person: {listed}")
        return REJECT
    if policy != "ask":
        return {"approve": APPROVE, "reject": REJECT, "defer": DEFER}[policy]
    warning = ""
    if protected:
        warning = " — PROTECTED: " + ", ".join(f"{p} is {why}" for p, why in protected.items())
    default = REJECT if protected else APPROVE
    chosen = prompter.ask(question(asking + warning, [APPROVE, REJECT, DEFER], default))
    if chosen is None:
        notes.append("scope expansion needs an answer; deferred (no terminal)")
        return DEFER
    return chosen


__all__ = [
    "APPROVE",
    "DEFER",
    "REJECT",
    "SCOPE_POLICIES",
    "ScopePolicy",
    "answer_expansion",
    "not_granted",
    "protected_reason",
]
