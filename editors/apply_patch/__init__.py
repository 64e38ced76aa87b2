"""Codex-compatible ``apply_patch`` on a vfs workspace: one patch, one transaction.

Layers: :mod:`.parser` (patch text -> plain records, Codex's exact rules and texts), :mod:`.matcher`
(Codex's ``seek_sequence`` and the line-ending preserving rewrite), :mod:`.applier` (a pure plan:
what every file becomes), :mod:`.tool` (the transaction, tool definitions, tool-call adapter).

The names below are loaded on first use (PEP 562), so that importing one layer (``vfs apply``
imports :mod:`.tool`, an error class only :mod:`.errors`) does not import the others.
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import Any

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
        apply_patch,
        call_tool,
        mcp_tool,
        openai_custom_tool,
        openai_function_tool,
        patch_from_arguments,
        tool_definitions,
    )


_EXPORTS: dict[str, str] = {
    "ALL_PATCH_ERRORS": "errors",
    "AddFile": "parser",
    "ApplyPatchError": "errors",
    "ApplyResult": "tool",
    "Chunk": "parser",
    "DeleteFile": "parser",
    "FileChange": "applier",
    "Patch": "parser",
    "PatchContextNotFound": "errors",
    "PatchDeleteFailed": "errors",
    "PatchEmpty": "errors",
    "PatchFileNotFound": "errors",
    "PatchInvalidInput": "errors",
    "PatchLinesNotFound": "errors",
    "PatchParseError": "errors",
    "PatchPlan": "applier",
    "PatchReadFailed": "errors",
    "PatchWriteFailed": "errors",
    "Step": "applier",
    "UpdateFile": "parser",
    "apply_patch": "tool",
    "call_tool": "tool",
    "mcp_tool": "tool",
    "openai_custom_tool": "tool",
    "openai_function_tool": "tool",
    "parse_patch": "parser",
    "patch_from_arguments": "tool",
    "plan_patch": "applier",
    "tool_definitions": "tool",
}

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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
