"""Adding a workflow is one package, one document and one registry row.

`tests/workflows/kernel/stamp/` is a workflow the product does not have: its package and its
document. The test adds its row to the registry and nothing else; `fixloop stamp` then exists,
with its help and flags built from `StampOptions`, runs through the kernel for real (real git, a
real step of its document), and prints the same `--json` envelope every workflow prints.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.helpers.gitrepo import git
from tests.workflows.kernel.stamp import DOCUMENT

from fixloop.cli.main import main
from fixloop.documents.pack import default_pack_root
from fixloop.workflows.registry import WORKFLOWS, Entry, add_workflow

ROW = Entry(
    "tests.workflows.kernel.stamp",
    "Stamp",
    "StampOptions",
    help="count the words of a note",
    description="Count the words of one note in the repository; change nothing.",
)


@pytest.fixture
def stamp() -> Iterator[None]:
    add_workflow("stamp", ROW)
    yield
    del WORKFLOWS["stamp"]


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    """The bundled pack with the stamp document beside its own (and its git protocol)."""
    root = tmp_path / "pack"
    shutil.copytree(default_pack_root(), root)
    shutil.copy(DOCUMENT, root / "workflows" / DOCUMENT.name)
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "note.md").write_text("three small words\n", encoding="utf-8")
    git(root, "add", "--", "note.md")
    git(root, "commit", "-q", "-m", "a note")
    return root


def _run(args: list[str], pack: Path, repo: Path, tmp_path: Path) -> list[str]:
    script = tmp_path / "script.yaml"
    script.write_text("{}\n", encoding="utf-8")  # stamp dispatches no role
    return [
        "stamp",
        *args,
        "--repo",
        str(repo),
        "--pack",
        str(pack),
        "--script",
        str(script),
        "--sandbox",
        "local",
    ]


@pytest.mark.usefixtures("stamp")
def test_its_help_comes_from_the_row_and_the_options_model(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["stamp", "--help"])
    assert done.value.code == 0
    shown = capsys.readouterr().out
    assert ROW.description in shown
    assert "NOTE" in shown and "the note whose words are counted" in shown
    assert "--min-words N" in shown and "a note with fewer words falls short" in shown
    for shared in ("--repo REPO", "--backend NAME", "--script", "--sandbox", "--pack", "--json"):
        assert shared in shown, shared
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "count the words of a note" in capsys.readouterr().out


@pytest.mark.usefixtures("stamp")
def test_it_runs_through_the_generic_command_with_the_one_envelope(
    pack: Path, repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*_run(["note.md"], pack, repo, tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is True and out["command"] == "stamp" and out["exit_code"] == 0
    assert out["items"] == [{"id": "note.md", "status": "counted", "words": 3}]
    assert out["counts"] == {"counted": 1}
    assert out["run_id"] and out["result"]["run_id"] == out["run_id"]
    assert (repo / ".git" / "fixloop" / "runs" / out["run_id"]).is_dir()

    # A flag of its own, with the exit code every workflow has: an item fell short, exit 1.
    assert main(_run(["note.md", "--min-words", "4"], pack, repo, tmp_path)) == 1
    said = capsys.readouterr().out
    assert "1 item(s), 1 fell short" in said and "note.md: too-short" in said


@pytest.mark.usefixtures("stamp")
def test_its_bad_input_is_one_line_and_exit_2(
    pack: Path, repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main(_run(["note.md", "--min-words", "0"], pack, repo, tmp_path))
    assert done.value.code == 2
    assert "argument --min-words: expected 1 or more, got 0" in capsys.readouterr().err
    assert main(_run(["../outside.md"], pack, repo, tmp_path)) == 2
    err = capsys.readouterr().err
    assert "unsafe-path" in err and "Traceback" not in err


def test_without_its_row_there_is_no_such_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["stamp", "--help"])
    assert done.value.code == 2
    assert "invalid choice: 'stamp'" in capsys.readouterr().err
