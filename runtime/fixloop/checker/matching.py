"""Which events of a document match a command pattern: found once per pattern and document.

A word is matched through its forms: itself and, when its variables have one static value in the
document, the resolved text (see `patterns.py`); the document's static values are looked for when
a word with a `$` is first met. Candidates are the events named like the pattern;
a cheap test on the forms of their words rules most out before the structural match: the
candidates are indexed once by the forms of their words (form → the events holding it, in
order), and a pattern keeps only the events holding all its literal words. The index holds a
reference per form where a set of forms per event (its first shape) cost 2.2 MiB per MiB of bash
for the `git` commands of `forbidden: git stash`, more than the events themselves.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache

from fixloop.checker.document import CheckedDocument
from fixloop.checker.events import CommandEvent
from fixloop.checker.patterns import Forms, Pattern, literal_words, matches

_VAR = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


def matching_ids(document: CheckedDocument, pattern: Pattern) -> list[int]:
    """Ids of the events of `document` that match `pattern`."""
    found = document.matched.get(pattern.text)
    if found is None:
        if document.forms is None:
            document.forms = forms_for(document)
        forms = document.forms
        needed = literal_words(pattern)
        key, candidates = _candidates(document, pattern)
        if needed:  # the cheap test first: the events holding every literal word
            index = document.form_index.get(key)
            if index is None:
                index = document.form_index[key] = _index(candidates, forms)
            # The holders of its rarest word, already in the candidates' order, that hold the
            # rest: most patterns name a word no candidate holds, or just one word.
            words = sorted(needed, key=lambda w: len(index.get(w, ())))
            candidates = index.get(words[0], [])
            for word in words[1:]:
                if not candidates:
                    break
                holding = set(index.get(word, ()))
                candidates = [e for e in candidates if e in holding]
        found = []
        for event in candidates:
            if matches(pattern, event.shapes, forms):
                found.append(event.id)
        document.matched[pattern.text] = found
    return found


def static_values(document: CheckedDocument) -> dict[str, str]:
    """Variables assigned one value, once or always the same, without command substitution."""
    seen: dict[str, set[str]] = {}
    for unit in document.units:
        for event in unit.events:
            for assign in event.command.assigns:
                if assign.value is not None:
                    seen.setdefault(assign.name, set()).add(assign.value.shape)
        for name, shape in unit.assigned:
            seen.setdefault(name, set()).add(shape)
    return {k: next(iter(v)) for k, v in seen.items() if len(v) == 1 and "$(" not in next(iter(v))}


def forms_for(document: CheckedDocument) -> Callable[[str], Sequence[str]]:
    known: list[dict[str, str]] = []  # the static values, found when a shape first reads one

    @cache
    def forms(shape: str) -> tuple[str, ...]:
        if "$" not in shape:  # most words read no variable: nothing to resolve
            return (shape,)
        if not known:
            known.append(static_values(document))
        values = known[0]
        resolved = shape
        for _ in range(4):
            nxt = _VAR.sub(lambda m: values.get(m[1], m[0]), resolved)
            if nxt == resolved:
                break
            resolved = nxt
        return (shape,) if resolved == shape else (shape, resolved)

    return forms


def _candidates(document: CheckedDocument, pattern: Pattern) -> tuple[str, list[CommandEvent]]:
    """Events that can match: those named like the pattern, and those named by a variable (it
    may hold any name), unless the pattern's name is a glob or `$`; with the name they are found
    by (`*` for all)."""
    if any(c in pattern.name for c in "*?[$"):
        return "*", document.events
    by_name = document.by_name
    if "$" not in by_name:
        by_name["$"] = []
        for event in document.events:
            name = event.name
            if name.startswith("$"):
                name = "$"
            elif "/" in name:  # most commands are run by their name, not by a path
                name = name.rsplit("/", 1)[-1]
            by_name.setdefault(name, []).append(event)
        # Each name's list ends with the variable-named events, joined once, not per pattern.
        dollars = by_name["$"]
        for name, events in by_name.items():
            if name != "$":
                events.extend(dollars)
    return pattern.name, by_name.get(pattern.name, by_name["$"])


def _index(events: Sequence[CommandEvent], forms: Forms) -> dict[str, list[CommandEvent]]:
    """Form → the events among `events`, in their order, with a word after the name of that
    form."""
    index: dict[str, list[CommandEvent]] = {}
    for event in events:
        for form in {f for shape in event.shapes[1:] for f in forms(shape)}:
            index.setdefault(form, []).append(event)
    return index
