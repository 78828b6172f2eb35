"""Generic rules, with no contract: the defects any pack can have, at their file and line."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Golden

from fixloop.checker.checking import check_paths

from .conftest import FIXTURES, CheckText, rules, workflow

GOLDENS = Path(__file__).resolve().parent / "goldens"


def test_defect_document_matches_its_golden(golden: Golden) -> None:
    result = check_paths([FIXTURES / "defects"], base=FIXTURES)
    text = "".join(d.format() + "\n" for d in result.diagnostics)
    golden.check(GOLDENS / "defects.txt", text)


def test_the_report_path_defect_is_caught(check_text: CheckText) -> None:
    # GSD: a step exported REVIEW_PATH while the script it ran read FIX_REPORT_PATH.
    text = workflow(
        {
            "spawn": (
                'export REVIEW_PATH="$PHASE_DIR/review.md"\n'
                'node -e \'const fs = require("fs");'
                " process.exit(fs.existsSync(process.env.FIX_REPORT_PATH) ? 0 : 1)'\n"
            )
        },
        "inputs:\n  PHASE_DIR: {type: string}\n",
    )
    found = check_text(text)
    assert rules(found) == [("unexported-env", 14)]
    assert "FIX_REPORT_PATH" in found[0].message and "nothing exports it" in found[0].message
    fixed = text.replace("FIX_REPORT_PATH", "REVIEW_PATH")
    assert check_text(fixed) == []


def test_assigned_but_not_exported_is_named(check_text: CheckText) -> None:
    text = workflow(
        {"s": "FIX_REPORT_PATH=x\npython3 -c 'import os; os.environ[\"FIX_REPORT_PATH\"]'"}
    )
    found = check_text(text)
    assert rules(found) == [("unexported-env", 12)]
    assert found[0].message.endswith("but it is assigned, not exported")
    assert check_text(text.replace("FIX_REPORT_PATH=x", "export FIX_REPORT_PATH=x")) == []


def test_a_script_runner_is_found_through_a_path_or_a_wrapper(check_text: CheckText) -> None:
    script = "-c 'import os; os.environ[\"TOKEN\"]'"
    for runner in ("/usr/bin/python3", "env A=1 python3", "sudo -u me /usr/bin/python3"):
        found = check_text(workflow({"s": f"export OTHER=1\n{runner} {script}"}))
        assert rules(found) == [("unexported-env", 12)], runner
    # A runner whose name expands is not known: nothing is searched.
    found = check_text(workflow({"s": f'export OTHER=1 PY=python3\n"$PY" {script}'}))
    assert found == []


def test_variables_set_by_read_for_and_outputs_are_defined(check_text: CheckText) -> None:
    text = workflow(
        {
            "s": (
                'while IFS= read -r -d "" path; do echo "$path"; done < f\n'
                'for x in a b; do echo "$x"; done\n'
                'printf -v when "%s" now; echo "$when" "$OUT" "$HOME" "$FIXLOOP_OUTPUT"\n'
            )
        },
        "outputs:\n  OUT: an output\n",
    )
    assert check_text(text) == []


def test_guarded_rm_and_safe_arithmetic_pass(check_text: CheckText) -> None:
    text = workflow(
        {
            "s": (
                "set -e\n"
                'd=$(mktemp -d)\nrm -rf -- "$d"/*\n'
                'rm -rf "${maybe:?}"/x\n'
                'if [ -n "$other" ]; then rm -rf "$other"; fi\n'
                "n=0\nn=$((n + 1))\n((n++)) || true\n"
            )
        },
        "checker:\n  env: [maybe, other]\n",
    )
    assert check_text(text) == []


def test_bash_that_only_tree_sitter_rejects_is_a_warning(check_text: CheckText) -> None:
    text = workflow({"s": 'case "/$1/" in\n  *"/.."/*) echo no ;;\nesac'})
    found = check_text(text)
    assert [(d.rule, str(d.severity)) for d in found] == [("bash-syntax", "warning")]


def test_an_empty_body_is_the_syntax_error_bash_says_it_is(check_text: CheckText) -> None:
    for script, keyword in [
        ("if true; then\nfi", "then"),
        ("if true; then\n  # nothing yet\nelse\n  :\nfi", "then"),
        ("for f in a; do\ndone", "do"),
        ("f() { }", "{ }"),
    ]:
        found = check_text(workflow({"s": script}))
        assert [(d.rule, str(d.severity)) for d in found] == [("bash-syntax", "error")], script
        assert f"`{keyword}` holds no command" in found[0].message
    assert check_text(workflow({"s": "if true; then\n  :\nfi"})) == []


def test_a_long_chain_is_checked_to_its_end(check_text: CheckText) -> None:
    chain = " && ".join(["true"] * 700) + ' && rm -rf "$gone"/x'
    found = check_text(workflow({"s": chain}), "checker:\n  env: [gone]\n")
    assert [(d.rule, d.line, d.col) for d in found] == [("rm-rf-empty-var", 11, 5608)]


def test_a_finding_is_silenced_by_a_comment_and_an_idle_comment_is_reported(
    check_text: CheckText,
) -> None:
    script = (
        'rm -rf "$gone"/x  # fixloop: ignore[rm-rf-empty-var]\n'
        "# fixloop: ignore[rm-rf-empty-var]\n"
        'rm -rf "$also"/x\n'
        "echo fine  # fixloop: ignore[rm-rf-empty-var, no-such-rule]\n"
    )
    found = check_text(workflow({"s": script}), "checker:\n  env: [gone, also]\n")
    assert [(d.rule, d.line, str(d.severity)) for d in found] == [
        ("unused-suppression", 14, "warning"),
        ("unused-suppression", 14, "warning"),
    ]
    assert [d.message for d in found] == [
        "`fixloop: ignore[no-such-rule]` names no rule fixloop reports; remove it",
        "`fixloop: ignore[rm-rf-empty-var]` silences nothing here; remove it",
    ]
    loud = check_text(workflow({"s": 'rm -rf "$gone"/x'}), "checker:\n  env: [gone]\n")
    assert rules(loud) == [("rm-rf-empty-var", 11)]


def test_rm_rf_fires_only_where_an_empty_variable_reaches_another_path(
    check_text: CheckText,
) -> None:
    harmless = (
        'rm -rf "$whole"\n'  # empty: `rm -rf ""` removes nothing
        'root="$HOME/cache"; rm -rf "$root"/x\n'  # a value with a literal part is never empty
        ': "${dest:?set dest}"; rm -rf "$dest"/x\n'  # the shell stops when dest is empty
        'tmp=$(mktemp -d); rm -rf "$tmp"/*\n'
    )
    env = "checker:\n  env: [whole, dest, maybe]\n"
    assert check_text(workflow({"s": harmless}), env) == []
    risky = check_text(workflow({"s": 'rm -rf "$maybe"/*'}), env)
    assert rules(risky) == [("rm-rf-empty-var", 11)]


INTERFACED = """---
name: doc
description: A workflow whose steps declare their interfaces.
inputs:
  RUN_ID: {type: string}
  MESSAGE: {type: string, required: false}
outputs:
  COMMIT: The commit made.
  TAG_REF: The tag made.
---

## Commit {#commit}

```yaml step
inputs: [RUN_ID]
outputs: [COMMIT]
```

```bash
git commit -m "$RUN_ID"
printf 'COMMIT=%s\\n' "$(git rev-parse HEAD)" >> "$FIXLOOP_OUTPUT"
```
"""


def test_a_step_with_an_interface_is_held_to_it(check_text: CheckText) -> None:
    assert check_text(INTERFACED) == []
    reads = check_text(INTERFACED.replace('-m "$RUN_ID"', '-m "$MESSAGE"'))
    assert rules(reads) == [("undefined-variable", 20)]
    assert "step 'commit' reads input $MESSAGE, which its interface does not take" in (
        reads[0].message
    )
    writes = check_text(INTERFACED.replace("'COMMIT=%s", "'TAG_REF=%s"))
    assert rules(writes) == [("undeclared-output", 21)]
    assert "but its interface does not declare it (declared: COMMIT)" in writes[0].message
    fine = INTERFACED.replace("inputs: [RUN_ID]", "inputs: [RUN_ID]\noptional: [MESSAGE]")
    assert check_text(fine.replace('-m "$RUN_ID"', '-m "$MESSAGE"')) == []


def test_an_unclosed_quote_is_reported_where_it_opens_not_hidden_by_recovery(
    check_text: CheckText,
) -> None:
    text = "---\nname: d\n---\n\n```bash\necho ok\necho 'Don't stash the tree'\ngit stash\n```\n"
    found = check_text(text)
    assert [(d.rule, d.line, d.col) for d in found] == [("bash-syntax", 7, 27)]
    assert "quote opened here is never closed" in found[0].message


def test_a_block_tree_sitter_accepts_but_bash_refuses_is_an_error_at_bash_s_line(
    check_text: CheckText,
) -> None:
    # tree-sitter reads `${x:-`y}` as a default holding a backquote; bash looks for its match.
    text = '---\nname: d\n---\n\n```bash\necho ok\n```\n\n```bash\ntrue\necho "${x:-`y}"\n```\n'
    found = check_text(text)
    assert [(d.rule, d.line) for d in found] == [("bash-syntax", 11)]
    assert "matching" in found[0].message


def test_the_embedded_script_environment_rule_is_on_outside_runner_documents(
    tmp_path: Path,
) -> None:
    # A pack under the default profile, as GSD's was: its workflows are not the runner's.
    agents = tmp_path / "pack" / "agents"
    agents.mkdir(parents=True)
    block = (
        'REVIEW_PATH="$PHASE_DIR/review.md"\nexport REVIEW_PATH\n'
        "node -e 'process.exit(require(\"fs\").existsSync(process.env.FIX_REPORT_PATH) ? 0 : 1)'\n"
        'echo "$SET_BY_THE_MODEL"\n'
    )
    text = f"---\nname: fixer\ndescription: d\n---\n\n```bash\n{block}```\n"
    (agents / "fixer.md").write_text(text, encoding="utf-8")
    found = check_paths([tmp_path / "pack"], base=tmp_path).diagnostics
    assert rules(found) == [("unexported-env", 9)]  # and no undefined-variable for the rest
    assert "FIX_REPORT_PATH, but nothing exports it" in found[0].message
    # A block that prepares no environment of its own may rely on the user's.
    alone = "python3 -c 'import os; os.environ[\"TOKEN\"]'\n"
    (agents / "fixer.md").write_text(text.replace(block, alone), encoding="utf-8")
    assert check_paths([tmp_path / "pack"], base=tmp_path).diagnostics == []
