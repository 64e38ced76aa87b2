"""Tool definitions of ``str_replace_editor`` for model providers, all from the one argument model.

The same config gives the same bytes in every process and run (key order fixed by construction,
no sets, no timestamps), so a provider's prompt cache stays valid while the tool is visible.
"""

from __future__ import annotations

from typing import Any

from editors.str_replace_editor.args import TOOL_NAME, input_schema
from editors.str_replace_editor.config import EditorConfig, make_config


def _config(config: EditorConfig | dict[str, Any] | None) -> EditorConfig:
    return make_config(config)


def anthropic_tool(config: EditorConfig | dict[str, Any] | None = None) -> dict[str, Any]:
    """Anthropic Messages API custom tool: ``name``, ``description``, ``input_schema``."""
    cfg = _config(config)
    return {"name": TOOL_NAME, "description": cfg.tool_description, "input_schema": input_schema(cfg.enable_undo)}


def openai_function_tool(config: EditorConfig | dict[str, Any] | None = None) -> dict[str, Any]:
    """OpenAI Responses API function tool (flat: ``type``, ``name``, ``description``, ``parameters``)."""
    cfg = _config(config)
    return {
        "type": "function",
        "name": TOOL_NAME,
        "description": cfg.tool_description,
        "strict": False,
        "parameters": input_schema(cfg.enable_undo),
    }


def openai_chat_tool(config: EditorConfig | dict[str, Any] | None = None) -> dict[str, Any]:
    """OpenAI Chat Completions function tool (``{"type": "function", "function": {...}}``)."""
    cfg = _config(config)
    return {
        "type": "function",
        "function": {
            "name": TOOL_NAME,
            "description": cfg.tool_description,
            "parameters": input_schema(cfg.enable_undo),
        },
    }


def mcp_tool(config: EditorConfig | dict[str, Any] | None = None) -> dict[str, Any]:
    """MCP tool definition."""
    cfg = _config(config)
    return {"name": TOOL_NAME, "description": cfg.tool_description, "inputSchema": input_schema(cfg.enable_undo)}


def tool_definitions(config: EditorConfig | dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    return {
        "anthropic": anthropic_tool(config),
        "openai": openai_function_tool(config),
        "openai_chat": openai_chat_tool(config),
        "mcp": mcp_tool(config),
    }
