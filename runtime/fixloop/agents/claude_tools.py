"""A workflow's toolbox (`toolbox.py`) served to Claude Code as an in-process MCP server.

The CLI lists the tools as `mcp__fixloop__<name>`; each call runs the toolbox's Python in this
process, off the event loop that reads the CLI's messages (a tool may run tests for minutes).
"""

from __future__ import annotations

import base64
from typing import Any

import anyio
from claude_agent_sdk import McpSdkServerConfig, SdkMcpTool, create_sdk_mcp_server

from fixloop.agents.toolbox import TOOL_SERVER, Toolbox, ToolSpec


def _served(toolbox: Toolbox, spec: ToolSpec) -> SdkMcpTool[Any]:
    async def handler(arguments: dict[str, Any]) -> dict[str, Any]:
        reply = await anyio.to_thread.run_sync(toolbox.call, spec.name, arguments)
        content: list[dict[str, str]] = [{"type": "text", "text": reply.text}]
        if reply.image is not None:  # the SDK passes an MCP image block through to the model
            data = base64.b64encode(reply.image).decode("ascii")
            content.append({"type": "image", "data": data, "mimeType": "image/png"})
        return {"content": content, "is_error": reply.is_error}

    return SdkMcpTool(spec.name, spec.description, dict(spec.input_schema), handler)


def tool_server(toolbox: Toolbox) -> McpSdkServerConfig:
    """The toolbox as an MCP server named `fixloop`, for `ClaudeAgentOptions.mcp_servers`."""
    return create_sdk_mcp_server(TOOL_SERVER, tools=[_served(toolbox, s) for s in toolbox.specs()])


__all__ = ["tool_server"]
