"""A step's interface: the inputs it takes and the outputs it writes, declared next to the step.

Right under a step's heading (or its `<step>` tag), before anything else of the step, a fence
whose info string is `yaml step`:

    ```yaml step
    inputs: [RUN_ID, WORKTREE, PATHS_FILE]    # required
    optional: [TAG]
    outputs: [COMMITTED, COMMIT]
    ```

Names refer to the document frontmatter's `inputs:` and `outputs:` (types, patterns, defaults and
descriptions live there, once). Every key is optional; an empty list and a missing key mean the
same. What the names must refer to is checked by `interface_rules.py` (`fixloop validate`); this
module only reads the block, and any problem in it is located at its line and column.
"""

from __future__ import annotations

import re

from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.documents.located_yaml import load_located
from fixloop.records import record

INFO = "yaml step"
RULE = "step-interface"
KEYS = ("inputs", "optional", "outputs")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@record(frozen=True)
class Declared:
    """One name of an interface and where it is written."""

    name: str
    line: int
    col: int


@record(frozen=True)
class StepInterface:
    line: int  # the line of the opening fence
    inputs: tuple[Declared, ...] = ()  # required
    optional: tuple[Declared, ...] = ()
    outputs: tuple[Declared, ...] = ()

    @property
    def input_names(self) -> tuple[str, ...]:
        """Every input the step takes, required first, in the order written."""
        return tuple(d.name for d in (*self.inputs, *self.optional))

    @property
    def required_names(self) -> frozenset[str]:
        return frozenset(d.name for d in self.inputs)

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.outputs)

    def one_line(self) -> str:
        """`in: A, B, [C]  out: X, Y` (optional inputs in brackets)."""
        taken = [d.name for d in self.inputs] + [f"[{d.name}]" for d in self.optional]
        return f"in: {', '.join(taken) or '-'}  out: {', '.join(self.output_names) or '-'}"


def is_interface_info(info: str) -> bool:
    return info.split() == INFO.split()


def parse_interface(
    content: str, fence_line: int, display: str
) -> tuple[StepInterface | None, list[Diagnostic]]:
    """The interface in a `yaml step` block whose opening fence is at `fence_line`."""
    first = fence_line + 1

    def problem(line: int, col: int, message: str) -> Diagnostic:
        return Diagnostic(display, line, col, RULE, message)

    try:
        located = load_located(content, display=display, rule=RULE, first_line=first)
    except FixloopError as exc:
        return None, exc.diagnostics
    data = located.data
    if data is None:
        return StepInterface(fence_line), []
    if not isinstance(data, dict):
        return None, [problem(fence_line, 1, f"expected a mapping of {', '.join(KEYS)}")]

    def at(*keys: str | int) -> tuple[int, int]:
        return located.line_of(*keys), located.key_columns.get(tuple(keys), 1)

    found: list[Diagnostic] = []
    lists: dict[str, list[Declared]] = {key: [] for key in KEYS}
    seen: dict[str, Declared] = {}
    for key, value in data.items():
        if key not in KEYS:
            found.append(problem(*at(key), f"{key}: not an interface key (use {', '.join(KEYS)})"))
            continue
        if value is None:
            continue
        if not isinstance(value, list):
            found.append(problem(*at(key), f"{key}: expected a list of names, e.g. [NAME, OTHER]"))
            continue
        for index, name in enumerate(value):
            where = at(key, index)
            if not isinstance(name, str) or not _NAME.match(name):
                shown = name if isinstance(name, str) else "a list or mapping"
                found.append(problem(*where, f"{key}: {shown!r} is not a name"))
                continue
            declared = Declared(name, *where)
            # inputs and optional share one namespace; outputs have their own
            space = "outputs" if key == "outputs" else "inputs"
            earlier = seen.get(f"{space}:{name}")
            if earlier is not None:
                found.append(
                    problem(*where, f"{key}: {name} is already listed at line {earlier.line}")
                )
                continue
            seen[f"{space}:{name}"] = declared
            lists[key].append(declared)
    if found:
        return None, found
    return StepInterface(
        fence_line, tuple(lists["inputs"]), tuple(lists["optional"]), tuple(lists["outputs"])
    ), []
