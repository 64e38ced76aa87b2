"""The model-facing ``str_replace_editor`` tool (DSH / Anthropic text-editor compatible) over ``vfs``.

Pure parts: :mod:`args` (argument model, schema), :mod:`config`, :mod:`render` (file view),
:mod:`listing` (directory view), :mod:`edits` (str_replace / insert), :mod:`diagnose` (near
misses). :mod:`tool` runs a call against a workspace, one transaction per mutation.
"""

from editors.result import ToolResult
from editors.str_replace_editor.config import ConfigError, EditorConfig
from editors.str_replace_editor.definitions import (
    anthropic_tool,
    mcp_tool,
    openai_chat_tool,
    openai_function_tool,
    tool_definitions,
)
from editors.str_replace_editor.tool import StrReplaceEditor

__all__ = [
    "ConfigError",
    "EditorConfig",
    "StrReplaceEditor",
    "ToolResult",
    "anthropic_tool",
    "mcp_tool",
    "openai_chat_tool",
    "openai_function_tool",
    "tool_definitions",
]
