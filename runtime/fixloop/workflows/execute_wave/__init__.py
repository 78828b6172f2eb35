"""execute-wave: tasks.json's waves, parallel executors in worktrees, one verified commit a wave."""

from fixloop.workflows.execute_wave.plan import ExecuteWaveOptions
from fixloop.workflows.execute_wave.state import ExecuteWaveResult
from fixloop.workflows.execute_wave.workflow import ExecuteWave, run_execute_wave

__all__ = ["ExecuteWave", "ExecuteWaveOptions", "ExecuteWaveResult", "run_execute_wave"]
