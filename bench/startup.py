"""How long a pre-commit hook or a CI step waits for `fixloop` to start, measured side by side.

Runs, interleaved, each as a fresh process:

- `python -c pass`: a bare interpreter (the floor of any Python tool);
- `fixloop --version`: the command line's own start (goal: at most 3x the bare interpreter);
- the import of the third-party libraries `fixloop check` works with, alone, as the check imports
  them (PyYAML, markdown-it-py, tree-sitter and its bash grammar, python-frontmatter; pydantic
  only words a declaration's problems, so a check of plainly valid declarations never imports
  it). The bench asks the check which libraries it imported and says so when the baseline no
  longer matches;
- `fixloop check DOCUMENT` of one large document with contracts (default: the pack's biggest
  workflow that declares contracts; goal: at most 1.5x the libraries' import alone).

and prints the median wall time and CPU time (user + system) of each, and the two ratios on both.
On a shared machine the CPU times are the steadier comparison.

Every side runs from compiled bytecode, as after `pip install` (which compiles the modules it
installs): the processes are started without `PYTHONDONTWRITEBYTECODE`, after one warm-up round
that writes fixloop's bytecode cache. Otherwise, in an editable install under that variable,
`fixloop` compiled its own modules from source at every start while the libraries, installed with
their bytecode, did not: the ratio measured the compiler, not the check. No assertion: a
measurement, run by hand:

    .venv/bin/python bench/startup.py [--runs 15] [--document PATH]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What a check of plainly valid declarations imports (the bench checks that it still is). Until
# the contract language and the settings were plain records, it also imported pydantic's
# `BaseModel`, and the baseline did too: about a third of this import.
LIBRARIES = "import yaml, markdown_it, tree_sitter, tree_sitter_bash, frontmatter"
# Runs `body`, then prints the top-level third-party packages imported by then.
_LISTING = """
import sys, sysconfig
from pathlib import Path
try:
    {body}
finally:
    paths = sysconfig.get_paths()
    packages = Path(paths["purelib"]), Path(paths["platlib"])
    found = set()
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None) or ""
        if "." not in name and any(Path(origin).is_relative_to(p) for p in packages):
            found.add(name)
    print(" ".join(sorted(found - {{"fixloop", "_distutils_hack"}})), file=sys.__stderr__)
"""


def fixloop_command() -> list[str]:
    """The console script next to this interpreter, as users run it; else `python -m fixloop`."""
    script = Path(sys.executable).with_name("fixloop")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "fixloop"]


def default_document() -> Path:
    """The largest workflow of the pack that declares contracts (in frontmatter or a sidecar)."""
    documents = [
        path
        for path in (ROOT / "workflows").glob("*.md")
        if path.with_name(path.stem + ".contracts.yaml").is_file()
        or "\ncontracts:" in path.read_text(encoding="utf-8")
    ]
    return max(documents, key=lambda path: len(path.read_text(encoding="utf-8")))


# As installed: bytecode written once (the warm-up round) and read from then on.
_ENVIRONMENT = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def third_party(body: str, *argv: str) -> frozenset[str]:
    """The top-level third-party packages a Python statement imports."""
    done = subprocess.run(
        [sys.executable, "-c", _LISTING.format(body=body), *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env=_ENVIRONMENT,
    )
    lines = done.stderr.strip().splitlines()
    return frozenset(lines[-1].split()) if lines else frozenset()


def timed(argv: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one run of `argv`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, check=False, cwd=ROOT, env=_ENVIRONMENT)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--document", type=Path, default=None)
    args = parser.parse_args()
    document = args.document or default_document()
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "fixloop --version": [*fixloop_command(), "--version"],
        "import libraries": [sys.executable, "-c", LIBRARIES],
        f"fixloop check {document.name}": [*fixloop_command(), "check", str(document)],
    }
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for argv in commands.values():  # warm-up: compiles what has no bytecode yet, not timed
        timed(argv)
    for _ in range(args.runs):  # interleaved, so a busy moment slows every command alike
        for name, argv in commands.items():
            took, used = timed(argv)
            walls[name].append(took)
            cpus[name].append(used)
    wall = {name: statistics.median(times) for name, times in walls.items()}
    cpu = {name: statistics.median(times) for name, times in cpus.items()}
    lines = document.read_text(encoding="utf-8").count("\n")
    print(f"document: {document.relative_to(ROOT)} ({lines} lines)")
    baseline = third_party(LIBRARIES)
    imported = third_party(
        "from fixloop.cli.main import main; main(sys.argv[1:])", "check", str(document)
    )
    if imported != baseline:  # the ratio would compare the check with other libraries than its own
        print(
            f"the baseline's libraries differ from the check's: only the baseline imports "
            f"{' '.join(sorted(baseline - imported)) or 'nothing'}, only the check "
            f"{' '.join(sorted(imported - baseline)) or 'nothing'}"
        )
    print(f"{'':<40} {'wall ms':>8} {'cpu ms':>8}")
    for name in commands:
        print(f"{name:<40} {1000 * wall[name]:8.1f} {1000 * cpu[name]:8.1f}")
    bare, version, libraries, check = list(commands)
    for label, top, bottom, goal in (
        ("--version / bare python", version, bare, 3),
        ("check / its libraries' import", check, libraries, 1.5),
    ):
        print(
            f"{label + ':':<32} wall {wall[top] / wall[bottom]:5.2f}  "
            f"cpu {cpu[top] / cpu[bottom]:5.2f}  (goal <= {goal})"
        )


if __name__ == "__main__":
    main()
