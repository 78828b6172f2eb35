"""execute-wave: tasks.json's waves, parallel executors in worktrees, one verified commit a wave."""

from fixloop.lazy import exports

# Imported on first use (fixloop/lazy.py says why); the imports below are for type checkers.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from fixloop.workflows.execute_wave.plan import ExecuteWaveOptions
    from fixloop.workflows.execute_wave.state import ExecuteWaveResult
    from fixloop.workflows.execute_wave.workflow import ExecuteWave, run_execute_wave

__all__ = ["ExecuteWave", "ExecuteWaveOptions", "ExecuteWaveResult", "run_execute_wave"]

__getattr__ = exports(
    __name__,
    {
        "ExecuteWave": "fixloop.workflows.execute_wave.workflow:ExecuteWave",
        "ExecuteWaveOptions": "fixloop.workflows.execute_wave.plan:ExecuteWaveOptions",
        "ExecuteWaveResult": "fixloop.workflows.execute_wave.state:ExecuteWaveResult",
        "run_execute_wave": "fixloop.workflows.execute_wave.workflow:run_execute_wave",
    },
)
