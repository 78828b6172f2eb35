"""Test helpers shipped with fixloop, for our tests and for users testing their own documents.

Everything real except the model, with nothing but the claude-agent-sdk wheel and loopback:

- `messages_server.MessagesServer`: a scripted Anthropic Messages API the bundled Claude Code CLI
  talks to; it records every request (system prompt, tools, messages, call key).
- `turns`: what the scripted model says: `text`, `tool_use`, `structured`, `error`, `slow`.
- `responders`: `RecordedRequest`, and `Conversations` for runs with several agent calls.
- `replay.ScriptReplay`: a scripted-backend script played through the real CLI, call by call.
- `chat_server.ChatServer`: a scripted OpenAI-compatible Chat Completions API for the openai
  backend (`--base-url`); `chat_replay.ChatReplay` plays a scripted-backend script through it.
- `claude_cli`: the bundled CLI itself: `run_headless` (init message, slash commands) and
  `plugin_validate`.

Import the submodule you need; this package imports nothing, so using one stays cheap.
"""
