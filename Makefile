# The three loops: fast (no crash matrices, no real Claude Code CLI), full (what CI runs), lint.
PYTHON ?= .venv/bin/python

.PHONY: fast full lint

fast:
	$(PYTHON) -m pytest -n auto -m "not slow and not cli"

full:
	$(PYTHON) -m pytest -n auto --dist worksteal

lint:
	$(PYTHON) -m ruff check runtime tests bench workflows/lib
	$(PYTHON) -m ruff format --check runtime tests bench workflows/lib
	$(PYTHON) -m mypy
