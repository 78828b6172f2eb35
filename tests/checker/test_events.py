"""Command events: unwrapped argv, file positions, the step, and the control context."""

from __future__ import annotations

from fixloop.checker.events import extract, iter_commands
from fixloop.checker.syntax import parse_bash
from fixloop.checker.tree import Command, Pos
from fixloop.checker.wrappers import unwrap


def events(text: str, finally_: bool = False) -> list[tuple[int, int, list[str], tuple[str, ...]]]:
    script = parse_bash(text, Pos(10, 0))
    found, _ = extract(script.body, "doc.md", "step", block=0, finally_=finally_)
    return [(e.line, e.col, e.shapes, e.context) for e in found]


def test_context_names_the_guard() -> None:
    found = events(
        'if git merge --ff-only "$b"; then\n'
        '  git branch -D "$b"\n'
        "else\n"
        "  echo kept\n"
        "fi\n"
        'test -n "$x" || exit 1\n'
    )
    assert found == [
        (11, 4, ["git", "merge", "--ff-only", "$b"], ("if-condition",)),
        (12, 3, ["git", "branch", "-D", "$b"], ('then(git merge --ff-only "$b")',)),
        (14, 3, ["echo", "kept"], ('else(git merge --ff-only "$b")',)),
        (16, 1, ["test", "-n", "$x"], ()),
        (16, 17, ["exit", "1"], ('after-failure(test -n "$x")',)),
    ]


def test_redirections_tee_traps_loops_functions_and_finally() -> None:
    found = events(
        "trap 'rm -f \"$s\"' EXIT\n"
        'for f in a b; do printf x > "$s"; done\n'
        'save() { echo y | tee -a "$log"; }\n',
        finally_=True,
    )
    assert (11, 7, ["rm", "-f", "$s"], ("finally", "trap:EXIT")) in found
    assert (12, 29, [">", "$s"], ("finally", "loop:for")) in found
    assert (13, 26, [">", "$log"], ("finally", "function:save", "pipeline")) in found


def test_wrappers_are_unwrapped() -> None:
    node = parse_bash('env A=1 xargs -0 -n 1 git add -- "$f"').body.items[0]
    assert isinstance(node, Command)
    argv, wrappers = unwrap(node.words)
    assert [w.shape for w in argv] == ["git", "add", "--", "$f"]
    assert wrappers == ("env", "xargs")


def test_standalone_assignments_are_those_iter_commands_reaches() -> None:
    # Found on the events' walk: the same as the commands without words that `iter_commands`
    # yields, so not those in a redirection target's, loop list's or here-document's `$(…)`.
    script = parse_bash(
        "a=1\n"
        "f() { b=2; }\n"
        "c=$(d=3; echo x)\n"
        'cmd > "$(e=4; echo f)"\n'
        "for i in $(g=5; echo 1); do h=6; done\n"
        "cat <<END\n"
        "$(k=7; echo y)\n"
        "END\n"
        "trap 'm=8' EXIT\n"
        "x=9 echo hi\n"
        "n=\n",
        Pos(0, 0),
    )
    alone: list[tuple[str, str]] = []
    extract(script.body, "doc.md", None, block=0, finally_=False, alone=alone)
    walked = [
        (a.name, a.value.shape)
        for c in iter_commands(script.body)
        if not c.words
        for a in c.assigns
        if a.value is not None
    ]
    assert (
        alone
        == walked
        == [
            ("a", "1"),
            ("b", "2"),
            ("d", "3"),
            ("c", "$(…)"),
            ("h", "6"),
            ("m", "8"),
        ]
    )
