"""The extras: what stands beside the runtime core, never under it.

`browser` (headless Chromium and dev servers), `efficacy` (the bench harness), `demo` (the scripted
walk-through) and `testing` (a loopback model for the real Claude Code CLI). The core imports none
of them: the command line wires them in (tests/test_repository.py enforces it).
"""
