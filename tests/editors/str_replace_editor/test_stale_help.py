"""What a session remembers for the editor: the same edit sent twice (``FS_ALREADY_APPLIED``), the
stale-view refusal showing what changed, the memory bound on viewed bytes, and the opt-in rebase."""

from __future__ import annotations

import uuid

import pytest

import vfs
from editors.str_replace_editor.tool import StrReplaceEditor, ToolResult
from tests.support.trees import write_external

TEXT = "".join(f"line {n}\n" for n in range(1, 61))


def call(editor: StrReplaceEditor, **args: object) -> ToolResult:
    return editor.run(args)


def error(result: ToolResult, code: str) -> str:
    assert result.is_error and result.code == code, result.text
    return result.text.removeprefix("Error: ")


@pytest.fixture
def ws() -> vfs.Workspace:
    workspace = vfs.open_workspace(f"memory://stale-help-{uuid.uuid4().hex}")
    workspace.write_bytes(f"{workspace.mount}/f.txt", TEXT.encode())
    return workspace


def viewed_editor(ws: vfs.Workspace, session: vfs.Session | None = None) -> tuple[StrReplaceEditor, str]:
    path = f"{ws.mount}/f.txt"
    editor = StrReplaceEditor(ws, session=session if session is not None else True)
    assert not call(editor, command="view", path=path).is_error
    return editor, path


# -- already applied ----------------------------------------------------------------------------


def test_str_replace_sent_twice_is_already_applied_even_when_old_still_matches(ws: vfs.Workspace):
    editor, path = viewed_editor(ws)
    args = {"command": "str_replace", "path": path, "old_str": "line 5\n", "new_str": "line 5\n# note\n"}
    assert not editor.run(args).is_error
    after = ws.read_bytes(path)
    message = error(editor.run(args), "FS_ALREADY_APPLIED")  # old_str still matches: a second run would insert again
    assert message == "this change is already present at lines 5-6; nothing was changed"
    assert ws.read_bytes(path) == after


def test_insert_sent_twice_is_already_applied(ws: vfs.Workspace):
    editor, path = viewed_editor(ws)
    args = {"command": "insert", "path": path, "insert_line": 2, "new_str": "x\ny"}
    assert not editor.run(args).is_error
    after = ws.read_bytes(path)
    assert (
        error(editor.run(args), "FS_ALREADY_APPLIED")
        == "this change is already present at lines 3-4; nothing was changed"
    )
    assert ws.read_bytes(path) == after


def test_the_same_edit_after_another_change_is_applied_again(ws: vfs.Workspace):
    editor, path = viewed_editor(ws)
    args = {"command": "insert", "path": path, "insert_line": 0, "new_str": "top"}
    assert not editor.run(args).is_error
    assert not call(editor, command="str_replace", path=path, old_str="line 9\n", new_str="").is_error
    assert not editor.run(args).is_error  # the last edit of the path is another one: a deliberate repeat
    assert ws.read_bytes(path).startswith(b"top\ntop\nline 1\n")


# -- stale view: what changed -------------------------------------------------------------------


def test_stale_refusal_shows_the_diff_and_the_corrected_call_succeeds(ws: vfs.Workspace):
    editor, path = viewed_editor(ws)
    write_external(ws.backend, "f.txt", TEXT.replace("line 30\n", "line 30 (theirs)\n").encode())
    message = error(call(editor, command="str_replace", path=path, old_str="line 30\n", new_str="mine\n"),
                    "FS_STALE_VERSION")  # fmt: skip
    assert message.startswith(f'cannot write "{path}": file changed since it was read. What changed since your view')
    assert f"--- {path} (your view)\n+++ {path} (now)\n@@ -27,7 +27,7 @@" in message
    assert "\n-line 30\n+line 30 (theirs)\n" in message
    assert ws.read_bytes(path).count(b"(theirs)") == 1
    # the diff was shown whole: the session now holds this version, no new view needed
    assert not call(editor, command="str_replace", path=path, old_str="line 30 (theirs)\n", new_str="mine\n").is_error
    assert b"mine\n" in ws.read_bytes(path)


def test_stale_refusal_with_a_clipped_diff_asks_for_a_view(ws: vfs.Workspace):
    editor = StrReplaceEditor(ws, config={"max_output_chars": 200})
    path = f"{ws.mount}/f.txt"
    assert not call(editor, command="view", path=path).is_error
    write_external(ws.backend, "f.txt", TEXT.replace("line ", "LINE ").encode())
    message = error(call(editor, command="insert", path=path, insert_line=1, new_str="x"), "FS_STALE_VERSION")
    assert "only the part nearest your edit; view the file again" in message
    assert len(message) < 400
    error(call(editor, command="insert", path=path, insert_line=1, new_str="x"), "FS_STALE_VERSION")  # still stale


def test_a_clipped_diff_keeps_the_hunks_nearest_the_edit(ws: vfs.Workspace):
    editor = StrReplaceEditor(ws, config={"max_output_chars": 400})
    path = f"{ws.mount}/f.txt"
    assert not call(editor, command="view", path=path).is_error
    changed = TEXT.replace("line 2\n", "line 2 (theirs)\n").replace("line 55\n", "line 55 (theirs)\n")
    write_external(ws.backend, "f.txt", changed.encode())
    message = error(call(editor, command="str_replace", path=path, old_str="line 57\n", new_str="x\n"),
                    "FS_STALE_VERSION")  # fmt: skip
    assert "+line 55 (theirs)" in message and "+line 2 (theirs)" not in message
    assert "only the part nearest your edit; view the file again" in message


def test_a_file_over_the_cap_is_not_kept_and_the_refusal_says_so(ws: vfs.Workspace):
    session = vfs.Session(ws, vfs.ObservationPolicy(), views=vfs.ViewMemory(limit_bytes=1000, file_cap_bytes=100))
    editor, path = viewed_editor(ws, session)
    assert session.views.total_bytes == 0  # TEXT is over 100 bytes
    write_external(ws.backend, "f.txt", b"changed\n")
    message = error(call(editor, command="str_replace", path=path, old_str="changed", new_str="x"), "FS_STALE_VERSION")
    assert message == f'cannot write "{path}": file changed since it was read. View it again before editing.'


def test_view_memory_is_bounded_by_bytes_least_recently_used_first():
    memory = vfs.ViewMemory(limit_bytes=10, file_cap_bytes=6)
    memory.remember("/a", "1", b"aaaa")
    memory.remember("/b", "1", b"bbbb")
    assert memory.get("/a", "1") == b"aaaa"  # /a is now the most recently used
    memory.remember("/c", "1", b"cccc")  # 12 bytes > 10: the least recently used (/b) goes
    assert memory.get("/b", "1") is None and memory.get("/a", "1") == b"aaaa" and memory.get("/c", "1") == b"cccc"
    assert memory.total_bytes == 8
    memory.remember("/a", "2", b"a" * 7)  # over the per-file cap: not kept, the old version dropped too
    assert memory.get("/a", "1") is None and memory.get("/a", "2") is None and memory.total_bytes == 4
    assert memory.get("/c", "2") is None  # another version than the kept one


# -- rebase (opt-in) ----------------------------------------------------------------------------


def rebasing(ws: vfs.Workspace) -> tuple[StrReplaceEditor, str]:
    return viewed_editor(ws, ws.session(vfs.ObservationPolicy(rebase=True)))


def test_rebase_applies_an_edit_whose_lines_did_not_change(ws: vfs.Workspace):
    editor, path = rebasing(ws)
    write_external(ws.backend, "f.txt", ("# theirs\n" + TEXT).encode())
    result = call(editor, command="str_replace", path=path, old_str="line 50\n", new_str="line fifty\n")
    assert not result.is_error, result.text
    assert "The file had changed since your view (now line 1)" in result.text and "(rebased)" in result.text
    assert ws.read_bytes(path) == ("# theirs\n" + TEXT.replace("line 50\n", "line fifty\n")).encode()


def test_rebase_refuses_when_the_change_overlaps_the_edit(ws: vfs.Workspace):
    editor, path = rebasing(ws)
    changed = TEXT.replace("line 51\n", "line 51 (theirs)\n")
    write_external(ws.backend, "f.txt", changed.encode())
    message = error(call(editor, command="str_replace", path=path, old_str="line 50\nline 51\n", new_str="x\n"),
                    "FS_STALE_VERSION")  # fmt: skip
    assert "+line 51 (theirs)" in message
    assert ws.read_bytes(path) == changed.encode()


def test_without_rebase_the_same_disjoint_change_is_refused(ws: vfs.Workspace):
    editor, path = viewed_editor(ws)
    write_external(ws.backend, "f.txt", ("# theirs\n" + TEXT).encode())
    error(
        call(editor, command="str_replace", path=path, old_str="line 50\n", new_str="line fifty\n"), "FS_STALE_VERSION"
    )
    assert ws.read_bytes(path) == ("# theirs\n" + TEXT).encode()


def test_sessions_sharing_a_memory_keep_their_views_apart_within_one_bound(ws: vfs.Workspace):
    shared = vfs.ViewMemory(limit_bytes=len(TEXT) + 10, file_cap_bytes=len(TEXT))
    first = vfs.Session(ws, vfs.ObservationPolicy(), views=shared)
    second = vfs.Session(ws, vfs.ObservationPolicy(), views=shared)
    path = f"{ws.mount}/f.txt"
    version = first.read(path).version
    assert version is not None and first.viewed(path, version) == TEXT.encode()
    assert second.viewed(path, version) is None  # not seen by the second session
    second.read(path)  # the bound holds one copy: the first session's view is dropped
    assert shared.total_bytes == len(TEXT)
    assert first.viewed(path, version) is None and second.viewed(path, version) == TEXT.encode()
