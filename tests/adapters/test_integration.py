"""``editors.integration``: one call per provider tool-call shape, the reply to send back, sessions."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel

import vfs
from editors.integration import ToolCall, ToolResult, Toolset, handle_tool_call, parse_tool_call, tool_definitions
from editors.tools import definitions

PATCH = "*** Begin Patch\n*** Update File: src/app.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n"


@pytest.fixture(params=["memory", "local"])
def ws(request: pytest.FixtureRequest, tmp_path: Path) -> vfs.Workspace:
    if request.param == "memory":
        workspace = vfs.open_workspace(f"memory://integration-{uuid.uuid4().hex}")
    else:
        workspace = vfs.open_workspace(tmp_path, mount="/workspace")
    workspace.write_bytes("/workspace/src/app.py", b"x = 1\n")
    return workspace


def content(ws: vfs.Workspace, path: str = "/workspace/src/app.py") -> bytes:
    return ws.read_bytes(path)


# -- each call shape ------------------------------------------------------------------------------


def test_plain_name_and_arguments(ws: vfs.Workspace) -> None:
    reply = handle_tool_call(ws, "str_replace_editor", {"command": "view", "path": "/workspace/src/app.py"})
    assert not reply.is_error and reply.code is None
    assert "x = 1" in reply.text
    assert reply.message()["text"] == reply.text
    assert reply.message()["data"]["locations"] == [{"path": "/workspace/src/app.py", "start": 1, "end": 2}]
    reply = handle_tool_call(ws, "apply_patch", PATCH)  # the patch text itself
    assert reply.text == "Success. Updated the following files:\nM src/app.py\n"
    assert content(ws) == b"x = 2\n"
    message = reply.message()
    assert message["text"] == reply.text and message["is_error"] is False and message["code"] is None
    assert message["data"]["txid"] == ws.log(1)[0].txid
    [card] = message["data"]["files"]
    assert (card["path"], card["action"], card["version"]) == (
        "/workspace/src/app.py",
        "modify",
        ws.stat(card["path"]).version,
    )
    assert card["diff"] == "--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"


def test_openai_custom_tool_call(ws: vfs.Workspace) -> None:
    call = {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_abc", "name": "apply_patch", "input": PATCH}
    reply = handle_tool_call(ws, call)
    assert reply.message() == {
        "type": "custom_tool_call_output",
        "call_id": "call_abc",
        "output": "Success. Updated the following files:\nM src/app.py\n",
    }
    assert content(ws) == b"x = 2\n"


def test_openai_function_call_with_json_string_arguments(ws: vfs.Workspace) -> None:
    args = json.dumps({"command": "str_replace", "path": "/workspace/src/app.py", "old_str": "x = 1", "new_str": "y"})
    call = {"type": "function_call", "call_id": "call_fn", "name": "str_replace_editor", "arguments": args}
    reply = handle_tool_call(ws, call)  # one-shot: no session, so no view needed
    assert reply.message() == {
        "type": "function_call_output",
        "call_id": "call_fn",
        "output": "The file /workspace/src/app.py has been edited successfully.",
    }
    assert content(ws) == b"y\n"
    patch_call = {
        "type": "function_call",
        "call_id": "c2",
        "name": "apply_patch",
        "arguments": json.dumps({"input": "*** Begin Patch\n*** Update File: src/app.py\n@@\n-y\n+z\n*** End Patch"}),
    }
    assert not handle_tool_call(ws, patch_call).is_error
    assert content(ws) == b"z\n"


def test_chat_completions_tool_call(ws: vfs.Workspace) -> None:
    call = {
        "id": "call_chat",
        "type": "function",
        "function": {"name": "apply_patch", "arguments": json.dumps({"input": PATCH})},
    }
    reply = handle_tool_call(ws, call)
    assert reply.message() == {"role": "tool", "tool_call_id": "call_chat", "content": reply.text}
    assert content(ws) == b"x = 2\n"


def test_anthropic_tool_use_block(ws: vfs.Workspace) -> None:
    block = {
        "type": "tool_use",
        "id": "toolu_01",
        "name": "str_replace_editor",
        "input": {"command": "insert", "path": "/workspace/src/app.py", "insert_line": 1, "new_str": "y = 3"},
    }
    reply = handle_tool_call(ws, block)
    assert reply.message() == {"type": "tool_result", "tool_use_id": "toolu_01", "content": reply.text}
    assert content(ws) == b"x = 1\ny = 3\n"
    failing = dict(block, id="toolu_02", input={"command": "view", "path": "/workspace/nope.py"})
    reply = handle_tool_call(ws, failing)
    assert reply.message() == {
        "type": "tool_result",
        "tool_use_id": "toolu_02",
        "content": "Error: The path /workspace/nope.py does not exist. Please provide a valid path.",
        "is_error": True,
    }
    assert reply.code == "FS_NOT_FOUND"


class FakeToolUseBlock(BaseModel):  # the shape of anthropic.types.ToolUseBlock
    type: str
    id: str
    name: str
    input: dict[str, Any]


def test_sdk_objects_are_accepted(ws: vfs.Workspace) -> None:
    model = FakeToolUseBlock(type="tool_use", id="toolu_9", name="apply_patch", input={"input": PATCH})
    reply = handle_tool_call(ws, model)
    assert reply.call == ToolCall("anthropic", "apply_patch", {"input": PATCH}, "toolu_9")
    assert reply.is_error is False
    assert content(ws) == b"x = 2\n"
    attrs = SimpleNamespace(
        type="custom_tool_call",
        call_id="call_ns",
        name="str_replace_editor",
        input='{"command": "view", "path": "/workspace/src/app.py"}',
    )
    reply = handle_tool_call(ws, attrs)
    assert reply.call is not None and reply.call.provider == "openai-custom"  # type: ignore[attr-defined]
    assert "x = 2" in reply.text


# -- what the model got wrong comes back as an error reply ------------------------------------------


def test_invalid_json_arguments_are_an_error_reply(ws: vfs.Workspace) -> None:
    call = {"type": "function_call", "call_id": "c", "name": "str_replace_editor", "arguments": '{"command": "view",'}
    reply = handle_tool_call(ws, call)
    assert reply.is_error and reply.code == "FS_INVALID_ARGUMENT"
    assert reply.text.startswith("Error: The arguments of the str_replace_editor tool must be a JSON object")
    assert reply.message()["output"] == reply.text


def test_unknown_tool_is_an_error_reply(ws: vfs.Workspace) -> None:
    reply = handle_tool_call(ws, {"type": "tool_use", "id": "t", "name": "shell", "input": {"cmd": "rm -rf /"}})
    assert reply.is_error and reply.code == "FS_INVALID_ARGUMENT"
    assert reply.text == "Error: Unknown tool shell: the available tools are str_replace_editor, apply_patch."
    assert reply.message()["is_error"] is True


def test_failed_patch_changes_nothing(ws: vfs.Workspace) -> None:
    bad = "*** Begin Patch\n*** Add File: src/new.py\n+n\n*** Update File: src/app.py\n@@\n-nope\n+x\n*** End Patch"
    reply = handle_tool_call(ws, "apply_patch", {"input": bad})
    assert reply.is_error and reply.code == "PATCH_LINES_NOT_FOUND"
    assert not ws.exists("/workspace/src/new.py")
    assert content(ws) == b"x = 1\n"


def test_wrong_argument_types_are_an_error_reply(ws: vfs.Workspace) -> None:
    reply = handle_tool_call(ws, "apply_patch", {"input": ["not", "text"]})
    assert reply.is_error and reply.code == "PATCH_INVALID_INPUT"
    reply = handle_tool_call(ws, "str_replace_editor", ["view", "/workspace"])
    assert reply.is_error and reply.code == "FS_INVALID_ARGUMENT"


# -- programming errors raise ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        {"type": "message", "content": "hi"},
        {"name": "apply_patch", "input": PATCH},  # no type
        {"type": "tool_use", "id": "t", "name": 3, "input": {}},
        42,
    ],
)
def test_unknown_call_shapes_raise(call: Any) -> None:
    with pytest.raises(ValueError):
        parse_tool_call(call)


def test_call_object_with_separate_arguments_raises(ws: vfs.Workspace) -> None:
    with pytest.raises(ValueError, match="either a tool name"):
        handle_tool_call(ws, {"type": "tool_use", "id": "t", "name": "apply_patch", "input": {}}, {"input": PATCH})


# -- sessions -------------------------------------------------------------------------------------


def test_a_session_requires_a_view_before_an_edit(ws: vfs.Workspace) -> None:
    session = ws.session()
    edit = {"command": "str_replace", "path": "/workspace/src/app.py", "old_str": "x = 1", "new_str": "x = 9"}
    reply = handle_tool_call(ws, "str_replace_editor", edit, session=session)
    assert reply.is_error and reply.code == "FS_NOT_OBSERVED"
    assert content(ws) == b"x = 1\n"
    handle_tool_call(ws, "str_replace_editor", {"command": "view", "path": "/workspace/src/app.py"}, session=session)
    assert not handle_tool_call(ws, "str_replace_editor", edit, session=session).is_error
    assert content(ws) == b"x = 9\n"


def test_a_session_detects_a_change_made_behind_its_back(ws: vfs.Workspace) -> None:
    session = ws.session()
    handle_tool_call(ws, "str_replace_editor", {"command": "view", "path": "/workspace/src/app.py"}, session=session)
    ws.write_bytes("/workspace/src/app.py", b"x = 1\nchanged = True\n")  # another writer
    edit = {"command": "str_replace", "path": "/workspace/src/app.py", "old_str": "x = 1", "new_str": "x = 9"}
    reply = handle_tool_call(ws, "str_replace_editor", edit, session=session)
    assert reply.is_error and reply.code == "FS_STALE_VERSION"
    assert content(ws) == b"x = 1\nchanged = True\n"


def test_a_patch_counts_as_seen_by_its_session(ws: vfs.Workspace) -> None:
    toolset = Toolset(ws)
    assert not handle_tool_call(ws, "apply_patch", PATCH, session=toolset).is_error
    edit = {"command": "str_replace", "path": "/workspace/src/app.py", "old_str": "x = 2", "new_str": "x = 3"}
    assert not handle_tool_call(ws, "str_replace_editor", edit, session=toolset).is_error
    assert content(ws) == b"x = 3\n"
    other = ws.session()  # a different conversation has seen nothing
    reply = handle_tool_call(ws, "str_replace_editor", dict(edit, old_str="x = 3", new_str="x = 4"), session=other)
    assert reply.code == "FS_NOT_OBSERVED"


def test_a_toolset_of_another_workspace_is_refused(ws: vfs.Workspace) -> None:
    other = vfs.open_workspace(f"memory://other-{uuid.uuid4().hex}")
    with pytest.raises(ValueError, match="another workspace"):
        handle_tool_call(ws, "apply_patch", PATCH, session=Toolset(other))


def test_config_reaches_the_editor(ws: vfs.Workspace) -> None:
    ws.write_bytes("/workspace/big.txt", b"".join(b"line %d\n" % i for i in range(500)))
    reply = handle_tool_call(
        ws, "str_replace_editor", {"command": "view", "path": "/workspace/big.txt"}, config={"max_output_chars": 200}
    )
    assert "<response clipped>" in reply.text


def test_tool_definitions_are_the_registry_s(ws: vfs.Workspace) -> None:
    for fmt in ("openai", "openai-function", "anthropic", "mcp"):
        assert tool_definitions(fmt) == definitions(fmt)
    assert [d["name"] for d in tool_definitions("anthropic", tools=["apply_patch"])] == ["apply_patch"]
    assert isinstance(handle_tool_call(ws, "apply_patch", PATCH), ToolResult)
