"""Judging contracts: select the events in scope, run the path analysis, report violations.

A violation is reported where a reader has to act: at the command that runs too early or outside
its guard, at the command whose path can end without its cleanup, at the surplus occurrence; and
for a command that is missing, at the heading of the step that should hold it.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Set as AbstractSet
from pathlib import Path

from fixloop.checker.document import CheckedDocument, Unit
from fixloop.checker.events import CommandEvent
from fixloop.checker.flow import Flow, scan_run, summarize
from fixloop.checker.language import Contract, Operand, ScopeSpec
from fixloop.checker.library import RunFunctions
from fixloop.checker.matching import matching_ids
from fixloop.checker.scoped import errexit_of, narrowed, steps_of
from fixloop.checker.tree import Seq
from fixloop.checker.worlds import FlowResult, RunFacts, World
from fixloop.checker.worlds import Unit as FlowUnit
from fixloop.diagnostics import Diagnostic
from fixloop.documents.files import resolved
from fixloop.records import record

Lookup = Callable[[Path], CheckedDocument | None]


@record
class Scope:
    parts: list[tuple[CheckedDocument, list[Unit]]]
    anchor: tuple[str, int]
    what: str

    @property
    def events(self) -> list[CommandEvent]:
        return [e for _, units in self.parts for u in units for e in u.events]


class Evaluator:
    """Judges the contracts of one document. `broken`: documents that are there but do not load;
    a contract that needs one is not judged (its own error is the root cause), only counted."""

    def __init__(
        self, document: CheckedDocument, lookup: Lookup, broken: AbstractSet[Path] = frozenset()
    ) -> None:
        self.document = document
        self.lookup = lookup
        self.broken = broken
        self.folded = 0
        # The ids of each unit's events (by the unit's `id`), so that a unit holding none of a
        # pattern's matches is passed over without looking at its events.
        self._event_ids: dict[int, frozenset[int]] = {}

    def matching(self, contract: Contract, operand: Operand, scope: Scope) -> list[CommandEvent]:
        patterns = contract.patterns(operand)
        found = []
        for document, units in scope.parts:
            ids: set[int] = set()
            for pattern in patterns:
                ids.update(matching_ids(document, pattern))
            if not ids:  # most operands match nothing in most documents: no need to look
                continue
            for unit in units:
                held = self._event_ids.get(id(unit))
                if held is None:
                    held = self._event_ids[id(unit)] = frozenset(e.id for e in unit.events)
                if not ids.isdisjoint(held):
                    found += [e for e in unit.events if e.id in ids]
        return found

    # -- scope --------------------------------------------------------------------------------

    def scope(self, contract: Contract) -> tuple[Scope, list[Diagnostic]]:
        doc = self.document
        spec = contract.spec.scope
        if spec == "document":
            return Scope([(doc, doc.units)], (doc.display, _first_line(doc)), "the document"), []
        if spec == "briefs":
            return self._briefs(contract)
        assert isinstance(spec, ScopeSpec)
        if spec.agents is not None:
            return self._agents(contract, spec.agents)
        return self._steps(contract, spec)

    def _briefs(self, contract: Contract) -> tuple[Scope, list[Diagnostic]]:
        doc = self.document
        problems: list[Diagnostic] = []
        parts = [(doc, [u for u in doc.units if "brief" in u.block.info.split()])]
        for path in self._brief_paths():
            other = self.lookup(path)
            if other is not None:
                parts.append((other, other.units))
            elif not self._folded(path):
                problems.append(self._problem(contract, f"brief document {path} not found"))
        return Scope(parts, (doc.display, doc.source.line_of("agents")), "the briefs"), problems

    def _agents(self, contract: Contract, names: list[str]) -> tuple[Scope, list[Diagnostic]]:
        doc = self.document
        problems: list[Diagnostic] = []
        parts = []
        for name in names:
            path = doc.source.path.parent.parent / "agents" / f"{name}.md"
            other = self.lookup(path)
            if other is not None:
                parts.append((other, other.units))
            elif not self._folded(path):
                problems.append(self._problem(contract, f"no agent document {name!r}"))
        return Scope(parts, (doc.display, 1), f"agents {', '.join(names)}"), problems

    def _steps(self, contract: Contract, spec: ScopeSpec) -> tuple[Scope, list[Diagnostic]]:
        doc = self.document
        units, named, what = steps_of(doc, spec)
        unknown = [n for n in named if n not in doc.step_names]
        steps = ", ".join(doc.step_names)
        problems = [
            self._problem(contract, f"no step {name!r} in {doc.display} (steps: {steps})")
            for name in unknown
        ]
        if named and spec.except_steps is None:
            anchor = doc.step_line(named[0]) if not unknown else 1
        else:
            anchor = _first_line(doc)
        units, what, missing = narrowed(spec, units, what)
        if missing and not unknown:
            problems.append(self._problem(contract, f"no {missing} in {what}"))
        elif units and (spec.label or spec.section or spec.block):
            anchor = units[0].block.fence_line
        return Scope([(doc, units)], (doc.display, anchor), what), problems

    def _folded(self, path: Path) -> bool:
        if resolved(path) in self.broken:
            self.folded += 1
            return True
        return False

    def _brief_paths(self) -> list[Path]:
        doc = self.document
        agents_dir = doc.source.path.parent.parent / "agents"
        paths = [agents_dir / f"{name}.md" for name in doc.agents]
        paths += [resolved(doc.source.path.parent / rel) for rel in doc.contracts.checker.briefs]
        return paths

    def _problem(self, contract: Contract, message: str) -> Diagnostic:
        return Diagnostic(
            contract.origin, contract.line, 1, "contract-scope", f"{contract.id}: {message}"
        )

    # -- judging ------------------------------------------------------------------------------

    def check(self, contract: Contract) -> list[Diagnostic]:
        folded = self.folded
        scope, problems = self.scope(contract)
        if problems or self.folded > folded:
            return problems
        kind = contract.kind
        judge = {
            "forbidden": self._forbidden,
            "required": self._required,
            "count": self._count,
            "order": self._order,
            "guarded": self._guarded,
            "cleanup": self._cleanup,
            "says": self._says,
        }[kind]
        return sorted(set(judge(contract, scope)))

    def _at(self, contract: Contract, event: CommandEvent, message: str) -> Diagnostic:
        why = f" ({contract.spec.why})" if contract.spec.why else ""
        return Diagnostic(event.path, event.line, event.col, contract.id, message + why)

    def _missing(self, contract: Contract, scope: Scope, operand: Operand) -> Diagnostic:
        path, line = scope.anchor
        return Diagnostic(
            path,
            line,
            1,
            contract.id,
            f"no `{contract.label(operand)}` in {scope.what} "
            f"(contract declared at {contract.origin}:{contract.line})",
        )

    def _says(self, contract: Contract, scope: Scope) -> list[Diagnostic]:
        said = contract.spec.says
        assert said is not None
        text = _words(self.document.source.text)
        why = f" ({contract.spec.why})" if contract.spec.why else ""
        path, line = scope.anchor
        return [
            Diagnostic(
                path,
                line,
                1,
                contract.id,
                f"the document no longer says {sentence!r}{why} "
                f"(contract declared at {contract.origin}:{contract.line})",
            )
            for sentence in ([said] if isinstance(said, str) else said)
            if _words(sentence) not in text
        ]

    def _forbidden(self, contract: Contract, scope: Scope) -> list[Diagnostic]:
        operand = contract.spec.forbidden
        assert operand is not None
        return [
            self._at(contract, e, f"`{e.text()}` is forbidden in {scope.what}")
            for e in self.matching(contract, operand, scope)
        ]

    def _required(self, contract: Contract, scope: Scope) -> list[Diagnostic]:
        operand = contract.spec.required
        assert operand is not None
        items = [operand] if isinstance(operand, str) else operand
        return [
            self._missing(contract, scope, item)
            for item in items
            if not self.matching(contract, item, scope)
        ]

    def _count(self, contract: Contract, scope: Scope) -> list[Diagnostic]:
        spec = contract.spec
        assert spec.count is not None
        found = self.matching(contract, spec.count, scope)
        low = spec.exactly if spec.exactly is not None else (spec.at_least or 0)
        high = spec.exactly if spec.exactly is not None else spec.at_most
        label = contract.label(spec.count)
        if spec.exactly is not None:
            bound = "exactly"
        else:
            bound = "at least" if len(found) < low else "at most"
        if len(found) < low:
            if not found:
                return [self._missing(contract, scope, spec.count)]
            return [
                self._at(
                    contract,
                    found[-1],
                    f"`{label}` appears {len(found)} time(s) in "
                    f"{scope.what}; expected {bound} {low}",
                )
            ]
        if high is not None and len(found) > high:
            return [
                self._at(
                    contract,
                    e,
                    f"`{label}` appears {len(found)} times in {scope.what};"
                    f" expected {bound} {high}",
                )
                for e in found[high:]
            ]
        return []

    def _flow(
        self, contract: Contract, scope: Scope, names: dict[str, Operand]
    ) -> tuple[list[FlowResult], dict[str, list[CommandEvent]]]:
        found = {name: self.matching(contract, operand, scope) for name, operand in names.items()}
        labels: dict[int, list[str]] = {}
        for name, events in found.items():
            for event in events:
                labels.setdefault(event.id, []).append(name)
        results = []
        for _document, units in scope.parts:
            watched = {
                node_id: [(e, labels.get(e.id, [])) for e in events]
                for unit in units
                for node_id, events in unit.by_node.items()
                if any(e.id in labels for e in events)
            }
            ids = {event.id for events in watched.values() for event, _ in events}
            results.append(Flow(watched).run(shell_runs(_document, units, ids)))
        return results, found

    def _order(self, contract: Contract, scope: Scope) -> list[Diagnostic]:
        steps = contract.spec.order or []
        # One analysis for the whole chain: each pair is judged on the same worlds.
        names = {f"S{index}": operand for index, operand in enumerate(steps)}
        results, found = self._flow(contract, scope, names)
        missing = [op for key, op in names.items() if not found[key]]
        if missing:
            return [self._missing(contract, scope, op) for op in missing]
        problems: list[Diagnostic] = []
        for index in range(len(steps) - 1):
            first, then = f"S{index}", f"S{index + 1}"
            if contract.spec.strict:
                label = contract.label(steps[index])
                for event in found[then]:
                    if _any_world(results, event, _without(first)):
                        message = f"`{event.text()}` can run before `{label}`"
                        problems.append(self._at(contract, event, message))
            else:
                label = contract.label(steps[index + 1])
                for event in found[first]:
                    if _any_world(results, event, _with(then)):
                        message = f"`{event.text()}` can run after `{label}`"
                        problems.append(self._at(contract, event, message))
        return problems

    def _guarded(self, contract: Contract, scope: Scope) -> list[Diagnostic]:
        spec = contract.spec
        assert spec.guarded is not None and spec.by is not None
        wanted = "fail" if spec.when == "failure" else "ok"
        results, found = self._flow(contract, scope, {"A": spec.by, "B": spec.guarded})
        if not found["B"]:
            return [self._missing(contract, scope, spec.guarded)]
        outcome = "failed" if wanted == "fail" else "succeeded"
        problems = []
        for event in found["B"]:
            bad = _any_world(results, event, lambda w: (w.mark("A") or ("", "", 0))[1] != wanted)
            if bad or not found["A"]:
                problems.append(
                    self._at(
                        contract,
                        event,
                        f"`{event.text()}` can run when `{contract.label(spec.by)}`"
                        f" has not {outcome}",
                    )
                )
        return problems

    def _cleanup(self, contract: Contract, scope: Scope) -> list[Diagnostic]:
        spec = contract.spec
        assert spec.cleanup is not None and spec.after is not None
        results, found = self._flow(contract, scope, {"A": spec.after, "E": spec.cleanup})
        missing = [op for op, key in ((spec.after, "A"), (spec.cleanup, "E")) if not found[key]]
        if missing:
            return [self._missing(contract, scope, op) for op in missing]
        when = {"success": "ok", "failure": "fail"}.get(spec.when or "always")

        def pending(world: World) -> int | None:
            mark = world.mark("A")
            if mark is None or (when is not None and mark[1] != when):
                return None
            return None if world.ran_after("E", "A") else mark[2]

        by_id = {e.id: e for e in found["A"]}
        culprits: set[int] = set()
        for result in results:
            culprits |= {p for w in result.ends if (p := pending(w)) is not None}
        label = contract.label(spec.cleanup)
        return [
            self._at(contract, by_id[c], f"a path after `{by_id[c].text()}` ends without `{label}`")
            for c in culprits
            if c in by_id
        ]


def shell_runs(document: CheckedDocument, units: list[Unit], watched: set[int]) -> list[FlowUnit]:
    """The shell processes the units run in: per step (fixloop's runner) or per block.

    A run holding no watched command carries its summary (can it end normally, can it fail),
    computed once per document, so each contract interprets only the runs that matter to it.
    """
    checker = document.contracts.checker
    per_step = document.runner if checker.one_shell_per_step is None else checker.one_shell_per_step
    groups: list[list[Unit]] = []
    for unit in units:
        previous = groups[-1][-1] if groups else None
        same_step = (
            previous is not None
            and unit.step is not None
            and unit.step == previous.step
            and unit.finally_ == previous.finally_  # a finally block runs on its own, at the end
        )
        if per_step and same_step:
            groups[-1].append(unit)
        else:
            groups.append([unit])
    runs: list[FlowUnit] = []
    for group in groups:
        items = [item for unit in group for item in unit.script.body.items]
        errexit = errexit_of(document, group[0])
        run = FlowUnit(Seq(group[0].script.body.pos, items=items), group[0].finally_, errexit)
        key = tuple(id(unit) for unit in group)
        facts = document.runs.get(key)
        if facts is None:
            functions, flags = scan_run(run.body)
            libraries = group[-1].libraries
            # The libraries' functions are converted when the analysis first calls one.
            names = frozenset(n for lib in libraries for n in lib.sources) - frozenset(functions)
            known = RunFunctions(functions, libraries) if libraries else functions
            facts = RunFacts(known, flags, names, libraries=libraries)
            document.runs[key] = facts
        run.facts = facts
        if not any(e.id in watched for unit in group for e in unit.events):
            if facts.summary is None:
                facts.summary = summarize(run)
            run.summary = facts.summary
        runs.append(run)
    return runs


def _any_world(
    results: list[FlowResult], event: CommandEvent, test: Callable[[World], bool]
) -> bool:
    return any(test(w) for r in results for w in r.before.get(event.id, ()))


def _without(name: str) -> Callable[[World], bool]:
    return lambda world: world.mark(name) is None


def _with(name: str) -> Callable[[World], bool]:
    return lambda world: world.mark(name) is not None


def _first_line(document: CheckedDocument) -> int:
    return document.source.body_line


def _words(text: str) -> str:
    # A sentence survives rewrapping and a capital letter; any other edit to it is a change.
    return " ".join(text.split()).lower()
