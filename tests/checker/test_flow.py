"""Path analysis as contracts see it: guards, flags, set -e, traps, loops, steps and finally."""

from __future__ import annotations

from .conftest import CheckText, rules, workflow

GSD_CLEANUP = """
ff_status=0
if git -C "$main_repo" merge --ff-only "$b" 2>&1; then
  ff_status=0
else
  ff_status=$?
  echo "WARN: could not fast-forward"
fi
git worktree remove "$wt" --force
if [ "$ff_status" -eq 0 ]; then
  git -C "$main_repo" branch -D "$b" || true
fi
rm -f "$sentinel"
"""
ENV = "checker:\n  env: [main_repo, b, wt, sentinel]\n"
GUARD = """
contracts:
  - id: delete-only-after-ff
    guarded: git branch -D $b
    by: git merge --ff-only $b
"""


def test_a_status_flag_carries_the_guard(check_text: CheckText) -> None:
    # ff_status=0 before the merge is overwritten on both paths; only the ff-success path sets 0.
    assert check_text(workflow({"cleanup": GSD_CLEANUP}, ENV), GUARD) == []


def test_moving_the_delete_out_of_the_guard_is_reported_at_its_line(check_text: CheckText) -> None:
    moved = GSD_CLEANUP.replace('  git -C "$main_repo" branch -D "$b" || true\n', "  :\n").replace(
        'rm -f "$sentinel"', 'git branch -D "$b"\nrm -f "$sentinel"'
    )
    found = check_text(workflow({"cleanup": moved}, ENV), GUARD)
    assert rules(found) == [("delete-only-after-ff", 24)]
    assert "can run when `git merge --ff-only $b` has not succeeded" in found[0].message


def test_set_e_makes_the_next_command_guarded(check_text: CheckText) -> None:
    contract = "contracts:\n  - {id: g, guarded: write-sentinel, by: git worktree add}\n"
    contract += "checker: {commands: {write-sentinel: '> $s'}, env: [s]}\n"
    text = 'git worktree add -b b wt HEAD\nprintf x > "$s"\n'
    assert check_text(workflow({"setup": text}), contract) == []
    plain = "checker: {errexit: false, commands: {write-sentinel: '> $s'}, env: [s]}\n"
    found = check_text(workflow({"setup": text}), contract.split("checker")[0] + plain)
    assert rules(found) == [("g", 12)]


def test_order_across_steps_and_a_failed_step_stops_the_run(check_text: CheckText) -> None:
    sidecar = "contracts:\n  - {id: tag-first, order: [git tag baseline, git merge]}\n"
    good = workflow({"tag": "git tag baseline", "merge": "git merge --no-edit x"})
    assert check_text(good, sidecar) == []
    swapped = workflow({"merge": "git merge --no-edit x", "tag": "git tag baseline"})
    assert rules(check_text(swapped, sidecar)) == [("tag-first", 11)]


def test_strict_order_needs_the_earlier_command_non_strict_only_forbids_after(
    check_text: CheckText,
) -> None:
    text = 'if [ -n "$X" ]; then git merge --ff-only x; fi\ngit worktree remove wt\n'
    strict = "contracts:\n  - {id: o, order: [git merge --ff-only, git worktree remove]}\n"
    front = "checker: {env: [X]}\n"
    assert rules(check_text(workflow({"cleanup": text}, front), strict)) == [("o", 13)]
    lenient = strict.replace("]}", "], strict: false}")
    assert check_text(workflow({"cleanup": text}, front), lenient) == []


def test_cleanup_in_a_trap_runs_on_every_path(check_text: CheckText) -> None:
    sidecar = "contracts:\n  - {id: c, cleanup: rm -rf -- $d, after: mktemp -d, when: success}\n"
    text = "d=$(mktemp -d)\ntrap 'rm -rf -- \"$d\"' EXIT\nfalse\necho never\n"
    assert check_text(workflow({"work": text}), sidecar) == []
    no_trap = 'd=$(mktemp -d)\n[ -n "$d" ] || exit 1\nfalse\nrm -rf -- "$d"\n'
    assert rules(check_text(workflow({"work": no_trap}), sidecar)) == [("c", 11)]


def test_a_finally_step_runs_after_a_failed_step(check_text: CheckText) -> None:
    sidecar = "contracts:\n  - {id: c, cleanup: git worktree remove, after: git worktree add}\n"
    steps = {"setup": "git worktree add wt", "work": "exit 1", "cleanup": "git worktree remove wt"}
    assert check_text(workflow(steps), sidecar) == []
    steps["finish"] = steps.pop("cleanup")
    assert rules(check_text(workflow(steps), sidecar)) == [("c", 11)]


def test_loops_over_the_same_list_are_correlated(check_text: CheckText) -> None:
    sidecar = "contracts:\n  - {id: c, cleanup: rm -f $f, after: touch $f, when: success}\n"
    text = 'for f in $FILES; do touch "$f"; done\nfor f in $FILES; do rm -f "$f"; done\n'
    front = "inputs:\n  FILES: {type: string}\n"
    assert check_text(workflow({"s": text}, front), sidecar) == []
    one_loop = 'for f in $FILES; do touch "$f"; done\nfor g in $OTHER; do rm -f "$f"; done\n'
    front += "  OTHER: {type: string}\n"
    assert rules(check_text(workflow({"s": one_loop}, front), sidecar)) == [("c", 14)]


def test_count_required_forbidden_and_scope(check_text: CheckText) -> None:
    sidecar = """
contracts:
  - {id: one-merge, count: git merge, exactly: 1, in: {step: b}}
  - {id: needs-tag, required: git tag, in: {step: a}}
  - {id: no-stash, forbidden: [git stash, git reset --hard]}
  - {id: typo, required: git tag, in: {step: nope}}
"""
    text = workflow({"a": "git stash\necho", "b": "git merge x\ngit merge y"})
    assert rules(check_text(text, sidecar)) == [
        ("contract-scope", 6),
        ("needs-tag", 8),
        ("no-stash", 11),
        ("one-merge", 19),
    ]


def test_briefs_are_the_bash_of_the_dispatched_agents(check_text: CheckText) -> None:
    agent = (
        "---\nname: fixer\ndescription: Fixes.\n---\n\n# Fixer\n\n"
        '```bash\ngit checkout -- "$file"\ngit stash\n```\n'
    )
    check_text(agent, name="fixer", folder="agents")
    sidecar = "contracts:\n  - {id: briefs-clean, forbidden: git stash, in: briefs}\n"
    found = check_text(workflow({"a": "echo"}, "agents: [fixer]\n"), sidecar)
    assert [(d.path.endswith("agents/fixer.md"), d.rule, d.line) for d in found] == [
        (True, "briefs-clean", 10)
    ]


LOCAL_STATUS = """
finish() {
  git -C "$main_repo" merge --ff-only "$b"
  local rc=$?
  if [ "$rc" -eq 0 ]; then
    git -C "$main_repo" branch -D "$b"
  fi
}
finish
"""


def test_local_reads_the_status_before_it_and_then_succeeds(check_text: CheckText) -> None:
    # bash gives `rc` the merge's status; `local` itself then succeeds.
    front = "checker:\n  errexit: false\n  env: [main_repo, b]\n"
    assert check_text(workflow({"cleanup": LOCAL_STATUS}, front), GUARD) == []
    unguarded = LOCAL_STATUS.replace('"$rc" -eq 0', '"$rc" -ne 0')
    assert rules(check_text(workflow({"cleanup": unguarded}, front), GUARD)) == [
        ("delete-only-after-ff", 18)
    ]


def test_an_arithmetic_status_test_carries_the_guard(check_text: CheckText) -> None:
    cleanup = (
        "rc=1\n"
        'if git merge --ff-only "$b"; then rc=0; fi\n'
        'if (( rc == 0 )); then git branch -D "$b"; fi\n'
    )
    env = "checker:\n  env: [b]\n"
    assert check_text(workflow({"cleanup": cleanup}, env), GUARD) == []
    inverted = cleanup.replace("(( rc == 0 ))", "(( rc != 0 ))")
    assert rules(check_text(workflow({"cleanup": inverted}, env), GUARD)) == [
        ("delete-only-after-ff", 15)
    ]
    bare = cleanup.replace("(( rc == 0 ))", "(( !rc ))")
    assert check_text(workflow({"cleanup": bare}, env), GUARD) == []


def test_a_finally_block_by_its_fence_word_or_its_label_words(check_text: CheckText) -> None:
    contract = (
        "checker:\n  env: [wt]\n  finally: {labels: [cleanup]}\n"
        "contracts:\n  - {id: removed, cleanup: git worktree remove $wt,"
        " after: git worktree add $wt}\n"
    )
    add = 'git worktree add "$wt"\ngit diff --quiet || exit 1\n'
    body = f"---\nname: doc\ndescription: d.\n---\n\n## Work {{#work}}\n\n```bash\n{add}```\n\n"
    tail = '```bash\ngit worktree remove "$wt"\n```\n'
    assert rules(check_text(body + tail, contract)) == [("removed", 9)]
    assert check_text(body + tail.replace("```bash", "```bash finally", 1), contract) == []
    assert check_text(body + "**Clean-up, always:**\n\n" + tail, contract) == []


def test_a_function_that_fails_under_set_e_ends_the_step(check_text: CheckText) -> None:
    contract = "contracts:\n  - {id: g, guarded: git branch -D $b, by: ok_to_delete}\n"
    env = "checker:\n  env: [b]\n"
    script = 'ok_to_delete() { [ -n "$1" ] || return 1; }\nok_to_delete "$b"\ngit branch -D "$b"\n'
    assert check_text(workflow({"cleanup": script}, env), contract) == []
    unguarded = script.replace('ok_to_delete "$b"\n', 'ok_to_delete "$b" || true\n')
    assert rules(check_text(workflow({"cleanup": unguarded}, env), contract)) == [("g", 15)]
