"""`check_paths`: which documents a path means, and the pack fixloop ships."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT

from fixloop.checker.checking import check_paths
from fixloop.diagnostics import FixloopError, Severity

from .conftest import FIXTURES, copy_pack


def test_the_bundled_pack_keeps_every_contract() -> None:
    result = check_paths([REPO_ROOT], base=REPO_ROOT)
    errors = [d.format() for d in result.diagnostics if d.severity is Severity.ERROR]
    assert errors == []
    assert len(result.contracts) >= 40
    kinds = {c.kind for _, c in result.contracts}
    assert kinds == {"order", "count", "guarded", "forbidden", "required", "cleanup", "says"}


def test_paths_name_packs_folders_documents_and_sidecars(tmp_path: Path) -> None:
    foreign = FIXTURES / "foreign"
    by_folder = check_paths([foreign / "agents"], base=FIXTURES)
    by_sidecar = check_paths([foreign / "agents" / "code-fixer.contracts.yaml"], base=FIXTURES)
    by_document = check_paths([foreign / "agents" / "code-fixer.md"], base=FIXTURES)
    assert [d.display for d in by_folder.documents] == ["foreign/agents/code-fixer.md"]
    assert [d.display for d in by_sidecar.documents] == [d.display for d in by_document.documents]
    with pytest.raises(FixloopError) as error:
        check_paths([tmp_path / "nowhere"], base=tmp_path)
    assert error.value.exit_code == 2
    assert error.value.diagnostics[0].format() == "nowhere:1:1: usage: no such file or directory"


def test_removing_the_ff_only_merge_is_reported_at_the_right_lines(tmp_path: Path) -> None:
    pack = copy_pack(tmp_path / "pack")
    path = pack / "workflows" / "git-protocol.md"
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    merge = next(i for i, line in enumerate(lines) if "merge --ff-only" in line) + 1
    delete = next(i for i, line in enumerate(lines) if "branch --quiet -D" in line) + 1
    heading = next(i for i, line in enumerate(lines) if line.endswith("{#cleanup}")) + 1
    path.write_text(text.replace("merge --ff-only --quiet", "merge --quiet"), encoding="utf-8")
    found = {(d.path, d.line, d.rule) for d in check_paths([pack], base=pack).diagnostics}
    assert ("workflows/git-protocol.md", heading, "exactly-one-ff-only-merge") in found
    assert ("workflows/git-protocol.md", delete, "branch-deleted-only-after-ff-success") in found
    assert merge < delete


def test_a_git_stash_in_the_fix_brief_is_reported_in_the_brief(tmp_path: Path) -> None:
    pack = copy_pack(tmp_path / "pack")
    path = pack / "agents" / "fixer.md"
    text = path.read_text(encoding="utf-8")
    marker = 'for file in "${touched_files[@]}"; do\n'
    path.write_text(text.replace(marker, "git stash\n" + marker, 1), encoding="utf-8")
    line = text[: text.index(marker)].count("\n") + 1
    found = {(d.path, d.line, d.rule) for d in check_paths([pack], base=pack).diagnostics}
    assert ("agents/fixer.md", line, "fix-briefs-forbid-tree-wide-git") in found


def test_contract_reasons_speak_of_the_product_not_of_their_history() -> None:
    """Provenance (seed numbers, upstream issues) lives in docs/provenance.md, not in messages."""
    result = check_paths([REPO_ROOT], base=REPO_ROOT)
    leaks = [
        f"{c.origin}:{c.line}: {c.spec.why}"
        for _, c in result.contracts
        if re.search(r"\bseed\b|\bGSD\b|#\d", c.spec.why, re.IGNORECASE)
    ]
    assert leaks == []


def test_a_brief_that_does_not_load_is_not_a_second_problem(tmp_path: Path) -> None:
    pack = copy_pack(tmp_path / "pack")
    fixer = pack / "agents" / "fixer.md"
    fixer.write_text(fixer.read_text().replace("model: opus", "model: [opus", 1))
    result = check_paths([pack], base=pack)
    errors = [d.format() for d in result.diagnostics if d.severity is Severity.ERROR]
    assert len(errors) == 1 and errors[0].startswith("agents/fixer.md:"), errors
    assert "not found" not in "".join(errors)
    assert result.folded > 0  # the briefs contracts and references that need the fixer


def test_one_finding_of_two_workflows_contracts_is_one_line(tmp_path: Path) -> None:
    pack = tmp_path / "pack"
    (pack / "agents").mkdir(parents=True)
    (pack / "workflows").mkdir()
    (pack / "agents" / "fixer.md").write_text(
        "---\nname: fixer\ndescription: d\n---\n\n```bash\ngit stash\n```\n", encoding="utf-8"
    )
    for name, why in (("one", "the tree is the user's"), ("two", "never stash")):
        (pack / "workflows" / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: d\nagents: [fixer]\ncontracts:\n"
            f"  - {{id: {name}-no-stash, why: {why}, forbidden: git stash, in: briefs}}\n---\n",
            encoding="utf-8",
        )
    found = [d for d in check_paths([pack], base=tmp_path).diagnostics if "stash" in d.message]
    assert len(found) == 1, [d.format() for d in found]
    assert found[0].rule == "one-no-stash" and found[0].message.endswith("[also two-no-stash]")


def test_the_public_entry_returns_the_report() -> None:
    from fixloop.checker import check

    result = check([FIXTURES / "defects"], base=FIXTURES)
    assert [d.rule for d in result.diagnostics][:1] == ["unexported-env"]
    assert result.documents and "unexported-env" in result.rule_help
    with pytest.raises(FixloopError):
        check(["no/such/pack"])
