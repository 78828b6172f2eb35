"""Where the command line wires the extras into the core, which imports none of them.

Every workflow command hands its run the real browser (design tasks look through it) and the
sweeper of dead runs' dev servers; `fixloop recover` sweeps those and dead runs' containers.
"""

from __future__ import annotations

import dataclasses

from fixloop.runs.recovery import Sweeper
from fixloop.workflows.kernel.workflow import Context


def wired(context: Context) -> Context:
    """`context` with the extras' browser and sweepers."""
    from fixloop.extras.browser.seams import CHROMIUM, SWEEPERS

    return dataclasses.replace(context, browser=CHROMIUM, sweepers=(*context.sweepers, *SWEEPERS))


def recovery_sweepers() -> tuple[Sweeper, ...]:
    """What `fixloop recover` sweeps before it recovers: dev servers, then containers."""
    from fixloop.extras.browser.seams import SWEEPERS
    from fixloop.sandboxes.sweep import sweep_containers

    return (*SWEEPERS, sweep_containers)


__all__ = ["recovery_sweepers", "wired"]
