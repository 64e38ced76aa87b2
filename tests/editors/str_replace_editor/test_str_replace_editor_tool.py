"""str_replace_editor over a real workspace, on every backend (``make_workspace``)."""

from __future__ import annotations

import os

import pytest

import vfs
from backends.base import Backend, DeleteItem, FileInfo
from editors.str_replace_editor.config import ConfigError
from editors.str_replace_editor.render import TRUNCATED_MESSAGE
from editors.str_replace_editor.tool import StrReplaceEditor, ToolResult
from tests.support.backends import FACTORIES
from tests.support.faults import FaultyBackend
from tests.support.trees import populate, snapshot_tree, write_external

LISTING_HEADER = (
    "Here're the files and directories up to 2 levels deep in {p}, excluding hidden items, node_modules, "
    "and Python cache directories:\n"
)


def run(editor: StrReplaceEditor, **args) -> ToolResult:
    return editor.run(args)


def ok(result: ToolResult) -> str:
    assert not result.is_error, result.text
    assert result.code is None
    return result.text


def err(result: ToolResult, code: str) -> str:
    assert result.is_error, result.text
    assert result.code == code, result.text
    assert result.text.startswith("Error: ")
    assert "Traceback" not in result.text
    return result.text[len("Error: ") :]


# ---------------------------------------------------------------------------------------------
# exact texts, table-driven. {m} is the mount. "view" lists paths the session views first.

FILES = {
    "a.txt": b"alpha\nbeta\nalpha\n",
    "dir": None,
    "dir/inner.txt": b"x\n",
    "latin1.txt": b"caf\xe9\n",
    "binary.bin": b"\x00\x01\x02",
}

EXACT = [
    (
        "view file",
        [],
        {"command": "view", "path": "{m}/a.txt"},
        None,
        "Here's the content of {m}/a.txt with line numbers (which has a total of 4 lines):\n"
        "     1  alpha\n     2  beta\n     3  alpha\n     4  \n",
    ),
    (
        "view range",
        [],
        {"command": "view", "path": "{m}/a.txt", "view_range": [2, -1]},
        None,
        "Here's the content of {m}/a.txt with line numbers (which has a total of 4 lines) with "
        "view_range=[2, -1]:\n     2  beta\n     3  alpha\n     4  \n",
    ),
    (
        "view range first out of range",
        [],
        {"command": "view", "path": "{m}/a.txt", "view_range": [0, 2]},
        "FS_INVALID_ARGUMENT",
        "Invalid `view_range`: [0, 2]. Its first element `0` should be within the range of lines of the file: [1, 4]",
    ),
    (
        "view range second too large",
        [],
        {"command": "view", "path": "{m}/a.txt", "view_range": [1, 9]},
        "FS_INVALID_ARGUMENT",
        "Invalid `view_range`: [1, 9]. Its second element `9` should be smaller than the number of lines in the "
        "file: `4`",
    ),
    (
        "view range reversed",
        [],
        {"command": "view", "path": "{m}/a.txt", "view_range": [3, 2]},
        "FS_INVALID_ARGUMENT",
        "Invalid `view_range`: [3, 2]. Its second element `2` should be larger or equal than its first `3`",
    ),
    (
        "view range malformed",
        [],
        {"command": "view", "path": "{m}/a.txt", "view_range": [1, "x"]},
        "FS_INVALID_ARGUMENT",
        "Invalid `view_range`. It should be a list of two integers.",
    ),
    (
        "view range on a directory",
        [],
        {"command": "view", "path": "{m}/dir", "view_range": [1, 2]},
        "FS_INVALID_ARGUMENT",
        "The `view_range` parameter is not allowed when `path` points to a directory.",
    ),
    (
        "malformed view range on a directory",
        [],
        {"command": "view", "path": "{m}/dir", "view_range": [1]},
        "FS_INVALID_ARGUMENT",
        "The `view_range` parameter is not allowed when `path` points to a directory.",
    ),
    (
        "view missing",
        [],
        {"command": "view", "path": "{m}/nope.txt"},
        "FS_NOT_FOUND",
        "The path {m}/nope.txt does not exist. Please provide a valid path.",
    ),
    (
        "view directory",
        [],
        {"command": "view", "path": "{m}/dir"},
        None,
        LISTING_HEADER.format(p="{m}/dir") + "d\t{m}/dir\nf\t{m}/dir/inner.txt\n\n",
    ),
    (
        "relative path",
        [],
        {"command": "view", "path": "a.txt"},
        "FS_INVALID_ARGUMENT",
        "The path a.txt is not an absolute path, it should start with `/`. Maybe you meant {m}/a.txt?",
    ),
    (
        "relative path with dots",
        [],
        {"command": "create", "path": "./src/../b.txt", "file_text": ""},
        "FS_INVALID_ARGUMENT",
        "The path ./src/../b.txt is not an absolute path, it should start with `/`. Maybe you meant {m}/b.txt?",
    ),
    ("empty path", [], {"command": "view", "path": ""}, "FS_INVALID_ARGUMENT", "path must be a non-empty string"),
    (
        "unknown command",
        [],
        {"command": "delete", "path": "{m}/a.txt"},
        "FS_INVALID_ARGUMENT",
        "Unrecognized command delete. The allowed commands for the str_replace_editor tool are: view, create, "
        "str_replace, insert",
    ),
    (
        "create",
        [],
        {"command": "create", "path": "{m}/new/deep/b.txt", "file_text": "hello\n"},
        None,
        "New file created successfully at: {m}/new/deep/b.txt",
    ),
    (
        "create empty",
        [],
        {"command": "create", "path": "{m}/empty.txt", "file_text": ""},
        None,
        "New file created successfully at: {m}/empty.txt",
    ),
    (
        "create without file_text",
        [],
        {"command": "create", "path": "{m}/b.txt"},
        "FS_INVALID_ARGUMENT",
        "Parameter `file_text` is required for command: create",
    ),
    (
        "create existing file",
        [],
        {"command": "create", "path": "{m}/a.txt", "file_text": "x"},
        "FS_EXISTS",
        "File already exists at: {m}/a.txt. Cannot overwrite files using command `create`.",
    ),
    (
        "create existing directory",
        [],
        {"command": "create", "path": "{m}/dir", "file_text": "x"},
        "FS_EXISTS",
        "File already exists at: {m}/dir. Cannot overwrite files using command `create`.",
    ),
    (
        "str_replace",
        ["a.txt"],
        {"command": "str_replace", "path": "{m}/a.txt", "old_str": "beta", "new_str": "gamma"},
        None,
        "The file {m}/a.txt has been edited successfully.",
    ),
    (
        "str_replace not found",
        ["a.txt"],
        {"command": "str_replace", "path": "{m}/a.txt", "old_str": "zeta", "new_str": "eta"},
        "FS_EDIT_NOT_FOUND",
        "No replacement was performed, old_str `zeta` did not appear verbatim in {m}/a.txt.",
    ),
    (
        "str_replace multiple",
        ["a.txt"],
        {"command": "str_replace", "path": "{m}/a.txt", "old_str": "alpha", "new_str": "omega"},
        "FS_AMBIGUOUS_EDIT",
        "No replacement was performed. Multiple occurrences of old_str `alpha` in lines [1, 3]. Please ensure it "
        "is unique",
    ),
    (
        "str_replace multiple multi-line",
        ["a.txt"],
        {"command": "str_replace", "path": "{m}/a.txt", "old_str": "a\n", "new_str": "A\n"},
        "FS_AMBIGUOUS_EDIT",
        "No replacement was performed. Multiple occurrences of old_str `a\n` in lines [1, 2, 3]. Please ensure it "
        "is unique",
    ),
    (
        "str_replace without old_str",
        ["a.txt"],
        {"command": "str_replace", "path": "{m}/a.txt"},
        "FS_INVALID_ARGUMENT",
        "Parameter `old_str` is required for command: str_replace",
    ),
    (
        "str_replace empty old_str",
        ["a.txt"],
        {"command": "str_replace", "path": "{m}/a.txt", "old_str": ""},
        "FS_INVALID_ARGUMENT",
        "Parameter `old_str` is empty for command: str_replace",
    ),
    (
        "str_replace on a directory",
        [],
        {"command": "str_replace", "path": "{m}/dir", "old_str": "x"},
        "FS_NOT_REGULAR_FILE",
        "The path {m}/dir is a directory and only the `view` command can be used on directories",
    ),
    (
        "insert on a directory",
        [],
        {"command": "insert", "path": "{m}/dir", "insert_line": 0, "new_str": "x"},
        "FS_NOT_REGULAR_FILE",
        "The path {m}/dir is a directory and only the `view` command can be used on directories",
    ),
    (
        "str_replace never read",
        [],
        {"command": "str_replace", "path": "{m}/a.txt", "old_str": "beta"},
        "FS_NOT_OBSERVED",
        'edit requires reading "{m}/a.txt" first',
    ),
    (
        "insert never read",
        [],
        {"command": "insert", "path": "{m}/a.txt", "insert_line": 0, "new_str": "x"},
        "FS_NOT_OBSERVED",
        'edit requires reading "{m}/a.txt" first',
    ),
    (
        "str_replace confirmed absent",
        ["nope.txt"],
        {"command": "str_replace", "path": "{m}/nope.txt", "old_str": "x"},
        "FS_NOT_FOUND",
        'cannot edit "{m}/nope.txt": not found',
    ),
    (
        "insert confirmed absent",
        ["nope.txt"],
        {"command": "insert", "path": "{m}/nope.txt", "insert_line": 0, "new_str": "x"},
        "FS_NOT_FOUND",
        'cannot edit "{m}/nope.txt": not found',
    ),
    (
        "insert",
        ["a.txt"],
        {"command": "insert", "path": "{m}/a.txt", "insert_line": 1, "new_str": "inserted"},
        None,
        "The file {m}/a.txt has been edited successfully.",
    ),
    (
        "insert with insert_text",
        ["a.txt"],
        {"command": "insert", "path": "{m}/a.txt", "insert_line": 0, "insert_text": "top"},
        None,
        "The file {m}/a.txt has been edited successfully.",
    ),
    (
        "insert out of range",
        ["a.txt"],
        {"command": "insert", "path": "{m}/a.txt", "insert_line": 5, "new_str": "x"},
        "FS_INVALID_ARGUMENT",
        "Invalid `insert_line` parameter: 5. It should be within the range of lines of the file: [0, 4]",
    ),
    (
        "insert negative",
        ["a.txt"],
        {"command": "insert", "path": "{m}/a.txt", "insert_line": -1, "new_str": "x"},
        "FS_INVALID_ARGUMENT",
        "Invalid `insert_line` parameter: -1. It should be within the range of lines of the file: [0, 4]",
    ),
    (
        "insert without insert_line",
        ["a.txt"],
        {"command": "insert", "path": "{m}/a.txt", "new_str": "x"},
        "FS_INVALID_ARGUMENT",
        "Parameter `insert_line` is required for command: insert",
    ),
    (
        "insert without new_str",
        ["a.txt"],
        {"command": "insert", "path": "{m}/a.txt", "insert_line": 0},
        "FS_INVALID_ARGUMENT",
        "Parameter `new_str` is required for command: insert",
    ),
]


@pytest.fixture
def memory_workspace(request):
    """The exact texts do not depend on the store: one copy of them, on the memory backend."""
    return FACTORIES["memory"](request)


#: The exact-text cases that also run on every backend (views, edits, refusals).
SMOKE = ("view file", "view directory", "create", "str_replace", "str_replace not found", "create existing file")


@pytest.mark.parametrize(("views", "call", "code", "expected"), [e[1:] for e in EXACT], ids=[e[0] for e in EXACT])
def test_exact_texts(memory_workspace, views, call, code, expected):
    _check_exact(memory_workspace, views, call, code, expected)


@pytest.mark.parametrize(
    ("views", "call", "code", "expected"),
    [e[1:] for e in EXACT if e[0] in SMOKE],
    ids=[e[0] for e in EXACT if e[0] in SMOKE],
)
def test_exact_texts_on_every_backend(make_workspace, views, call, code, expected):
    _check_exact(make_workspace, views, call, code, expected)


def _check_exact(make, views, call, code, expected):
    ws = make(FILES)
    m = ws.mount
    editor = StrReplaceEditor(ws)
    for rel in views:
        editor.run({"command": "view", "path": f"{m}/{rel}"})
    before = snapshot_tree(ws)
    args = {k: v.replace("{m}", m) if isinstance(v, str) else v for k, v in call.items()}
    result = editor.run(args)
    want = expected.replace("{m}", m)
    if code is None:
        assert ok(result) == want
    else:
        assert err(result, code) == want
        assert snapshot_tree(ws) == before


@pytest.mark.parametrize("name", ["latin1.txt", "binary.bin"])
@pytest.mark.parametrize("command", ["view", "str_replace", "insert"])
def test_non_text_files_are_refused_naming_the_path(make_workspace, name, command):
    ws = make_workspace(FILES)
    editor = StrReplaceEditor(ws, session=False)
    before = snapshot_tree(ws)
    path = f"{ws.mount}/{name}"
    args = {
        "view": {"command": "view", "path": path},
        "str_replace": {"command": "str_replace", "path": path, "old_str": "caf", "new_str": "x"},
        "insert": {"command": "insert", "path": path, "insert_line": 0, "new_str": "x"},
    }[command]
    message = err(editor.run(args), "FS_NOT_TEXT")
    assert path in message
    assert snapshot_tree(ws) == before


def test_edits_land_on_disk(make_workspace):
    ws = make_workspace(FILES)
    m = ws.mount
    editor = StrReplaceEditor(ws)
    ok(run(editor, command="view", path=f"{m}/a.txt"))
    ok(run(editor, command="str_replace", path=f"{m}/a.txt", old_str="beta\n"))  # new_str missing: delete
    assert ws.read_bytes(f"{m}/a.txt") == b"alpha\nalpha\n"
    ok(run(editor, command="insert", path=f"{m}/a.txt", insert_line=1, insert_text="mid"))
    assert ws.read_bytes(f"{m}/a.txt") == b"alpha\nmid\nalpha\n"
    ok(run(editor, command="create", path=f"{m}/new/deep/b.txt", file_text="hello\n"))
    assert ws.read_bytes(f"{m}/new/deep/b.txt") == b"hello\n"
    assert ws.stat(f"{m}/new").kind == "directory"
    ok(run(editor, command="create", path=f"{m}/empty.txt", file_text=""))
    assert ws.read_bytes(f"{m}/empty.txt") == b""
    # every mutation is one transaction in the history
    labels = [entry.label for entry in ws.log()]
    assert labels[:4] == [
        f"str_replace_editor create {m}/empty.txt",
        f"str_replace_editor create {m}/new/deep/b.txt",
        f"str_replace_editor insert {m}/a.txt",
        f"str_replace_editor str_replace {m}/a.txt",
    ]


def test_view_shows_the_text_after_the_bom_and_without_crs(make_workspace):
    ws = make_workspace({"bom.txt": b"\xef\xbb\xbfone\r\ntwo\r\n"})
    text = ok(run(StrReplaceEditor(ws), command="view", path=f"{ws.mount}/bom.txt"))
    assert text.endswith(":\n     1  one\n     2  two\n     3  \n")


def test_view_clips_long_files_through_config(make_workspace):
    body = "".join(f"line {i}\n" for i in range(1, 401)).encode()
    ws = make_workspace({"long.txt": body})
    editor = StrReplaceEditor(ws, config={"max_output_chars": 500})
    text = ok(run(editor, command="view", path=f"{ws.mount}/long.txt"))
    head, clipped, note = text.partition(TRUNCATED_MESSAGE)
    assert clipped and len(head) <= 500 and head.endswith("\n")
    shown = len(head.splitlines()) - 1
    assert f"Shown: lines 1-{shown} of 401." in note
    assert f"`view_range`: [{shown + 1}, " in note


def test_invalid_config_is_refused_at_construction(make_workspace):
    ws = make_workspace()
    with pytest.raises(ConfigError):
        StrReplaceEditor(ws, config={"max_output_chars": 0})
    with pytest.raises(ConfigError):
        StrReplaceEditor(ws, config={"description": ""})


# ---------------------------------------------------------------------------------------------
# bytes outside the edit survive

CONTENTS = {
    "lf": b"first\nsecond line\nthird\n",
    "crlf": b"first\r\nsecond line\r\nthird\r\n",
    "mixed": b"first\r\nsecond line\nthird\r\n",
    "lone-cr": b"first\rsecond line\rthird\r",
    "bom": b"\xef\xbb\xbffirst\nsecond line\nthird\n",
    "bom-crlf": b"\xef\xbb\xbffirst\r\nsecond line\r\nthird",
    "tabs": b"first\n\tsecond line\t\n\t\tthird",
    "no-final-newline": b"first\nsecond line\nthird",
    "unicode": "first\nsecond line \u00e9\u4e2d\U0001f600\nthird\n".encode(),
}


@pytest.mark.parametrize("kind", sorted(CONTENTS))
def test_str_replace_preserves_every_other_byte(make_workspace, kind):
    data = CONTENTS[kind]
    ws = make_workspace({"f.txt": data})
    path = f"{ws.mount}/f.txt"
    editor = StrReplaceEditor(ws)
    ok(run(editor, command="view", path=path))
    ok(run(editor, command="str_replace", path=path, old_str="second line", new_str="2nd\tline"))
    assert ws.read_bytes(path) == data.replace(b"second line", b"2nd\tline")


@pytest.mark.parametrize("kind", sorted(CONTENTS))
def test_insert_preserves_every_other_byte(make_workspace, kind):
    data = CONTENTS[kind]
    ws = make_workspace({"f.txt": data})
    path = f"{ws.mount}/f.txt"
    editor = StrReplaceEditor(ws)
    ok(run(editor, command="view", path=path))
    ok(run(editor, command="insert", path=path, insert_line=0, new_str="zero"))
    body = data.removeprefix(b"\xef\xbb\xbf")
    bom = data[: len(data) - len(body)]
    newline = b"\r\n" if body.split(b"\n", 1)[0].endswith(b"\r") and b"\n" in body else b"\n"
    assert ws.read_bytes(path) == bom + b"zero" + newline + body


def test_crlf_file_with_lf_old_str_is_matched_and_keeps_crlf(make_workspace):
    data = b"def f():\r\n    return 1\r\n\r\nprint(f())\r\n"
    ws = make_workspace({"f.py": data})
    path = f"{ws.mount}/f.py"
    editor = StrReplaceEditor(ws)
    ok(run(editor, command="view", path=path))
    ok(
        run(
            editor,
            command="str_replace",
            path=path,
            old_str="def f():\n    return 1\n",
            new_str="def f():\n    x = 1\n    return x\n",
        )
    )
    assert ws.read_bytes(path) == b"def f():\r\n    x = 1\r\n    return x\r\n\r\nprint(f())\r\n"
    ok(run(editor, command="insert", path=path, insert_line=1, new_str="    # doc\n    # more"))
    assert (
        ws.read_bytes(path) == b"def f():\r\n    # doc\r\n    # more\r\n    x = 1\r\n    return x\r\n\r\nprint(f())\r\n"
    )


def test_near_miss_is_diagnosed_and_the_retry_succeeds(make_workspace):
    ws = make_workspace({"m.go": b"func main() {\n\tif ok {\n\t\treturn\n\t}\n}\n"})
    path = f"{ws.mount}/m.go"
    editor = StrReplaceEditor(ws)
    ok(run(editor, command="view", path=path))
    before = ws.read_bytes(path)
    message = err(
        run(editor, command="str_replace", path=path, old_str="\tif ok{\n\t\treturn", new_str="x"),
        "FS_EDIT_NOT_FOUND",
    )
    assert "line 2" in message and "spacing inside a line differs" in message
    assert ws.read_bytes(path) == before
    exact = __import__("json").loads(message.split("The exact text in the file is: ")[1])
    ok(run(editor, command="str_replace", path=path, old_str=exact, new_str="\tif !ok {\n\t\tpanic(1)"))
    assert ws.read_bytes(path) == b"func main() {\n\tif !ok {\n\t\tpanic(1)\n\t}\n}\n"


# ---------------------------------------------------------------------------------------------
# observation, absence, concurrency


def test_confirmed_absence_flow(make_workspace):
    ws = make_workspace({"f.txt": b"v1\n"})
    other = make_workspace.reopen(ws)
    path = f"{ws.mount}/f.txt"
    editor = StrReplaceEditor(ws)
    ok(run(editor, command="view", path=path))
    with other.transaction() as tx:  # external delete
        tx.delete(path)
    assert err(run(editor, command="view", path=path), "FS_NOT_FOUND") == (
        f"The path {path} does not exist. Please provide a valid path."
    )
    assert err(run(editor, command="str_replace", path=path, old_str="v1", new_str="v2"), "FS_NOT_FOUND") == (
        f'cannot edit "{path}": not found'
    )
    assert err(run(editor, command="insert", path=path, insert_line=0, new_str="v2"), "FS_NOT_FOUND") == (
        f'cannot edit "{path}": not found'
    )
    assert not ws.exists(path)
    assert ok(run(editor, command="create", path=path, file_text="v2\n")) == f"New file created successfully at: {path}"
    assert ws.read_bytes(path) == b"v2\n"
    # the create is now this session's observation: editing it needs no new view
    ok(run(editor, command="str_replace", path=path, old_str="v2", new_str="v3"))
    assert ws.read_bytes(path) == b"v3\n"


def test_absence_never_authorizes_an_edit_even_if_the_file_appears(make_workspace):
    ws = make_workspace()
    path = f"{ws.mount}/late.txt"
    editor = StrReplaceEditor(ws)
    err(run(editor, command="view", path=path), "FS_NOT_FOUND")
    write_external(ws.backend, "late.txt", b"theirs\n")
    assert err(run(editor, command="str_replace", path=path, old_str="theirs", new_str="mine"), "FS_NOT_FOUND") == (
        f'cannot edit "{path}": not found'
    )
    assert ws.read_bytes(path) == b"theirs\n"
    ok(run(editor, command="view", path=path))
    ok(run(editor, command="str_replace", path=path, old_str="theirs", new_str="mine"))
    assert ws.read_bytes(path) == b"mine\n"


def test_external_delete_after_view_is_reported_and_recorded(make_workspace):
    ws = make_workspace({"f.txt": b"v1\n"})
    path = f"{ws.mount}/f.txt"
    editor = StrReplaceEditor(ws)
    ok(run(editor, command="view", path=path))
    with make_workspace.reopen(ws).transaction() as tx:
        tx.delete(path)
    assert err(run(editor, command="str_replace", path=path, old_str="v1", new_str="v2"), "FS_NOT_FOUND") == (
        f"The path {path} does not exist. Please provide a valid path."
    )
    # the absence is now recorded: a second attempt is refused by the policy
    assert err(run(editor, command="str_replace", path=path, old_str="v1", new_str="v2"), "FS_NOT_FOUND") == (
        f'cannot edit "{path}": not found'
    )
    assert not ws.exists(path)


@pytest.mark.parametrize("command", ["str_replace", "insert"])
def test_external_write_between_view_and_edit_is_stale(make_workspace, command):
    ws = make_workspace({"f.txt": b"one\ntwo\n"})
    path = f"{ws.mount}/f.txt"
    editor = StrReplaceEditor(ws)
    ok(run(editor, command="view", path=path))
    with make_workspace.reopen(ws).transaction() as tx:  # a second client of the same storage
        tx.write(path, b"one\ntwo\nthree (theirs)\n")
    args = {"old_str": "two", "new_str": "2"} if command == "str_replace" else {"insert_line": 0, "new_str": "zero"}
    message = err(editor.run({"command": command, "path": path, **args}), "FS_STALE_VERSION")
    assert message.startswith(f'cannot write "{path}": file changed since it was read. What changed since your view')
    assert ws.read_bytes(path) == b"one\ntwo\nthree (theirs)\n"
    # after a fresh view the edit goes through
    ok(run(editor, command="view", path=path))
    ok(editor.run({"command": command, "path": path, **args}))


def test_staleness_is_reported_before_a_failed_match(make_workspace):
    """The file changed since the view and no longer holds old_str: "re-read" beats "not found"."""
    ws = make_workspace({"f.txt": b"one\ntwo\n"})
    path = f"{ws.mount}/f.txt"
    editor = StrReplaceEditor(ws)
    ok(run(editor, command="view", path=path))
    write_external(ws.backend, "f.txt", b"one\nTWO\n")
    message = err(run(editor, command="str_replace", path=path, old_str="two", new_str="2"), "FS_STALE_VERSION")
    assert message.startswith(f'cannot write "{path}": file changed since it was read. ')
    assert message.endswith("\n-two\n+TWO\n ")  # the diff's last context line: the empty line after the LF
    assert ws.read_bytes(path) == b"one\nTWO\n"


def test_external_write_through_the_backend_after_own_edit_is_stale(make_workspace):
    ws = make_workspace({"f.txt": b"one\n"})
    path = f"{ws.mount}/f.txt"
    editor = StrReplaceEditor(ws)
    ok(run(editor, command="view", path=path))
    ok(run(editor, command="str_replace", path=path, old_str="one", new_str="uno"))
    write_external(ws.backend, "f.txt", b"uno (edited by a human)\n")
    err(run(editor, command="str_replace", path=path, old_str="uno", new_str="eins"), "FS_STALE_VERSION")
    assert ws.read_bytes(path) == b"uno (edited by a human)\n"


def _racing(monkeypatch, ws, action):
    """Make the next transaction run ``action()`` right before it commits (a concurrent writer)."""
    real = ws.transaction

    def transaction(**kw):
        tx = real(**kw)
        commit = tx.commit

        def racing_commit():
            action()
            return commit()

        tx.commit = racing_commit
        return tx

    monkeypatch.setattr(ws, "transaction", transaction)


def test_a_write_racing_the_edit_commit_is_stale(make_workspace, monkeypatch):
    ws = make_workspace({"f.txt": b"one\n"})
    path = f"{ws.mount}/f.txt"
    editor = StrReplaceEditor(ws)
    ok(run(editor, command="view", path=path))
    _racing(monkeypatch, ws, lambda: write_external(ws.backend, "f.txt", b"theirs\n"))
    message = err(run(editor, command="str_replace", path=path, old_str="one", new_str="mine"), "FS_STALE_VERSION")
    assert message == f'cannot write "{path}": file changed since it was read'
    assert ws.read_bytes(path) == b"theirs\n"


def test_a_delete_racing_the_edit_commit_is_stale(make_workspace, monkeypatch):
    ws = make_workspace({"f.txt": b"one\n"})
    path = f"{ws.mount}/f.txt"
    editor = StrReplaceEditor(ws, session=False)
    _racing(monkeypatch, ws, lambda: ws.backend.delete(DeleteItem("f.txt")))
    message = err(run(editor, command="insert", path=path, insert_line=0, new_str="x"), "FS_STALE_VERSION")
    assert message == f'cannot write "{path}": file no longer exists'
    assert not ws.exists(path)


def test_a_create_racing_an_external_create_never_clobbers(make_workspace, monkeypatch):
    ws = make_workspace()
    path = f"{ws.mount}/sub/new.txt"
    editor = StrReplaceEditor(ws)
    _racing(monkeypatch, ws, lambda: write_external(ws.backend, "sub/new.txt", b"theirs\n"))
    message = err(run(editor, command="create", path=path, file_text="mine\n"), "FS_EXISTS")
    assert message == f"File already exists at: {path}. Cannot overwrite files using command `create`."
    assert ws.read_bytes(path) == b"theirs\n"


def test_create_after_confirmed_absence_still_refuses_a_file_created_meanwhile(make_workspace):
    ws = make_workspace()
    path = f"{ws.mount}/new.txt"
    editor = StrReplaceEditor(ws)
    err(run(editor, command="view", path=path), "FS_NOT_FOUND")
    write_external(ws.backend, "new.txt", b"theirs\n")
    err(run(editor, command="create", path=path, file_text="mine\n"), "FS_EXISTS")
    assert ws.read_bytes(path) == b"theirs\n"


def test_view_records_the_version_seen(make_workspace):
    ws = make_workspace({"f.txt": b"one\n"})
    path = f"{ws.mount}/f.txt"
    session = ws.session()
    editor = StrReplaceEditor(ws, session=session)
    assert session.observation(path) is None
    ok(run(editor, command="view", path=path))
    seen = session.observation(path)
    assert seen is not None and seen.state == "present" and ws.is_current(path, seen.version)
    err(run(editor, command="view", path=f"{ws.mount}/gone.txt"), "FS_NOT_FOUND")
    assert session.observation(f"{ws.mount}/gone.txt") == vfs.Observation("absent", None)
    ok(run(editor, command="str_replace", path=path, old_str="one", new_str="two"))
    after = session.observation(path)
    assert after is not None and after.version != seen.version and ws.is_current(path, after.version)


def test_a_shared_session_carries_observations_between_tools(make_workspace):
    ws = make_workspace({"f.txt": b"one\n"})
    path = f"{ws.mount}/f.txt"
    session = ws.session()
    session.read(path)  # another tool of the same conversation read it
    ok(run(StrReplaceEditor(ws, session=session), command="str_replace", path=path, old_str="one", new_str="1"))
    assert ws.read_bytes(path) == b"1\n"


def test_one_shot_mode_needs_no_view_and_keeps_nothing(make_workspace):
    ws = make_workspace({"f.txt": b"one\n"})
    path = f"{ws.mount}/f.txt"
    editor = StrReplaceEditor(ws, session=False)
    assert editor.session is None
    ok(run(editor, command="str_replace", path=path, old_str="one", new_str="two"))
    ok(run(editor, command="insert", path=path, insert_line=0, new_str="zero"))
    assert ws.read_bytes(path) == b"zero\ntwo\n"
    err(run(editor, command="view", path=f"{ws.mount}/gone.txt"), "FS_NOT_FOUND")
    ok(run(editor, command="create", path=f"{ws.mount}/gone.txt", file_text=""))
    # an absence seen in one-shot mode does not block a later edit of the (now present) file
    ok(run(editor, command="insert", path=f"{ws.mount}/gone.txt", insert_line=0, new_str="x"))
    assert ws.read_bytes(f"{ws.mount}/gone.txt") == b"x\n"


def test_session_with_the_policy_off_edits_unread_files(make_workspace):
    ws = make_workspace({"f.txt": b"one\n"})
    editor = StrReplaceEditor(ws, session=ws.session(policy=None))
    ok(run(editor, command="str_replace", path=f"{ws.mount}/f.txt", old_str="one", new_str="two"))
    assert ws.read_bytes(f"{ws.mount}/f.txt") == b"two\n"


# ---------------------------------------------------------------------------------------------
# directory listing


def test_directory_listing(make_workspace):
    ws = make_workspace(
        {
            "README.md": b"r",
            "src": None,
            "src/app.py": b"a",
            "src/pkg": None,
            "src/pkg/deep.py": b"too deep",
            "src/__pycache__": None,
            "src/__pycache__/app.cpython-311.pyc": b"c",
            ".git": None,
            ".git/HEAD": b"h",
            ".env": b"secret",
            "node_modules": None,
            "node_modules/left-pad": None,
            "node_modules_old": None,
            "node_modules_old/keep.js": b"k",
            "__pycache__backup": None,
            "__pycache__backup/x.pyc": b"x",
            "with space": None,
            "with space/file name.txt": b"s",
            "\u00e9t\u00e9.txt": b"u",
            "\u4e2d\u6587": None,
            "Zeta.txt": b"z",
            "a-b.txt": b"-",
            "a.txt": b".",
            "a": None,
            "a/b.txt": b"/",
        }
    )
    m = ws.mount
    editor = StrReplaceEditor(ws)
    ok(run(editor, command="create", path=f"{m}/src/new.py", file_text=""))  # makes .vfs exist too
    text = ok(run(editor, command="view", path=m))
    rows = [
        ("d", ""),
        ("f", "/README.md"),
        ("f", "/Zeta.txt"),
        ("d", "/__pycache__backup"),
        ("f", "/__pycache__backup/x.pyc"),
        ("d", "/a"),
        ("f", "/a-b.txt"),
        ("f", "/a.txt"),
        ("f", "/a/b.txt"),
        ("d", "/node_modules_old"),
        ("f", "/node_modules_old/keep.js"),
        ("d", "/src"),
        ("f", "/src/app.py"),
        ("f", "/src/new.py"),
        ("d", "/src/pkg"),
        ("d", "/with space"),
        ("f", "/with space/file name.txt"),
        ("f", "/\u00e9t\u00e9.txt"),
        ("d", "/\u4e2d\u6587"),
    ]
    assert text == LISTING_HEADER.format(p=m) + "".join(f"{k}\t{m}{p}\n" for k, p in rows) + "\n"
    assert ".vfs" not in text and "deep.py" not in text and "left-pad" not in text


def test_directory_listing_of_a_subdirectory_and_clipping(make_workspace):
    ws = make_workspace({"d": None, **{f"d/f{i:02d}.txt": b"" for i in range(40)}})
    m = ws.mount
    text = ok(run(StrReplaceEditor(ws, config={"max_output_chars": 200}), command="view", path=f"{m}/d/"))
    head, clipped, note = text.partition(TRUNCATED_MESSAGE)
    assert head.startswith(LISTING_HEADER.format(p=f"{m}/d") + f"d\t{m}/d\nf\t{m}/d/f00.txt\n")
    assert clipped and head.endswith("\n")
    assert "of 41 entries." in note


def test_special_files_and_symlinks_on_local_disk(make_workspace):
    ws = make_workspace({"real.txt": b"hi\n"})
    if not ws.capabilities.symlinks:
        pytest.skip("backend has no symlinks")
    root = ws.backend.describe()
    m = ws.mount
    os.symlink(os.path.join(root, "real.txt"), os.path.join(root, "link"))
    os.symlink("/etc", os.path.join(root, "outside"))
    os.mkdir(os.path.join(root, "sub"))
    ws.write_bytes(f"{m}/sub/in.txt", b"in\n")
    os.symlink("sub", os.path.join(root, "sublink"))
    os.symlink("nowhere", os.path.join(root, "dangling"))
    editor = StrReplaceEditor(ws)
    listing_text = ok(run(editor, command="view", path=m))
    # As the DSH editor: a link is shown as what it leads to, children under the link's path;
    # a link leading out of the workspace or nowhere is `?` (ours: never followed outside).
    assert f"f\t{m}/link\n" in listing_text and f"?\t{m}/outside\n" in listing_text
    assert f"d\t{m}/sublink\nf\t{m}/sublink/in.txt\n" in listing_text
    assert f"?\t{m}/dangling\n" in listing_text
    ok(run(editor, command="view", path=f"{m}/link"))
    ok(run(editor, command="str_replace", path=f"{m}/link", old_str="hi", new_str="ho"))
    ok(run(editor, command="str_replace", path=f"{m}/link", old_str="ho", new_str="hu"))
    assert ws.read_bytes(f"{m}/real.txt") == b"hu\n"
    message = err(run(editor, command="view", path=f"{m}/outside/passwd"), "FS_SANDBOX_DENIED")
    assert "[sandbox: file access denied under workspace-write mode]" in message
    if hasattr(os, "mkfifo") and make_workspace.id == "local":
        os.mkfifo(os.path.join(root, "fifo"))
        fifo = f"{m}/fifo"
        assert err(run(editor, command="view", path=fifo), "FS_NOT_REGULAR_FILE") == (
            f'cannot view "{fifo}": not a regular file or directory'
        )
        assert err(run(editor, command="str_replace", path=fifo, old_str="a"), "FS_NOT_REGULAR_FILE") == (
            f'cannot edit "{fifo}": not a regular file'
        )
        assert err(run(editor, command="insert", path=fifo, insert_line=0, new_str="a"), "FS_NOT_REGULAR_FILE") == (
            f'cannot insert into "{fifo}": not a regular file'
        )


# ---------------------------------------------------------------------------------------------
# sandbox

OUTSIDE = ["/etc/passwd", "{m}/../escape.txt", "{m}/.vfs/lock", "{m}/.vfs"]


@pytest.mark.parametrize("path", OUTSIDE)
@pytest.mark.parametrize("command", ["view", "create", "str_replace", "insert"])
def test_paths_outside_the_workspace_are_denied(make_workspace, path, command):
    ws = make_workspace({"a.txt": b"a\n"})
    before = snapshot_tree(ws)
    target = path.replace("{m}", ws.mount)
    args = {
        "view": {},
        "create": {"file_text": "x"},
        "str_replace": {"old_str": "a", "new_str": "b"},
        "insert": {"insert_line": 0, "new_str": "x"},
    }[command]
    message = err(StrReplaceEditor(ws).run({"command": command, "path": target, **args}), "FS_SANDBOX_DENIED")
    assert "[sandbox: file access denied under workspace-write mode]" in message
    assert snapshot_tree(ws) == before


@pytest.mark.parametrize(
    "call",
    [
        {"command": "create", "path": "{m}/new.txt", "file_text": "x"},
        {"command": "str_replace", "path": "{m}/a.txt", "old_str": "a", "new_str": "b"},
        {"command": "insert", "path": "{m}/a.txt", "insert_line": 0, "new_str": "x"},
    ],
)
def test_read_only_mode_views_but_never_writes(make_workspace, call):
    ws = make_workspace({"a.txt": b"a\n"}, mode="read-only")
    before = snapshot_tree(ws)
    editor = StrReplaceEditor(ws)
    ok(run(editor, command="view", path=f"{ws.mount}/a.txt"))
    args = {k: v.replace("{m}", ws.mount) if isinstance(v, str) else v for k, v in call.items()}
    message = err(editor.run(args), "FS_SANDBOX_DENIED")
    assert "[sandbox: file access denied under read-only mode]" in message
    assert snapshot_tree(ws) == before


# ---------------------------------------------------------------------------------------------
# every invalid call leaves everything untouched

INVALID_CALLS = [
    {},
    {"command": "view"},
    {"command": "create", "path": "{m}/a.txt", "file_text": "x"},
    {"command": "create", "path": "{m}/new.txt"},
    {"command": "create", "path": "{m}/new.txt", "file_text": 3},
    {"command": "create", "path": "{m}/a.txt/below.txt", "file_text": "x"},
    {"command": "create", "path": "{m}/new.txt", "file_text": "lone \ud800 surrogate"},
    {"command": "str_replace", "path": "{m}/a.txt"},
    {"command": "str_replace", "path": "{m}/a.txt", "old_str": ""},
    {"command": "str_replace", "path": "{m}/a.txt", "old_str": "alpha", "new_str": "alpha"},
    {"command": "str_replace", "path": "{m}/a.txt", "old_str": "alpha"},
    {"command": "str_replace", "path": "{m}/a.txt", "old_str": "nothing"},
    {"command": "str_replace", "path": "{m}/a.txt", "old_str": "beta", "insert_text": "x"},
    {"command": "str_replace", "path": "{m}/a.txt", "old_str": "beta", "new_str": "bad \udfff"},
    {"command": "str_replace", "path": "{m}/a.txt", "old_string": "beta", "new_string": "x"},
    {"command": "str_replace", "path": "{m}/a.txt", "old_str": "beta", "replace_all": True},
    {"command": "str_replace", "path": "a.txt", "old_str": "beta", "new_str": "x"},
    {"command": "str_replace", "path": "{m}/missing.txt", "old_str": "beta", "new_str": "x"},
    {"command": "str_replace", "path": "{m}/dir", "old_str": "beta", "new_str": "x"},
    {"command": "insert", "path": "{m}/a.txt", "new_str": "x"},
    {"command": "insert", "path": "{m}/a.txt", "insert_line": 0},
    {"command": "insert", "path": "{m}/a.txt", "insert_line": 99, "new_str": "x"},
    {"command": "insert", "path": "{m}/a.txt", "insert_line": -1, "new_str": "x"},
    {"command": "insert", "path": "{m}/a.txt", "insert_line": 1.5, "new_str": "x"},
    {"command": "insert", "path": "{m}/a.txt", "insert_line": 0, "new_str": "x", "insert_text": "y"},
    {"command": "insert", "path": "{m}/dir", "insert_line": 0, "new_str": "x"},
    {"command": "view", "path": "{m}/a.txt", "view_range": [0, 1]},
    {"command": "view", "path": "{m}/dir", "view_range": [1, 2]},
    {"command": "undo_edit", "path": "{m}/a.txt"},
    {"command": "rm", "path": "{m}/a.txt"},
    {"command": ["view"], "path": "{m}/a.txt"},
]


@pytest.mark.parametrize("session", [True, False])
@pytest.mark.parametrize("call", INVALID_CALLS, ids=[str(i) for i in range(len(INVALID_CALLS))])
def test_invalid_calls_are_errors_and_change_nothing(make_workspace, call, session):
    ws = make_workspace({"a.txt": b"alpha\nbeta\nalpha\n", "dir": None})
    editor = StrReplaceEditor(ws, session=session)
    if session:
        ok(run(editor, command="view", path=f"{ws.mount}/a.txt"))
    before = snapshot_tree(ws)
    history = ws.log()
    args = {k: v.replace("{m}", ws.mount) if isinstance(v, str) else v for k, v in call.items()}
    result = editor.run(args)
    assert result.is_error and result.code and result.code.startswith("FS_")
    assert result.text.startswith("Error: ") and "Traceback" not in result.text
    assert snapshot_tree(ws) == before
    assert ws.log() == history


def test_arguments_that_are_not_an_object(make_workspace):
    ws = make_workspace()
    for raw in (None, "view", 3, ["view"]):
        result = StrReplaceEditor(ws).run(raw)
        assert result.is_error and result.code == "FS_INVALID_ARGUMENT"


def test_an_unexpected_failure_is_a_tool_error_not_a_traceback(make_workspace, monkeypatch):
    ws = make_workspace({"a.txt": b"a\n"})

    def boom(path):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(ws, "stat", boom)
    result = StrReplaceEditor(ws, session=False).run({"command": "view", "path": f"{ws.mount}/a.txt"})
    assert result.is_error and result.code == "FS_IO_ERROR"
    assert "disk on fire" in result.text and result.text.startswith("Error: ")


# ---------------------------------------------------------------------------------------------
# undo_edit (Ours, off by default)


def test_undo_edit_reverts_the_last_change_to_the_path(make_workspace):
    ws = make_workspace({"a.txt": b"one\n"})
    path = f"{ws.mount}/a.txt"
    editor = StrReplaceEditor(ws, config={"enable_undo": True})
    assert "undo_edit" in editor.definitions()["anthropic"]["input_schema"]["properties"]["command"]["enum"]
    ok(run(editor, command="view", path=path))
    ok(run(editor, command="str_replace", path=path, old_str="one", new_str="two"))
    ok(run(editor, command="insert", path=path, insert_line=0, new_str="zero"))
    assert ok(run(editor, command="undo_edit", path=path)) == f"Last edit to {path} undone successfully."
    assert ws.read_bytes(path) == b"two\n"
    ok(run(editor, command="undo_edit", path=path))
    assert ws.read_bytes(path) == b"one\n"
    # the session knows the restored version: editing again needs no view
    ok(run(editor, command="str_replace", path=path, old_str="one", new_str="uno"))
    assert ws.read_bytes(path) == b"uno\n"


def test_undo_edit_of_a_create_removes_the_file(make_workspace):
    ws = make_workspace()
    path = f"{ws.mount}/new.txt"
    editor = StrReplaceEditor(ws, config={"enable_undo": True})
    ok(run(editor, command="create", path=path, file_text="x"))
    ok(run(editor, command="undo_edit", path=path))
    assert not ws.exists(path)
    err(run(editor, command="str_replace", path=path, old_str="x", new_str="y"), "FS_NOT_FOUND")


def test_undo_edit_is_guarded_by_version(make_workspace):
    ws = make_workspace({"a.txt": b"one\n"})
    path = f"{ws.mount}/a.txt"
    editor = StrReplaceEditor(ws, config={"enable_undo": True})
    ok(run(editor, command="view", path=path))
    ok(run(editor, command="str_replace", path=path, old_str="one", new_str="two"))
    write_external(ws.backend, "a.txt", b"two (theirs)\n")
    err(run(editor, command="undo_edit", path=path), "FS_STALE_VERSION")
    assert ws.read_bytes(path) == b"two (theirs)\n"


def test_undo_edit_refuses_when_the_last_change_was_elsewhere(make_workspace):
    ws = make_workspace({"a.txt": b"one\n", "b.txt": b"bee\n"})
    m = ws.mount
    editor = StrReplaceEditor(ws, config={"enable_undo": True})
    message = err(run(editor, command="undo_edit", path=f"{m}/a.txt"), "FS_NOT_FOUND")
    assert message.startswith(f"No edit to undo for {m}/a.txt")
    ok(run(editor, command="view", path=f"{m}/a.txt"))
    ok(run(editor, command="str_replace", path=f"{m}/a.txt", old_str="one", new_str="two"))
    ok(run(editor, command="view", path=f"{m}/b.txt"))
    ok(run(editor, command="str_replace", path=f"{m}/b.txt", old_str="bee", new_str="b"))
    err(run(editor, command="undo_edit", path=f"{m}/a.txt"), "FS_NOT_FOUND")
    assert ws.read_bytes(f"{m}/a.txt") == b"two\n" and ws.read_bytes(f"{m}/b.txt") == b"b\n"


def test_files_over_the_size_limit_are_refused(make_workspace):
    ws = make_workspace({"big.txt": b"x" * 100}, max_file_bytes=10)
    path = f"{ws.mount}/big.txt"
    editor = StrReplaceEditor(ws, session=False)
    assert path in err(run(editor, command="view", path=path), "FS_TOO_LARGE")
    err(run(editor, command="str_replace", path=path, old_str="x" * 100, new_str="y"), "FS_TOO_LARGE")
    assert ws.backend.read("big.txt")[0] == b"x" * 100


def test_view_of_an_empty_directory(make_workspace):
    ws = make_workspace({"empty": None})
    text = ok(run(StrReplaceEditor(ws), command="view", path=f"{ws.mount}/empty"))
    assert text == LISTING_HEADER.format(p=f"{ws.mount}/empty") + f"d\t{ws.mount}/empty\n\n"


class _ListedKeys(FaultyBackend):
    """The backend, with the keys ``list`` was asked for recorded in order."""

    def __init__(self, inner: Backend) -> None:
        super().__init__(inner)
        self.listed: list[str] = []

    def list(self, key: str) -> list[FileInfo]:
        self.listed.append(key)
        return self.inner.list(key)


def test_a_directory_view_lists_the_shown_folders_only(make_workspace):
    """Issue 20: the view's cost is bounded by what it shows. It lists the root and each shown
    level-1 folder, one level each (a scandir, a delimiter LIST, a prefix-index lookup), and never a
    folder below them, however much they hold; skipped folders are not listed either."""
    deep = {f"a/x/p{i}/q/f{i}.py": b"deep" for i in range(5)}
    files = {"a/f.py": b"a", "b/y/z/w.py": b"w", "c.txt": b"c", ".git/objects/o": b"o", "node_modules/m/i.js": b"i"}
    backend = _ListedKeys(make_workspace.new_backend())
    populate(backend, {**files, **deep})
    ws = vfs.Workspace(backend, mount="/workspace")
    backend.listed.clear()  # opening looked for interrupted commits in .vfs/tx
    text = ok(run(StrReplaceEditor(ws), command="view", path="/workspace"))
    assert sorted(backend.listed) == ["", "a", "b"]
    assert "/workspace/a/x\n" in text and "/workspace/b/y\n" in text and "/p0" not in text and "/q" not in text
