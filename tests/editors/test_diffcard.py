"""Diff cards (:mod:`editors.diffcard`): built from where each edit landed, they must still be
true unified diffs of the file (applying one to the old bytes gives the new bytes), agree with
``diff -u`` where the alignment is unambiguous, and stay bounded whatever the change."""

from __future__ import annotations

import difflib
import random
import re
from typing import Any

import jsonschema
import pytest

import vfs
from benchmarks import inputs
from editors import diffcard
from editors.apply_patch.tool import apply_patch
from editors.diffcard import FileEdit, Lines, call_data, region_hunk, whole_file
from editors.result import output_schema
from editors.str_replace_editor.tool import StrReplaceEditor

HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n")


def apply_unified(before: str, diff: str) -> str:
    """Apply a one-file unified diff (as this module writes them) to ``before``: an independent check."""
    old = before.splitlines(keepends=True)
    out: list[str] = []
    at = 0
    lines = diff.splitlines(keepends=True)[2:]
    index = 0
    while index < len(lines):
        match = HEADER.fullmatch(lines[index])
        assert match, lines[index]
        start, length = int(match[1]), int(match[2] or 1)
        begin = start - 1 if length else start
        out.extend(old[at:begin])
        at = begin
        index += 1
        while index < len(lines) and not lines[index].startswith("@@"):
            mark, text = lines[index][0], lines[index][1:]
            if index + 1 < len(lines) and lines[index + 1] == diffcard.NO_NEWLINE:
                text = text[:-1]
                index += 1
            if mark in " -":
                assert old[at] == text, (old[at], text)
                at += 1
            if mark in " +":
                out.append(text)
            index += 1
    out.extend(old[at:])
    return "".join(out)


def edit_of(before: bytes | None, after: bytes | None, **kw: Any) -> FileEdit:
    return FileEdit("/w/f", "f", before, after, tuple(region_hunk(before or b"", after or b"")), **kw)


# -- lines and regions ------------------------------------------------------------------------------


def test_lines_reads_forward_and_back_across_blocks() -> None:
    data = b"".join(b"line %d\n" % i for i in range(50_000))  # ~450 KB: several 64 KB blocks
    lines = Lines(data + b"tail")
    assert len(lines) == 50_001
    assert lines.get(40_000, 40_002) == ["line 40000\n", "line 40001\n"]
    assert lines.get(3, 4) == ["line 3\n"]  # backwards: starts over
    assert lines.get(49_999, 50_005) == ["line 49999\n", "tail"]


def test_lines_with_lone_crs_follow_the_matcher() -> None:
    lines = Lines(b"a\rb\r\nc\nd", cr_breaks=True)
    assert (len(lines), lines.get(0, 9)) == (4, ["a\r", "b\r\n", "c\n", "d"])
    assert len(Lines(b"a\rb\n")) == 1  # the editor's view numbers lines by LF only


@pytest.mark.parametrize(
    ("before", "after", "hunk"),
    [
        (b"a\nb\nc\n", b"a\nB\nc\n", (1, 1, 1, 1)),
        (b"a\nb\nc\n", b"a\nb\nx\ny\nc\n", (2, 0, 2, 2)),  # a pure insertion of whole lines
        (b"a\nb\nc\n", b"a\nc\n", (1, 1, 1, 0)),
        (b"abc\n", b"aXc\n", (0, 1, 0, 1)),
        (b"a\nb", b"a\nb\n", (1, 1, 1, 1)),  # the final line gains its line break
        (b"", b"x\n", (0, 0, 0, 1)),
    ],
)
def test_region_hunk_is_the_changed_lines(before: bytes, after: bytes, hunk: tuple[int, ...]) -> None:
    assert region_hunk(before, after) == [hunk]
    assert region_hunk(before, before) == []


def test_region_diffs_apply_and_match_diff_u() -> None:
    rng = random.Random(5)
    for _ in range(300):
        old = [rng.choice(["a", "b", "c", "dd", ""]) + "\n" for _ in range(rng.randint(0, 30))]
        cut = rng.randint(0, len(old))
        end = rng.randint(cut, min(len(old), cut + 4))
        new = old[:cut] + [rng.choice(["X", "Y\n", "zz\n"]) for _ in range(rng.randint(0, 3))] + old[end:]
        if rng.random() < 0.2 and new:
            new[-1] = new[-1].rstrip("\n")
        before, after = "".join(old), "".join(new)
        diff = edit_of(before.encode(), after.encode()).diff()
        assert apply_unified(before, diff) == after, (before, after, diff)


def test_a_one_line_change_reads_as_diff_u() -> None:
    before = "".join(f"{i}\n" for i in range(20))
    after = before.replace("10\n", "ten\n")
    expected = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), "a/f", "b/f"))
    assert edit_of(before.encode(), after.encode()).diff() == expected


# -- apply_patch cards ------------------------------------------------------------------------------


def _random_patch(rng: random.Random, lines: list[str]) -> tuple[str, list[str]]:
    """An update of a few distinct lines (each unique in the file), and the lines after it."""
    chosen = sorted(rng.sample(range(len(lines)), rng.randint(1, min(6, len(lines)))))
    body, new = [], list(lines)
    for index in reversed(chosen):
        kind = rng.choice(["replace", "delete", "insert"])
        repl = {"replace": [lines[index] + " # v2"], "delete": [], "insert": [lines[index], "new"]}[kind]
        new[index : index + 1] = repl
        body[0:0] = ["@@", *("-" + line for line in [lines[index]]), *("+" + line for line in repl)]
    return "\n".join(body), new


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_patch_cards_are_true_diffs(tmp_path: Any, ending: str) -> None:
    rng = random.Random(len(ending))
    ws = vfs.open_workspace(str(tmp_path))
    for round_ in range(40):
        lines = [f"line {round_}-{i}" for i in range(rng.randint(1, 40))]
        before = ending.join(lines) + ending
        (tmp_path / "f.txt").write_bytes(before.encode())
        body, new = _random_patch(rng, lines)
        result = apply_patch(ws, f"*** Begin Patch\n*** Update File: f.txt\n{body}\n*** End Patch\n", dry_run=True)
        [edit] = result.edits
        after = (edit.after or b"").decode()
        assert after == "".join(line + ending for line in new)
        assert apply_unified(before, edit.diff()) == after
        shown = [tuple(int(g or 1) for g in m.groups()) for m in HEADER.finditer(edit.diff())]
        card = result.data()["files"][0]
        assert [(h["old_start"], h["old_len"], h["new_start"], h["new_len"]) for h in card["hunks"]] == shown


def test_patch_card_of_a_file_without_final_newline(tmp_path: Any) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\r\nb\r\nc")
    ws = vfs.open_workspace(str(tmp_path))
    result = apply_patch(ws, "*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n+A\n*** End Patch\n", dry_run=True)
    [edit] = result.edits
    assert edit.after == b"A\r\nb\r\nc\r\n"
    assert apply_unified("a\r\nb\r\nc", edit.diff()) == "A\r\nb\r\nc\r\n"


def test_move_add_delete_and_folded_cards(tmp_path: Any) -> None:
    for name, data in {"m.txt": b"1\n2\n", "d.txt": b"bye\n", "twice.txt": b"x\ny\n"}.items():
        (tmp_path / name).write_bytes(data)
    ws = vfs.open_workspace(str(tmp_path), mount="/workspace")
    patch = (
        "*** Begin Patch\n*** Update File: m.txt\n*** Move to: sub/n.txt\n@@\n-2\n+two\n"
        "*** Add File: new.txt\n+hi\n*** Delete File: d.txt\n"
        "*** Update File: twice.txt\n@@\n-x\n+X\n*** Update File: twice.txt\n@@\n-y\n+Y\n*** End Patch\n"
    )
    result = apply_patch(ws, patch)
    cards = {card["path"]: card for card in result.data()["files"]}
    assert set(cards) == {"/workspace/sub/n.txt", "/workspace/new.txt", "/workspace/d.txt", "/workspace/twice.txt"}
    moved = cards["/workspace/sub/n.txt"]
    assert (moved["action"], moved["from"]) == ("move", "/workspace/m.txt")
    assert moved["diff"] == "--- a/m.txt\n+++ b/sub/n.txt\n@@ -1,2 +1,2 @@\n 1\n-2\n+two\n"
    assert moved["version"] == ws.stat("/workspace/sub/n.txt").version
    assert (cards["/workspace/new.txt"]["action"], cards["/workspace/d.txt"]["action"]) == ("add", "delete")
    assert cards["/workspace/d.txt"]["version"] is None
    assert apply_unified("x\ny\n", cards["/workspace/twice.txt"]["diff"]) == "X\nY\n"  # shown whole
    assert {"path": "/workspace/d.txt", "start": None, "end": None} in result.data()["locations"]
    jsonschema.validate(result.tool_result().to_dict(), output_schema())


def test_thousand_hunks_are_cut_with_a_note(tmp_path: Any) -> None:
    case = inputs.update_patch({"big.py": inputs.source(lines=20_000)}, 1_000)
    (tmp_path / "big.py").write_bytes(case.files["big.py"])
    ws = vfs.open_workspace(str(tmp_path))
    result = apply_patch(ws, case.patch, dry_run=True, diff=True)
    assert result.edits[0].after == case.expected["big.py"]
    card = result.data()["files"][0]
    assert card["hunks_total"] == 1_000 and len(card["hunks"]) == diffcard.MAX_HUNKS
    assert card["truncated"] and "1000 hunk headers" in card["note"]
    assert len(card["diff"].encode()) <= diffcard.MAX_FILE_DIFF_BYTES
    assert len(card["diff"].splitlines()) <= diffcard.MAX_FILE_DIFF_LINES
    assert result.diff is not None and result.diff.startswith(card["diff"])  # --diff: the whole of it
    assert result.diff.count("\n@@ ") == 1_000
    assert apply_unified(case.files["big.py"].decode(), result.diff) == case.expected["big.py"].decode()


def test_the_call_budget_is_shared_by_its_files() -> None:
    big = b"".join(b"%0200d\n" % i for i in range(2_000))  # 400 KB: past the per-file bound alone
    edits = [whole_file(f"/w/{i}", str(i), None, big) for i in range(6)]
    data = call_data("apply_patch", "apply_patch", edits)
    sizes = [len(card["diff"].encode()) for card in data["files"]]
    assert sum(sizes) <= diffcard.MAX_CALL_DIFF_BYTES
    assert diffcard.MAX_FILE_DIFF_BYTES - 300 < sizes[0] <= diffcard.MAX_FILE_DIFF_BYTES
    assert sizes[-1] < 100  # the call's budget ran out: the last card has its headers at most, and says so
    assert data["truncated"] and all(card["truncated"] and card["note"] for card in data["files"])
    assert [card["hunks_total"] for card in data["files"]] == [1] * 6


# -- str_replace_editor cards -----------------------------------------------------------------------


def test_editor_calls_carry_cards_and_locations(tmp_path: Any) -> None:
    ws = vfs.open_workspace(str(tmp_path), mount="/workspace")
    editor = StrReplaceEditor(ws, config={"enable_undo": True})
    created = editor.run({"command": "create", "path": "/workspace/a.py", "file_text": "x = 1\ny = 2\n"})
    [card] = created.data["files"] if created.data else []
    assert (card["action"], card["version"]) == ("add", ws.stat("/workspace/a.py").version)
    assert card["diff"] == "--- /dev/null\n+++ b/a.py\n@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n"
    assert created.text == "New file created successfully at: /workspace/a.py"  # the model's text unchanged

    viewed = editor.run({"command": "view", "path": "/workspace/a.py", "view_range": [2, -1]})
    assert viewed.data is not None and viewed.data["files"] == []
    assert viewed.data["locations"] == [{"path": "/workspace/a.py", "start": 2, "end": 3}]

    edited = editor.run({"command": "str_replace", "path": "/workspace/a.py", "old_str": "y = 2", "new_str": "y = 3"})
    assert edited.data is not None
    [card] = edited.data["files"]
    assert (card["action"], card["version"], card["hunks"]) == (
        "modify",
        ws.stat("/workspace/a.py").version,
        [{"old_start": 1, "old_len": 2, "new_start": 1, "new_len": 2}],
    )
    assert card["diff"] == "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n"
    assert edited.data["locations"] == [{"path": "/workspace/a.py", "start": 2, "end": 2}]
    assert edited.data["txid"] == ws.log(1)[0].txid

    inserted = editor.run({"command": "insert", "path": "/workspace/a.py", "insert_line": 0, "new_str": "# top"})
    assert inserted.data is not None and inserted.data["locations"][0] == {
        "path": "/workspace/a.py",
        "start": 1,
        "end": 1,
    }
    undone = editor.run({"command": "undo_edit", "path": "/workspace/a.py"})
    assert undone.data is not None and undone.data["files"][0]["diff"].endswith("-# top\n x = 1\n y = 3\n")
    for result in (created, viewed, edited, inserted, undone):
        jsonschema.validate(result.to_dict(), output_schema())

    failed = editor.run({"command": "str_replace", "path": "/workspace/a.py", "old_str": "nope", "new_str": ""})
    assert failed.is_error and failed.data is None


# -- marks: where lines are known to start ---------------------------------------------------------


def test_lines_read_from_marks_as_from_the_top() -> None:
    """Marks only change where a seek starts counting: every read, forward, back or past the end,
    gives the lines that a reader without marks gives."""
    rng = random.Random(5)
    data = b"".join(b"%d %s\n" % (i, b"x" * rng.randint(0, 90)) for i in range(30_000)) + b"tail"
    starts = [0] + [i + 1 for i, byte in enumerate(data) if byte == 10]
    marked = sorted(rng.sample(range(len(starts)), 300))
    marks = tuple((line, starts[line]) for line in marked)
    plain, with_marks = Lines(data), Lines(data, marks=marks)
    ahead = with_marks.fork()
    for _ in range(400):
        start = rng.choice([rng.randrange(30_005), rng.choice(marked) - rng.randint(0, 70)])
        stop = start + rng.randint(0, 8)
        start = max(start, 0)
        assert with_marks.get(start, stop) == plain.get(start, stop), (start, stop)
        assert ahead.get(stop, stop + 3) == plain.get(stop, stop + 3)


@pytest.mark.parametrize("bom", [b"", "\ufeff".encode()])
def test_a_fast_path_update_marks_where_each_hunk_starts(tmp_path: Any, bom: bytes) -> None:
    case = inputs.update_patch({"big.py": inputs.source(lines=20_000)}, 300)
    patch = case.patch.replace(  # one more hunk, on the first line (after the BOM, if any)
        "*** Update File: big.py\n", "*** Update File: big.py\n@@\n-# top\n+# top, edited\n", 1
    )
    (tmp_path / "big.py").write_bytes(bom + b"# top\n" + case.files["big.py"])
    ws = vfs.open_workspace(str(tmp_path))
    [edit] = apply_patch(ws, patch, dry_run=True, diff=True).edits
    old_marks, new_marks = edit.marks
    assert len(old_marks) == len(new_marks) == len(edit.hunks) == 301
    assert edit.hunks[0][0] == 0
    for (old_start, _, new_start, _), (old_line, old_at), (new_line, new_at) in zip(
        edit.hunks, old_marks, new_marks, strict=True
    ):
        assert (old_line, new_line) == (old_start, new_start)
        for data, line, at in ((edit.before or b"", old_line, old_at), (edit.after or b"", new_line, new_at)):
            assert data.count(b"\n", 0, at) == line and (at == 0 or data[at - 1 : at] == b"\n")
    plain = FileEdit(edit.path, edit.display, edit.before, edit.after, edit.hunks, cr_breaks=True)
    assert edit.diff() == plain.diff()  # read from the marks, as from the top
    assert apply_unified((edit.before or b"").decode(), edit.diff()) == (edit.after or b"").decode()
