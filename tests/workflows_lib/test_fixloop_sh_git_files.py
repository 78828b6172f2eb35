"""The step library's helpers that read and write git's own files for a step, with fewer
processes than git one call at a time: `fixloop_write_config`, `fixloop_read_config`,
`fixloop_worktree_listed`, and `fixloop_worktrees_dir` given the common dir."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.helpers.gitrepo import UserRepo
from tests.workflows_lib.test_fixloop_sh import bash

from fixloop import gitrepo

# Values a sentinel can hold (paths and branch names are the user's): every character git quotes
# or escapes, and shell text that must stay data.
AWKWARD = [
    "plain",
    "/home/user/my repo/.fixloop/worktrees/r1",
    " leading blank",
    "trailing blank ",
    "semi;colon",
    "hash#mark",
    'a "quoted" word',
    "back\\slash\\",
    "new\nline",
    "tab\there",
    "carriage\rreturn",
    "ends with a carriage return\r",
    "",
    "$(touch pwned) `touch pwned` ${HOME}",
    "ünïcødé",
]


def _pairs(values: list[str]) -> list[str]:
    words: list[str] = []
    for index, value in enumerate(values):
        words += [f"fixloop.key{index}", value]
    return words


def test_a_written_file_is_the_one_git_config_writes(tmp_path: Path) -> None:
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    pairs = _pairs(AWKWARD)
    for name, value in zip(pairs[::2], pairs[1::2], strict=True):
        subprocess.run(["git", "config", "--file", str(theirs), name, value], check=True)

    done = bash('fixloop_write_config "$@"', str(ours), *pairs, cwd=tmp_path)

    assert (done.returncode, done.stderr) == (0, "")
    assert ours.read_bytes() == theirs.read_bytes()
    assert not (tmp_path / "pwned").exists()


def test_every_value_reads_back_exactly(tmp_path: Path) -> None:
    file = tmp_path / "sentinel"
    pairs = _pairs(AWKWARD)
    assert bash('fixloop_write_config "$@"', str(file), *pairs, cwd=tmp_path).returncode == 0

    for index, value in enumerate(AWKWARD):
        got = subprocess.run(
            ["git", "config", "--file", str(file), "--get", f"fixloop.key{index}"],
            capture_output=True,
            check=True,
        ).stdout
        assert got == value.encode() + b"\n", index
    # The runtime reads sentinels with gitpython: the same values for what a sentinel holds.
    assert gitrepo.config_value(file, "fixloop.key1") == AWKWARD[1]
    assert gitrepo.config_value(file, "fixloop.key0") == "plain"

    # `fixloop_read_config` reads them all with one git process, each as `git config --get` does
    # (compared in bash: Python's text mode would turn the carriage returns into newlines).
    script = (
        'fixloop_read_config values "$1"\n'
        'for key in "${!values[@]}"; do\n'
        '  expected="$(git config --file "$1" --get "$key"; printf x)"\n'
        '  [ "${values[$key]}"$\'\\n\'x = "$expected" ] || echo "differs: $key"\n'
        "done\n"
        'echo "${#values[@]}"'
    )
    done = bash(script, str(file), cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"{len(AWKWARD)}\n", "")


def test_sections_are_grouped_and_the_file_replaced(tmp_path: Path) -> None:
    file = tmp_path / "f"
    file.write_text("[old]\n\tstale = yes\n", encoding="utf-8")

    done = bash('fixloop_write_config "$1" a.one 1 a.two 2 b.three 3', str(file), cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert file.read_text(encoding="utf-8") == "[a]\n\tone = 1\n\ttwo = 2\n[b]\n\tthree = 3\n"


@pytest.mark.parametrize(
    "arguments",
    [
        [],
        ["f"],
        ["f", "fixloop.key"],
        ["f", "fixloop.key", "v", "fixloop.other"],
        ["", "fixloop.key", "v"],
    ],
)
def test_write_misuse_is_an_error(tmp_path: Path, arguments: list[str]) -> None:
    done = bash('fixloop_write_config "$@"', *arguments, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == ("fixloop: usage: fixloop_write_config FILE NAME VALUE [NAME VALUE]...\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["key", "Fixloop.key", "fixloop.sub.key", "fixloop.k=y", "-x.y"])
def test_a_name_git_would_write_otherwise_is_refused(tmp_path: Path, name: str) -> None:
    done = bash('fixloop_write_config f "$1" v', name, cwd=tmp_path)
    assert done.returncode == 2
    assert f"'{name}' is not a lower-case section.key" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_key_the_file_lacks_is_an_error_unless_read_with_a_default(tmp_path: Path) -> None:
    file = tmp_path / "f"
    file.write_text("[fixloop]\n\trepo = /r\n\trepo = /last\n\tflag\n", encoding="utf-8")

    required = bash(
        'fixloop_read_config v "$1" fixloop.repo fixloop.branch', str(file), cwd=tmp_path
    )
    optional = bash(
        'fixloop_read_config v "$1" fixloop.repo\n'
        'printf "%s|%s|%s" "${v[fixloop.repo]}" "${v[fixloop.flag]}" "${v[fixloop.branch]-none}"',
        str(file),
        cwd=tmp_path,
    )
    unguarded = bash(
        'fixloop_read_config v "$1"\necho "${v[fixloop.branch]}"', str(file), cwd=tmp_path
    )

    assert (required.returncode, required.stderr) == (
        1,
        f"fixloop: {file} holds no fixloop.branch\n",
    )
    assert (optional.returncode, optional.stdout) == (0, "/last||none"), optional.stderr
    assert unguarded.returncode != 0, "under set -u a missing key stops the step"


@pytest.mark.parametrize(
    "content", [None, '[fixloop]\n\tbad line "\n', "[fixloop\n"], ids=["missing", "bad", "header"]
)
def test_a_file_git_cannot_read_is_an_error(tmp_path: Path, content: str | None) -> None:
    file = tmp_path / "f"
    if content is not None:
        file.write_text(content, encoding="utf-8")
    done = bash('fixloop_read_config v "$1"', str(file), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.endswith(f"fixloop: cannot read {file} (git config: status 128)\n")


@pytest.mark.parametrize(
    "arguments", [[], ["v"], ["v", ""], ["1v", "f"], ["__fixloop_values", "f"]]
)
def test_read_misuse_is_an_error(tmp_path: Path, arguments: list[str]) -> None:
    done = bash('fixloop_read_config "$@"', *arguments, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        "fixloop: usage: fixloop_read_config NAME FILE [KEY]...\n",
    )


# -- fixloop_worktree_listed ----------------------------------------------------------------------


def test_a_worktree_is_listed_by_its_exact_path(user_repo: UserRepo, tmp_path: Path) -> None:
    odd = tmp_path / "odd\nname" / "wt"
    user_repo.git("worktree", "add", "-q", "--detach", str(odd))

    def listed(path: Path | str) -> int:
        return bash('fixloop_worktree_listed "$1"', str(path), cwd=user_repo.path).returncode

    assert listed(user_repo.path) == 0
    assert listed(odd) == 0, "a newline in the path is matched whole"
    assert listed(odd.parent) == 1
    assert listed(tmp_path / "wt") == 1, "the part after the newline alone is no worktree"
    assert listed(f"{odd}/") == 1


def test_a_failed_listing_is_not_taken_for_an_answer(tmp_path: Path) -> None:
    done = bash('fixloop_worktree_listed "$1"', str(tmp_path), cwd=tmp_path)  # not a repository
    assert done.returncode == 2
    assert done.stderr.endswith("fixloop: git worktree list failed (status 128)\n")
    usage = bash("fixloop_worktree_listed", cwd=tmp_path)
    assert (usage.returncode, usage.stderr) == (2, "fixloop: usage: fixloop_worktree_listed PATH\n")


# -- fixloop_worktrees_dir COMMON_DIR -------------------------------------------------------------


def test_a_given_common_dir_names_the_same_folder_without_asking_git(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    common = str(user_repo.path / ".git")
    asked = bash("fixloop_worktrees_dir --create", cwd=user_repo.path)
    given = bash('fixloop_worktrees_dir --create "$1"', common, cwd=tmp_path)  # outside the repo

    assert (asked.returncode, given.returncode) == (0, 0), given.stderr
    assert asked.stdout == given.stdout == f"{user_repo.path / '.fixloop' / 'worktrees'}\n"
    exclude = (user_repo.path / ".git" / "info" / "exclude").read_text(encoding="utf-8")
    assert exclude.count("/.fixloop/") == 1, "added once, found the second time"


def test_an_exclude_line_without_its_newline_is_found(user_repo: UserRepo) -> None:
    exclude = user_repo.path / ".git" / "info" / "exclude"
    exclude.write_text("*.log\n/.fixloop/", encoding="utf-8")  # the user's last line, no newline

    done = bash("fixloop_worktrees_dir --create", cwd=user_repo.path)

    assert done.returncode == 0, done.stderr
    assert exclude.read_text(encoding="utf-8") == "*.log\n/.fixloop/"
