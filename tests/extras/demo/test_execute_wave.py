"""The demo's wave: two waves, one task passing on the fix loop, one failing and rolled back."""

from __future__ import annotations

from pathlib import Path

from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.pack import default_pack_root, load_pack
from fixloop.events import EventStream
from fixloop.extras.demo.execute_wave import (
    EXECUTE_WAVE_SCRIPT,
    build_wave_example,
    check_wave,
    run_wave_demo,
    wave_summary_lines,
)


def test_the_wave_demo_runs_offline_and_checks_itself(tmp_path: Path) -> None:
    repo = tmp_path / "calc"
    tasks = build_wave_example(repo)
    pack, _ = load_pack(default_pack_root())
    backend = ScriptedBackend(EXECUTE_WAVE_SCRIPT)
    result = run_wave_demo(tasks, repo, pack, backend, EventStream())
    assert backend.unplayed() == []
    assert {t.id: (t.status, t.attempts) for t in result.tasks} == {
        "1": ("committed", 0),
        "2": ("committed", 1),
        "3": ("rolled-back", 2),
    }
    assert [w.wave for w in result.waves] == [1, 2]
    assert check_wave(result, repo) == []
    lines = wave_summary_lines(result)
    assert lines[0].startswith("execute-wave  2 of 3 task(s) committed in 2 wave(s)")
    assert "rolled-back: Exceeded max retries (2)" in lines[-1]
