"""The structured result (diff cards and locations) on every surface: an MCP client's
``structuredContent`` (validated by the SDK against the tools' ``outputSchema``), ``vfs apply
--json`` and ``vfs tool --json`` as subprocesses, and the in-process ``handle_tool_call`` reply.
The model's text is the same as without it."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

import vfs
from editors.integration import handle_tool_call
from editors.result import output_schema
from editors.tools import TOOL_NAMES
from tests.adapters.support import ok_text, run_cli
from tests.adapters.test_mcp import MOUNT, editor, patch, run, stdio_client

PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n*** Delete File: gone.txt\n*** End Patch\n"
SUMMARY = "Success. Updated the following files:\nM a.txt\nD gone.txt\n"
DIFF = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"


def seed(root: Path) -> None:
    (root / "a.txt").write_bytes(b"one\ntwo\nthree\n")
    (root / "gone.txt").write_bytes(b"bye\n")


def check_patch_data(data: dict[str, object], root: Path, *, committed: bool) -> None:
    files = data["files"]
    assert isinstance(files, list)
    cards = {card["path"]: card for card in files}
    a, gone = cards[f"{MOUNT}/a.txt"], cards[f"{MOUNT}/gone.txt"]
    assert (a["action"], a["diff"], a["hunks"]) == (
        "modify",
        DIFF,
        [{"old_start": 1, "old_len": 3, "new_start": 1, "new_len": 3}],
    )
    assert (gone["action"], gone["version"]) == ("delete", None)
    assert data["locations"] == [
        {"path": f"{MOUNT}/a.txt", "start": 2, "end": 2},
        {"path": f"{MOUNT}/gone.txt", "start": None, "end": None},
    ]
    if committed:
        ws = vfs.open_workspace(str(root), mount=MOUNT)
        assert a["version"] == ws.stat(f"{MOUNT}/a.txt").version
        assert data["txid"] == ws.log(1)[0].txid
    else:
        assert (a["version"], data["txid"]) == (None, None)


def test_mcp_client_gets_structured_content(tmp_path: Path) -> None:
    seed(tmp_path)

    async def scenario() -> None:
        async with stdio_client(tmp_path) as client:
            listed = (await client.list_tools()).tools
            assert [tool.name for tool in listed] == list(TOOL_NAMES)
            assert all(tool.output_schema == output_schema() for tool in listed)

            viewed = await editor(client, command="view", path=f"{MOUNT}/a.txt", view_range=[2, 3])
            assert viewed.structured_content["text"] == ok_text(viewed)
            assert viewed.structured_content["data"]["locations"] == [{"path": f"{MOUNT}/a.txt", "start": 2, "end": 3}]

            done = await patch(client, PATCH)  # the client validated it against outputSchema
            assert ok_text(done) == SUMMARY  # Codex's text, unchanged
            check_patch_data(done.structured_content["data"], tmp_path, committed=True)

            edited = await editor(client, command="str_replace", path=f"{MOUNT}/a.txt", old_str="TWO", new_str="2")
            [card] = edited.structured_content["data"]["files"]
            assert card["diff"] == "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-TWO\n+2\n three\n"

    run(scenario)


@pytest.mark.parametrize("dry_run", [True, False])
def test_vfs_apply_json(tmp_path: Path, dry_run: bool) -> None:
    seed(tmp_path)
    flags = ["--dry-run"] if dry_run else []
    done = run_cli("apply", "--root", str(tmp_path), "--mount", MOUNT, "--json", *flags, input=PATCH.encode())
    assert (done.returncode, done.stderr) == (0, b"")
    result = json.loads(done.stdout)
    jsonschema.validate(result, output_schema())
    assert result["is_error"] is False
    if dry_run:
        assert result["text"] == "Dry run: nothing was changed. The patch would update:\nM a.txt\nD gone.txt\n"
        assert (tmp_path / "a.txt").read_bytes() == b"one\ntwo\nthree\n"
    else:
        assert result["text"] == SUMMARY
        assert (tmp_path / "a.txt").read_bytes() == b"one\nTWO\nthree\n"
    check_patch_data(result["data"], tmp_path, committed=not dry_run)


def test_vfs_apply_diff_is_built_from_the_hunks(tmp_path: Path) -> None:
    seed(tmp_path)
    done = run_cli("apply", "--root", str(tmp_path), "--dry-run", "--color", "never", PATCH)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().endswith(DIFF + "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n")


def test_vfs_tool_json(tmp_path: Path) -> None:
    seed(tmp_path)
    args = json.dumps({"command": "insert", "path": f"{MOUNT}/a.txt", "insert_line": 1, "new_str": "1.5"})
    done = run_cli("tool", "str_replace_editor", "--root", str(tmp_path), "--mount", MOUNT, "--json", args)
    assert (done.returncode, done.stderr) == (0, b"")
    result = json.loads(done.stdout)
    jsonschema.validate(result, output_schema())
    assert result["text"] == f"The file {MOUNT}/a.txt has been edited successfully."
    [card] = result["data"]["files"]
    assert card["diff"] == "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,4 @@\n one\n+1.5\n two\n three\n"
    assert result["data"]["locations"] == [{"path": f"{MOUNT}/a.txt", "start": 2, "end": 2}]

    bad = run_cli("tool", "apply_patch", "--root", str(tmp_path), "--json", json.dumps({"input": "nope"}))
    assert bad.returncode == 1
    failed = json.loads(bad.stdout)
    assert (failed["is_error"], failed["code"], "data" in failed) == (True, "PATCH_PARSE_ERROR", False)


def test_in_process_reply(tmp_path: Path) -> None:
    seed(tmp_path)
    ws = vfs.open_workspace(str(tmp_path), mount=MOUNT)
    call = {"type": "tool_use", "id": "toolu_1", "name": "apply_patch", "input": {"input": PATCH}}
    reply = handle_tool_call(ws, call)
    assert reply.message() == {"type": "tool_result", "tool_use_id": "toolu_1", "content": SUMMARY}  # unchanged
    assert reply.data is not None
    check_patch_data(dict(reply.data), tmp_path, committed=True)
    jsonschema.validate(reply.to_dict(), output_schema())
