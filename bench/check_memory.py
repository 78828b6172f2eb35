"""How much memory does `fixloop check` take for a large bash block? Peak, against the text's size.

Generates documents holding one bash block of 1 and 5 MiB (the blocks of fixloop's own workflows
that parse cleanly, repeated) and measures, side by side in this one run, each as a fresh
process, its peak resident memory (from the kernel's accounting of the finished process):

- `fixloop check` of a one-line document: the floor (interpreter, libraries, the checker);
- markdown-it-py parsing the large document alone (a reader of the same text, for scale);
- `fixloop check` of the large document,

and prints the peak of each and the ratio (check's peak − the floor) / the text's size (goal: at
most 30). The blocks repeat, so the checker's caches keyed by text hit more than on distinct
commands (and their words' texts, interned, are stored once); the syntax tree is built for every
command all the same. Events are made when a contract asks: `--contract` gives both documents
(the floor's too, so that the contract machinery is in both) a sidecar with a `forbidden`
contract, and the events are built. No assertion: a measurement, run by hand:

    .venv/bin/python bench/check_memory.py [--sizes 1,5] [--contract]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from fixloop.checker.syntax import parse_bash

ROOT = Path(__file__).resolve().parent.parent
_FENCE = re.compile(r"^```bash[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_MARKDOWN = (
    "import sys; from markdown_it import MarkdownIt; "
    "MarkdownIt('commonmark').parse(open(sys.argv[1], encoding='utf-8').read())"
)


def fixloop_command() -> list[str]:
    script = Path(sys.executable).with_name("fixloop")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "fixloop"]


def clean_blocks() -> str:
    """The bash of fixloop's workflows, every block tree-sitter and the checker read cleanly."""
    found = []
    for path in sorted((ROOT / "workflows").glob("*.md")):
        for block in _FENCE.findall(path.read_text(encoding="utf-8")):
            script = parse_bash(block)
            if not script.errors and not script.too_deep:
                found.append(block)
    return "\n".join(found) + "\n"


def peak_mib(argv: list[str]) -> float:
    """Peak resident memory of one run of `argv`, in MiB."""
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        stderr = process.stderr.read().decode() if process.stderr else ""
        raise SystemExit(f"{' '.join(argv)} failed: {stderr[-500:]}")
    return usage.ru_maxrss / 1024  # kilobytes on Linux


_CONTRACT = (
    "contracts:\n"
    "  - id: no-stash\n"
    "    why: stashing hides the user's work\n"
    "    forbidden:\n"
    "      - git stash\n"
    "      - git push --force\n"
)


def write_document(path: Path, text: str, contract: bool) -> Path:
    path.write_text(text, encoding="utf-8")
    if contract:
        path.with_name(path.stem + ".contracts.yaml").write_text(_CONTRACT, encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,5", help="block sizes in MiB")
    parser.add_argument("--contract", action="store_true", help="a sidecar contract on both")
    args = parser.parse_args()
    unit = clean_blocks()
    print(
        f"{'block MiB':>9}  {'floor MiB':>9}  {'markdown-it MiB':>15}  "
        f"{'check MiB':>9}  {'ratio':>6}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        small = write_document(
            Path(tmp, "small.md"), "# small\n\n```bash\necho hello\n```\n", args.contract
        )
        for size in (float(s) for s in args.sizes.split(",")):
            block = unit * max(1, round(size * 2**20 / len(unit)))
            large = write_document(
                Path(tmp, "large.md"), f"# large\n\n```bash\n{block}```\n", args.contract
            )
            floor = peak_mib([*fixloop_command(), "check", str(small)])
            markdown = peak_mib([sys.executable, "-c", _MARKDOWN, str(large)])
            check = peak_mib([*fixloop_command(), "check", str(large)])
            text_mib = len(block.encode()) / 2**20
            print(
                f"{text_mib:>9.1f}  {floor:>9.0f}  {markdown:>15.0f}  {check:>9.0f}  "
                f"{(check - floor) / text_mib:>6.1f}"
            )


if __name__ == "__main__":
    main()
