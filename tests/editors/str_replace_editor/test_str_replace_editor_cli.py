"""``vfs tool ...`` as a subprocess: stdout/stderr/exit status contract."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tiers import tiered

REPO = Path(__file__).resolve().parents[3]


def vfs_tool(*argv: str, stdin: bytes | None = None, env: dict[str, str] | None = None):
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "editors.cli", "tool", *argv],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        cwd=str(REPO),
        env=full_env,
        timeout=120,
        check=False,
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_bytes(b"alpha\r\nbeta\r\n")
    return tmp_path / "ws"


def test_view_prints_the_result_text(root: Path):
    proc = vfs_tool("str_replace_editor", "--root", str(root), json.dumps({"command": "view", "path": f"{root}/a.txt"}))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""
    assert (
        proc.stdout
        == (
            f"Here's the content of {root}/a.txt with line numbers (which has a total of 3 lines):\n"
            "     1  alpha\n     2  beta\n     3  \n"
        ).encode()
    )


def test_arguments_on_stdin_and_one_shot_edit(root: Path):
    call = {"command": "str_replace", "path": f"{root}/a.txt", "old_str": "beta\n", "new_str": "gamma\n"}
    proc = vfs_tool("str_replace_editor", "--root", str(root), stdin=json.dumps(call).encode())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"The file {root}/a.txt has been edited successfully.\n".encode()
    assert (root / "a.txt").read_bytes() == b"alpha\r\ngamma\r\n"  # CRLF kept (Ours)


def test_mount_maps_model_paths_to_the_root(root: Path):
    call = {"command": "create", "path": "/workspace/sub/new.txt", "file_text": "hi\n"}
    proc = vfs_tool("str_replace_editor", "--root", str(root), "--mount", "/workspace", json.dumps(call))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"New file created successfully at: /workspace/sub/new.txt\n"
    assert (root / "sub" / "new.txt").read_bytes() == b"hi\n"


@pytest.mark.parametrize(
    ("call", "code", "message"),
    tiered(  # a process a case: one error in the fast tier (each error's text: test_str_replace_editor_tool.py)
        [
            (
                {"command": "str_replace", "path": "{r}/a.txt", "old_str": "zeta", "new_str": "eta"},
                "FS_EDIT_NOT_FOUND",
                "Error: No replacement was performed, old_str `zeta` did not appear verbatim in {r}/a.txt.\n",
            ),
            (
                {"command": "create", "path": "{r}/a.txt", "file_text": "x"},
                "FS_EXISTS",
                "Error: File already exists at: {r}/a.txt. Cannot overwrite files using command `create`.\n",
            ),
            (
                {"command": "view", "path": "a.txt"},
                "FS_INVALID_ARGUMENT",
                "Error: The path a.txt is not an absolute path, it should start with `/`. Maybe you meant {r}/a.txt?\n",
            ),
            (
                {"command": "view", "path": "/etc/passwd"},
                "FS_SANDBOX_DENIED",
                "Error: The path /etc/passwd is outside the workspace {r}. "
                "[sandbox: file access denied under workspace-write mode]\n",
            ),
            (
                {"command": "undo_edit", "path": "{r}/a.txt"},
                "FS_INVALID_ARGUMENT",
                "Error: Unrecognized command undo_edit. The allowed commands for the str_replace_editor tool are: "
                "view, create, str_replace, insert\n",
            ),
        ],
        unpack=True,
    ),
)
def test_errors_go_to_stdout_with_the_code_on_stderr(root: Path, call, code, message):
    args = {k: v.replace("{r}", str(root)) if isinstance(v, str) else v for k, v in call.items()}
    proc = vfs_tool("str_replace_editor", "--root", str(root), json.dumps(args))
    assert proc.returncode == 1
    assert proc.stdout == message.replace("{r}", str(root)).encode()
    assert proc.stderr == f"vfs tool: call failed [{code}]\n".encode()
    assert (root / "a.txt").read_bytes() == b"alpha\r\nbeta\r\n"


def test_invalid_json_is_a_tool_error(root: Path):
    proc = vfs_tool("str_replace_editor", "--root", str(root), '{"command": "view",')
    assert proc.returncode == 1
    assert proc.stdout.startswith(
        b"Error: The arguments of the str_replace_editor tool must be a JSON object; they are not valid JSON ("
    )  # the text every surface gives for this mistake
    assert proc.stderr == b"vfs tool: call failed [FS_INVALID_ARGUMENT]\n"


def test_missing_arguments_and_bad_options_are_usage_errors(root: Path):
    assert vfs_tool("str_replace_editor", "--root", str(root)).returncode == 2
    bad = vfs_tool("str_replace_editor", "--root", str(root), "--max-output-chars", "0", '{"command": "view"}')
    assert bad.returncode == 2
    assert b"max_output_chars must be a positive integer" in bad.stderr
    assert vfs_tool("no_such_tool", "{}").returncode == 2


def test_config_options_reach_the_tool(root: Path):
    (root / "long.txt").write_text("".join(f"row {i}\n" for i in range(500)))
    view = json.dumps({"command": "view", "path": f"{root}/long.txt"})
    proc = vfs_tool("str_replace_editor", "--root", str(root), "--max-output-chars", "300", view)
    assert proc.returncode == 0
    assert b"<response clipped>" in proc.stdout
    undo = vfs_tool(
        "str_replace_editor",
        "--root",
        str(root),
        "--enable-undo",
        json.dumps({"command": "undo_edit", "path": f"{root}/a.txt"}),
    )
    assert (
        undo.returncode == 1 and undo.stderr == b"vfs tool: call failed [FS_NOT_FOUND]\n"
    )  # accepted; nothing to undo


def test_output_is_utf8_whatever_the_locale(root: Path):
    (root / "u.txt").write_bytes("caf\u00e9 \u4e2d\n".encode())
    call = json.dumps({"command": "view", "path": f"{root}/u.txt"})
    proc = vfs_tool("str_replace_editor", "--root", str(root), call, env={"LC_ALL": "C", "PYTHONIOENCODING": ""})
    assert proc.returncode == 0, proc.stderr
    assert "     1  caf\u00e9 \u4e2d\n".encode() in proc.stdout


def test_apply_patch_dispatch(root: Path):
    patch = "*** Begin Patch\n*** Add File: added.txt\n+added\n*** End Patch"
    proc = vfs_tool("apply_patch", "--root", str(root), json.dumps({"input": patch}))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (root / "added.txt").read_bytes() == b"added\n"
    failing = "*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch"
    proc = vfs_tool("apply_patch", "--root", str(root), stdin=json.dumps({"input": failing}).encode())
    assert proc.returncode == 1
    assert proc.stderr.startswith(b"vfs tool: call failed [PATCH_")
    assert proc.stdout.strip()
