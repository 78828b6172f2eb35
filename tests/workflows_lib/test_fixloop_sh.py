"""The shared step library, `workflows/lib/fixloop.sh`, run by real bash (the safe-path rule has its
own table: tests/steps/safe_path_cases.yaml)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT
from tests.helpers.gitrepo import UserRepo

from fixloop import hostgit
from fixloop.steps.outputs import parse_outputs

LIBRARY = REPO_ROOT / "workflows" / "lib"


def bash(
    script: str, *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`script` after sourcing the library, as a step runs: strict mode, FIXLOOP_LIB set."""
    full = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "FIXLOOP_LIB": str(LIBRARY)}
    return subprocess.run(
        [
            "bash",
            "--noprofile",
            "--norc",
            "-euo",
            "pipefail",
            "-c",
            '. "$FIXLOOP_LIB/fixloop.sh"\n' + script,
            "lib",
            *args,
        ],
        cwd=cwd,
        env=full | (env or {}),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_sourcing_defines_functions_and_runs_nothing(tmp_path: Path) -> None:
    done = bash("declare -F", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    names = sorted(line.split()[-1] for line in done.stdout.splitlines())
    assert names == [
        "__fixloop_records",
        "fixloop_index_from_head",
        "fixloop_output",
        "fixloop_read_config",
        "fixloop_read_paths",
        "fixloop_refuse_unsafe_path",
        "fixloop_sandboxed",
        "fixloop_worktree_listed",
        "fixloop_worktrees_dir",
        "fixloop_write_config",
    ]
    assert "declare -ft fixloop_index_from_head" in done.stdout  # traced: its git commands count
    assert list(tmp_path.iterdir()) == []


# -- fixloop_read_paths ---------------------------------------------------------------------------


def _read(tmp_path: Path, data: bytes) -> list[str]:
    listing = tmp_path / "paths"
    listing.write_bytes(data)
    done = bash(
        'files=()\nfixloop_read_paths files "$1"\nprintf "%s\\n" "${#files[@]}"\n'
        'for f in "${files[@]}"; do printf "<%s>" "$f"; done',
        str(listing),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    count, _, shown = done.stdout.partition("\n")
    items = shown[1:-1].split("><") if shown else []
    assert len(items) == int(count)
    return items


@pytest.mark.parametrize(
    ("data", "paths"),
    [
        (b"", []),
        (b"a.py\0", ["a.py"]),
        (b"a b.py\0-x\0new\nline\0*\0", ["a b.py", "-x", "new\nline", "*"]),
        (b"first\0last-without-nul", ["first", "last-without-nul"]),
        (b"\xc3\xa9t\xc3\xa9.txt\0", ["été.txt"]),
    ],
)
def test_a_nul_separated_list_becomes_an_array(
    tmp_path: Path, data: bytes, paths: list[str]
) -> None:
    assert _read(tmp_path, data) == paths


def test_a_missing_list_or_a_bad_name_is_an_error(tmp_path: Path) -> None:
    done = bash('files=()\nfixloop_read_paths files "$1"', str(tmp_path / "none"), cwd=tmp_path)
    assert done.returncode == 1 and "cannot read the path list" in done.stderr
    done = bash('fixloop_read_paths "bad name" /dev/null', cwd=tmp_path)
    assert done.returncode == 2 and "usage: fixloop_read_paths NAME FILE" in done.stderr


# -- fixloop_output -------------------------------------------------------------------------------

VALUES = [
    "",
    "plain",
    "a=b<<c",
    "two\nlines",
    "trailing newline\n",
    "\n",
    "\n\nleading",
    "tab\there",
    "  spaces  ",
    "$(not run) `nor this`",
    "FIXLOOP_EOF is fine inside a line",
    "ünïcödé",
]


@pytest.mark.parametrize("value", VALUES)
def test_the_runtime_reads_back_exactly_what_was_written(tmp_path: Path, value: str) -> None:
    output = tmp_path / "output"
    output.touch()
    done = bash(
        'fixloop_output VALUE "$1"\nfixloop_output NEXT after',
        value,
        cwd=tmp_path,
        env={"FIXLOOP_OUTPUT": str(output)},
    )
    assert done.returncode == 0, done.stderr
    assert parse_outputs(output.read_text()) == {"VALUE": value, "NEXT": "after"}
    single = "\n" not in value
    assert output.read_text().startswith("VALUE=" if single else "VALUE<<FIXLOOP_EOF\n")


@pytest.mark.parametrize("value", ["FIXLOOP_EOF", "x\nFIXLOOP_EOF\nFORGED=1", "a\nFIXLOOP_EOF"])
def test_a_value_that_would_end_itself_early_is_refused(tmp_path: Path, value: str) -> None:
    output = tmp_path / "output"
    output.touch()
    done = bash(
        'fixloop_output VALUE "$1"', value, cwd=tmp_path, env={"FIXLOOP_OUTPUT": str(output)}
    )
    if "\n" not in value:  # a single line is written as NAME=value: nothing to end early
        assert done.returncode == 0 and parse_outputs(output.read_text()) == {"VALUE": value}
        return
    assert done.returncode == 1 and "holds the line FIXLOOP_EOF" in done.stderr
    assert output.read_text() == ""


def test_output_misuse_is_an_error(tmp_path: Path) -> None:
    done = bash("fixloop_output 1BAD x", cwd=tmp_path, env={"FIXLOOP_OUTPUT": "/dev/null"})
    assert done.returncode == 2 and "usage: fixloop_output NAME VALUE" in done.stderr
    done = bash("fixloop_output GOOD x", cwd=tmp_path)
    assert done.returncode == 1 and "FIXLOOP_OUTPUT is not set" in done.stderr


# -- fixloop_index_from_head ----------------------------------------------------------------------


def _index(user_repo: UserRepo, *args: str) -> list[str]:
    """`git diff --cached --name-status HEAD` of the index the helper built (with `args`)."""
    index = user_repo.path / ".git" / "scratch-index"
    done = bash('fixloop_index_from_head "$@"', str(index), *args, cwd=user_repo.path)
    assert done.returncode == 0, done.stderr
    listed = subprocess.run(
        ["git", "diff", "--cached", "--name-status", "HEAD"],
        cwd=user_repo.path,
        env=os.environ | {"GIT_INDEX_FILE": str(index)},
        capture_output=True,
        text=True,
        check=True,
    )
    return listed.stdout.splitlines()


def test_the_index_holds_head_and_exactly_the_listed_paths(user_repo: UserRepo) -> None:
    (user_repo.path / "src" / "app.py").write_text("changed\n")
    (user_repo.path / "new file.txt").write_text("new\n")
    (user_repo.path / "*.py").write_text("a file named *.py\n")
    before = user_repo.user_work()
    listing = user_repo.path.parent / "list"
    listing.write_bytes(b"new file.txt\0*.py\0")
    assert _index(user_repo, str(listing)) == ["A\t*.py", "A\tnew file.txt"]
    listing.write_bytes(b"")
    assert _index(user_repo, str(listing)) == []
    everything = _index(user_repo)
    assert {"A\t*.py", "A\tnew file.txt", "M\tsrc/app.py", "M\tREADME.md"} <= set(everything)
    assert user_repo.user_work() == before  # the tree's own index and files never move


def test_index_misuse_is_an_error(tmp_path: Path) -> None:
    done = bash("fixloop_index_from_head", cwd=tmp_path)
    assert done.returncode == 2 and "usage: fixloop_index_from_head INDEX [LIST]" in done.stderr


def test_the_repository_is_the_root_when_no_worktree_is_set(user_repo: UserRepo) -> None:
    (user_repo.path / "src" / "out").symlink_to(user_repo.path.parent)
    inside = user_repo.path / "src"
    assert bash('fixloop_refuse_unsafe_path "$1"', "app.py", cwd=inside).returncode == 0
    done = bash('fixloop_refuse_unsafe_path "$1"', "src/out/x", cwd=inside)
    assert done.returncode == 1
    assert done.stderr == (
        "fixloop: refusing a path: 'src/out/x': passes through the symbolic link src/out\n"
    )


def test_sandboxed_runs_the_argv_directly_without_a_launcher(tmp_path: Path) -> None:
    done = bash('fixloop_sandboxed printf "%s|" "$@"', "a b", "$(c)", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "a b|$(c)|")


def test_sandboxed_hands_the_argv_to_the_launcher_as_words(tmp_path: Path) -> None:
    launcher = tmp_path / "launcher"
    launcher.write_text('#!/bin/sh\nprintf "via launcher:"; printf " [%s]" "$@"; exit 7\n')
    launcher.chmod(0o755)
    script = 'code=0; fixloop_sandboxed printf "%s" "$@" || code=$?; echo " $code"'
    done = bash(script, "a b", "$(c)", cwd=tmp_path, env={"FIXLOOP_SANDBOX": str(launcher)})
    assert done.stdout == "via launcher: [printf] [%s] [a b] [$(c)] 7\n"


def test_sandboxed_without_a_command_is_an_error(tmp_path: Path) -> None:
    done = bash("fixloop_sandboxed", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == "fixloop: fixloop_sandboxed: no command given\n"


# -- fixloop_worktrees_dir ------------------------------------------------------------------------


def test_the_worktrees_folder_is_outside_git_and_the_same_in_python(user_repo: UserRepo) -> None:
    common = user_repo.path / ".git"
    worktree = user_repo.path / "sub"
    user_repo.git("worktree", "add", "-q", "--detach", str(worktree))
    before = user_repo.user_work()

    named = bash("fixloop_worktrees_dir", cwd=user_repo.path)
    from_a_worktree = bash("fixloop_worktrees_dir", cwd=worktree)

    folder = user_repo.path / ".fixloop" / "worktrees"
    assert named.stdout == from_a_worktree.stdout == f"{folder}\n", named.stderr
    assert hostgit.run_worktree_folders(common)[0] == folder
    assert not folder.exists(), "naming the folder creates nothing"
    assert user_repo.user_work() == before


def test_create_makes_the_folder_and_hides_it_from_git_status(user_repo: UserRepo) -> None:
    exclude = user_repo.path / ".git" / "info" / "exclude"
    exclude.write_text("# mine\n*.log", encoding="utf-8")  # the user's, with no last newline
    status = user_repo.git("status", "--porcelain", "--untracked-files=all")

    for _ in range(2):
        done = bash("fixloop_worktrees_dir --create", cwd=user_repo.path)
        assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.strip())
    user_repo.git("worktree", "add", "-q", "--detach", str(folder / "r1"))

    assert folder == user_repo.path / hostgit.WORKTREES_FOLDER
    assert exclude.read_text(encoding="utf-8") == f"# mine\n*.log\n{hostgit.EXCLUDE_LINE}\n"
    assert user_repo.git("status", "--porcelain", "--untracked-files=all") == status
    listed = user_repo.git("ls-files", "--others", "--exclude-standard")
    assert ".fixloop" not in listed


def test_a_repository_whose_git_folder_is_elsewhere_keeps_them_in_the_state_folder(
    tmp_path: Path,
) -> None:
    tree, gitdir = tmp_path / "tree", tmp_path / "store.git"
    subprocess.run(["git", "init", "-q", f"--separate-git-dir={gitdir}", str(tree)], check=True)

    done = bash("fixloop_worktrees_dir --create", cwd=tree)

    assert done.stdout == f"{gitdir}/fixloop/worktrees\n", done.stderr
    assert hostgit.run_worktree_folders(gitdir) == (gitdir / "fixloop" / "worktrees",)
    assert not (gitdir / "info" / "exclude").read_text(encoding="utf-8").count("fixloop")
    assert not (tree / ".fixloop").exists()


def test_worktrees_dir_misuse_is_an_error(tmp_path: Path) -> None:
    done = bash("fixloop_worktrees_dir --make", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        "fixloop: usage: fixloop_worktrees_dir [--create] [COMMON_DIR]\n",
    )
