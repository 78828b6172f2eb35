# The test loops (docs/testing.md). Each runs inside the virtualenv the README's Quick start makes.
PYTHON ?= .venv/bin/python
# Byte code is cached: the suite starts thousands of interpreters (.ci/run says why).
unexport PYTHONDONTWRITEBYTECODE
LINTED := runtime tests bench workflows/lib

.PHONY: fast full lint

# The inner loop: everything but the crash matrices, the long tests and the real Claude Code CLI.
fast:
	$(PYTHON) -m pytest -n auto --dist worksteal -m "not slow and not cli"

# The README's test command, what CI (.ci/run) runs: the whole suite, ruff and mypy included.
full:
	$(PYTHON) -m pytest -n auto --dist worksteal

# Lint, format and strict typing alone (the suite runs the same as tests/test_quality.py).
lint:
	$(PYTHON) -m ruff check $(LINTED)
	$(PYTHON) -m ruff format --check $(LINTED)
	$(PYTHON) -m mypy --strict
