"""The pure parts of str_replace_editor: argument model and schema, config, view text, edits."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from editors.result import dumps
from editors.str_replace_editor import definitions, listing, render
from editors.str_replace_editor.args import (
    ArgumentError,
    check_command_args,
    check_path,
    input_schema,
    parse_args,
    schema_json,
)
from editors.str_replace_editor.config import ConfigError, default_description, make_config
from editors.str_replace_editor.diagnose import diagnose
from editors.str_replace_editor.edits import InsertLineError, insert_text, replace_unique
from vfs.errors import AmbiguousEdit, EditNotFound

# ---------------------------------------------------------------------------------------------
# args: schema


def test_schema_lists_the_reference_parameters_in_order():
    schema = input_schema()
    assert list(schema) == ["type", "properties", "required", "additionalProperties"]
    assert list(schema["properties"]) == [
        "command",
        "path",
        "file_text",
        "insert_line",
        "new_str",
        "old_str",
        "view_range",
    ]
    assert schema["required"] == ["command", "path"]
    assert schema["properties"]["command"]["enum"] == ["view", "create", "str_replace", "insert"]
    assert schema["properties"]["insert_line"]["type"] == "integer"
    assert schema["properties"]["view_range"]["items"] == {"type": "integer"}
    assert "replace_all" not in schema["properties"]
    assert "insert_text" not in schema["properties"]  # accepted, not advertised
    jsonschema.Draft202012Validator.check_schema(schema)


def test_undo_edit_changes_the_schema_only_when_enabled():
    assert "undo_edit" not in schema_json(False)
    assert input_schema(True)["properties"]["command"]["enum"][-1] == "undo_edit"
    assert schema_json(True) != schema_json(False)


def test_schema_and_definitions_are_byte_stable_across_processes():
    code = (
        "from editors.str_replace_editor import definitions as d; from editors.result import dumps;"
        "import sys; sys.stdout.write(dumps(d.tool_definitions()) + dumps(d.tool_definitions({'enable_undo': True})))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            check=True,
            env={"PYTHONHASHSEED": str(seed), "PATH": ""},
            cwd=str(__import__("pathlib").Path(__file__).resolve().parents[3]),
        ).stdout
        for seed in (0, 1, 12345)
    }
    assert len(outputs) == 1
    here = dumps(definitions.tool_definitions()) + dumps(definitions.tool_definitions({"enable_undo": True}))
    assert outputs == {here.encode("utf-8")}


def test_definitions_share_one_schema_and_description():
    defs = definitions.tool_definitions({"description": "Edit files."})
    assert defs["anthropic"] == {
        "name": "str_replace_editor",
        "description": "Edit files.",
        "input_schema": input_schema(),
    }
    assert defs["openai_chat"]["function"]["parameters"] == input_schema()
    assert defs["openai"]["parameters"] == input_schema()
    assert defs["openai"]["name"] == defs["mcp"]["name"] == "str_replace_editor"


@pytest.mark.parametrize(
    "call",
    [
        {"command": "view", "path": "/a"},
        {"command": "view", "path": "/a", "view_range": [1, -1]},
        {"command": "create", "path": "/a", "file_text": ""},
        {"command": "str_replace", "path": "/a", "old_str": "x"},
        {"command": "insert", "path": "/a", "insert_line": 0, "new_str": "x"},
    ],
)
def test_valid_calls_pass_the_schema_and_the_model(call):
    jsonschema.validate(call, input_schema())
    assert parse_args(call).command == call["command"]


# ---------------------------------------------------------------------------------------------
# args: validation texts

INVALID = [
    (
        {},
        "Parameter `command` is required. The allowed commands for the str_replace_editor tool are: "
        "view, create, str_replace, insert",
    ),
    (
        {"command": "delete", "path": "/a"},
        "Unrecognized command delete. The allowed commands for the "
        "str_replace_editor tool are: view, create, str_replace, insert",
    ),
    (
        {"command": "undo_edit", "path": "/a"},
        "Unrecognized command undo_edit. The allowed commands for the "
        "str_replace_editor tool are: view, create, str_replace, insert",
    ),
    ({"command": "view"}, "path must be a non-empty string"),
    ({"command": "view", "path": ""}, "path must be a non-empty string"),
    ({"command": "view", "path": "   "}, "path must be a non-empty string"),
    ({"command": "view", "path": 7}, "path must be a non-empty string"),
    (
        {"command": "view", "path": "/a", "view_range": ["1", 2]},
        "Invalid `view_range`. It should be a list of two integers.",
    ),
    (
        {"command": "view", "path": "/a", "view_range": [1.5, 2]},
        "Invalid `view_range`. It should be a list of two integers.",
    ),
    (
        {"command": "view", "path": "/a", "view_range": [True, 2]},
        "Invalid `view_range`. It should be a list of two integers.",
    ),
    (
        {"command": "view", "path": "/a", "view_range": "1,2"},
        "Invalid `view_range`. It should be a list of two integers.",
    ),
    ({"command": "create", "path": "/a"}, "Parameter `file_text` is required for command: create"),
    ({"command": "create", "path": "/a", "file_text": None}, "Parameter `file_text` is required for command: create"),
    ({"command": "create", "path": "/a", "file_text": 5}, "Parameter `file_text` must be a string."),
    ({"command": "str_replace", "path": "/a"}, "Parameter `old_str` is required for command: str_replace"),
    ({"command": "str_replace", "path": "/a", "old_str": ""}, "Parameter `old_str` is empty for command: str_replace"),
    (
        {"command": "str_replace", "path": "/a", "old_str": "x", "new_str": "x"},
        "No replacement was performed: `old_str` and `new_str` are identical, so the edit would not change the "
        "file. Put the new text in `new_str`.",
    ),
    (
        {"command": "str_replace", "path": "/a", "old_str": "x", "insert_text": "y"},
        "Parameter `insert_text` is only accepted for command: insert (as an alias of `new_str`); use `new_str` "
        "for command: str_replace",
    ),
    ({"command": "insert", "path": "/a", "new_str": "x"}, "Parameter `insert_line` is required for command: insert"),
    ({"command": "insert", "path": "/a", "insert_line": 1}, "Parameter `new_str` is required for command: insert"),
    (
        {"command": "insert", "path": "/a", "insert_line": "1", "new_str": "x"},
        'Invalid `insert_line` parameter: "1". It should be an integer.',
    ),
    (
        {"command": "insert", "path": "/a", "insert_line": 1, "new_str": "x", "insert_text": "y"},
        "Parameters `new_str` and `insert_text` disagree for command: insert; `insert_text` is an alias of "
        "`new_str`, give only one of them.",
    ),
    (
        {"command": "str_replace", "path": "/a", "old_string": "x", "new_string": "y"},
        "Unknown parameters `old_string`, `new_string` for the str_replace_editor tool. The parameters are: "
        "`command`, `path`, `file_text`, `insert_line`, `new_str`, `old_str`, `view_range`.",
    ),
    (
        {"command": "str_replace", "path": "/a", "old_str": "x", "replace_all": True},
        "Unknown parameter `replace_all` for the str_replace_editor tool. The parameters are: `command`, `path`, "
        "`file_text`, `insert_line`, `new_str`, `old_str`, `view_range`.",
    ),
    (["view", "/a"], 'The arguments of the str_replace_editor tool must be a JSON object, got ["view", "/a"].'),
]


def test_view_range_of_the_wrong_length_is_checked_by_the_view_not_the_parser():
    # The DSH editor reports a missing path before a view_range of the wrong length (render checks it).
    for view_range in ([1], [1, 2, 3], []):
        assert parse_args({"command": "view", "path": "/a", "view_range": view_range}).view_range == view_range
        with pytest.raises(render.ViewRangeError, match="It should be a list of two integers"):
            render.render_file_view("/a", "x\n", view_range)


@pytest.mark.parametrize(("call", "message"), INVALID)
def test_invalid_arguments_have_exact_texts(call, message):
    with pytest.raises(ArgumentError) as info:
        check_path(check_command_args(parse_args(call)).path)
    assert info.value.message == message
    assert info.value.code == "FS_INVALID_ARGUMENT"


def test_nulls_mean_absent_and_unused_parameters_are_ignored():
    args = check_command_args(
        parse_args({"command": "view", "path": "/a", "file_text": None, "old_str": "ignored", "view_range": None})
    )
    assert args.view_range is None and args.old_str == "ignored"


def test_integral_floats_are_integers_and_insert_text_is_an_alias():
    args = check_command_args(parse_args({"command": "insert", "path": "/a", "insert_line": 2.0, "insert_text": "x"}))
    assert (args.insert_line, args.new_str, args.insert_text) == (2, "x", None)
    same = check_command_args(
        parse_args({"command": "insert", "path": "/a", "insert_line": 0, "insert_text": "x", "new_str": "x"})
    )
    assert same.new_str == "x"
    assert parse_args({"command": "view", "path": "/a", "view_range": [1.0, -1.0]}).view_range == [1, -1]


def test_undo_edit_is_accepted_only_when_enabled():
    assert parse_args({"command": "undo_edit", "path": "/a"}, enable_undo=True).command == "undo_edit"
    with pytest.raises(ArgumentError, match="Unrecognized command undo_edit"):
        parse_args({"command": "undo_edit", "path": "/a"})


def test_str_replace_without_new_str_deletes():
    args = check_command_args(parse_args({"command": "str_replace", "path": "/a", "old_str": "x"}))
    assert args.replacement == ""


# ---------------------------------------------------------------------------------------------
# config


def test_config_defaults_and_description():
    cfg = make_config()
    assert cfg.max_output_chars == 16000
    assert cfg.tool_description == default_description()
    assert "<response clipped>" in cfg.tool_description and "undo_edit" not in cfg.tool_description
    assert "undo_edit" in make_config(enable_undo=True).tool_description
    assert make_config({"description": "Mine."}).tool_description == "Mine."


@pytest.mark.parametrize(
    "bad",
    [
        {"max_output_chars": 0},
        {"max_output_chars": -5},
        {"max_output_chars": 1.5},
        {"max_output_chars": "100"},
        {"max_output_chars": True},
        {"description": ""},
        {"description": " \n"},
        {"description": None, "enable_undo": "yes"},
        {"unknown": 1},
    ],
)
def test_invalid_config_is_a_config_error(bad):
    with pytest.raises(ConfigError) as info:
        make_config(bad)
    assert info.value.message.startswith("str_replace_editor: ")


# ---------------------------------------------------------------------------------------------
# render: file view

HEADER = "Here's the content of /w/f with line numbers (which has a total of {n} lines)"


@pytest.mark.parametrize(
    ("text", "expected_rows"),
    [
        ("", ["     1  \n"]),
        ("one", ["     1  one\n"]),
        ("one\n", ["     1  one\n", "     2  \n"]),
        ("a\r\nb\r\n", ["     1  a\n", "     2  b\n", "     3  \n"]),
        ("a\rb", ["     1  a\rb\n"]),  # a lone CR is part of the line
        ("x\r", ["     1  x\r\n"]),  # a CR with no LF after it is not a line ending
        ("\tindented\n", ["     1  \tindented\n", "     2  \n"]),
    ],
)
def test_view_rows(text, expected_rows):
    out = render.render_file_view("/w/f", text)
    assert out == HEADER.format(n=len(expected_rows)) + ":\n" + "".join(expected_rows)


def test_view_numbers_are_six_columns_right_aligned():
    text = "\n".join(str(i) for i in range(1, 1_000_002))
    out = render.render_file_view("/w/f", text, [999_999, 1_000_001], max_output_chars=10**9)
    assert out.endswith("999999  999999\n1000000  1000000\n1000001  1000001\n")


def test_view_range_header_and_slice():
    text = "a\nb\nc\nd"
    assert render.render_file_view("/w/f", text, [2, 3]) == (
        HEADER.format(n=4) + " with view_range=[2, 3]:\n     2  b\n     3  c\n"
    )
    assert render.render_file_view("/w/f", text, [3, -1]) == (
        HEADER.format(n=4) + " with view_range=[3, -1]:\n     3  c\n     4  d\n"
    )
    assert render.render_file_view("/w/f", text, [4, 4]).endswith(":\n     4  d\n")


@pytest.mark.parametrize(
    ("view_range", "message"),
    [
        (
            [0, 2],
            "Invalid `view_range`: [0, 2]. Its first element `0` should be within the range of lines of "
            "the file: [1, 4]",
        ),
        (
            [5, 5],
            "Invalid `view_range`: [5, 5]. Its first element `5` should be within the range of lines of "
            "the file: [1, 4]",
        ),
        (
            [-1, 2],
            "Invalid `view_range`: [-1, 2]. Its first element `-1` should be within the range of lines of "
            "the file: [1, 4]",
        ),
        (
            [1, 5],
            "Invalid `view_range`: [1, 5]. Its second element `5` should be smaller than the number of "
            "lines in the file: `4`",
        ),
        ([3, 2], "Invalid `view_range`: [3, 2]. Its second element `2` should be larger or equal than its first `3`"),
        (
            [2, -2],
            "Invalid `view_range`: [2, -2]. Its second element `-2` should be larger or equal than its first `2`",
        ),
        ([1], "Invalid `view_range`. It should be a list of two integers."),
    ],
)
def test_view_range_errors(view_range, message):
    with pytest.raises(render.ViewRangeError) as info:
        render.render_file_view("/w/f", "a\nb\nc\nd", view_range)
    assert info.value.message == message


def _numbered(n: int) -> str:
    return "\n".join(f"line {i:04d} " + "x" * 40 for i in range(1, n + 1))


def test_clipping_cuts_at_a_row_boundary_and_names_the_continuation():
    text = _numbered(100)
    out = render.render_file_view("/w/f", text, max_output_chars=1000)
    body, clipped, note = out.partition(render.TRUNCATED_MESSAGE)
    assert clipped and len(body) <= 1000
    assert body.endswith("\n")  # never mid-line
    rows = body.splitlines()[1:]
    assert all(row.endswith("x" * 40) for row in rows)
    last = len(rows)
    assert rows[-1].startswith(f"{last:>6}  line {last:04d}")
    assert f"Shown: lines 1-{last} of 100." in note
    start = last + 1
    end = int(note.split(f"`view_range`: [{start}, ")[1].split("]")[0])
    follow = render.render_file_view("/w/f", text, [start, end], max_output_chars=1000)
    assert render.TRUNCATED_MESSAGE not in follow  # the suggested range fits
    assert render.TRUNCATED_MESSAGE in render.render_file_view("/w/f", text, [start, end + 1], max_output_chars=1000)


def test_clipping_within_a_range_continues_to_its_end():
    text = _numbered(100)
    out = render.render_file_view("/w/f", text, [10, 60], max_output_chars=800)
    note = out.partition(render.TRUNCATED_MESSAGE)[2]
    assert "Shown: lines 10-" in note and " of 100." in note
    tail = render.render_file_view("/w/f", text, [50, 60], max_output_chars=10_000)
    assert "view_range" not in tail.partition(":\n")[2]
    last_part = render.render_file_view("/w/f", text, [90, -1], max_output_chars=5000)
    assert render.TRUNCATED_MESSAGE not in last_part


def test_clipping_suggests_minus_one_when_the_rest_fits():
    text = _numbered(30)
    out = render.render_file_view("/w/f", text, max_output_chars=1200)
    note = out.partition(render.TRUNCATED_MESSAGE)[2]
    shown = int(note.split("Shown: lines 1-")[1].split(" ")[0])
    assert f"`view_range`: [{shown + 1}, -1]" in note


def test_a_single_huge_line_is_the_only_mid_line_cut():
    text = "short\n" + "y" * 50_000 + "\nend"
    out = render.render_file_view("/w/f", text, [2, 3], max_output_chars=2000)
    body, _, note = out.partition(render.TRUNCATED_MESSAGE)
    assert len(body) <= 2000
    assert "Line 2 alone is longer than the output limit (2000 characters)" in note
    assert "of 50000 characters were shown" in note
    assert "`view_range`: [3, 3]" in note


def test_output_at_the_limit_is_not_clipped():
    text = "abc\ndef"
    full = render.render_file_view("/w/f", text)
    assert render.render_file_view("/w/f", text, max_output_chars=len(full)) == full
    assert render.TRUNCATED_MESSAGE in render.render_file_view("/w/f", text, max_output_chars=len(full) - 1)


def test_truncated_message_is_the_reference_text():
    assert render.TRUNCATED_MESSAGE == (
        "<response clipped><NOTE>To save on context only part of this file has been shown to you. You should "
        "retry this tool after you have searched inside the file with `grep -n` in order to find the line "
        "numbers of what you are looking for.</NOTE>"
    )


# ---------------------------------------------------------------------------------------------
# listing (pure part; the workspace walk is tested in the tool tests)


@dataclass
class FakeEntry:
    path: str
    kind: str


def _fake_tree(paths: dict[str, str]):
    def list_dir(directory: str) -> list[FakeEntry]:
        prefix = directory.rstrip("/") + "/"
        return [
            FakeEntry(p, k) for p, k in sorted(paths.items()) if p.startswith(prefix) and "/" not in p[len(prefix) :]
        ]

    return list_dir


def test_listing_rows_sort_and_exclusions():
    tree = {
        "/w/b": "directory",
        "/w/b/c.txt": "file",
        "/w/b/deep": "directory",
        "/w/b/deep/too-deep.txt": "file",
        "/w/a b.txt": "file",
        "/w/a": "directory",
        "/w/a/x": "file",
        "/w/.git": "directory",
        "/w/.git/config": "file",
        "/w/node_modules": "directory",
        "/w/node_modules/pkg": "directory",
        "/w/node_modules_old": "directory",
        "/w/node_modules_old/keep.js": "file",
        "/w/__pycache__": "directory",
        "/w/__pycache__backup": "directory",
        "/w/b/__pycache__": "directory",
        "/w/link": "symlink",
        "/w/é.txt": "file",
        "/w/Z.txt": "file",
    }
    rows = listing.collect("/w", _fake_tree(tree))
    out = listing.render_listing("/w", rows)
    assert out == (
        "Here're the files and directories up to 2 levels deep in /w, excluding hidden items, node_modules, "
        "and Python cache directories:\n"
        "d\t/w\n"
        "f\t/w/Z.txt\n"
        "d\t/w/__pycache__backup\n"
        "d\t/w/a\n"
        "f\t/w/a b.txt\n"
        "f\t/w/a/x\n"
        "d\t/w/b\n"
        "f\t/w/b/c.txt\n"
        "d\t/w/b/deep\n"
        "?\t/w/link\n"
        "d\t/w/node_modules_old\n"
        "f\t/w/node_modules_old/keep.js\n"
        "f\t/w/é.txt\n"
        "\n"
    )


def test_listing_clips_whole_rows():
    tree = {f"/w/file{i:03d}.txt": "file" for i in range(200)}
    out = listing.render_listing("/w", listing.collect("/w", _fake_tree(tree)), max_output_chars=300)
    head, _, note = out.partition(render.TRUNCATED_MESSAGE)
    rows = head.split(":\n", 1)[1]
    assert rows.endswith("\n") and len(rows) <= 300
    assert all(line.startswith(("d\t/w", "f\t/w/file")) for line in rows.splitlines())
    assert f"Shown: {len(rows.splitlines())} of 201 entries." in note


def test_listing_shows_a_directory_it_cannot_enter_without_children():
    def list_dir(directory: str) -> list[FakeEntry]:
        if directory == "/w":
            return [FakeEntry("/w/locked", "directory"), FakeEntry("/w/ok.txt", "file")]
        raise PermissionError(directory)

    assert listing.collect("/w", list_dir) == [("d", "/w"), ("d", "/w/locked"), ("f", "/w/ok.txt")]


# ---------------------------------------------------------------------------------------------
# edits: str_replace


def test_replace_unique_literal_no_regex_no_dollar_substitution():
    out = replace_unique("price = a.*b\n", "a.*b", "$& $1 \\1", path="/w/f")
    assert out.text == "price = $& $1 \\1\n"
    assert out.line == 1


def test_replace_reports_every_match_line_also_multiline():
    with pytest.raises(AmbiguousEdit) as info:
        replace_unique("x\ny\nx\ny\nz x\ny", "x\ny", "q", path="/w/f")
    assert info.value.message == (
        "No replacement was performed. Multiple occurrences of old_str `x\ny` in lines [1, 3, 5]. "
        "Please ensure it is unique"
    )
    assert info.value.code == "FS_AMBIGUOUS_EDIT"


def test_matches_are_counted_non_overlapping():
    out = replace_unique("aaa\n", "aa", "b", path="/w/f")  # "aa" occurs once without overlap
    assert out.text == "ba\n"
    with pytest.raises(AmbiguousEdit, match=r"in lines \[1, 1\]"):
        replace_unique("aaaa\n", "aa", "b", path="/w/f")


def test_replace_not_found_text():
    with pytest.raises(EditNotFound) as info:
        replace_unique("abc\n", "zzz", "y", path="/w/f")
    assert info.value.message == "No replacement was performed, old_str `zzz` did not appear verbatim in /w/f."
    assert info.value.code == "FS_EDIT_NOT_FOUND"


def test_crlf_adaptation_keeps_the_file_endings():
    content = "one\r\ntwo\r\nthree\r\n"
    out = replace_unique(content, "one\ntwo\n", "uno\ndos\n", path="/w/f")
    assert out.text == "uno\r\ndos\r\nthree\r\n"
    assert out.adapted_line_endings
    # an exact match is preferred (no adaptation)
    exact = replace_unique("a\nb\r\nc", "a\nb", "X\nY", path="/w/f")
    assert exact.text == "X\nY\r\nc" and not exact.adapted_line_endings


def test_crlf_adaptation_still_requires_a_unique_match():
    with pytest.raises(AmbiguousEdit, match=r"in lines \[1, 3\]"):
        replace_unique("a\r\nb\r\na\r\nb\r\n", "a\nb", "c", path="/w/f")


def test_crlf_adaptation_single_line_old_str_is_plain():
    out = replace_unique("a\r\nb\r\n", "b", "B\nC", path="/w/f")  # exact match: new_str taken as given
    assert out.text == "a\r\nB\nC\r\n"


# ---------------------------------------------------------------------------------------------
# edits: insert


@pytest.mark.parametrize(
    ("content", "line", "text", "expected"),
    [
        ("one\ntwo", 2, "three", "one\ntwo\nthree"),
        ("one\n", 1, "three", "one\nthree\n"),
        ("one\ntwo\n", 0, "zero", "zero\none\ntwo\n"),
        ("one\ntwo\n", 3, "end", "one\ntwo\n\nend"),
        ("", 0, "x", "x\n"),
        ("", 1, "x", "\nx"),
        ("a\nb", 1, "", "a\n\nb"),
        ("a\nb", 1, "x\ny\n", "a\nx\ny\n\nb"),
        ("a\r\nb\r\n", 1, "x\ny", "a\r\nx\r\ny\r\nb\r\n"),
        ("a\r\nb\r\n", 0, "x", "x\r\na\r\nb\r\n"),
        ("a\r\nb", 2, "c", "a\r\nb\r\nc"),
        ("a\r\nb\r\n", 3, "c", "a\r\nb\r\n\r\nc"),
        ("a\r\nb\r\n", 1, "x\r\ny", "a\r\nx\r\ny\r\nb\r\n"),
        ("a\nb\r\nc\n", 2, "x", "a\nb\r\nx\r\nc\n"),  # mixed: the ending at the insertion point
        ("a\nb\r\nc\n", 1, "x", "a\nx\nb\r\nc\n"),
    ],
)
def test_insert(content, line, text, expected):
    assert insert_text(content, line, text) == expected


@pytest.mark.parametrize("line", [-1, 3, 100])
def test_insert_line_out_of_range(line):
    with pytest.raises(InsertLineError) as info:
        insert_text("a\nb", line, "x")
    assert info.value.message == (
        f"Invalid `insert_line` parameter: {line}. It should be within the range of lines of the file: [0, 2]"
    )


# ---------------------------------------------------------------------------------------------
# bytes outside the edit survive (property)

line_text = st.text(alphabet=st.sampled_from(list("ab \t\u00e9\u2019")), max_size=6)
endings = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def documents(draw):
    lines = draw(st.lists(st.tuples(line_text, endings), min_size=1, max_size=8))
    final = draw(line_text)
    return "".join(text + end for text, end in lines) + final


@given(documents(), st.data())
def test_replace_changes_only_the_match(doc, data):
    start = data.draw(st.integers(0, len(doc)))
    end = data.draw(st.integers(start, len(doc)))
    old = doc[start:end]
    if not old or doc.count(old) != 1:
        return
    new = data.draw(line_text)
    if new == old:
        return
    at = doc.find(old)  # overlapping occurrences count once: the first one is replaced
    out = replace_unique(doc, old, new, path="/w/f").text
    assert out == doc[:at] + new + doc[at + len(old) :]


@given(documents(), st.data())
def test_insert_keeps_every_original_line_byte_for_byte(doc, data):
    lines = doc.split("\n")
    at = data.draw(st.integers(0, len(lines)))
    text = data.draw(st.text(alphabet=st.sampled_from(list("xy\n")), max_size=6))
    out = insert_text(doc, at, text)
    before, after = "\n".join(lines[:at]), "\n".join(lines[at:])
    if 0 < at < len(lines):
        assert out.startswith(before + "\n") and out.endswith("\n" + after)
    elif at == 0:
        assert out.endswith("\n" + after)
    else:
        assert out.startswith(before.rstrip("\r"))
    assert out.replace("\r\n", "\n").count("\n") == doc.replace("\r\n", "\n").count("\n") + text.count("\n") + 1


# ---------------------------------------------------------------------------------------------
# diagnose


def test_diagnose_tabs_vs_spaces_names_the_line_and_the_exact_text():
    content = "def f():\n\tif x:\n\t\treturn 1\n"
    hint = diagnose(content, "    if x:\n        return 1")
    assert hint == (
        "old_str would match at line 2 if whitespace were ignored: the file indents with tabs where old_str uses "
        'spaces. The exact text in the file is: "\\tif x:\\n\\t\\treturn 1"'
    )
    exact = json.loads(hint.split("The exact text in the file is: ")[1])
    assert replace_unique(content, exact, "\tif y:\n\t\treturn 2", path="/w/f").line == 2


def test_diagnose_spaces_vs_tabs_and_indentation_amount():
    assert "indents with spaces where old_str uses tabs" in diagnose("  a = 1\n", "\ta = 1\n")
    assert "the indentation differs" in diagnose("        a = 1\n", "    a = 1\n")


def test_diagnose_trailing_whitespace():
    hint = diagnose("a = 1   \nb = 2\n", "a = 1\nb = 2")
    assert hint.startswith("old_str would match at line 1 if whitespace were ignored: the trailing whitespace")


def test_diagnose_curly_quotes():
    hint = diagnose("say(\u201chello\u201d)\n", 'say("hello")')
    assert hint.startswith("old_str would match at line 1 if unicode punctuation were treated as ASCII")
    assert "curly quotes (U+201C U+201D)" in hint
    assert "\u201chello\u201d" in hint
    assert "old_str has curly quotes" in diagnose("it's\n", "it\u2019s")


def test_diagnose_quotes_and_whitespace_together():
    hint = diagnose("x\n  print(\u2018hi\u2019)\n", "print( 'hi' )")
    assert "at line 2 if whitespace were ignored and unicode punctuation were treated as ASCII" in hint


def test_diagnose_trailing_newline_at_end_of_file():
    hint = diagnose("first\nlast line", "last line\n")
    assert hint.startswith("old_str would match at line 2, but the file does not end with a line break")
    assert hint.endswith('The exact text in the file is: "last line"')


def test_diagnose_copied_line_numbers():
    hint = diagnose("alpha\nbeta\n", "     1  alpha\n     2  beta")
    assert "line numbers of the `view` output" in hint and "at line 1" in hint


def test_diagnose_multiple_near_matches_lists_lines():
    hint = diagnose("\tx = 1\n\tx = 1\n", "  x = 1")
    assert "at lines [1, 2]" in hint and "unique" in hint


def test_diagnose_never_splits_words():
    assert diagnose("x = 10\n", "x = 1") is None  # never suggests editing inside another token
    assert diagnose("a b\n", "ab") is None
    assert diagnose("foo(a, b)\n", "foo(a,b)") is not None  # spacing around punctuation is whitespace


def test_diagnose_nothing_close():
    assert diagnose("completely different\n", "nothing like it") is None


def test_not_found_error_carries_the_hint():
    with pytest.raises(EditNotFound) as info:
        replace_unique("\tvalue  = 1\n", "\tvalue = 1", "\tvalue = 2", path="/w/f")
    assert info.value.message.startswith(
        "No replacement was performed, old_str `\tvalue = 1` did not appear verbatim in /w/f. old_str would "
        "match at line 1"
    )


def test_diagnose_crlf_old_str_in_an_lf_file():
    hint = diagnose("a\nb\n", "a\r\nb")
    assert hint == (
        "old_str would match at line 1 if whitespace were ignored: the line endings differ (old_str uses CRLF, "
        'the file uses LF there). The exact text in the file is: "a\\nb"'
    )


def test_a_limit_smaller_than_the_header_keeps_the_header_whole_and_says_so():
    # The DSH editor cuts the header mid-text; ours keeps it (path and line count) and shows no line.
    text = render.render_file_view("/w/f.txt", "abc\ndef\n", max_output_chars=20)
    head = "Here's the content of /w/f.txt with line numbers (which has a total of 3 lines):\n"
    assert text.startswith(head + render.TRUNCATED_MESSAGE)
    assert "Shown: no lines of 3 (from line 1): the output limit (20 characters) leaves no room" in text
    assert "     1  " not in text


def test_listing_sorts_by_utf16_code_units_like_the_dsh_editor():
    rows = listing.collect(
        "/w", lambda d: [Entry(f"/w/{n}", "file") for n in ("\U0001f600", "\uff41")] if d == "/w" else []
    )
    assert [p for _, p in rows] == ["/w", "/w/\U0001f600", "/w/\uff41"]  # code points would put U+FF41 first


@dataclass(frozen=True)
class Entry:
    path: str
    kind: str


def test_an_overlapping_exact_copy_is_not_another_indentation():
    """Matches are counted non-overlapping: in ``a/a/a``, ``a/a`` matches once (the first), and the
    overlapping copy one line down is the same text, not the same lines at another indentation
    (found by the property above)."""
    assert replace_unique("a\na\na", "a\na", "", path="/w/f").text == "\na"
    assert replace_unique("x\n  a\n  a\n  a\n", "  a\n  a", "  b", path="/w/f").text == "x\n  b\n  a\n"
    with pytest.raises(AmbiguousEdit):  # a copy at another indentation is still refused
        replace_unique("a\nb\n  a\n  b\n", "a\nb", "c\nd", path="/w/f")
