"""The one result of a tool call, whichever tool ran and whichever surface shows it.

:class:`ToolResult` is what the model gets back (``text``), whether the call failed
(``is_error``, with a stable ``code``), structured ``data`` for a presentation surface (the
diff cards and locations of :mod:`editors.diffcard`; :func:`output_schema`), and the provider call
it answers, if any.
:func:`error_result` is the one way a failure becomes a result; :func:`dumps` the one
byte-stable JSON text. Each adapter renders a result once for its surface (CLI, MCP, provider
messages).

Imported by ``vfs apply``: no imports beyond ``vfs`` at module level (``json`` only in :func:`dumps`).
"""

from __future__ import annotations

from collections.abc import Mapping

import vfs
from backends.values import Protocol, value

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import Any

ERROR_PREFIX = "Error: "


class AnsweredCall(Protocol):
    """A provider's tool call (see :class:`editors.adapters.integration.ToolCall`): how to answer it."""

    def reply(self, result: ToolResult) -> dict[str, Any]: ...


@value(frozen=True)
class ToolResult:
    """``text`` for the model; ``is_error`` and a stable ``code`` on failure; optional ``data``;
    ``call``: the provider call it answers (:meth:`message` replies in that provider's format)."""

    text: str
    is_error: bool = False
    code: str | None = None
    data: Mapping[str, Any] | None = None
    call: AnsweredCall | None = None  # the provider call this answers (set by handle_tool_call)

    def __hash__(self) -> int:  # data is a mapping: hash what identifies the answer
        return hash((self.text, self.is_error, self.code))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (MCP structured content, a plain call's reply); ``data`` only when there is some."""
        out: dict[str, Any] = {"code": self.code, "is_error": self.is_error, "text": self.text}
        if self.data is not None:
            out["data"] = dict(self.data)
        return out

    def answering(self, call: AnsweredCall) -> ToolResult:
        """This result as the answer to ``call`` (so :meth:`message` speaks its provider's format)."""
        return ToolResult(self.text, self.is_error, self.code, self.data, call)

    def message(self) -> dict[str, Any]:
        """The item to send back to the provider whose call this answers; without one, :meth:`to_dict`."""
        return self.call.reply(self) if self.call is not None else self.to_dict()


def output_schema() -> dict[str, Any]:
    """The JSON schema of :meth:`ToolResult.to_dict` (the MCP tools' ``outputSchema``)."""
    from editors.diffcard import data_schema  # not at module level: `vfs apply` never needs it

    return {
        "type": "object",
        "properties": {
            "code": {"type": ["string", "null"]},
            "is_error": {"type": "boolean"},
            "text": {"type": "string", "description": "what the model reads"},
            "data": data_schema(),
        },
        "required": ["code", "is_error", "text"],
        "additionalProperties": False,
    }


def error_result(exc: vfs.VfsError, *, prefix: str = ERROR_PREFIX) -> ToolResult:
    """A failure as the model reads it: ``Error: <message>`` (``prefix=""``: Codex's texts, bare)."""
    return ToolResult(prefix + exc.message, True, exc.code)


def unexpected_result(exc: BaseException) -> ToolResult:
    """A failure nobody planned for (a bug, a backend's surprise): a tool error, never a traceback."""
    message = f"Unexpected failure ({type(exc).__name__}): {exc}. Nothing was changed."
    return ToolResult(ERROR_PREFIX + message, True, vfs.IOFailure.code)


def dumps(value: Any) -> str:
    """Byte-stable JSON text: sorted keys, two-space indent, UTF-8 kept, a final newline.

    The same value gives the same bytes in every run, so a provider's prompt cache stays valid.
    """
    import json  # not at module level: `vfs apply` imports this module and never needs json

    return json.dumps(value, sort_keys=True, ensure_ascii=False, indent=2) + "\n"
