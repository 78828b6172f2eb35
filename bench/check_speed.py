"""How fast is `fixloop check`? Documents per second, and the ratio to markdown-it-py alone.

Generates packs of 250, 500 and 1,000 workflow documents (copies of fixloop's own workflows, with
their contracts, under new names), then measures, side by side in this one run:

- markdown-it-py parsing alone of the same documents (a full CommonMark parse: the floor every
  checker must at least match), and
- the whole check (`fixloop.checker.checking.check_paths`: the pack's validation, frontmatter,
  blocks, bash parsing, the step library,
  events, path analysis for every contract, generic rules),

and prints documents per second, the ratio whole-check / markdown-only in wall time and in CPU
time (goal: at most 2.5; on a shared machine the CPU ratio is the steadier one), and the time per
document at each size (goal: flat, i.e. time linear in pack size). The documents column
counts what both sides read: the generated workflows plus the pack's own documents.

The generated pack repeats fixloop's real workflows, so it is realistic per document but uniform:
the checker's caches keyed by text (parsed command patterns, the step library) hit more than on a
pack of distinct documents. `--pack PATH` measures the same two sides on a pack (or any folder of
Markdown) of distinct documents instead, such as a real public pack. No assertion: this is a
measurement, run by hand:

    .venv/bin/python bench/check_speed.py [--sizes 250,500,1000] [--repeat 3] [--pack PATH]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from markdown_it import MarkdownIt

from fixloop.checker.checking import check_paths

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "workflows").glob("*.md"))


def generate(target: Path, count: int) -> list[Path]:
    """`count` documents in target/workflows, cycling through the real workflows and sidecars."""
    folder = target / "workflows"
    folder.mkdir(parents=True)
    # The rest of the pack as it is: agents, commands, manifests, the step library the workflows
    # source, and the pack's own profile (the runner's semantics for its workflows).
    for rest in ("agents", "commands", ".claude-plugin", "workflows/lib"):
        shutil.copytree(ROOT / rest, target / rest)
    for rest in ("plugin.json", "fixloop.toml"):
        shutil.copy(ROOT / rest, target / rest)
    for original in ROOT.glob("workflows/*.*"):  # what the agents and commands refer to
        shutil.copy(original, folder / original.name)
    made = []
    for index in range(count):
        source = SOURCES[index % len(SOURCES)]
        stem = f"{source.stem}-{index:04d}"
        text = source.read_text(encoding="utf-8")
        text = text.replace(f"name: {source.stem}\n", f"name: {stem}\n", 1)
        path = folder / f"{stem}.md"
        path.write_text(text, encoding="utf-8")
        sidecar = source.with_name(f"{source.stem}.contracts.yaml")
        if sidecar.is_file():
            shutil.copy(sidecar, folder / f"{stem}.contracts.yaml")
        made.append(path)
    return made


def timed(work: Callable[[], object]) -> tuple[float, float]:
    """Wall time and CPU time of one run of `work`."""
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - wall, time.process_time() - cpu


def markdown_only(paths: list[Path]) -> None:
    # The floor is a full CommonMark parse, as a user would run markdown-it-py: not the checker's
    # own block-only configuration, which would make the floor cheaper and the ratio flatter.
    markdown = MarkdownIt("commonmark")
    for path in paths:
        markdown.parse(path.read_text(encoding="utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="250,500,1000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pack", type=Path, help="measure this pack (distinct documents) instead")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(
        f"{'documents':>9}  {'markdown-it s':>13}  {'check s':>8}  {'docs/s':>7}  "
        f"{'ratio':>6}  {'cpu ratio':>9}  {'ms/doc':>7}"
    )
    if args.pack is not None:
        measure(args.pack.resolve(), args.repeat)
        return
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            generate(root, size)
            measure(root, args.repeat)


def measure(root: Path, repeat: int) -> None:
    """Both sides on the documents the check reads under `root`, best of `repeat` runs each."""
    # Only the paths are kept: the warm-up's result alive (every syntax tree and event of the
    # pack) made the collector slow the markdown-it side by a size-dependent amount (+60% at 271
    # documents, +5% at 521), and the ratio looked as if it grew with the pack's size.
    paths = [d.source.path for d in check_paths([root], root).documents]
    count = len(paths)
    # Interleaved, best of each: on a shared machine a busy moment slows one run, not one side.
    # CPU time too: other processes on the machine change it far less than the wall time.
    floor, whole, floor_cpu, whole_cpu = (float("inf"),) * 4
    for _ in range(repeat):
        wall, cpu = timed(partial(markdown_only, paths))
        floor, floor_cpu = min(floor, wall), min(floor_cpu, cpu)
        wall, cpu = timed(partial(check_paths, [root], root))
        whole, whole_cpu = min(whole, wall), min(whole_cpu, cpu)
    print(
        f"{count:>9}  {floor:>13.3f}  {whole:>8.3f}  {count / whole:>7.0f}  "
        f"{whole / floor:>6.2f}  {whole_cpu / floor_cpu:>9.2f}  "
        f"{1000 * whole / count:>7.2f}"
    )


if __name__ == "__main__":
    main()
