"""The statuses the shell's own tests and builtins leave, decided from what is known of a world.

`[ "$rc" -eq 0 ]` and `(( rc != 0 ))` are decided when `rc` is a known status flag; `exit N` and
`return N` leave with N's success or failure (or the last status); `set -e`, `set +o errexit`
and their combined forms turn errexit on or off. `statement_flow.py` applies them.
"""

from __future__ import annotations

import re
from functools import cache

from fixloop.checker.tree import Arith, Broken, Command
from fixloop.checker.worlds import Status, World


def bracket_test(command: Command, world: World) -> World:
    """`[ "$rc" -eq 0 ]` and its kin decided by a known status flag."""
    shapes = [w.shape for w in command.words[1:] if w.shape not in ("]", "]]")]
    if len(shapes) == 3 and shapes[0].startswith("$"):
        known, value = world.flag(shapes[0][1:])
        operator, right = shapes[1], shapes[2]
        if known and value is not None and right.isdigit():
            equal = (value == 0) == (int(right) == 0)
            if operator in ("-eq", "=", "=="):
                return world.at(0 if equal else 1)
            if operator in ("-ne", "!="):
                return world.at(1 if equal else 0)
    return world.at(None)


# Compiled on first need: only a script with an arithmetic test meets it.
@cache
def _arith_test() -> re.Pattern[str]:
    return re.compile(
        r"^\(\(\s*(?P<neg>!\s*)?\$?(?P<name>[A-Za-z_]\w*)\s*"
        r"(?:(?P<op>==|!=)\s*(?P<number>\d+)\s*)?\)\)$"
    )


def arith_test(node: Arith | Broken, world: World) -> World:
    """`(( rc == 0 ))`, `(( rc != 0 ))`, `(( rc ))`, `(( !rc ))` decided by a known status flag."""
    match = _arith_test().match(node.text.strip()) if isinstance(node, Arith) else None
    if match is None:
        return world.at(None)
    known, value = world.flag(match["name"])
    if not known or value is None:
        return world.at(None)
    if match["op"] is None:
        true = value != 0  # `(( rc ))` is true when rc is not 0
    else:
        true = (value == 0) == (int(match["number"]) == 0)
        true = true if match["op"] == "==" else not true
    if match["neg"]:
        true = not true
    return world.at(0 if true else 1)


def exit_code(command: Command) -> tuple[bool, Status]:
    """The status `exit`/`return` leave with: (keep the last status?, else this one)."""
    if len(command.words) < 2 or command.words[1].shape == "$?":
        return True, None
    word = command.words[1]
    if word.literal is not None and word.literal.isdigit():
        return False, 0 if int(word.literal) == 0 else 1
    return False, None


def errexit_setting(args: list[str | None], current: bool) -> bool:
    setting = current
    for index, arg in enumerate(args):
        if arg is None:
            continue
        if arg in ("-o", "+o") and index + 1 < len(args) and args[index + 1] == "errexit":
            setting = arg == "-o"
        elif arg[:1] in ("-", "+") and arg[1:].isalpha() and "e" in arg[1:]:
            setting = arg[0] == "-"
    return setting
