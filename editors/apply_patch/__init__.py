"""Codex-compatible ``apply_patch`` on a vfs workspace: one patch, one transaction.

Layers: :mod:`.parser` (patch text -> dataclasses, Codex's exact rules and texts), :mod:`.matcher`
(Codex's ``seek_sequence`` and the line-ending preserving rewrite), :mod:`.applier` (a pure plan:
what every file becomes), :mod:`.tool` (the transaction, tool definitions, tool-call adapter).
"""

from editors.apply_patch.applier import FileChange, PatchPlan, Step, plan_patch
from editors.apply_patch.errors import (
    ALL_PATCH_ERRORS,
    ApplyPatchError,
    PatchContextNotFound,
    PatchDeleteFailed,
    PatchEmpty,
    PatchFileNotFound,
    PatchInvalidInput,
    PatchLinesNotFound,
    PatchParseError,
    PatchReadFailed,
    PatchWriteFailed,
)
from editors.apply_patch.parser import AddFile, Chunk, DeleteFile, Patch, UpdateFile, parse_patch
from editors.apply_patch.tool import (
    ApplyResult,
    ToolOutput,
    apply_patch,
    call_tool,
    mcp_tool,
    openai_custom_tool,
    openai_function_tool,
    patch_from_arguments,
    tool_definitions,
)

__all__ = [
    "ALL_PATCH_ERRORS",
    "AddFile",
    "ApplyPatchError",
    "ApplyResult",
    "Chunk",
    "DeleteFile",
    "FileChange",
    "Patch",
    "PatchContextNotFound",
    "PatchDeleteFailed",
    "PatchEmpty",
    "PatchFileNotFound",
    "PatchInvalidInput",
    "PatchLinesNotFound",
    "PatchParseError",
    "PatchPlan",
    "PatchReadFailed",
    "PatchWriteFailed",
    "Step",
    "ToolOutput",
    "UpdateFile",
    "apply_patch",
    "call_tool",
    "mcp_tool",
    "openai_custom_tool",
    "openai_function_tool",
    "parse_patch",
    "patch_from_arguments",
    "plan_patch",
    "tool_definitions",
]
