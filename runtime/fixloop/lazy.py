"""Names a package exports but imports only when first used.

A package's `__init__` that imports its public names eagerly makes every import of any of its
modules pay for all of them: the step library's helpers (`workflows/lib/fix_engine.py`,
`execute_wave.py`) import one model module each, in a fresh interpreter per step command, and
an eager `fixloop.workflows.fix_engine` would load the whole workflow (documents, jinja2, the
git session) to read a checklist.
"""

from __future__ import annotations

import importlib

# Not `typing.TYPE_CHECKING`: `fixloop/__init__` uses this module, and importing typing would
# cost `fixloop --version` a tenth of its start.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


def exports(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: `names` maps each public name to `module:attribute`;
    the value is imported on first access and kept in the package's namespace."""

    def __getattr__(name: str) -> Any:
        target = names.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = target.partition(":")
        value = getattr(importlib.import_module(module), attribute)
        setattr(importlib.import_module(package), name, value)
        return value

    return __getattr__
