"""The contract language: declarations are validated and every mistake is located."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.checker.checking import check_paths

from .conftest import CheckText, rules, workflow

DOC = workflow({"a": "git tag x"})


@pytest.mark.parametrize(
    ("sidecar", "line", "message"),
    [
        ("contracts:\n  - {id: x}\n", 2, "exactly one of order, count"),
        ("contracts:\n  - {id: x, required: a, forbidden: b}\n", 2, "found: forbidden, required"),
        ("contracts:\n  - {id: Bad_Id, required: a}\n", 2, "kebab-case"),
        ("contracts:\n  - {id: -lead, required: a}\n", 2, "kebab-case"),
        ("contracts:\n  - {id: caf\u00e9, required: a}\n", 2, "kebab-case"),
        ("contracts:\n  - {id: x, count: a}\n", 2, "count takes exactly"),
        ("contracts:\n  - {id: x, guarded: a}\n", 2, "guarded needs by"),
        ("contracts:\n  - {id: x, order: [a]}\n", 2, "at least two"),
        (
            "contracts:\n  - {id: x, required: a, wen: success}\n",
            2,
            "contracts[0]: unknown key 'wen' (did you mean 'when'?)",
        ),
        ("contracts:\n  - {id: bash-syntax, required: a}\n", 2, "the id of a rule fixloop"),
        ("contracts:\n  - {id: undeclared-output, required: a}\n", 2, "the id of a rule"),
        ("contracts:\n  - {id: size-budget, required: a}\n", 2, "the id of a rule"),
        ('\n\ncontracts:\n  - {id: x, required: "git \'open"}\n', 4, "No closing quotation"),
        ("commands:\n  a: [b]\n  b: a\ncontracts:\n  - {id: x, required: a}\n", 5, "itself"),
        ("contracts:\n  - {id: x, required: a}\n  - {id: x, required: b}\n", 3, "duplicate"),
        ("checker:\n  steps: columns\n", 2, "checker.steps"),
        ("contracts: [\n", 2, "invalid YAML"),
        ("contracts:\n  - {id: x, says: []}\n", 2, "says takes a sentence"),
        ("contracts:\n  - {id: x, says: hi, in: {step: a}}\n", 2, "reads the whole document"),
    ],
)
def test_mistakes_are_reported_at_their_line(
    check_text: CheckText, sidecar: str, line: int, message: str
) -> None:
    found = [d for d in check_text(DOC, sidecar) if d.rule == "contract-spec"]
    assert [d.line for d in found] == [line]
    assert message in found[0].message
    assert found[0].path.endswith("doc.contracts.yaml")


def test_frontmatter_and_sidecar_merge(check_text: CheckText) -> None:
    front = (
        "checker:\n  commands: {tagging: git tag}\ncontracts:\n  - {id: tags, required: tagging}\n"
    )
    sidecar = "contracts:\n  - {id: no-push, forbidden: git push}\n"
    text = workflow({"a": "git push"}, front)
    assert rules(check_text(text, sidecar)) == [("tags", 9), ("no-push", 15)]


def test_a_reason_cut_by_a_comment_is_a_warning(check_text: CheckText) -> None:
    sidecar = (
        "contracts:\n"
        "  - id: cut\n    why: keeps the sentinel (see #12)\n    required: git tag\n"
        '  - id: kept\n    why: "keeps the sentinel (see #12)"\n    required: git tag\n'
    )
    found = [d for d in check_text(DOC, sidecar) if d.rule == "contract-spec"]
    assert [(d.line, str(d.severity)) for d in found] == [(3, "warning")]
    assert "quote the whole reason" in found[0].message


SECTIONS = """---
name: doc
description: A document in sections.
---

# Doc

## Set up {#setup}

```bash
git worktree add -b "$b" "$wt" HEAD
```

**Cleanup tail:**

```bash
git worktree remove --force "$wt"
```
"""
ENV = "checker:\n  env: [b, wt]\n"


def test_a_label_scope_follows_the_label_s_words(check_text: CheckText) -> None:
    contract = ENV + (
        "contracts:\n  - {id: tail-removes, required: git worktree remove,"
        " in: {step: setup, label: cleanup}}\n"
    )
    assert check_text(SECTIONS, contract) == []
    reworded = SECTIONS.replace("**Cleanup tail:**", "**Cleanup, whatever happened:**")
    assert check_text(reworded, contract) == []
    gone = check_text(SECTIONS.replace("**Cleanup tail:**", "Then:"), contract)
    assert rules(gone) == [("contract-scope", 4)]
    assert "no block labelled 'cleanup' in step setup" in gone[0].message
    emptied = SECTIONS.replace('git worktree remove --force "$wt"', 'echo "$wt"')
    assert rules(check_text(emptied, contract)) == [("tail-removes", 16)]


def test_a_block_scope_picks_one_block_of_a_step(check_text: CheckText) -> None:
    contract = ENV + (
        "contracts:\n  - {id: no-add-in-tail, forbidden: git worktree add,"
        " in: {step: setup, block: 2}}\n"
    )
    assert check_text(SECTIONS, contract) == []
    moved = SECTIONS.replace("git worktree remove --force", 'git worktree add -b "$b"')
    assert rules(check_text(moved, contract)) == [("no-add-in-tail", 17)]
    far = contract.replace("block: 2", "block: 3")
    assert "no block 3 (there are 2)" in check_text(SECTIONS, far)[0].message


def test_a_negated_option_in_a_contract(check_text: CheckText) -> None:
    contract = ENV + "contracts:\n  - {id: new-branch-always, forbidden: git worktree add !-b}\n"
    assert check_text(SECTIONS, contract) == []
    detached = SECTIONS.replace('add -b "$b" "$wt"', 'add --detach "$wt"')
    assert rules(check_text(detached, contract)) == [("new-branch-always", 11)]


def test_every_problem_of_a_sidecar_is_reported_at_once(tmp_path: Path) -> None:
    agents = tmp_path / "pack" / "agents"
    agents.mkdir(parents=True)
    (agents / "a.md").write_text("---\nname: a\ndescription: d\n---\n", encoding="utf-8")
    sidecar = (
        "checker:\n  errexit: maybe\n"
        "contracts:\n"
        "  - {id: Bad_Id, forbidden: git stash}\n"
        "  - {id: c2, count: git stash, exactly: '3'}\n"
        '  - {id: c3, forbidden: "git \'stash"}\n'
        "  - {id: c4, order: [git stash]}\n"
        "  - {id: c5, forbidden: git stash, colour: red}\n"
        "  - {id: undefined-variable, forbidden: x}\n"
    )
    (agents / "a.contracts.yaml").write_text(sidecar, encoding="utf-8")
    found = check_paths([tmp_path / "pack"], base=tmp_path).diagnostics
    lines = sorted(d.line for d in found if d.rule == "contract-spec")
    assert lines == [2, 4, 5, 6, 7, 8, 9], [d.format() for d in found]
    typed = next(d for d in found if d.line == 5)
    assert "expected a whole number, got text '3'" in typed.message


def test_says_holds_a_sentence_however_it_is_wrapped(check_text: CheckText) -> None:
    sidecar = "contracts:\n  - {id: waits, says: Wait for the  subagent., why: it runs on}\n"
    kept = workflow({"a": "git tag x"}) + "Then wait\nfor the subagent.\n"
    gone = workflow({"a": "git tag x"}) + "Then go on.\n"

    assert rules(check_text(kept, sidecar)) == []
    [found] = check_text(gone, sidecar)
    assert found.rule == "waits"
    assert "no longer says 'Wait for the  subagent.' (it runs on)" in found.message
