"""The apply_patch tool on a workspace, on every backend: one transaction, Codex texts, Ours fixes."""

from __future__ import annotations

import json
from typing import Any

import pytest

import vfs
from backends.base import WriteItem
from editors.apply_patch.errors import (
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
from editors.apply_patch.tool import apply_patch, call_tool, patch_from_arguments
from tests.support.trees import snapshot_tree


def wrap(body: str) -> str:
    return f"*** Begin Patch\n{body}\n*** End Patch\n"


def test_multi_file_patch_commits_once(make_workspace: Any) -> None:
    ws = make_workspace({"src/a.py": b"x = 1\ny = 2\n", "old.txt": b"bye\n", "mv/from.txt": b"m\n"})
    result = apply_patch(
        ws,
        wrap(
            "*** Add File: new/deep/n.txt\n+new\n*** Update File: src/a.py\n@@\n-y = 2\n+y = 3\n"
            "*** Delete File: old.txt\n*** Update File: mv/from.txt\n*** Move to: mv/to.txt\n@@\n-m\n+M"
        ),
    )
    assert result.summary == (
        "Success. Updated the following files:\nA new/deep/n.txt\nM src/a.py\nM mv/to.txt\nD old.txt\n"
    )
    tree = snapshot_tree(ws)
    assert tree["new/deep/n.txt"] == b"new\n"
    assert tree["src/a.py"] == b"x = 1\ny = 3\n"
    assert tree["mv/to.txt"] == b"M\n"
    assert "old.txt" not in tree and "mv/from.txt" not in tree
    (entry,) = ws.log()
    assert entry.txid == result.txid
    assert entry.label == "apply_patch"
    assert {c.action for c in result.changes} == {"add", "update", "delete"}


def test_paths_resolve_against_the_mount(make_workspace: Any) -> None:
    ws = make_workspace({"a.txt": b"1\n"})
    apply_patch(ws, wrap(f"*** Update File: {ws.mount}/a.txt\n@@\n-1\n+2\n*** Add File: ./b/../c.txt\n+c"))
    assert snapshot_tree(ws) == {"a.txt": b"2\n", "c.txt": b"c\n"}


@pytest.mark.parametrize("path", ["../escape.txt", "/etc/passwd", ".vfs/x"])
def test_paths_outside_the_workspace_are_denied(make_workspace: Any, path: str) -> None:
    ws = make_workspace({"a.txt": b"1\n"})
    before = snapshot_tree(ws)
    with pytest.raises(vfs.SandboxDenied) as info:
        apply_patch(ws, wrap(f"*** Update File: a.txt\n@@\n-1\n+2\n*** Add File: {path}\n+x"))
    assert "[sandbox: file access denied under workspace-write mode]" in info.value.message
    assert snapshot_tree(ws) == before


def test_read_only_workspace_is_denied(make_workspace: Any) -> None:
    ws = make_workspace({"a.txt": b"1\n"}, mode="read-only")
    with pytest.raises(vfs.SandboxDenied):
        apply_patch(ws, wrap("*** Add File: b.txt\n+x"))
    assert snapshot_tree(ws) == {"a.txt": b"1\n"}


# Codex names the resolved absolute path in these errors; ours, the model-facing path ({m}: mount).
CODEX_FAILURES: list[tuple[str, dict[str, Any], str, type, str]] = [
    ("empty", {}, "*** Begin Patch\n*** End Patch", PatchEmpty, "No files were modified."),
    (
        "parse",
        {},
        wrap("*** Update File: a.txt"),
        PatchParseError,
        "Invalid patch hunk on line 4: Update file hunk for path 'a.txt' is empty",
    ),
    (
        "update missing",
        {},
        wrap("*** Update File: ./sub/../a.txt\n@@\n-x\n+y"),
        PatchFileNotFound,
        "Failed to read file to update {m}/a.txt: No such file or directory (os error 2)",
    ),
    (
        "update dir",
        {"d": None},
        wrap("*** Update File: d\n@@\n-x\n+y"),
        PatchReadFailed,
        "Failed to read file to update {m}/d: path `{m}/d` is not a file",
    ),
    (
        "update under file",
        {"f": b"x"},
        wrap("*** Update File: f/x\n@@\n-x\n+y"),
        PatchReadFailed,
        "Failed to read file to update {m}/f/x: Not a directory (os error 20)",
    ),
    (
        "update invalid utf-8",
        {"b.bin": b"ok\xe2\x82x\n"},
        wrap("*** Update File: b.bin\n@@\n-x\n+y"),
        PatchReadFailed,
        "Failed to read file to update {m}/b.bin: invalid utf-8 sequence of 2 bytes from index 2",
    ),
    (
        "update truncated utf-8",
        {"b.bin": b"ok\xf0\x9f"},
        wrap("*** Update File: b.bin\n@@\n-x\n+y"),
        PatchReadFailed,
        "Failed to read file to update {m}/b.bin: incomplete utf-8 byte sequence from index 2",
    ),
    ("delete missing", {}, wrap("*** Delete File: a.txt"), PatchDeleteFailed, "Failed to delete file {m}/a.txt"),
    ("delete dir", {"d/f": b"x"}, wrap("*** Delete File: d"), PatchDeleteFailed, "Failed to delete file {m}/d"),
    ("add over dir", {"d/f": b"x"}, wrap("*** Add File: d\n+x"), PatchWriteFailed, "Failed to write file {m}/d"),
    (
        "add under file",
        {"f.txt": b"x"},
        wrap("*** Add File: f.txt/x\n+x"),
        PatchWriteFailed,
        "Failed to write file {m}/f.txt/x",
    ),
    (
        "move onto dir",
        {"a.txt": b"1\n", "d/f": b"x"},
        wrap("*** Update File: a.txt\n*** Move to: d\n@@\n-1\n+2"),
        PatchWriteFailed,
        "Failed to write file {m}/d",
    ),
    (
        "context",
        {"a.txt": b"1\n"},
        wrap("*** Update File: a.txt\n@@ nope\n-9\n+2"),
        PatchContextNotFound,
        "Failed to find context 'nope' in {m}/a.txt",
    ),
    (
        "lines",
        {"a.txt": b"1\n"},
        wrap("*** Update File: a.txt\n@@\n-9\n+2"),
        PatchLinesNotFound,
        "Failed to find expected lines in {m}/a.txt:\n9",
    ),
]


@pytest.mark.parametrize(
    ("name", "files", "patch", "error", "text"), CODEX_FAILURES, ids=[f[0] for f in CODEX_FAILURES]
)
def test_failures_use_codex_texts_and_change_nothing(
    make_workspace: Any, name: str, files: dict[str, Any], patch: str, error: type, text: str
) -> None:
    ws = make_workspace({"keep.txt": b"keep\n", **files})
    before = snapshot_tree(ws)
    # an earlier hunk that would succeed: it must not survive the failure
    if name != "empty":
        patch = patch.replace("*** Begin Patch\n", "*** Begin Patch\n*** Add File: early.txt\n+early\n", 1)
    with pytest.raises(ApplyPatchError) as info:
        apply_patch(ws, patch)
    assert type(info.value) is error
    expected = text.replace("{m}", ws.mount)
    assert info.value.cli_message == expected
    # Ours may add a line naming the cause after Codex's text (a bad @@ line, ...).
    assert info.value.message.startswith(
        "apply_patch verification failed: "
        + (expected.replace("Invalid patch hunk on line 4: ", "invalid hunk at line 4, "))
    )
    assert snapshot_tree(ws) == before
    assert ws.log() == []


def test_several_operations_on_one_path_fold_in_order(make_workspace: Any) -> None:
    ws = make_workspace({"a.txt": b"one\n"})
    result = apply_patch(
        ws,
        wrap(
            "*** Update File: a.txt\n@@\n-one\n+two\n*** Update File: a.txt\n@@\n-two\n+three\n"
            "*** Add File: b.txt\n+b1\n*** Update File: b.txt\n*** Move to: c.txt\n@@\n-b1\n+c1\n"
            "*** Add File: gone.txt\n+x\n*** Delete File: gone.txt"
        ),
    )
    assert snapshot_tree(ws) == {"a.txt": b"three\n", "c.txt": b"c1\n"}
    assert result.summary == (
        "Success. Updated the following files:\nA b.txt\nA gone.txt\nM a.txt\nM a.txt\nM c.txt\nD gone.txt\n"
    )
    assert [(c.display, c.action) for c in result.changes] == [("a.txt", "update"), ("c.txt", "add")]


def test_move_onto_itself_is_an_in_place_update(make_workspace: Any) -> None:
    """Ours: Codex writes the file, then deletes it as the move's source (codex#6358)."""
    ws = make_workspace({"a.txt": b"1\n"})
    result = apply_patch(ws, wrap("*** Update File: a.txt\n*** Move to: ./a.txt\n@@\n-1\n+2"))
    assert snapshot_tree(ws) == {"a.txt": b"2\n"}
    assert result.summary == "Success. Updated the following files:\nM ./a.txt\n"


def test_move_overwrites_and_keeps_the_mode(make_workspace: Any) -> None:
    ws = make_workspace({"run.sh": b"echo 1\n", "dest.sh": b"old\n"})
    if ws.capabilities.modes:
        ws.backend.write(WriteItem("run.sh", b"echo 1\n", mode=0o755))
    apply_patch(ws, wrap("*** Update File: run.sh\n*** Move to: dest.sh\n@@\n-echo 1\n+echo 2"))
    tree = snapshot_tree(ws, modes=ws.capabilities.modes)
    if ws.capabilities.modes:
        assert tree == {"dest.sh": (b"echo 2\n", 0o755)}
    else:
        assert tree == {"dest.sh": b"echo 2\n"}


def test_update_keeps_crlf_bom_and_mode(make_workspace: Any) -> None:
    ws = make_workspace({"w.txt": b"\xef\xbb\xbfone\r\ntwo\r\n"})
    apply_patch(ws, wrap("*** Update File: w.txt\n@@\n one\n-two\n+TWO\n+three"))
    assert snapshot_tree(ws)["w.txt"] == b"\xef\xbb\xbfone\r\nTWO\r\nthree\r\n"


def test_dry_run_changes_nothing(make_workspace: Any) -> None:
    ws = make_workspace({"a.txt": b"1\n"})
    result = apply_patch(ws, wrap("*** Update File: a.txt\n@@\n-1\n+2\n*** Add File: b.txt\n+b"), dry_run=True)
    assert result.txid is None
    assert result.summary == "Success. Updated the following files:\nA b.txt\nM a.txt\n"
    assert snapshot_tree(ws) == {"a.txt": b"1\n"}
    assert ws.log() == []


def test_diff(make_workspace: Any) -> None:
    ws = make_workspace({"a.txt": b"1\n2\n", "d.txt": b"bye"})
    result = apply_patch(
        ws, wrap("*** Update File: a.txt\n@@\n 1\n-2\n+two\n*** Add File: n.txt\n+n\n*** Delete File: d.txt"), diff=True
    )
    assert result.diff == (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n 1\n-2\n+two\n"
        "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+n\n"
        "--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n\\ No newline at end of file\n"
    )
    assert apply_patch(ws, wrap("*** Add File: m.txt\n+m")).diff is None


def test_concurrent_change_before_commit_fails_and_changes_nothing(make_workspace: Any) -> None:
    ws = make_workspace({"a.txt": b"1\n", "b.txt": b"b\n"})

    class Meddler:
        """Another writer slips in between the patch's reads and its commit."""

        def __init__(self, inner: Any) -> None:
            self.inner = inner
            self.done = False

        def lock(self, *args: Any, **kwargs: Any) -> Any:
            if not self.done:
                self.done = True
                self.inner.write(WriteItem("a.txt", b"someone else\n"))
            return self.inner.lock(*args, **kwargs)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

    meddled = vfs.Workspace(Meddler(ws.backend), mount=ws.mount)  # type: ignore[arg-type]
    with pytest.raises(vfs.StaleVersion):
        apply_patch(meddled, wrap("*** Update File: a.txt\n@@\n-1\n+2\n*** Delete File: b.txt"))
    assert snapshot_tree(ws) == {"a.txt": b"someone else\n", "b.txt": b"b\n"}


# -- tool calls -----------------------------------------------------------------------------------

PATCH = wrap("*** Add File: t.txt\n+t")


@pytest.mark.parametrize(
    "arguments",
    [
        PATCH,
        {"input": PATCH},
        {"patch": PATCH},
        json.dumps({"input": PATCH}),
        json.dumps({"patch": PATCH}),
        PATCH.encode(),
    ],
)
def test_patch_from_arguments_accepts_the_envelopes(arguments: Any) -> None:
    assert patch_from_arguments(arguments) == PATCH


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"input": PATCH, "patch": PATCH}, "got input, patch"),
        ({"diff": PATCH}, "got diff"),
        ({}, "got no keys"),
        ({"input": ["a"]}, 'expects "input" to be a string'),
        (["*** Begin Patch"], "got list"),
        (None, "got NoneType"),
    ],
)
def test_patch_from_arguments_says_what_is_wrong(arguments: Any, fragment: str) -> None:
    with pytest.raises(PatchInvalidInput) as info:
        patch_from_arguments(arguments)
    assert fragment in info.value.message
    assert info.value.code == "PATCH_INVALID_INPUT"


def test_call_tool_reports_success_and_errors_as_text(make_workspace: Any) -> None:
    ws = make_workspace({})
    committed: list[vfs.CommitResult] = []
    ok = call_tool(ws, {"input": PATCH}, on_commit=committed.append)
    assert [c.txid for c in committed] == [ws.log(1)[0].txid]
    assert ok.to_dict() == {
        "code": None,
        "is_error": False,
        "text": "Success. Updated the following files:\nA t.txt\n",
        "data": {
            "tool": "apply_patch",
            "command": "apply_patch",
            "txid": committed[0].txid,
            "files": [
                {
                    "path": f"{ws.mount}/t.txt",
                    "action": "add",
                    "from": None,
                    "version": committed[0].versions[f"{ws.mount}/t.txt"],
                    "diff": "--- /dev/null\n+++ b/t.txt\n@@ -0,0 +1 @@\n+t\n",
                    "hunks": [{"old_start": 0, "old_len": 0, "new_start": 1, "new_len": 1}],
                    "hunks_total": 1,
                    "truncated": False,
                }
            ],
            "locations": [{"path": f"{ws.mount}/t.txt", "start": 1, "end": 1}],
            "locations_total": 1,
            "truncated": False,
        },
    }
    bad = call_tool(ws, {"input": wrap("*** Delete File: missing.txt")}, on_commit=committed.append)
    assert (bad.is_error, bad.text, bad.code, bad.data) == (
        True,
        f"apply_patch verification failed: Failed to delete file {ws.mount}/missing.txt",
        "PATCH_DELETE_FAILED",
        None,
    )
    assert len(committed) == 1  # a failed call commits nothing
    parse = call_tool(ws, "*** Begin Patch\nbad\n*** End Patch")
    assert parse.text == (
        "apply_patch verification failed: invalid hunk at line 2, 'bad' is not a valid hunk header. Valid hunk "
        "headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"
    )
    denied = call_tool(ws, wrap("*** Add File: ../x\n+x"))
    assert (denied.is_error, denied.code) == (True, "FS_SANDBOX_DENIED")
    envelope = call_tool(ws, {"text": PATCH})
    assert (envelope.is_error, envelope.code) == (True, "PATCH_INVALID_INPUT")
    assert snapshot_tree(ws) == {"t.txt": b"t\n"}
