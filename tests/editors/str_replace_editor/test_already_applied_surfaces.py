"""``FS_ALREADY_APPLIED`` through the CLI (``vfs tool``, one-shot: nothing remembered, so the rule is
"old_str nowhere, new_str once as whole lines") and over MCP with a real client (a session: the
same call sent twice is recognised even where old_str still matches)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adapters.support import error_code, ok_text, text_of
from tests.adapters.test_mcp import MOUNT, editor, run, stdio_client
from tests.editors.str_replace_editor.test_str_replace_editor_cli import vfs_tool


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ("def f():\n    return 1\n", "def f():\n    return 2\n", "lines 1-2"),  # old_str gone, new_str there once
        ("def f():\n", "def f():\n    # doc\n", "lines 1-2"),  # an insertion: old_str still matches
    ],
)
def test_cli_str_replace_sent_twice_is_already_applied(tmp_path: Path, old: str, new: str, where: str):
    (tmp_path / "a.py").write_bytes(b"def f():\n    return 1\n")
    call = json.dumps({"command": "str_replace", "path": f"{tmp_path}/a.py", "old_str": old, "new_str": new})
    first = vfs_tool("str_replace_editor", "--root", str(tmp_path), call)
    assert first.returncode == 0, first.stdout
    after = (tmp_path / "a.py").read_bytes()
    second = vfs_tool("str_replace_editor", "--root", str(tmp_path), call)
    assert second.returncode == 1
    assert second.stdout == f"Error: this change is already present at {where}; nothing was changed\n".encode()
    assert second.stderr == b"vfs tool: call failed [FS_ALREADY_APPLIED]\n"
    assert (tmp_path / "a.py").read_bytes() == after


def test_mcp_insertion_sent_twice_is_already_applied(tmp_path: Path):
    (tmp_path / "b.py").write_bytes(b"x = 1\n\ny = 2\n")
    path = f"{MOUNT}/b.py"
    args = {"command": "str_replace", "path": path, "old_str": "x = 1\n\n", "new_str": "x = 1\n# why\n\n"}

    async def scenario() -> None:
        async with stdio_client(tmp_path) as client:
            ok_text(await editor(client, command="view", path=path))
            ok_text(await editor(client, **args))
            again = await editor(client, **args)  # old_str still matches: applying it again would insert twice
            assert error_code(again) == "FS_ALREADY_APPLIED"
            assert text_of(again) == "Error: this change is already present at lines 1-3; nothing was changed"

    run(scenario)
    assert (tmp_path / "b.py").read_bytes() == b"x = 1\n# why\n\ny = 2\n"
