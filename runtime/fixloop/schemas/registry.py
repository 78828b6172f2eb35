"""Schema names as documents write them (`fixloop.output: FixerResult`) → pydantic models."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError

from fixloop.schemas.findings import Finding, ReviewOutput
from fixloop.schemas.results import (
    FixerResult,
    FixLoopResult,
    FixVerifyLoopOutput,
    ImplResult,
    WaveResult,
)

SCHEMAS: dict[str, type[BaseModel]] = {
    "Finding": Finding,
    "ReviewOutput": ReviewOutput,
    "FixerResult": FixerResult,
    "FixVerifyLoopOutput": FixVerifyLoopOutput,
    "ImplResult": ImplResult,
    "WaveResult": WaveResult,
    "FixLoopResult": FixLoopResult,
}


def is_known(name: str) -> bool:
    return name in SCHEMAS


def spelled(name: str) -> str | None:
    """The schema `name` means in any case, with or without `-`/`_` between its words; None
    when it names none. Documents still write the exact name (`is_known`): this is for people."""
    wanted = name.replace("-", "").replace("_", "").lower()
    return next((known for known in SCHEMAS if known.lower() == wanted), None)


def json_schema(name: str) -> dict[str, Any]:
    return SCHEMAS[name].model_json_schema()


def parse_output(name: str, raw: object) -> BaseModel:
    """Validate a role's output (a JSON string is decoded first); raises ValueError."""
    data = raw
    if isinstance(raw, str):
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValueError(f"output is not JSON: {exc.msg}") from None
    return SCHEMAS[name].model_validate(data)


__all__ = ["SCHEMAS", "ValidationError", "is_known", "json_schema", "parse_output", "spelled"]
