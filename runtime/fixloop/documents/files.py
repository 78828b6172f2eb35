"""Reading a file a pack names: only a regular file, bounded in size, JSON bounded in depth.

A pack is input from anyone, and a path in it can be anything a path can be: a FIFO named
`agents/pipe.md` blocks a plain `open` for ever, a link to `/dev/zero` reads until memory runs
out, a link to itself makes `Path.resolve` raise, and 1000 nested `[` exhaust Python's recursion
in `json.loads`. Every reader of pack files goes through here, so each of those is one clear
problem about that file instead of a hang or a crash.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from fixloop.diagnostics import resolution

# Far above any hand-written document (the largest public agent documents are ~100 KB), far
# below what would hurt the checker's memory (bench/check_speed.py).
MAX_FILE_BYTES = 8_000_000
MAX_JSON_DEPTH = 64  # the same bound as YAML (located_yaml.Limits.max_depth)

_KINDS = {
    stat.S_IFDIR: "a folder",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}


class UnreadableFile(OSError):
    """A file fixloop will not read; its text is the reason, in the user's words."""


def resolved(path: Path) -> Path:
    """`path` made absolute with links followed; a link loop is left unresolved, not an error
    (the read of that path reports it)."""
    found = resolution(path)
    return path.absolute() if found is None else found


def present(path: Path) -> bool:
    """Something that is not a folder is at `path` (a file, a FIFO, a device, a dangling or
    looping link): a reader of it reports what it is, instead of skipping it unseen."""
    return os.path.lexists(path) and not path.is_dir()


def read_text(path: Path, limit: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of a regular file, newlines as `Path.read_text` gives them.

    Raises UnreadableFile (an OSError) for anything that is not a regular file or is larger
    than `limit`, and UnicodeDecodeError for bytes that are not UTF-8.
    """
    try:
        # O_NONBLOCK: opening a FIFO for reading does not wait for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise UnreadableFile(_reason(exc)) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
            raise UnreadableFile(f"{kind}, not a regular file; not read")
        if info.st_size > limit:
            raise UnreadableFile(f"{info.st_size} bytes, more than the {limit} read")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise UnreadableFile(f"more than the {limit} bytes read")
    text = data.decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a symbolic link loop"
    return exc.strerror or str(exc)


# Compiled on first use (`re` keeps it): a check of documents reads no JSON.
_STRING_OR_BRACKET = r'"(?:[^"\\]|\\.)*"|[\[\]{}]'


def load_json(text: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """`json.loads`, after checking the nesting: deeper than `max_depth` is a JSONDecodeError
    at the bracket that goes too deep (json's own parser would exhaust the recursion limit)."""
    depth = 0
    for token in re.finditer(_STRING_OR_BRACKET, text):
        mark = token.group(0)
        if mark in "[{":
            depth += 1
            if depth > max_depth:
                message = f"nested deeper than {max_depth} levels"
                raise json.JSONDecodeError(message, text, token.start())
        elif mark in "]}":
            depth -= 1
    return json.loads(text)
