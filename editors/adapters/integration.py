"""Use the tools from any agent loop, in process, with no server.

    import vfs
    from editors.integration import handle_tool_call, tool_definitions

    ws = vfs.open_workspace("/path/to/repo")
    session = ws.session()                      # one per conversation: edits need a prior view
    tools = tool_definitions("openai")          # or "openai-function", "anthropic", "mcp"
    ...
    for item in response.output:                # OpenAI Responses API
        if item.type in ("custom_tool_call", "function_call"):
            reply = handle_tool_call(ws, item, session=session)
            next_input.append(reply.message())  # {"type": "custom_tool_call_output", ...}

:func:`handle_tool_call` takes a tool name and its arguments, or one provider tool-call object:

- OpenAI Responses custom tool call: ``{"type": "custom_tool_call", "call_id", "name", "input": str}``;
- OpenAI Responses function call: ``{"type": "function_call", "call_id", "name", "arguments": json}``;
- OpenAI Chat Completions tool call: ``{"id", "type": "function", "function": {"name", "arguments"}}``;
- Anthropic ``tool_use`` block: ``{"type": "tool_use", "id", "name", "input": dict}``;

as dicts or as the provider SDK's objects (anything with ``model_dump()`` or those attributes). It
returns a :class:`editors.result.ToolResult`: the text for the model, ``is_error``, a stable
``code``, ``data``, and :meth:`~editors.result.ToolResult.message` builds what to send back in the
caller's own provider format.

Mistakes the model made (an unknown tool, arguments that are not JSON, a failed edit) come back
as error replies to send to the model; only a call object of no known shape raises ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import vfs
from backends.values import value
from editors.result import ToolResult
from editors.tools import FORMATS, TOOL_NAMES, Toolset, definitions

Provider = Literal["openai-custom", "openai-function", "openai-chat", "anthropic", "plain"]

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


@value(frozen=True)
class ToolCall:
    """A provider tool call, normalized: ``provider``, ``name``, ``arguments``, ``call_id``."""

    provider: Provider
    name: str
    arguments: Any
    call_id: str | None = None

    def reply(self, result: ToolResult) -> dict[str, Any]:
        """The item answering this call with ``result``, in the format of the provider that made it.

        OpenAI Responses: a ``custom_tool_call_output`` / ``function_call_output`` input item;
        Chat Completions: a ``tool`` role message; Anthropic: a ``tool_result`` content block
        (``is_error`` set on failure); a plain call (name and arguments): the result's ``to_dict()``.
        """
        if self.provider == "openai-custom":
            return {"type": "custom_tool_call_output", "call_id": self.call_id, "output": result.text}
        if self.provider == "openai-function":
            return {"type": "function_call_output", "call_id": self.call_id, "output": result.text}
        if self.provider == "openai-chat":
            return {"role": "tool", "tool_call_id": self.call_id, "content": result.text}
        if self.provider == "anthropic":
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": self.call_id, "content": result.text}
            if result.is_error:
                block["is_error"] = True
            return block
        return result.to_dict()


def tool_definitions(
    fmt: str = "openai", *, tools: list[str] | None = None, config: Any = None
) -> list[dict[str, Any]]:
    """The tool definitions to give the model (see :mod:`editors.tools` for the formats)."""
    return definitions(fmt, tools=tools, config=config)


# -- call objects ---------------------------------------------------------------------------------


def _as_mapping(call: Any) -> Mapping[str, Any]:
    if isinstance(call, Mapping):
        return call
    dump = getattr(call, "model_dump", None)  # openai / anthropic SDK objects are pydantic models
    if callable(dump):
        dumped = dump()
        if isinstance(dumped, Mapping):
            return dumped
    keys = ("type", "id", "call_id", "name", "input", "arguments", "function")
    found = {key: getattr(call, key) for key in keys if hasattr(call, key)}
    if found:
        return found
    raise ValueError(f"not a tool call: {type(call).__name__} (expected a dict or a provider tool-call object)")


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"tool call {what} must be a string, got {type(value).__name__}")
    return value


def parse_tool_call(call: Any) -> ToolCall:
    """Normalize one provider tool-call object (see the module docstring); ``ValueError`` if unknown."""
    data = _as_mapping(call)
    kind = data.get("type")
    if kind == "custom_tool_call":
        return ToolCall("openai-custom", _text(data.get("name"), "name"), data.get("input"), data.get("call_id"))
    if kind == "function_call":
        return ToolCall("openai-function", _text(data.get("name"), "name"), data.get("arguments"), data.get("call_id"))
    if kind == "tool_use":
        return ToolCall("anthropic", _text(data.get("name"), "name"), data.get("input"), data.get("id"))
    function = data.get("function")
    if kind == "function" and isinstance(function, Mapping):
        return ToolCall("openai-chat", _text(function.get("name"), "name"), function.get("arguments"), data.get("id"))
    shown = kind if kind is not None else "no type"
    raise ValueError(
        f"unrecognized tool call ({shown}): expected an OpenAI custom_tool_call or function_call, "
        "a Chat Completions tool call, or an Anthropic tool_use block"
    )


# -- the call -------------------------------------------------------------------------------------


def handle_tool_call(
    workspace: vfs.Workspace,
    name_or_call: Any,
    arguments: Any = None,
    *,
    session: vfs.Session | Toolset | None = None,
    config: Any = None,
) -> ToolResult:
    """Run one tool call against ``workspace`` and return the reply for the model.

    ``name_or_call``: a tool name (then ``arguments`` are its arguments: a dict, a JSON string,
    or for ``apply_patch`` the patch text) or a provider tool-call object (then ``arguments`` must
    be omitted). ``session``: a :class:`vfs.Session` (``workspace.session()``) kept for the whole
    conversation, so edits are checked against what the model has seen; or a :class:`Toolset`;
    ``None`` runs the call one-shot, remembering nothing (edits are still guarded by version
    within the call). ``config``: the ``str_replace_editor`` config (``max_output_chars``,
    ``description``, ``enable_undo``); ignored when ``session`` is a :class:`Toolset`.
    """
    if isinstance(name_or_call, str):
        call = ToolCall("plain", name_or_call, arguments)
    else:
        if arguments is not None:
            raise ValueError("pass either a tool name and its arguments, or one tool-call object")
        call = parse_tool_call(name_or_call)
    if isinstance(session, Toolset):
        if session.workspace is not workspace:
            raise ValueError("the Toolset passed as session belongs to another workspace")
        toolset = session
    else:
        toolset = Toolset(workspace, session=session if session is not None else False, config=config)
    problem = _function_arguments_problem(call)
    if problem is not None:
        from editors.result import error_result

        return error_result(problem).answering(call)
    return toolset.call(call.name, call.arguments).answering(call)


def _function_arguments_problem(call: ToolCall) -> vfs.InvalidArgument | None:
    """What is wrong with a function call's ``apply_patch`` arguments (always a JSON object, by the
    function's schema), said as such rather than as a patch whose first line is wrong."""
    if call.name != "apply_patch" or call.provider not in ("openai-function", "openai-chat"):
        return None
    if not isinstance(call.arguments, str):
        return None
    import json

    try:
        decoded = json.loads(call.arguments)
    except json.JSONDecodeError as exc:
        return vfs.InvalidArgument(
            f"The arguments of the apply_patch call are not valid JSON: {exc.msg} (line {exc.lineno}, column "
            f'{exc.colno}). Send a JSON object with one key, "input": the whole patch as a string.'
        )
    if not isinstance(decoded, dict):
        return vfs.InvalidArgument(
            f"The arguments of the apply_patch call must be a JSON object, got {type(decoded).__name__}. "
            'Send a JSON object with one key, "input": the whole patch as a string.'
        )
    if "input" not in decoded and "patch" not in decoded:  # "patch": the envelope models send by mistake, accepted
        keys = ", ".join(sorted(map(str, decoded))) or "no keys"
        return vfs.InvalidArgument(
            f'The arguments of the apply_patch call have no "input" key (got {keys}). Send a JSON object '
            'with one key, "input": the whole patch as a string.'
        )
    return None
