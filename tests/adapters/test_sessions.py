"""The MCP server's table of observation sessions: one per client key, idle ones dropped."""

from __future__ import annotations

import uuid
from typing import Any

import vfs
from editors.adapters.mcp import Sessions, _client_key, to_call_result
from editors.result import ToolResult
from editors.tools import Toolset


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_sessions(**kw: Any) -> tuple[Sessions, Clock, list[Toolset]]:
    ws = vfs.open_workspace(f"memory://sessions-{uuid.uuid4().hex}")
    made: list[Toolset] = []

    def factory() -> Toolset:
        made.append(Toolset(ws))
        return made[-1]

    clock = Clock()
    return Sessions(factory, clock=clock, **kw), clock, made


def test_one_toolset_per_key() -> None:
    sessions, _, made = make_sessions()
    a, b = sessions.get("a"), sessions.get("b")
    assert a is not b and a.session is not b.session
    assert sessions.get("a") is a and len(made) == 2 and len(sessions) == 2


def test_no_key_gives_a_fresh_toolset_every_time() -> None:
    sessions, _, made = make_sessions()
    assert sessions.get(None) is not sessions.get(None)
    assert len(made) == 2 and len(sessions) == 0  # nothing kept


def test_idle_sessions_are_dropped() -> None:
    sessions, clock, _ = make_sessions(idle_timeout=60)
    a = sessions.get("a")
    clock.now += 30
    b = sessions.get("b")
    clock.now += 45  # a idle 75 s, b idle 45 s
    assert sessions.get("b") is b
    assert len(sessions) == 1  # a was dropped
    assert sessions.get("a") is not a


def test_the_least_recently_used_goes_when_full() -> None:
    sessions, clock, _ = make_sessions(max_sessions=2)
    a = sessions.get("a")
    clock.now += 1
    b = sessions.get("b")
    clock.now += 1
    assert sessions.get("a") is a  # a is now the most recent
    clock.now += 1
    sessions.get("c")
    assert len(sessions) == 2
    assert sessions.get("a") is a
    assert sessions.get("b") is not b


class Request:
    def __init__(self, headers: dict[str, str]) -> None:
        self.headers = headers


class Ctx:
    def __init__(self, request: Any) -> None:
        self.request = request


def test_client_keys() -> None:
    assert _client_key(Ctx(None)) == (False, "stdio")
    assert _client_key(Ctx(Request({"mcp-session-id": "abc"}))) == (True, "abc")
    assert _client_key(Ctx(Request({}))) == (True, None)


def test_tool_errors_carry_text_and_code() -> None:
    error = to_call_result(ToolResult("Error: nope", True, "FS_NOT_FOUND"))
    assert error.is_error is True
    assert [(c.type, c.text) for c in error.content] == [("text", "Error: nope")]
    assert error.structured_content == {"code": "FS_NOT_FOUND", "is_error": True, "text": "Error: nope"}
    ok = to_call_result(ToolResult("done"))
    # structuredContent on every call: a tool with an outputSchema must send it (the MCP spec)
    assert ok.is_error is False and ok.structured_content == {"code": None, "is_error": False, "text": "done"}
