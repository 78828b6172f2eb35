"""Structured results the roles return: pydantic models, JSON Schema via `fixloop schema`."""
