"""`bash -n` in batches: which blocks bash refuses, found in few processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fixloop.checker import bash_n
from fixloop.checker.bash_n import refusals


def test_bash_refusals_are_found_in_batches_down_to_the_single_block() -> None:
    blocks = ["echo ok"] * 40 + ['echo "${x:-`y}"'] + ["true"] * 40 + ["if x; then\n:\nfiif"]
    found = refusals(blocks)
    assert sorted(found) == [40, 81]
    assert found[40].line == 1


def test_bash_is_asked_without_the_subprocess_module(tmp_path: Path) -> None:
    # In a fresh interpreter, as `fixloop check` runs; tree-sitter reads this block cleanly, so
    # only bash itself can refuse it.
    document = tmp_path / "quote.md"
    document.write_text('# q\n\n```bash\necho "${x:-`y}"\n```\n', encoding="utf-8")
    probe = (
        "import sys\n"
        "from fixloop.cli.main import main\n"
        "code = main(sys.argv[1:])\n"
        "print(code, 'subprocess' in sys.modules, file=sys.__stderr__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "check", str(document)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "quote.md:4:1: bash-syntax: " in done.stdout, done.stdout
    assert done.stderr.split()[-2:] == ["1", "False"], done.stderr


def test_a_bash_past_its_deadline_is_killed_and_its_verdict_left_to_tree_sitter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bash_n, "_TIMEOUT", 0)
    assert bash_n._run("echo ok") == (False, None)
    assert refusals(["if x; then"]) == {}  # no answer from bash: nothing it refused


def test_a_large_script_and_bash_not_reading_it_all_end_without_a_stall() -> None:
    # More than a pipe holds, written while bash's complaint is read; then bash stops reading at
    # its first line and exits, and the rest of the script is not written.
    assert bash_n._run("echo ok\n" * 200_000) == (True, None)
    ran, complaint = bash_n._run("if\n" + "echo ok\n" * 200_000)
    assert ran and complaint is not None and "syntax error" in complaint
