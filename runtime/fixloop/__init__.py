"""fixloop: verified, automated code fixing driven by Markdown agent documents.

The public API, small on purpose (everything else may move between releases):

    import fixloop

    pack = fixloop.load_pack()                       # the bundled pack, or load_pack(Path(...))
    backend = fixloop.ScriptedBackend.from_file(Path("script.yaml"))   # or load_backend("claude")
    events = fixloop.EventStream(print)              # every step, role call and item, as it happens
    result = fixloop.run_workflow(
        "review-fix", fixloop.Context(pack, backend, events),
        review=Path(".planning/02-REVIEW.md"), repo=Path("."),
    )
    report = fixloop.check([Path("my-pack")])        # the contract checker: report.diagnostics

`Backend` is the protocol a backend of your own implements (`dispatch(AgentRequest) ->
AgentOutcome`); name it on the command line as `--backend module:Class`.

Names are imported on first use, so `import fixloop` (and `fixloop --version`) stays cheap.
"""

from __future__ import annotations

from fixloop.lazy import exports

__version__ = "0.5.4"

_PUBLIC = {
    "load_pack": "fixloop.api:load_pack",
    "run_workflow": "fixloop.workflows.registry:run_workflow",
    "check": "fixloop.api:check",
    "Context": "fixloop.workflows.kernel.workflow:Context",
    "Backend": "fixloop.agents.backend:Backend",
    "AgentRequest": "fixloop.agents.backend:AgentRequest",
    "AgentOutcome": "fixloop.agents.backend:AgentOutcome",
    "ScriptedBackend": "fixloop.agents.scripted:ScriptedBackend",
    "load_backend": "fixloop.agents.registry:load_backend",
    "Event": "fixloop.events:Event",
    "EventKind": "fixloop.events:EventKind",
    "EventStream": "fixloop.events:EventStream",
    "FixloopError": "fixloop.diagnostics:FixloopError",
    "Diagnostic": "fixloop.diagnostics:Diagnostic",
}

__all__ = [
    "AgentOutcome",
    "AgentRequest",
    "Backend",
    "Context",
    "Diagnostic",
    "Event",
    "EventKind",
    "EventStream",
    "FixloopError",
    "ScriptedBackend",
    "__version__",
    "check",
    "load_backend",
    "load_pack",
    "run_workflow",
]


__getattr__ = exports("fixloop", _PUBLIC)
