"""Command wrappers: the commands that run another (`env`, `sudo`, `xargs`, `timeout`, `nohup` …).

An event is the command a wrapper runs, with the wrappers it was run through (`events.py`).
"""

from __future__ import annotations

import re

from fixloop.checker.tree import Word

_WRAPPERS_SIMPLE = {"command", "exec", "nohup", "builtin", "time", "nice", "stdbuf", "eatmydata"}
_XARGS_WITH_VALUE = {"-I", "-n", "-L", "-P", "-d", "-s", "-E", "-a", "-i"}
# What `unwrap` strips; a command of another name (most are) runs as itself.
WRAPPERS = _WRAPPERS_SIMPLE | {"env", "sudo", "xargs", "timeout"}


def unwrap(words: list[Word]) -> tuple[list[Word], tuple[str, ...]]:
    """Strip command wrappers: `env A=1 xargs -0 git add --` is `git add --` run via env, xargs."""
    if not words:
        return words, ()
    first = words[0].shape
    if "/" not in first and first not in WRAPPERS:
        # Run by its own name (most commands): nothing to strip. A word that expands has a `$`
        # in its shape, so it names no wrapper either.
        return words, ()
    wrappers: list[str] = []
    index = 0
    while index < len(words):
        name = (words[index].literal or "").rsplit("/", 1)[-1]
        if name in WRAPPERS:
            wrappers.append(name)
            index += 1
            duration_pending = name == "timeout"
            while index < len(words):
                text = words[index].literal or ""
                if text.startswith("-") and text != "--":
                    takes_value = (name == "xargs" and text in _XARGS_WITH_VALUE) or (
                        name in ("sudo", "env") and text in ("-u", "-g", "-C")
                    )
                    index += 2 if takes_value else 1
                elif name == "env" and "=" in text and not text.startswith("="):
                    index += 1
                elif duration_pending and re.match(r"^\d", text):
                    duration_pending = False
                    index += 1
                else:
                    break
            continue
        break
    # The command's own list when nothing is unwrapped (most commands): no copy per event.
    return (words[index:] if index else words), tuple(wrappers)
