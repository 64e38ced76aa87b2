"""The arguments of ``str_replace_editor``: one pydantic model gives the JSON schema and the validation.

The schema a model sees and the checks its calls go through come from the same classes, so they
cannot drift apart. Validation failures are turned into the exact texts models expect (see the
spec, ``/work/shared/specs/str_replace_editor.md``); nothing here touches a filesystem.

**Ours**: ``insert`` also accepts ``insert_text`` as an alias of ``new_str`` (Claude models send
it); it is accepted, not advertised in the schema.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, StrictStr, ValidationError
from pydantic.json_schema import SkipJsonSchema

from vfs.errors import InvalidArgument

TOOL_NAME = "str_replace_editor"
COMMANDS: tuple[str, ...] = ("view", "create", "str_replace", "insert")
UNDO_COMMAND = "undo_edit"

VIEW_RANGE_TYPE_ERROR = "Invalid `view_range`. It should be a list of two integers."


class ArgumentError(InvalidArgument):
    """A tool call whose arguments are malformed; ``field`` names the offending parameter."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def _integral(value: Any) -> Any:
    """JSON has one number type: accept ``3.0`` as ``3`` (as the reference tool does), never a bool."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


JsonInt = Annotated[StrictInt, BeforeValidator(_integral)]


class EditorArgs(BaseModel):
    """Arguments of one ``str_replace_editor`` call (``undo_edit`` disabled)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: Literal["view", "create", "str_replace", "insert"] = Field(
        description="The command to run. Allowed options are: `view`, `create`, `str_replace`, `insert`.",
    )
    path: StrictStr = Field(
        description="Absolute path to a file or directory, e.g. `/repo/file.py` or `/repo`.",
    )
    file_text: StrictStr | None = Field(
        default=None,
        description="Required parameter of `create` command, with the content of the file to be created.",
    )
    insert_line: JsonInt | None = Field(
        default=None,
        description="Required parameter of `insert` command. The `new_str` will be inserted AFTER the line "
        "`insert_line` of `path` (0 inserts at the top of the file).",
    )
    new_str: StrictStr | None = Field(
        default=None,
        description="Optional parameter of `str_replace` command containing the new string (if not given, "
        "the matched string is deleted). Required parameter of `insert` command containing the string to "
        "insert.",
    )
    old_str: StrictStr | None = Field(
        default=None,
        description="Required parameter of `str_replace` command containing the string in `path` to replace.",
    )
    # The length is advertised in the schema but checked when the view runs (render), after the path:
    # the DSH editor reports a missing path before a view_range of the wrong length.
    view_range: list[JsonInt] | None = Field(
        default=None,
        json_schema_extra={"minItems": 2, "maxItems": 2},
        description="Optional parameter of `view` command when `path` points to a file. If none is given, "
        "the full file is shown. If provided, the file will be shown in the indicated line number range, "
        "e.g. [11, 12] will show lines 11 and 12. Indexing at 1 to start. Setting `[start_line, -1]` shows "
        "all lines from `start_line` to the end of the file.",
    )
    # **Ours**: accepted as an alias of ``new_str`` for ``insert``; kept out of the schema.
    insert_text: SkipJsonSchema[StrictStr | None] = None

    @property
    def replacement(self) -> str:
        """``new_str`` for ``str_replace``: missing means delete the match."""
        return self.new_str if self.new_str is not None else ""


class EditorArgsWithUndo(EditorArgs):
    """Arguments when ``undo_edit`` is enabled (it changes the schema, so it is a separate model)."""

    command: Literal["view", "create", "str_replace", "insert", "undo_edit"] = Field(  # type: ignore[assignment]
        description="The command to run. Allowed options are: `view`, `create`, `str_replace`, `insert`, `undo_edit`.",
    )


def model_for(enable_undo: bool) -> type[EditorArgs]:
    return EditorArgsWithUndo if enable_undo else EditorArgs


def allowed_commands(enable_undo: bool) -> tuple[str, ...]:
    return (*COMMANDS, UNDO_COMMAND) if enable_undo else COMMANDS


# ---------------------------------------------------------------------------------------------
# JSON schema


def _clean(node: Any) -> Any:
    """Drop pydantic's titles and ``default: null``; ``anyOf [X, null]`` becomes X (optional = not required)."""
    if isinstance(node, list):
        return [_clean(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    any_of = node.get("anyOf")
    if isinstance(any_of, list):
        non_null = [branch for branch in any_of if branch != {"type": "null"}]
        if len(non_null) == 1 and len(non_null) < len(any_of):
            merged = dict(non_null[0])
            merged.update({k: v for k, v in node.items() if k != "anyOf"})
            node = merged
    for key, value in node.items():
        if key == "title" or (key == "default" and value is None):
            continue
        out[key] = _clean(value) if key != "properties" else {k: _clean(v) for k, v in value.items()}
    return out


def _ordered(prop: dict[str, Any]) -> dict[str, Any]:
    """A fixed key order inside each property, so the bytes never depend on pydantic's choices."""
    order = ("type", "enum", "items", "minItems", "maxItems", "description")
    head = {key: prop[key] for key in order if key in prop}
    tail = {key: _ordered(prop[key]) if isinstance(prop[key], dict) else prop[key] for key in sorted(prop)}
    for key in head:
        tail.pop(key, None)
    if "items" in head and isinstance(head["items"], dict):
        head["items"] = _ordered(head["items"])
    return {**head, **tail}


def input_schema(enable_undo: bool = False) -> dict[str, Any]:
    """The JSON schema of the arguments: properties in declaration order, deterministic keys."""
    raw = _clean(model_for(enable_undo).model_json_schema())
    properties = {name: _ordered(prop) for name, prop in raw["properties"].items()}
    return {
        "type": "object",
        "properties": properties,
        "required": list(raw.get("required", [])),
        "additionalProperties": False,
    }


def schema_json(enable_undo: bool = False) -> str:
    """The schema as canonical JSON text (byte-stable across processes and runs)."""
    return json.dumps(input_schema(enable_undo), ensure_ascii=False, separators=(", ", ": "))


# ---------------------------------------------------------------------------------------------
# Validation


def _shown(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _unknown_command_message(command: Any, enable_undo: bool) -> str:
    allowed = ", ".join(allowed_commands(enable_undo))
    shown = command if isinstance(command, str) else _shown(command)
    return f"Unrecognized command {shown}. The allowed commands for the {TOOL_NAME} tool are: {allowed}"


def _message_for(
    error: Mapping[str, Any], raw: Mapping[str, Any], enable_undo: bool, unknown: Sequence[str] = ()
) -> ArgumentError:
    loc = error.get("loc") or ()
    field = str(loc[0]) if loc else None
    kind = error.get("type")
    if kind == "extra_forbidden":
        names = ", ".join(f"`{name}`" for name in (unknown or [str(field)]))
        plural = "s" if len(unknown) > 1 else ""
        known = ", ".join(f"`{name}`" for name in EditorArgs.model_json_schema()["properties"])
        return ArgumentError(
            f"Unknown parameter{plural} {names} for the {TOOL_NAME} tool. The parameters are: {known}.",
            field=field,
        )
    if field == "command":
        if kind == "missing":
            allowed = ", ".join(allowed_commands(enable_undo))
            return ArgumentError(
                f"Parameter `command` is required. The allowed commands for the {TOOL_NAME} tool are: {allowed}",
                field=field,
            )
        return ArgumentError(_unknown_command_message(raw.get("command"), enable_undo), field=field)
    if field == "path":
        return ArgumentError("path must be a non-empty string", field=field)
    if field == "view_range":
        return ArgumentError(VIEW_RANGE_TYPE_ERROR, field=field)
    if field == "insert_line":
        return ArgumentError(
            f"Invalid `insert_line` parameter: {_shown(raw.get('insert_line'))}. It should be an integer.",
            field=field,
        )
    if field in ("file_text", "old_str", "new_str", "insert_text"):
        return ArgumentError(f"Parameter `{field}` must be a string.", field=field)
    return ArgumentError(f"Invalid arguments for the {TOOL_NAME} tool: {error.get('msg')}", field=field)


_PRIORITY = ("command", "path", "file_text", "old_str", "new_str", "insert_text", "insert_line", "view_range")


def parse_args(raw: Any, *, enable_undo: bool = False) -> EditorArgs:
    """Validate one tool call's arguments; raise :class:`ArgumentError` with the model-facing text.

    ``null`` means absent. Parameters a command does not use are ignored (as the reference tool
    does), except ``insert_text`` outside ``insert``: silently dropping it from a ``str_replace``
    would delete the match.
    """
    if not isinstance(raw, Mapping):
        raise ArgumentError(f"The arguments of the {TOOL_NAME} tool must be a JSON object, got {_shown(raw)}.")
    model = model_for(enable_undo)
    try:
        args = model.model_validate(dict(raw))
    except ValidationError as exc:
        errors = exc.errors()

        def rank(err: Mapping[str, Any]) -> int:
            if err.get("type") == "extra_forbidden":
                return -1
            loc = err.get("loc") or ("",)
            return _PRIORITY.index(str(loc[0])) if loc[0] in _PRIORITY else len(_PRIORITY)

        unknown = [str(err["loc"][0]) for err in errors if err.get("type") == "extra_forbidden" and err.get("loc")]
        raise _message_for(min(errors, key=rank), raw, enable_undo, unknown) from None
    return args


def check_path(path: str) -> str:
    """A blank path is refused (the DSH editor checks it with the path, after a command's own
    required parameters: see ``tool``)."""
    if not path.strip():
        raise ArgumentError("path must be a non-empty string", field="path")
    return path


def check_command_args(args: EditorArgs) -> EditorArgs:
    """The per-command requirements (exact texts); returns the arguments with aliases resolved."""
    command = args.command
    if args.insert_text is not None and command != "insert":
        raise ArgumentError(
            f"Parameter `insert_text` is only accepted for command: insert (as an alias of `new_str`); "
            f"use `new_str` for command: {command}",
            field="insert_text",
        )
    if command == "create":
        if args.file_text is None:
            raise ArgumentError("Parameter `file_text` is required for command: create", field="file_text")
    elif command == "str_replace":
        if args.old_str is None:
            raise ArgumentError("Parameter `old_str` is required for command: str_replace", field="old_str")
        if args.old_str == "":
            raise ArgumentError("Parameter `old_str` is empty for command: str_replace", field="old_str")
        if args.old_str == args.new_str:
            raise ArgumentError(
                "No replacement was performed: `old_str` and `new_str` are identical, so the edit would not "
                "change the file. Put the new text in `new_str`.",
                field="new_str",
            )
    elif command == "insert":
        if args.insert_line is None:
            raise ArgumentError("Parameter `insert_line` is required for command: insert", field="insert_line")
        if args.insert_text is not None:
            if args.new_str is not None and args.new_str != args.insert_text:
                raise ArgumentError(
                    "Parameters `new_str` and `insert_text` disagree for command: insert; `insert_text` is an "
                    "alias of `new_str`, give only one of them.",
                    field="insert_text",
                )
            args = args.model_copy(update={"new_str": args.insert_text, "insert_text": None})
        if args.new_str is None:
            raise ArgumentError("Parameter `new_str` is required for command: insert", field="new_str")
    return args
