"""One registry of the model-facing tools: their definitions for every provider, and dispatch.

Definitions come from the tools' own modules (the argument model of ``str_replace_editor``, the
Lark grammar and input schema of ``apply_patch``), so every surface (``vfs schema``, the MCP
server, :mod:`editors.integration`) shows the model exactly what the tools accept.

Formats (``FORMATS``):

- ``openai``: what to send to the OpenAI Responses API: ``apply_patch`` as a freeform custom tool
  constrained by its Lark grammar, ``str_replace_editor`` as a function tool;
- ``openai-function``: both as JSON function tools (``apply_patch`` takes one string ``input``);
- ``anthropic``: Anthropic Messages API custom tools (``name``, ``description``, ``input_schema``);
- ``mcp``: MCP tool definitions (``name``, ``description``, ``inputSchema``, ``outputSchema``: the
  structured result, :func:`editors.result.output_schema`).

:class:`Toolset` runs calls: one workspace, one observation session shared by both tools (an
``apply_patch`` records the versions it wrote, as an editor's own edit does).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

import vfs
from editors.result import ToolResult, error_result, output_schema, unexpected_result

if TYPE_CHECKING:
    from editors.str_replace_editor.config import EditorConfig

STR_REPLACE_EDITOR = "str_replace_editor"
APPLY_PATCH = "apply_patch"
TOOL_NAMES: tuple[str, ...] = (STR_REPLACE_EDITOR, APPLY_PATCH)
FORMATS: tuple[str, ...] = ("openai", "openai-function", "anthropic", "mcp")


class UnknownTool(vfs.InvalidArgument):
    """A call named a tool this registry does not have (``FS_INVALID_ARGUMENT``)."""


def _unknown_tool(name: object) -> UnknownTool:
    shown = name if isinstance(name, str) else json.dumps(name, default=repr)
    return UnknownTool(f"Unknown tool {shown}: the available tools are {', '.join(TOOL_NAMES)}.")


def _editor_config(config: Any) -> EditorConfig:
    from editors.str_replace_editor.config import make_config

    return make_config(dict(config) if isinstance(config, Mapping) else config)


# -- definitions ----------------------------------------------------------------------------------


def definition(name: str, fmt: str, *, config: Any = None) -> dict[str, Any]:
    """The definition of tool ``name`` in format ``fmt`` (``config``: the str_replace_editor config).

    Raises :class:`ValueError` for an unknown tool or format, and the editor's ``ConfigError`` for
    an invalid config.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: expected one of {', '.join(FORMATS)}")
    found = _definition(name, fmt, config)
    if fmt == "mcp":  # MCP carries the structured result too (``structuredContent``)
        return {**found, "outputSchema": output_schema()}
    return found


def _definition(name: str, fmt: str, config: Any) -> dict[str, Any]:
    if name == STR_REPLACE_EDITOR:
        from editors.str_replace_editor import definitions as sre

        cfg = _editor_config(config)
        if fmt in ("openai", "openai-function"):
            return sre.openai_function_tool(cfg)
        if fmt == "anthropic":
            return sre.anthropic_tool(cfg)
        return sre.mcp_tool(cfg)
    if name == APPLY_PATCH:
        from editors.apply_patch import tool as ap

        if fmt == "openai":
            return ap.openai_custom_tool()
        if fmt == "openai-function":
            return ap.openai_function_tool()
        mcp = ap.mcp_tool()
        if fmt == "anthropic":
            return {"name": mcp["name"], "description": mcp["description"], "input_schema": mcp["inputSchema"]}
        return mcp
    raise ValueError(f"unknown tool {name!r}: expected one of {', '.join(TOOL_NAMES)}")


def definitions(
    fmt: str, *, tools: tuple[str, ...] | list[str] | None = None, config: Any = None
) -> list[dict[str, Any]]:
    """The definitions of ``tools`` (default: all, in registry order) in format ``fmt``."""
    return [definition(name, fmt, config=config) for name in (TOOL_NAMES if tools is None else tools)]


def input_schema(definition_: Mapping[str, Any]) -> dict[str, Any] | None:
    """The JSON schema of a definition's arguments, whatever its format (``None``: freeform)."""
    for key in ("inputSchema", "input_schema", "parameters"):
        if key in definition_:
            return cast(dict[str, Any], definition_[key])
    return None


# -- calls ----------------------------------------------------------------------------------------


class Toolset:
    """Both tools over one workspace, for one conversation (one MCP client, one agent loop).

    ``session``: ``True`` (default) keeps a :class:`vfs.Session` with the stock observation policy
    (an edit needs a prior ``view`` of the file, or this conversation's own write of it); a
    :class:`vfs.Session` shares one you already have; ``False`` is one-shot mode (nothing is
    remembered between calls, as ``vfs tool`` does). ``config`` configures ``str_replace_editor``
    (``max_output_chars``, ``description``, ``enable_undo``); an invalid one raises ``ConfigError``.

    :meth:`call` never raises for anything the model or the storage did: failures come back as
    a :class:`editors.result.ToolResult` with ``is_error`` set. Calls on one toolset are serialized.
    """

    def __init__(self, workspace: vfs.Workspace, *, session: bool | vfs.Session = True, config: Any = None) -> None:
        from editors.str_replace_editor.tool import StrReplaceEditor

        self.workspace = workspace
        if isinstance(session, vfs.Session):
            self.session: vfs.Session | None = session
        else:
            self.session = workspace.session() if session else None
        self.editor = StrReplaceEditor(
            workspace, config=_editor_config(config), session=self.session if self.session is not None else False
        )
        self._lock = threading.Lock()

    @property
    def config(self) -> EditorConfig:
        return self.editor.config

    def definitions(self, fmt: str) -> list[dict[str, Any]]:
        """This toolset's definitions (its editor config applies) in format ``fmt``."""
        return definitions(fmt, config=self.editor.config)

    def call(self, name: str, arguments: Any) -> ToolResult:
        """Run one call of tool ``name``.

        ``arguments``: for ``str_replace_editor`` a mapping (or its JSON text); for
        ``apply_patch`` the patch text, ``{"input": patch}`` or its JSON text.
        """
        with self._lock:
            try:
                if name == STR_REPLACE_EDITOR:
                    return self._editor(arguments)
                if name == APPLY_PATCH:
                    return self._apply_patch(arguments)
                return error_result(_unknown_tool(name))
            except vfs.VfsError as exc:
                return error_result(exc)
            except Exception as exc:  # noqa: BLE001 - a tool call must never surface a traceback
                return unexpected_result(exc)

    __call__ = call

    def _editor(self, arguments: Any) -> ToolResult:
        if isinstance(arguments, (bytes, bytearray)):
            arguments = bytes(arguments).decode("utf-8", errors="replace")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError as exc:
                raise vfs.InvalidArgument(
                    f"The arguments of the {STR_REPLACE_EDITOR} tool must be a JSON object; "
                    f"they are not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})."
                ) from None
        return self.editor.run(arguments)

    def _apply_patch(self, arguments: Any) -> ToolResult:
        from editors.apply_patch.tool import call_tool

        session = self.session.id if self.session is not None else None
        # Codex's texts, as models know them
        return call_tool(self.workspace, arguments, on_commit=self._record, session=session)

    def _record(self, commit: vfs.CommitResult) -> None:
        """What this conversation wrote, it has seen: the versions it committed become observations."""
        if self.session is None:
            return
        for path, version in commit.versions.items():
            try:
                self.session.observe(path, version)
            except vfs.VfsError:  # a key outside the model-facing tree (a symlink's target)
                continue
