"""What the contract check before a run costs a workflow command given `--pack`, side by side:
the check of a pack's documents, and the same pack remembered by their digest (the second run of
an unchanged pack, `fixloop.cli.contract_gate`). Interleaved rounds in this process; the median
wall and CPU time of each, and their ratio. No assertion: a measurement, run by hand:

    .venv/bin/python bench/contract_gate.py [--runs 9]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from fixloop.cli.contract_gate import gate
from fixloop.documents.discovery import bundled_pack_root

FOLDERS = ("agents", "commands", "workflows", ".claude-plugin")


def copy_pack(target: Path) -> Path:
    root = bundled_pack_root()
    for folder in FOLDERS:
        shutil.copytree(root / folder, target / folder)
    for name in ("plugin.json", "fixloop.toml"):
        shutil.copy(root / name, target / name)
    return target


def timed(pack: Path, state: Path) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    passed = gate(pack, state)
    took = time.perf_counter() - wall, time.process_time() - cpu
    assert passed is not None
    passed.remember()
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=9)
    runs = parser.parse_args().runs
    checked: list[tuple[float, float]] = []
    remembered: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory(prefix="fixloop-gate-") as scratch:
        pack = copy_pack(Path(scratch) / "pack")
        for round_ in range(runs):
            state = Path(scratch) / f"state-{round_}"
            state.mkdir()
            checked.append(timed(pack, state))  # nothing remembered yet: the check runs
            remembered.append(timed(pack, state))  # the same documents: the digest only
    for label, side in (("checked", checked), ("remembered", remembered)):
        wall = statistics.median(t[0] for t in side) * 1000
        cpu = statistics.median(t[1] for t in side) * 1000
        print(f"{label:<11} wall {wall:8.1f} ms   cpu {cpu:8.1f} ms")
    ratio = statistics.median(t[1] for t in checked) / statistics.median(t[1] for t in remembered)
    print(f"a remembered pack costs 1/{ratio:.0f} of a check (CPU)")


if __name__ == "__main__":
    main()
