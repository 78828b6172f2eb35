"""Executable workflow steps: run a document step's bash, traced, with its outputs parsed."""

from pathlib import Path

# Where a run that chose a sandbox keeps its launcher, inside the run's folder: the step runner
# hands it to steps as FIXLOOP_SANDBOX, `fixloop.sandboxes.launcher` writes it. Here rather than
# in the runner so that the launcher's own start-up does not load the runner (a quarter second).
SANDBOX_LAUNCHER = Path("sandbox", "run")
