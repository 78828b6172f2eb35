"""A scripted agent's shell that plants git configuration to run its own code on the host.

Each planted program, should it ever run, touches a marker file in `marks` (a host folder the
sandboxes cannot write: under bwrap `/tmp` is private, under docker it is not mounted). A test
runs a workflow with `plant_commands(...)` as a fixer's shell and asserts `ran(marks) == []`.
Only shell built-ins and `printf`: the docker test image has no git.
"""

from __future__ import annotations

from pathlib import Path

HOOKS = ("pre-commit", "post-commit", "post-checkout", "reference-transaction", "post-index-change")


def _config(marks: Path) -> str:
    def run(name: str, then: str) -> str:
        return f'"touch {marks}/{name}; {then}"'

    return (
        "[core]\n"
        f"\tfsmonitor = {run('fsmonitor', 'false')}\n"
        f"\tpager = {run('pager', 'cat')}\n"
        '[filter "planted"]\n'
        f"\tclean = {run('filter-clean', 'cat')}\n"
        f"\tsmudge = {run('filter-smudge', 'cat')}\n"
        '[diff "planted"]\n'
        f"\ttextconv = {run('textconv', 'cat')}\n"
    )


def plant_commands(marks: Path, tree: str = ".") -> list[str]:
    """Shell lines appending fsmonitor, pager, filter and textconv to `tree`'s git config, hooks
    to its hooks folder, and attributes naming the drivers (each line may fail: a sandbox that
    protects `.git` refuses the writes)."""
    git = f"{tree}/.git"
    hook = f'#!/bin/sh\\ntouch {marks}/hook-$(basename "$0")\\n'
    lines = [
        # In a linked worktree `.git` is a file; its config is the repository's, out of reach.
        f"if [ -d {git} ]; then printf '%s' '{_config(marks)}' >> {git}/config; fi",
        f"printf '* filter=planted diff=planted\\n' >> {tree}/.gitattributes",
    ]
    for name in HOOKS:
        lines.append(
            f"if [ -d {git} ]; then printf '{hook}' > {git}/hooks/{name} "
            f"&& chmod +x {git}/hooks/{name}; fi"
        )
    return lines


def redirect_gitfile(marks: Path, tree: str = ".") -> list[str]:
    """Shell lines replacing a linked worktree's `.git` file by a pointer to a git folder the
    agent built, whose config runs a planted fsmonitor."""
    fake = f"{tree}/.planted-git"
    return [
        f"mkdir -p {fake}/objects {fake}/refs/heads",
        f"printf 'ref: refs/heads/planted\\n' > {fake}/HEAD",
        f"printf '%s' '{_config(marks)}' > {fake}/config",
        f"printf 'gitdir: %s\\n' \"$(pwd)/{fake}\" > {tree}/.git",
    ]


def ran(marks: Path) -> list[str]:
    """The planted programs that ran (their marker files)."""
    return sorted(path.name for path in marks.iterdir())


__all__ = ["HOOKS", "plant_commands", "ran", "redirect_gitfile"]
