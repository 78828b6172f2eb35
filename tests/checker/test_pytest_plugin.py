"""The pytest plugin: one item per contract, and nothing at all where no contract is declared."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import FIXTURES, workflow


def pytest_in(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_repository_without_contracts_sees_no_items_and_no_errors(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("---\ntitle: notes\n---\n\n```bash\nrm -rf /\n```\n")
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert True\n")
    result = pytest_in(tmp_path)
    assert result.returncode == 0, result.stdout
    assert "1 passed" in result.stdout
    assert "notes.md" not in result.stdout


def test_each_contract_is_an_item_named_after_it(tmp_path: Path) -> None:
    (tmp_path / "workflows").mkdir()
    text = workflow({"merge": "git merge --no-edit x\ngit tag baseline"})
    (tmp_path / "workflows" / "wave.md").write_text(text)
    (tmp_path / "workflows" / "wave.contracts.yaml").write_text(
        "contracts:\n"
        "  - {id: tag-before-merge, why: rollback needs it, order: [git tag, git merge]}\n"
        "  - {id: no-stash, forbidden: git stash}\n"
    )
    result = pytest_in(tmp_path)
    assert result.returncode == 1
    assert "workflows/wave.md::tag-before-merge FAILED" in result.stdout
    assert "workflows/wave.md::no-stash PASSED" in result.stdout
    assert "contract tag-before-merge is violated (rollback needs it):" in result.stdout
    assert "workflows/wave.md:11:1: tag-before-merge: `git merge --no-edit x` can run" in (
        result.stdout
    )


def test_broken_declarations_fail_one_item_not_the_collection(tmp_path: Path) -> None:
    (tmp_path / "doc.md").write_text(workflow({"a": "echo"}))
    (tmp_path / "doc.contracts.yaml").write_text("contracts:\n  - {id: x}\n")
    result = pytest_in(tmp_path)
    assert result.returncode == 1
    assert "doc.md::contract-spec FAILED" in result.stdout
    assert "error" not in result.stdout.splitlines()[-1]


def test_the_foreign_pack_passes_and_can_be_switched_off(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign"
    shutil.copytree(FIXTURES / "foreign", foreign)
    result = pytest_in(foreign, "-o", "fixloop_generic_rules=true")
    assert result.returncode == 0, result.stdout
    assert "10 passed" in result.stdout  # 8 contracts, generic rules, the pack's own rules
    off = pytest_in(foreign, "-o", "fixloop_contracts=false")
    assert "no tests ran" in off.stdout


def test_pack_errors_and_orphan_sidecars_fail_items(tmp_path: Path) -> None:
    pack = tmp_path / "team"
    (pack / ".claude-plugin").mkdir(parents=True)
    (pack / ".claude-plugin" / "plugin.json").write_text('{"name": "team"}\n')
    (pack / "agents").mkdir()
    (pack / "agents" / "ok.md").write_text("---\nname: ok\ndescription: Fine.\n---\nBody.\n")
    (pack / "agents" / "bad.md").write_text("---\nname: 7\ndescription: d\n---\nBody.\n")
    (pack / "agents" / "gone.contracts.yaml").write_text("contracts: []\n")
    result = pytest_in(pack, "agents/")
    assert result.returncode == 1
    assert "agents/ok.md::pack PASSED" in result.stdout
    assert "agents/bad.md::pack FAILED" in result.stdout
    assert "agents/bad.md:2:1: frontmatter: name: expected text, got 7" in result.stdout
    assert "agents/gone.contracts.yaml::orphan FAILED" in result.stdout
