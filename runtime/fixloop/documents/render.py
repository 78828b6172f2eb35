"""Rendering a role document's body into the prompt a model receives.

One jinja2 environment with StrictUndefined: a missing input is an error naming the document and
the variable, never an empty string. Autoescape is off on purpose: prompts are plain text, and
values are data the model reads, not markup.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from typing import Any

import jinja2
from jinja2 import meta, nodes

from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.documents.source import SourceDocument


def _as_text(value: Any) -> Any:
    # Lists and objects reach the model as JSON, not as Python reprs.
    if isinstance(value, dict | list):
        return json.dumps(value, indent=2, ensure_ascii=False)
    return value


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        finalize=_as_text,
        keep_trailing_newline=True,
        autoescape=False,  # noqa: S701 - prompts are text for a model, not HTML
    )


def _line_in_file(source: SourceDocument, template_line: int | None) -> int:
    return source.body_line + (template_line or 1) - 1


def template_variables(source: SourceDocument) -> set[str]:
    """Names the body reads; raises FixloopError (file:line) when the body is not valid jinja2."""
    try:
        tree = environment().parse(source.body)
    except jinja2.TemplateSyntaxError as exc:
        raise FixloopError(
            Diagnostic(
                source.display, _line_in_file(source, exc.lineno), 1, "template", exc.message or ""
            )
        ) from None
    return set(meta.find_undeclared_variables(tree))


def _first_use(source: SourceDocument, name: str) -> int | None:
    tree = environment().parse(source.body)
    lines = [node.lineno for node in tree.find_all(nodes.Name) if node.name == name]
    return min(lines, default=None)


def render_template(source: SourceDocument, variables: Mapping[str, Any]) -> str:
    """Render `source`'s body with `variables`; every problem is a FixloopError naming the file."""
    try:
        template = environment().from_string(source.body)
        return template.render(**variables)
    except jinja2.UndefinedError as exc:
        missing = sorted(template_variables(source) - set(variables))
        if not missing:
            problem = Diagnostic(
                source.display, source.body_line, 1, "render", f"template error: {exc.message}"
            )
            raise FixloopError(problem) from None
        raise FixloopError(
            Diagnostic(
                source.display,
                _line_in_file(source, _first_use(source, name)),
                1,
                "render",
                f"missing input {name!r}",
            )
            for name in missing
        ) from None
    except jinja2.TemplateError as exc:
        line = getattr(exc, "lineno", None)
        raise FixloopError(
            Diagnostic(source.display, _line_in_file(source, line), 1, "template", str(exc))
        ) from None
