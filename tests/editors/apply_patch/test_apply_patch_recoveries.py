"""Our recoveries on top of Codex's matching (editors/apply_patch/placement.py), each with the
refusal that names its cause when the reading is not the only one, and FS_ALREADY_APPLIED."""

from __future__ import annotations

from typing import Any

import pytest

import vfs
from editors.apply_patch.applier import PatchPlan, plan_patch
from editors.apply_patch.errors import (
    PatchAlreadyApplied,
    PatchContextNotFound,
    PatchIndentationMismatch,
    PatchLinesNotFound,
    PatchParseError,
)
from editors.apply_patch.indentation import IndentMap, derive_map
from editors.apply_patch.parser import parse_patch
from editors.apply_patch.tool import call_tool
from tests.support.trees import snapshot_tree


def wrap(body: str, end: bool = True) -> str:
    return "*** Begin Patch\n" + body + ("\n*** End Patch\n" if end else "\n")


def plan(files: dict[str, bytes], body: str, end: bool = True) -> PatchPlan:
    return plan_patch(parse_patch(wrap(body, end)), files.get)


def after(files: dict[str, bytes], body: str, end: bool = True) -> dict[str, bytes | None]:
    return {change.path: change.after for change in plan(files, body, end).changes}


TAB_FILE = b"def f(x):\n\tif x:\n\t\treturn 1\n\treturn 2\n"
BLOCK = b"class A:\n    def f(self):\n        a = 1\n        b = 2\n        return a\n"


# -- indentation map -------------------------------------------------------------------------------


def test_derive_map_prefix_swap_and_tabs() -> None:
    assert derive_map([("x", "    x"), ("    y", "        y")]) == IndentMap("", "    ")
    assert derive_map([("    x", "\tx"), ("        y", "\t\ty")]) == IndentMap(tab_width=4)
    assert derive_map([("  x", "  x"), ("y", "y")]) == IndentMap()
    assert derive_map([("x", "    x"), ("y", "y")]) is None  # one line shifted, one not


def test_spaces_for_tabs_are_written_as_tabs() -> None:
    body = "*** Update File: f.py\n@@\n     if x:\n-        return 1\n+        if x > 1:\n+            return 3\n     return 2"
    assert after({"f.py": TAB_FILE}, body) == {
        "f.py": b"def f(x):\n\tif x:\n\t\tif x > 1:\n\t\t\treturn 3\n\treturn 2\n"
    }


@pytest.mark.parametrize("shift", ["lost", "dedent", "indent"])
def test_shifted_block_is_reindented_to_the_file(shift: str) -> None:
    lines = ["        a = 1", "-        b = 2", "+        b = 3", "+        c = 4", "        return a"]
    move = {"lost": lambda t: t[8:], "dedent": lambda t: t[4:], "indent": lambda t: "    " + t}[shift]
    body = "*** Update File: a.py\n@@\n" + "\n".join(
        (line[0] + move(line[1:])) if line[0] in "+-" else " " + move(line) for line in lines
    )
    assert after({"a.py": BLOCK}, body)["a.py"] == BLOCK.replace(b"b = 2\n", b"b = 3\n        c = 4\n")


def test_tabs_refused_when_no_single_map_explains_the_lines() -> None:
    # The first line is indented 4 in the patch, the second 2: no tab width explains both.
    body = "*** Update File: f.py\n@@\n     if x:\n-  return 1\n+  return 3"
    with pytest.raises(PatchIndentationMismatch) as info:
        plan({"f.py": b"def f(x):\n\tif x:\n\t\treturn 1\n"}, body)
    assert "the file indents with tabs where the patch uses spaces (line 2)" in info.value.message
    assert info.value.code == "PATCH_INDENTATION_MISMATCH"


def test_reindent_refused_when_the_lines_match_twice() -> None:
    text = b"if a:\n    x = 1\nif b:\n    x = 1\n"
    with pytest.raises(PatchIndentationMismatch) as info:
        plan({"f.py": text}, "*** Update File: f.py\n@@\n-x = 1\n+x = 2")
    assert "at line 2 and again further on" in info.value.message


def test_reindent_refused_for_an_added_line_left_of_every_matched_line() -> None:
    with pytest.raises(PatchIndentationMismatch) as info:
        plan({"a.py": BLOCK}, "*** Update File: a.py\n@@\n-            a = 1\n+  a = 2")
    assert "indented less than every matched line" in info.value.message


def test_context_only_differences_keep_the_added_lines_as_sent() -> None:
    # The removed line matches exactly: the + line replacing it is at the right indentation.
    body = "*** Update File: a.py\n@@\n   a = 1\n-        b = 2\n+        b = 3"
    assert after({"a.py": BLOCK}, body)["a.py"] == BLOCK.replace(b"b = 2", b"b = 3")


# -- already applied -------------------------------------------------------------------------------


def test_a_patch_sent_twice_is_already_applied() -> None:
    body = "*** Update File: a.py\n@@\n         a = 1\n-        b = 2\n+        b = 3\n         return a"
    once = after({"a.py": BLOCK}, body)["a.py"]
    assert once is not None
    with pytest.raises(PatchAlreadyApplied) as info:
        plan({"a.py": once}, body)
    assert info.value.code == "FS_ALREADY_APPLIED"
    assert isinstance(info.value, vfs.AlreadyApplied)
    assert info.value.message == "this change is already present at lines 3-5 of a.py; nothing was changed"


@pytest.mark.parametrize(
    "body",
    [
        "*** Update File: a.py\n@@\n         return a\n+        # done",  # insertion at the end
        "*** Update File: a.py\n@@ def f(self):\n+        # start",  # pure addition after an anchor
        "*** Update File: a.py\n@@\n+# tail",  # pure addition at the end of the file
    ],
)
def test_a_resent_insertion_does_not_insert_twice(body: str) -> None:
    once = after({"a.py": BLOCK}, body)["a.py"]
    assert once is not None and once != BLOCK
    with pytest.raises(PatchAlreadyApplied) as info:
        plan({"a.py": once}, body)
    assert "already present" in info.value.message


def test_a_present_addition_at_the_end_leaves_the_next_chunks_searched_from_where_they_were() -> None:
    # Codex appends an unanchored pure addition and searches the next chunk from where it was:
    # ours, finding the addition already at the end, says so instead of failing on the next anchor.
    body = "*** Update File: f.txt\n@@\n+baz\n@@ bar\n-dash\n+DASH"
    with pytest.raises(PatchAlreadyApplied) as info:
        plan({"f.txt": b"x\nbar\ndash\nbaz\n"}, body)
    assert info.value.message == (
        "part of this change is already present at line 4 of f.txt, and chunk(s) 2 are not; "
        "nothing was changed (send only the missing part)"
    )
    # Both present: the whole change is there.
    with pytest.raises(PatchAlreadyApplied) as info:
        plan({"f.txt": b"x\nbar\nDASH\nbaz\n"}, body)
    assert info.value.message == "this change is already present at line 3, line 4 of f.txt; nothing was changed"


def test_an_insertion_next_to_blank_lines_only_still_inserts() -> None:
    # New lines that are all blank prove nothing: inserted as asked.
    assert after({"a.txt": b"x\n\n"}, "*** Update File: a.txt\n@@\n x\n+")["a.txt"] == b"x\n\n\n"


def test_partly_present_multi_file_patch_names_each_part_and_changes_nothing(make_workspace: Any) -> None:
    ws = make_workspace({"a.py": BLOCK.replace(b"b = 2", b"b = 3"), "b.txt": b"one\ntwo\n"})
    before = snapshot_tree(ws)
    patch = wrap(
        "*** Update File: a.py\n@@\n         a = 1\n-        b = 2\n+        b = 3\n"
        "*** Update File: b.txt\n@@\n one\n-two\n+TWO"
    )
    result = call_tool(ws, patch)
    assert result.is_error and result.code == "FS_ALREADY_APPLIED"
    assert "- a.py: already present at lines 3-4" in result.text
    assert "- b.txt: not present yet" in result.text
    assert snapshot_tree(ws) == before


def test_retry_after_a_landed_first_try_is_reported_not_applied(make_workspace: Any) -> None:
    ws = make_workspace({"b.txt": b"one\ntwo\n"})
    patch = wrap("*** Update File: b.txt\n@@\n one\n-two\n+TWO\n*** Add File: c.txt\n+new")
    assert not call_tool(ws, patch).is_error
    landed = snapshot_tree(ws)
    retry = call_tool(ws, patch)
    assert retry.is_error and retry.code == "FS_ALREADY_APPLIED"
    assert "- b.txt: already present at lines 1-2" in retry.text and "- c.txt: already present" in retry.text
    assert snapshot_tree(ws) == landed


def test_add_file_with_the_same_content_is_already_applied() -> None:
    with pytest.raises(PatchAlreadyApplied):
        plan({"c.txt": b"new\n"}, "*** Add File: c.txt\n+new")
    assert after({"c.txt": b"old\n"}, "*** Add File: c.txt\n+new") == {"c.txt": b"new\n"}  # Codex overwrites


# -- line-number prefixes ------------------------------------------------------------------------------


def test_copied_line_numbers_are_stripped() -> None:
    body = "*** Update File: a.py\n@@\n      3          a = 1\n-     4          b = 2\n+        b = 3"
    assert after({"a.py": BLOCK}, body)["a.py"] == BLOCK.replace(b"b = 2", b"b = 3")


def test_copied_line_numbers_that_name_other_lines_are_refused() -> None:
    body = "*** Update File: a.py\n@@\n      7          a = 1\n-     8          b = 2\n+        b = 3"
    with pytest.raises(PatchLinesNotFound) as info:
        plan({"a.py": BLOCK}, body)
    assert "line-number prefixes copied from the view output" in info.value.message
    assert "at line 3, not 7" in info.value.message


# -- elision ---------------------------------------------------------------------------------------------

LONG = "".join(f"line{i}\n" for i in range(20)).encode()


def test_an_elision_line_stands_for_the_lines_it_hides() -> None:
    body = "*** Update File: f.txt\n@@\n line2\n-line3\n+LINE3\n line4\n ...\n line9"
    assert after({"f.txt": LONG}, body)["f.txt"] == LONG.replace(b"line3\n", b"LINE3\n")


def test_an_elision_with_two_readings_that_differ_is_refused() -> None:
    text = b"a\nq\nx\nz\nx\nz\n"
    # The change is after the '...': "x" follows "a" at two distances, so where it goes is unclear.
    with pytest.raises(PatchLinesNotFound) as info:
        plan({"f.txt": text}, "*** Update File: f.txt\n@@\n a\n ...\n x\n-z\n+Z")
    assert "'...' line stands for elided lines" in info.value.message


# -- missing *** End Patch ---------------------------------------------------------------------------------


def test_missing_end_patch_after_a_complete_chunk() -> None:
    patch = parse_patch(wrap("*** Update File: b.txt\n@@\n-two\n+TWO\n three", end=False))
    assert patch.notes and "End Patch" in patch.notes[0]
    assert plan_patch(patch, {"b.txt": b"two\nthree\n"}.get).changes[0].after == b"TWO\nthree\n"


def test_missing_end_patch_after_a_cut_chunk_is_refused() -> None:
    with pytest.raises(PatchParseError) as info:
        parse_patch(wrap("*** Update File: b.txt\n@@\n-two\n+TWO", end=False))
    assert "The last line of the patch must be '*** End Patch'" in info.value.message
    assert "cut short" in info.value.message
    with pytest.raises(PatchParseError):
        parse_patch("*** Begin Patch\n*** Update File: b.txt\n@@\n-two\n+TWO\n three")  # no final line break


# -- bad @@ lines ------------------------------------------------------------------------------------------


def test_a_made_up_header_is_ignored_when_the_chunk_is_unique_and_said_so() -> None:
    result = plan({"a.py": BLOCK}, "*** Update File: a.py\n@@ def helper(self):\n-        b = 2\n+        b = 3")
    assert result.changes[0].after == BLOCK.replace(b"b = 2", b"b = 3")
    assert any("not in a.py" in note for note in result.notes)


def test_a_made_up_header_is_refused_naming_it_when_the_chunk_is_not_unique() -> None:
    with pytest.raises(PatchContextNotFound) as info:
        plan({"f.txt": b"x\nx\n"}, "*** Update File: f.txt\n@@ -1,1 +1,1 @@\n-x\n+y")
    assert "hunk header" in info.value.message


def test_two_chunks_without_the_at_at_line_between_them_apply_as_two() -> None:
    text = b"a\nb\nc\nd\ne\nf\n"
    body = "*** Update File: f.txt\n@@\n a\n-b\n+B\n e\n-f\n+F"
    result = plan({"f.txt": text}, body)
    assert result.changes[0].after == b"a\nB\nc\nd\ne\nF\n"
    assert any("without the @@ line" in note for note in result.notes)


def test_a_run_together_chunk_that_splits_two_ways_is_refused() -> None:
    # "x" occurs twice: the second part could start at either, so it is not placed.
    with pytest.raises(PatchLinesNotFound):
        plan({"f.txt": b"a\nb\nq\nx\nr\nx\n"}, "*** Update File: f.txt\n@@\n a\n-b\n+B\n x")


def test_a_chunk_out_of_order_may_insert_where_the_earlier_chunk_removes() -> None:
    # chunk 2 (before chunk 1 in the file) inserts after line 1, where chunk 1 removes line 2:
    # both at the same start, which raised an AssertionError out of the tool
    body = "*** Update File: b.txt\n@@\n-\n@@\n }\n+x"
    assert after({"b.txt": b"}\n\n    return x"}, body) == {"b.txt": b"}\nx\n    return x\n"}
    body = "*** Update File: b.txt\n@@\n-a\n+A\n@@\n }\n+x\n+y"
    assert after({"b.txt": b"}\na\n"}, body) == {"b.txt": b"}\nx\ny\nA\n"}


def test_an_addition_whose_at_at_line_an_earlier_chunk_removes_is_refused() -> None:
    # raised AssertionError('overlapping replacements') out of the tool
    with pytest.raises(PatchContextNotFound) as info:
        plan({"f.txt": b"a\nb\nc\nd\ne\n"}, "*** Update File: f.txt\n@@\n-b\n-c\n-d\n@@ b\n+x")
    assert info.value.cli_message.startswith("Failed to find context 'b'")  # Codex's text
    assert "The @@ line 'b' of chunk 2 is among the lines chunk 1 removes." in info.value.message


def test_an_addition_whose_at_at_line_a_later_chunk_removes_is_refused() -> None:
    with pytest.raises(PatchLinesNotFound):
        plan({"f.txt": b"a\nb\nc\nd\ne\n"}, "*** Update File: f.txt\n@@ c\n+x\n@@\n-b\n-c\n-d")


def test_an_addition_at_the_end_is_not_present_in_lines_another_chunk_removes() -> None:
    # "}" ends the file, but chunk 1 replaces it: Codex writes "\tline 25\n}\n"; ours refused
    # with FS_ALREADY_APPLIED. Found by checking the derived differential campaign's
    # already-applied refusals against Codex's result.
    body = "*** Update File: a.txt\n@@\n-}\n+\tline 25\n*** End of File\n@@\n+}"
    assert after({"a.txt": b"}\n"}, body) == {"a.txt": b"\tline 25\n}\n"}
    # the chunk that changes the lines may come after the addition, too
    body = "*** Update File: a.txt\n@@\n+}\n@@\n-}\n+\tline 25\n*** End of File"
    assert after({"a.txt": b"}\n"}, body) == {"a.txt": b"\tline 25\n}\n"}
    # lines that stay are present: nothing to write
    with pytest.raises(PatchAlreadyApplied):
        plan({"a.txt": b"x\n}\n"}, "*** Update File: a.txt\n@@\n-x\n+y\n@@\n+}")


def test_two_additions_at_the_end_are_not_both_present_in_one_line() -> None:
    # Codex appends them one after the other: a retry has the line twice. Ours took the one line
    # for both and refused the patch as wholly present. Found by the derived differential campaign.
    body = "*** Update File: a.txt\n@@\n+line 0\n@@\n+line 0\n*** End of File"
    with pytest.raises(PatchAlreadyApplied) as caught:
        plan({"a.txt": b"line 0\n"}, body)
    assert caught.value.parts == [("a.txt", [(1, 1)], False)]  # the last one present, the first not
    with pytest.raises(PatchAlreadyApplied) as caught:
        plan({"a.txt": b"line 0\nline 0\n"}, body)
    assert caught.value.parts == [("a.txt", [(1, 1), (2, 2)], True)]  # a retry: both
    # an anchored addition found present in the last line, and an addition at the end of the same line
    body = "*** Update File: a.txt\n@@ x\n+line 0\n@@\n+line 0\n*** End of File"
    with pytest.raises(PatchAlreadyApplied) as caught:
        plan({"a.txt": b"x\nline 0\n"}, body)
    assert caught.value.parts == [("a.txt", [(2, 2)], False)]


def test_a_chunk_taken_for_a_repeat_is_written_when_a_later_chunk_is_not_where_a_repeat_has_it() -> None:
    # Chunk 1's line is there after its context, as after a retry; chunk 2's @@ line is then that
    # very line, which a retry would have after it. Ours refused with PATCH_CONTEXT_NOT_FOUND
    # ("Failed to find context '    return x'", a line of the file); Codex writes both chunks.
    # Found by checking the derived differential campaign's already-applied refusals against Codex.
    files = {"f.txt": b"a\nnote\n    return x\nfoo\n"}
    body = "*** Update File: f.txt\n@@\n note\n+    return x\n@@     return x\n+z\n*** End of File"
    assert after(files, body) == {"f.txt": b"a\nnote\n    return x\n    return x\nfoo\nz\n"}  # Codex's bytes
    # the same patch retried on its result is a repeat, all of it
    with pytest.raises(PatchAlreadyApplied):
        plan({"f.txt": b"a\nnote\n    return x\n    return x\nfoo\nz\n"}, body)
    # where the later chunk is not in the file at all, Codex's error, not a repeat's
    with pytest.raises(PatchContextNotFound):
        plan(files, body.replace("@@     return x", "@@ nowhere"))


# -- context lines without their leading space -------------------------------------------------------------


def lenient_plan(files: dict[str, bytes], body: str) -> PatchPlan:
    return plan_patch(parse_patch(wrap(body), context_without_space=True), files.get)


def test_a_context_line_without_its_space_is_context_when_the_chunk_matches_once() -> None:
    text = b"def f():\n    return 1\n"
    body = "*** Update File: f.py\n@@\ndef f():\n-    return 1\n+    return 2"
    result = lenient_plan({"f.py": text}, body)
    assert result.changes[0].after == b"def f():\n    return 2\n"
    # the reply says how the line was read (line 4 of the patch, counting *** Begin Patch)
    assert result.notes == ("Line 4 of the patch had no leading space (nor '+' or '-'); read as context, "
                            "the chunk matched f.py at one place.",)  # fmt: skip
    with pytest.raises(PatchParseError):
        parse_patch(wrap(body))  # Codex's parser (the default) still rejects it


def test_the_note_names_every_line_read_as_context() -> None:
    body = "*** Update File: f.py\n@@\ndef f():\n-    return 1\n+    return 2\nend"
    notes = lenient_plan({"f.py": b"def f():\n    return 1\nend\n"}, body).notes
    assert len(notes) == 1 and notes[0].startswith("Lines 4, 7 of the patch had no leading space")


def test_a_context_line_without_its_space_is_refused_with_codex_text_when_ambiguous() -> None:
    text = b"def f():\n    return 1\ndef f():\n    return 1\n"
    with pytest.raises(PatchParseError) as info:
        lenient_plan({"f.py": text}, "*** Update File: f.py\n@@\ndef f():\n-    return 1\n+    return 2")
    assert info.value.cli_message.startswith("Invalid patch hunk on line 4: Unexpected line found in update hunk")
    assert "context line without its leading space" in info.value.message
    with pytest.raises(PatchParseError):
        lenient_plan({"f.py": b"x\n"}, "*** Update File: f.py\n@@\ndef f():\n-    return 1\n+    return 2")


def test_a_failure_after_a_part_already_present_names_that_part() -> None:
    files = {"a.txt": b"ONE\n", "b.txt": b"two\n"}
    with pytest.raises(PatchLinesNotFound) as info:
        plan(files, "*** Update File: a.txt\n@@\n-one\n+ONE\n*** Update File: b.txt\n@@\n-nine\n+NINE")
    assert info.value.cli_message.startswith("Failed to find expected lines in b.txt")  # Codex's text
    assert "Already present, so not the cause: the change to a.txt" in info.value.message


def test_an_add_file_repeated_inside_one_patch_is_codexs_overwrite() -> None:
    result = plan({}, "*** Add File: c.txt\n+new\n*** Add File: c.txt\n+new")
    assert result.added == ("c.txt", "c.txt") and result.changes[0].after == b"new\n"
