"""Judging contracts: select the events in scope, run the path analysis, report violations.

A violation is reported where a reader has to act: at the command that runs too early or outside
its guard, at the command whose path can end without its cleanup, at the surplus occurrence; and
for a command that is missing, at the heading of the step that should hold it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from fixloop.contracts.document import CheckedDocument, Unit
from fixloop.contracts.events import CommandEvent
from fixloop.contracts.flow import Flow, summarize
from fixloop.contracts.language import Contract, Operand, ScopeSpec
from fixloop.contracts.patterns import Pattern, matches
from fixloop.contracts.tree import Seq
from fixloop.contracts.worlds import FlowResult, World
from fixloop.contracts.worlds import Unit as FlowUnit
from fixloop.diagnostics import Diagnostic

Lookup = Callable[[Path], CheckedDocument | None]
_VAR = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


@dataclass
class Scope:
    parts: list[tuple[CheckedDocument, list[Unit]]]
    anchor: tuple[str, int]
    what: str

    @property
    def events(self) -> list[CommandEvent]:
        return [e for _, units in self.parts for u in units for e in u.events]


def static_values(document: CheckedDocument) -> dict[str, str]:
    """Variables assigned one value, once or always the same, without command substitution."""
    seen: dict[str, set[str]] = {}
    for unit in document.units:
        for event in unit.events:
            for assign in event.command.assigns:
                if assign.value is not None:
                    seen.setdefault(assign.name, set()).add(assign.value.shape)
        for pairs in _assign_only(unit):
            for name, shape in pairs:
                seen.setdefault(name, set()).add(shape)
    return {k: next(iter(v)) for k, v in seen.items() if len(v) == 1 and "$(" not in next(iter(v))}


def _assign_only(unit: Unit) -> list[list[tuple[str, str]]]:
    from fixloop.contracts.events import iter_commands

    found = []
    for command in iter_commands(unit.script.body):
        if not command.words:
            found.append([(a.name, a.value.shape) for a in command.assigns if a.value is not None])
    return found


def forms_for(document: CheckedDocument) -> Callable[[str], Sequence[str]]:
    values = static_values(document)

    @cache
    def forms(shape: str) -> tuple[str, ...]:
        resolved = shape
        for _ in range(4):
            nxt = _VAR.sub(lambda m: values.get(m[1], m[0]), resolved)
            if nxt == resolved:
                break
            resolved = nxt
        return (shape,) if resolved == shape else (shape, resolved)

    return forms


class Evaluator:
    def __init__(self, document: CheckedDocument, lookup: Lookup) -> None:
        self.document = document
        self.lookup = lookup

    @staticmethod
    def _forms(document: CheckedDocument) -> Callable[[str], Sequence[str]]:
        if document.forms is None:
            document.forms = forms_for(document)
        return document.forms

    def matching(self, contract: Contract, operand: Operand, scope: Scope) -> list[CommandEvent]:
        patterns = contract.patterns(operand)
        found = []
        for document, units in scope.parts:
            ids: set[int] = set()
            for pattern in patterns:
                if pattern.text not in document.matched:
                    forms = self._forms(document)
                    document.matched[pattern.text] = [
                        e.id for e in _candidates(document, pattern) if _matches(pattern, e, forms)
                    ]
                ids.update(document.matched[pattern.text])
            found += [e for unit in units for e in unit.events if e.id in ids]
        return found

    # -- scope --------------------------------------------------------------------------------

    def scope(self, contract: Contract) -> tuple[Scope, list[Diagnostic]]:
        doc = self.document
        spec = contract.spec.scope
        problems: list[Diagnostic] = []
        if spec == "document":
            return Scope([(doc, doc.units)], (doc.display, _first_line(doc)), "the document"), []
        if spec == "briefs":
            parts = [(doc, [u for u in doc.units if "brief" in u.block.info.split()])]
            for path in self._brief_paths():
                other = self.lookup(path)
                if other is None:
                    problems.append(self._problem(contract, f"brief document {path} not found"))
                else:
                    parts.append((other, other.units))
            return Scope(parts, (doc.display, doc.source.line_of("agents")), "the briefs"), problems
        assert isinstance(spec, ScopeSpec)
        if spec.agents is not None:
            parts = []
            for name in spec.agents:
                other = self.lookup(doc.source.path.parent.parent / "agents" / f"{name}.md")
                if other is None:
                    problems.append(self._problem(contract, f"no agent document {name!r}"))
                else:
                    parts.append((other, other.units))
            return Scope(parts, (doc.display, 1), f"agents {', '.join(spec.agents)}"), problems
        named = [spec.step] if spec.step else (spec.steps or spec.except_steps or [])
        unknown = [n for n in named if n not in doc.step_names]
        for name in unknown:
            problems.append(
                self._problem(
                    contract,
                    f"no step {name!r} in {doc.display} (steps: {', '.join(doc.step_names)})",
                )
            )
        if spec.except_steps is not None:
            units = [u for u in doc.units if u.step not in spec.except_steps]
            anchor = _first_line(doc)
            what = f"the document except step(s) {', '.join(spec.except_steps)}"
        else:
            units = [u for u in doc.units if u.step in named]
            anchor = doc.step_line(named[0]) if named and not unknown else 1
            what = f"step {', '.join(named)}"
        return Scope([(doc, units)], (doc.display, anchor), what), problems

    def _brief_paths(self) -> list[Path]:
        doc = self.document
        agents_dir = doc.source.path.parent.parent / "agents"
        paths = [agents_dir / f"{name}.md" for name in doc.agents]
        paths += [(doc.source.path.parent / rel).resolve() for rel in doc.contracts.checker.briefs]
        return paths

    def _problem(self, contract: Contract, message: str) -> Diagnostic:
        return Diagnostic(
            contract.origin, contract.line, 1, "contract-scope", f"{contract.id}: {message}"
        )

    # -- judging ------------------------------------------------------------------------------

    def check(self, contract: Contract) -> list[Diagnostic]:
        scope, problems = self.scope(contract)
        if problems:
            return problems
        kind = contract.kind
        judge = {
            "forbidden": self._forbidden,
            "required": self._required,
            "count": self._count,
            "order": self._order,
            "guarded": self._guarded,
            "cleanup": self._cleanup,
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
        if len(found) < low:
            if not found:
                return [self._missing(contract, scope, spec.count)]
            return [
                self._at(
                    contract,
                    found[-1],
                    f"`{label}` appears {len(found)} time(s) in "
                    f"{scope.what}; expected at least {low}",
                )
            ]
        if high is not None and len(found) > high:
            return [
                self._at(
                    contract,
                    e,
                    f"`{label}` appears {len(found)} times in {scope.what};"
                    f" expected at most {high}",
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
                    if _any_world(results, event, lambda w, name=first: w.mark(name) is None):
                        message = f"`{event.text()}` can run before `{label}`"
                        problems.append(self._at(contract, event, message))
            else:
                label = contract.label(steps[index + 1])
                for event in found[first]:
                    if _any_world(results, event, lambda w, name=then: w.mark(name) is not None):
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
    workflow = document.kind == "workflow"
    errexit = workflow if checker.errexit is None else checker.errexit
    per_step = workflow if checker.one_shell_per_step is None else checker.one_shell_per_step
    groups: list[list[Unit]] = []
    for unit in units:
        previous = groups[-1][-1] if groups else None
        same_step = previous is not None and unit.step is not None and unit.step == previous.step
        if per_step and same_step:
            groups[-1].append(unit)
        else:
            groups.append([unit])
    runs: list[FlowUnit] = []
    for group in groups:
        items = [item for unit in group for item in unit.script.body.items]
        run = FlowUnit(Seq(group[0].script.body.pos, items=items), group[0].finally_, errexit)
        if not any(e.id in watched for unit in group for e in unit.events):
            key = tuple(id(unit) for unit in group)
            if key not in document.summaries:
                document.summaries[key] = summarize(run)
            run.summary = document.summaries[key]
        runs.append(run)
    return runs


def _candidates(document: CheckedDocument, pattern: Pattern) -> list[CommandEvent]:
    """Events that can match: those named like the pattern, unless its name is a glob or `$`."""
    if any(c in pattern.name for c in "*?[$"):
        return document.events
    if not document.by_name:
        for event in document.events:
            name = event.name.rsplit("/", 1)[-1] if not event.name.startswith("$") else "$"
            document.by_name.setdefault(name, []).append(event)
        document.by_name.setdefault("$", [])
    return document.by_name.get(pattern.name, []) + document.by_name["$"]


def _matches(pattern: Pattern, event: CommandEvent, forms: Callable[[str], Sequence[str]]) -> bool:
    return matches(pattern, event.shapes, forms)


def _any_world(
    results: list[FlowResult], event: CommandEvent, test: Callable[[World], bool]
) -> bool:
    return any(test(w) for r in results for w in r.before.get(event.id, ()))


def _first_line(document: CheckedDocument) -> int:
    return document.source.body_line
