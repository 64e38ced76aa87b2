"""Use the tools from any agent loop, in process: see :mod:`editors.adapters.integration`.

from editors.integration import handle_tool_call, tool_definitions
"""

from editors.adapters.integration import (
    FORMATS,
    TOOL_NAMES,
    ToolCall,
    ToolResult,
    Toolset,
    handle_tool_call,
    parse_tool_call,
    tool_definitions,
)

__all__ = [
    "FORMATS",
    "TOOL_NAMES",
    "ToolCall",
    "ToolResult",
    "Toolset",
    "handle_tool_call",
    "parse_tool_call",
    "tool_definitions",
]
