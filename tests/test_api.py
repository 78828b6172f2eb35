"""The public API: load a pack, run a workflow by name, check documents; all cheap to import."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT
from tests.helpers.gitrepo import UserRepo
from tests.helpers.reviews import APP_FIX, REVIEW_REL, finding, review_text, write_review

import fixloop


def test_importing_fixloop_imports_none_of_its_heavy_parts() -> None:
    heavy = "('git', 'pydantic', 'claude_agent_sdk', 'fixloop.')"
    probe = f"import sys, fixloop; print(sorted(m for m in sys.modules if m.startswith({heavy})))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    # fixloop.lazy is the few lines that import the public names on first use.
    assert done.stdout.strip() == "['fixloop.lazy']"


@pytest.mark.parametrize(
    "module",
    [
        "fixloop.workflows.fix_engine.files",
        "fixloop.workflows.execute_wave.tasks",
        "fixloop.workflows.execute_wave.scoring",
    ],
)
def test_a_model_module_the_step_library_imports_leaves_its_workflow_unloaded(
    module: str,
) -> None:
    # The step library's helpers start an interpreter per step command and import one model
    # module; the workflow package's own imports (documents, jinja2, the git session) would
    # multiply every such start several times over.
    heavy = "('jinja2', 'markdown_it', 'fixloop.documents.pack', 'fixloop.runs.git_session')"
    probe = (
        f"import sys, {module}; "
        f"print(sorted(m for m in sys.modules if m.startswith({heavy}) or m.endswith('.workflow')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_run_a_workflow_by_name_with_events(user_repo: UserRepo) -> None:
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    seen: list[fixloop.Event] = []
    context = fixloop.Context(
        fixloop.load_pack(),
        fixloop.ScriptedBackend({"fixer/CR-01/iteration-1": APP_FIX}),
        fixloop.EventStream(seen.append),
    )
    result = fixloop.run_workflow(
        "review-fix", context, review=user_repo.path / REVIEW_REL, repo=user_repo.path
    )
    assert result.exit_code == 0
    items = [(e.item, e.status) for e in seen if e.kind is fixloop.EventKind.ITEM]
    assert items == [("CR-01", "running"), ("CR-01", "fixed")]


def test_an_unknown_workflow_or_option_is_a_usage_error() -> None:
    context = fixloop.Context(fixloop.load_pack(), fixloop.ScriptedBackend({}))
    with pytest.raises(fixloop.FixloopError, match="no workflow 'tidy' runs headless"):
        fixloop.run_workflow("tidy", context)
    with pytest.raises(fixloop.FixloopError, match=r"options: .*unexpected keyword argument"):
        fixloop.run_workflow("review-fix", context, reviw=Path("x"))


def test_check_reports_on_a_pack() -> None:
    result = fixloop.check([REPO_ROOT / "workflows" / "git-protocol.md"])
    assert [d for d in result.diagnostics if d.severity == "error"] == []


def test_every_public_name_resolves() -> None:
    for name in fixloop.__all__:
        assert getattr(fixloop, name) is not None


def test_load_pack_takes_a_string_or_says_in_one_line_what_is_wrong(tmp_path: Path) -> None:
    assert set(fixloop.load_pack(str(REPO_ROOT)).agents) == set(fixloop.load_pack().agents)
    for folder, problem in ((tmp_path, "not a pack"), (tmp_path / "none", "no such folder")):
        with pytest.raises(fixloop.FixloopError) as caught:
            fixloop.load_pack(str(folder))
        assert caught.value.exit_code == 2
        (diagnostic,) = caught.value.diagnostics
        assert problem in diagnostic.message


def test_every_dotted_name_the_readme_and_docs_give_imports() -> None:
    """`fixloop.extras.testing.messages_server.MessagesServer` and the like, where a reader
    would copy them from."""
    pages = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
    named = {
        match
        for page in pages
        for match in re.findall(r"`(fixloop(?:\.[a-z_]+)+\.[A-Z]\w+)`", page.read_text())
    }
    assert "fixloop.extras.testing.messages_server.MessagesServer" in named
    for dotted in sorted(named):
        module, _, name = dotted.rpartition(".")
        assert hasattr(importlib.import_module(module), name), dotted
