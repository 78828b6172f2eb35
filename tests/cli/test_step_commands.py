"""`fixloop step run`, `recover`, `runs list`, `runs prune` through the real CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import Golden
from tests.helpers.gitrepo import UserRepo

from fixloop.cli.main import build_parser, main

Capture = pytest.CaptureFixture[str]
GOLDENS = Path(__file__).parent / "goldens"


def test_step_run_prints_outputs_and_a_summary(user_repo: UserRepo, capsys: Capture) -> None:
    code = main(["step", "run", "git-protocol", "preflight", "--repo", str(user_repo.path)])
    out, err = capsys.readouterr()
    assert code == 0
    assert out.splitlines() == ["BRANCH=main", "PENDING_RUNS="]
    assert "git-protocol#preflight: ok in" in err and "events.jsonl" in err


def test_step_run_fills_run_id_from_its_run(user_repo: UserRepo, capsys: Capture) -> None:
    code = main(
        ["step", "run", "git-protocol", "setup-worktree", "--repo", str(user_repo.path), "--json"]
    )
    envelope = json.loads(capsys.readouterr().out)
    assert code == 0 and envelope["ok"] and envelope["command"] == "step run"
    assert envelope["items"] == [{"id": "git-protocol#setup-worktree", "status": "passed"}]
    data = envelope["result"]
    assert data["run"] == envelope["run_id"]
    assert data["outputs"]["WORKTREE"].endswith(f"/.fixloop/worktrees/{data['run']}")
    assert Path(data["events"]).is_file()
    assert "git worktree add" in " ".join(data["commands"])
    assert main(["recover", "--repo", str(user_repo.path)]) == 0
    assert "removed worktree" in capsys.readouterr().out


def test_paths_given_as_words_become_the_steps_paths_file(
    user_repo: UserRepo, capsys: Capture
) -> None:
    repo = str(user_repo.path)
    assert main(["step", "run", "git-protocol", "setup-worktree", "--repo", repo, "--json"]) == 0
    worktree = Path(json.loads(capsys.readouterr().out)["result"]["outputs"]["WORKTREE"])
    (worktree / "src" / "app.py").write_text("def add(a, b):\n    return a + b\n")
    (worktree / "src" / "util.py").write_text("changed, not listed\n")
    (worktree / "a b.txt").write_text("new\n")
    common = ["step", "run", "git-protocol", "commit-paths", "--repo", repo]
    inputs = ["--input", f"WORKTREE={worktree}", "--input", "MESSAGE=fix: add adds"]

    code = main([*common, *inputs, "--path", "src/app.py", "--path", "a b.txt"])

    assert code == 0, capsys.readouterr().err
    shown = user_repo.git("-C", str(worktree), "show", "--name-only", "--format=%s", "HEAD")
    assert shown.split()[:1] == ["fix:"] and shown.strip().splitlines()[-2:] == [
        "a b.txt",
        "src/app.py",
    ]
    assert main([*common, *inputs, "--path", "../outside"]) == 1  # the step refuses it
    assert "refusing a path: '../outside'" in capsys.readouterr().err
    assert main(["step", "run", "git-protocol", "preflight", "--repo", repo, "--path", "x"]) == 2
    assert "--path: step preflight takes no PATHS_FILE" in capsys.readouterr().err
    assert main(["recover", "--repo", repo]) == 0


def test_a_failing_step_exits_1_and_says_where(user_repo: UserRepo, capsys: Capture) -> None:
    user_repo.git("checkout", "--quiet", "--detach")
    code = main(["step", "run", "git-protocol", "preflight", "--repo", str(user_repo.path)])
    err = capsys.readouterr().err
    assert code == 1
    assert "HEAD is detached" in err
    assert "git-protocol#preflight: exit 1 after `exit 1`" in err


def test_a_bad_input_is_one_located_line_and_exit_2(user_repo: UserRepo, capsys: Capture) -> None:
    argv = ["step", "run", "git-protocol", "tag", "--repo", str(user_repo.path)]
    code = main([*argv, "--input", "TAG=$(reboot)", "--input", "WORKTREE=x"])
    lines = capsys.readouterr().err.splitlines()
    assert code == 2
    [line] = lines
    assert line.startswith("workflows/git-protocol.md:") or "/workflows/git-protocol.md:" in line
    assert ":1: input: input 'TAG': '$(reboot)' does not match the declared pattern" in line


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--input", "NOEQUALS"], "--input:1:1: usage: expected KEY=VALUE, got 'NOEQUALS'"),
        (["--input", "PATH=/tmp"], "input 'PATH': not allowed as an environment variable name"),
    ],
)
def test_usage_errors_exit_2(
    user_repo: UserRepo, capsys: Capture, argv: list[str], fragment: str
) -> None:
    base = ["step", "run", "git-protocol", "preflight", "--repo", str(user_repo.path)]
    assert main([*base, *argv]) == 2
    assert fragment in capsys.readouterr().err


def test_unknown_step_and_workflow(user_repo: UserRepo, capsys: Capture) -> None:
    assert main(["step", "run", "git-protocol", "nope", "--repo", str(user_repo.path)]) == 2
    assert "unknown-step: no step 'nope' (steps: preflight, setup-worktree," in (
        capsys.readouterr().err
    )
    assert main(["step", "run", "no-such-flow", "x", "--repo", str(user_repo.path)]) == 2
    assert "unknown-workflow" in capsys.readouterr().err


def test_a_workflow_file_outside_the_pack(
    user_repo: UserRepo, tmp_path: Path, capsys: Capture
) -> None:
    document = tmp_path / "mine.md"
    document.write_text(
        "---\nname: mine\ndescription: Mine.\ninputs:\n  WHO: {type: string}\n"
        "outputs:\n  GREETING: A greeting.\n---\n\n"
        "## Greet {#greet}\n\n```bash\nprintf 'GREETING=hello %s\\n' \"$WHO\" >> "
        '"$FIXLOOP_OUTPUT"\n```\n'
    )
    argv = ["step", "run", str(document), "greet", "--repo", str(user_repo.path)]
    assert main([*argv, "--input", "WHO=$(id)"]) == 0
    assert capsys.readouterr().out == "GREETING=hello $(id)\n"


def test_help_texts_explain_the_contract(capsys: Capture) -> None:
    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["step", "run", "--help"])
    text = capsys.readouterr().out
    for needle in ("$FIXLOOP_OUTPUT", "NAME<<EOF", "FIXLOOP_CRASH_AT=STEP:K", "events.jsonl"):
        assert needle in text
    with pytest.raises(SystemExit):
        parser.parse_args(["recover", "--help"])
    text = capsys.readouterr().out
    assert "KEPT" in text and "never touched" in text


def test_runs_list_on_a_fresh_repository(user_repo: UserRepo, capsys: Capture) -> None:
    assert main(["runs", "list", "--repo", str(user_repo.path)]) == 0
    assert capsys.readouterr().out == "no runs recorded\n"


def test_trace_lists_commands_with_their_document_lines(
    user_repo: UserRepo, capsys: Capture
) -> None:
    argv = ["step", "run", "git-protocol", "preflight", "--repo", str(user_repo.path), "--trace"]
    assert main(argv) == 0
    traced = [line for line in capsys.readouterr().err.splitlines() if line.startswith("+ ")]
    assert len(traced) == 9
    assert all(line.startswith("+ workflows/git-protocol.md:") for line in traced)
    assert traced[0].endswith(': . "$FIXLOOP_LIB/fixloop.sh"')
    assert traced[2].endswith(': branch="$(git symbolic-ref --quiet --short HEAD)"')
    assert traced[-1].endswith(': fixloop_output PENDING_RUNS "$pending"')


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["step", "run", "--help"], "step-run-help.txt"),
        (["recover", "--help"], "recover-help.txt"),
        (["runs", "list", "--help"], "runs-list-help.txt"),
        (["runs", "prune", "--help"], "runs-prune-help.txt"),
    ],
)
def test_help_goldens(
    argv: list[str], name: str, golden: Golden, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")  # argparse wraps to the terminal width
    with pytest.raises(SystemExit):
        build_parser().parse_args(argv)
    golden.check(GOLDENS / name, capsys.readouterr().out)


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["step", "run", "git-protocol", "tag", "--help"], "step-run-tag-help.txt"),
        (["step", "run", "git-protocol", "commit-paths", "-h"], "step-run-commit-paths-help.txt"),
        (["step", "run", "review-fix", "auto-re-review", "--help"], "step-run-prose-help.txt"),
        (["step", "list", "git-protocol"], "step-list-git-protocol.txt"),
        (["step", "list", "review-fix"], "step-list-review-fix.txt"),
    ],
)
def test_step_interfaces_are_shown(
    argv: list[str], name: str, golden: Golden, capsys: Capture
) -> None:
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert err == ""
    golden.check(GOLDENS / name, out)


def test_help_before_the_step_is_the_usual_help(capsys: Capture) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["step", "run", "git-protocol", "--help"])
    assert caught.value.code == 0
    assert capsys.readouterr().out.startswith("usage: fixloop step run ")


def test_help_of_an_unknown_step_is_one_located_line(capsys: Capture) -> None:
    assert main(["step", "run", "git-protocol", "nope", "--help"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.endswith(
        ": unknown-step: no step 'nope' (steps: preflight, setup-worktree, tag, "
        "undo-agent-commit, rollback-files, changed-files, commit-paths, export-patch, cleanup,"
        " recover-run)"
    )


def test_an_input_the_step_does_not_take_is_refused(user_repo: UserRepo, capsys: Capture) -> None:
    argv = ["step", "run", "git-protocol", "preflight", "--repo", str(user_repo.path)]
    assert main([*argv, "--input", "RUN_ID=r1"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert (
        ": input: input 'RUN_ID': step 'preflight' does not take it (its interface, line " in line
    )
    assert line.endswith(", takes: none)")


def test_a_required_input_that_is_missing_is_refused_before_bash(
    user_repo: UserRepo, capsys: Capture
) -> None:
    argv = ["step", "run", "git-protocol", "commit-paths", "--repo", str(user_repo.path)]
    assert main([*argv, "--input", "MESSAGE=m", "--input", "PATHS_FILE=/nowhere"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "input 'WORKTREE': step 'commit-paths' requires it (its interface, line " in line
    traces = (user_repo.path / ".git" / "fixloop" / "runs").rglob("events.jsonl")
    events = [json.loads(text) for path in traces for text in path.read_text().splitlines()]
    assert [event for event in events if event["event"] == "step"] == []


def test_runs_prune_says_what_it_removed_and_kept(user_repo: UserRepo, capsys: Capture) -> None:
    for _ in range(3):
        assert (
            main(["step", "run", "git-protocol", "preflight", "--repo", str(user_repo.path)]) == 0
        )
    runs = user_repo.path / ".git" / "fixloop" / "runs"
    capsys.readouterr()
    argv = ["runs", "prune", "--repo", str(user_repo.path), "--keep", "1"]
    assert main([*argv, "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in lines[:3]] == [
        ["would", "remove"],
        ["would", "remove"],
        ["kept", lines[2].split()[1]],
    ]
    assert lines[2].endswith("finished, ended " + lines[2].split("ended ")[1])
    assert "one of the newest 1 finished runs" in lines[2]
    assert lines[-1] == "would remove 2 run folder(s), kept 1"
    assert len(list(runs.iterdir())) == 3
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("removed ") == 3 and out.endswith("removed 2 run folder(s), kept 1\n")
    assert [path.name for path in runs.iterdir()] == [lines[2].split()[1]]


def test_runs_prune_on_a_fresh_repository(user_repo: UserRepo, capsys: Capture) -> None:
    assert main(["runs", "prune", "--repo", str(user_repo.path)]) == 0
    assert capsys.readouterr().out == "removed 0 run folder(s), kept 0\n"


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["--keep", "-1"], "--keep:1:1: usage: expected a whole number >= 0, got '-1'"),
        (["--keep", "two"], "--keep:1:1: usage: expected a whole number >= 0, got 'two'"),
        (["--keep", "1.5"], "--keep:1:1: usage: expected a whole number >= 0, got '1.5'"),
        (
            ["--older-than", "-3"],
            "--older-than:1:1: usage: expected a number of days >= 0, got '-3'",
        ),
        (
            ["--older-than", "nan"],
            "--older-than:1:1: usage: expected a number of days >= 0, got 'nan'",
        ),
        (
            ["--older-than", "inf"],
            "--older-than:1:1: usage: expected a number of days >= 0, got 'inf'",
        ),
    ],
)
def test_runs_prune_bad_values_are_one_line_and_exit_2(
    user_repo: UserRepo, capsys: Capture, argv: list[str], line: str
) -> None:
    assert main(["step", "run", "git-protocol", "preflight", "--repo", str(user_repo.path)]) == 0
    capsys.readouterr()
    assert main(["runs", "prune", "--repo", str(user_repo.path), "--keep", "0", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines() == [line]
    assert len(list((user_repo.path / ".git" / "fixloop" / "runs").iterdir())) == 1


def test_runs_prune_bad_flags_and_repositories_exit_2(tmp_path: Path, capsys: Capture) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["runs", "prune", "--bogus"])
    assert caught.value.code == 2
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err
    assert main(["runs", "prune", "--repo", str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"{tmp_path / 'missing'}:1:1: usage: no such directory"
    ]
    assert main(["runs", "prune", "--repo", str(tmp_path)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"{tmp_path}:1:1: repository: ")
