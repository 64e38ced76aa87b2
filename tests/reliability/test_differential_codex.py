"""Differential testing against Codex's real apply_patch binary: files and patches, both outcomes
and the resulting trees compared byte for byte; every difference must be one of the spec's
deliberate ones. Two generators: random patches over a shared vocabulary (mostly refused on both
sides) and patches cut from the files they edit (mostly applied). Skipped (reported) when the
binary is absent (``benchmarks/install_peers.sh``). The full runs (10,000 cases each) are
``python -m benchmarks.reliability differential`` and ``differential-derived``."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from benchmarks.reliability import differential, fuzz
from editors.apply_patch import errors, parser
from editors.apply_patch.applier import plan_patch

BINARY = differential.codex_binary()
needs_codex = pytest.mark.skipif(
    BINARY is None, reason="Codex apply_patch binary not installed (benchmarks/install_peers.sh codex)"
)


# slow: campaigns at CI size (the fast tier, -m "not slow", leaves them to the full run)
@pytest.mark.slow
@needs_codex
def test_every_difference_from_codex_on_random_patches_is_deliberate():
    report = differential.run(150, binary=BINARY)
    assert report.trials >= 130, report.render()
    assert not report.failures, report.render()
    assert report.counts.get("same (success)", 0) + report.counts.get("same (failure)", 0) > 0


@pytest.mark.slow
@needs_codex
def test_every_difference_from_codex_on_patches_cut_from_the_files_is_deliberate():
    report = differential.run_derived(150, binary=BINARY)
    assert report.trials >= 140, report.render()
    assert not report.failures, report.render()
    # what this generator is for: most of its patches apply the same on both sides
    assert report.counts.get("same (success)", 0) >= report.trials // 2, report.render()


def test_patches_cut_from_the_files_mostly_apply():
    outcomes = {"applied": 0, "refused": 0}

    @settings(max_examples=200, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(fuzz.derived_cases)
    def case(drawn: tuple[dict[str, bytes], str]) -> None:
        tree, text = drawn
        assert all(f"*** Update File: {path}" not in text or path in tree for path in fuzz.DERIVED_NAMES)
        try:
            plan_patch(parser.parse_patch(text, context_without_space=True), tree.get)
        except errors.ApplyPatchError:
            outcomes["refused"] += 1
        else:
            outcomes["applied"] += 1

    case()
    assert outcomes["applied"] > outcomes["refused"], outcomes


def test_model_lines_are_the_lines_without_endings_or_bom():
    assert fuzz.model_lines(b"\xef\xbb\xbfa\r\nb\nc") == ["a", "b", "c"]
    assert fuzz.model_lines(b"a\n\n") == ["a", ""]


CRLF = {"a.txt": b"x\r\n"}
PLAIN = "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** End Patch"
BOM = b"\xef\xbb\xbf"
NOT_FOUND = b"Failed to find expected lines in /tmp/c1/a.txt:\nx\n"  # Codex's error names the file
ONE, TWO = {"a.txt": b"1\n"}, {"a.txt": b"2\n"}  # two results that differ


def test_classifier_names_the_deliberate_differences():
    assert differential.classify(CRLF, "", False, False, {}, CRLF).startswith("atomic")
    bom = {"a.txt": BOM + b"x\n"}
    assert differential.classify(bom, PLAIN, False, True, {}, ONE, NOT_FOUND).startswith("BOM")
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@ x\n@@ y\n z\n*** End Patch"
    assert differential.classify(CRLF, patch, False, True, {}, ONE).startswith("consecutive")
    move = "*** Begin Patch\n*** Update File: a.txt\n*** Move to: a.txt\n@@\n-x\n+y\n*** End Patch"
    assert differential.classify(CRLF, move, True, True, ONE, TWO).startswith("Move to")
    assert differential.classify(CRLF, PLAIN, True, True, ONE, TWO) == "unexplained"
    addition = "*** Begin Patch\n*** Update File: a.txt\n@@ x\n+y\n*** End Patch"
    assert differential.classify(CRLF, addition, True, True, ONE, TWO).startswith("pure addition")


def test_classifier_names_a_class_only_where_its_cause_is_in_the_case():
    # a refusal of ours that changed a byte is never explained
    assert differential.classify(CRLF, "", False, False, {}, {"a.txt": b"y\r\n"}).startswith("unexplained")
    # a BOM in a file the patch does not update explains nothing, its first line in the patch or not
    tree = {"a.txt": b"x\n", "b.txt": BOM + b"q\n"}
    with_q = PLAIN.replace("-x", "-x\n q")
    assert differential.classify(tree, with_q, True, True, ONE, TWO) == "unexplained"
    assert differential.classify(tree, with_q, False, True, {}, ONE, NOT_FOUND) == "unexplained"
    # nor one in a file it updates away from the first line (the only line Codex reads the BOM into)
    tree = {"a.txt": BOM + b"q\nx\n"}
    assert differential.classify(tree, PLAIN, False, True, {}, ONE, NOT_FOUND) == "unexplained"
    # the first line among the + lines is not where Codex looks for it
    tree = {"a.txt": BOM + b"y\nx\n"}
    assert differential.classify(tree, PLAIN, False, True, {}, ONE, NOT_FOUND) == "unexplained"
    # a file that is the BOM alone: Codex reads it as a line
    assert differential.classify({"a.txt": BOM}, PLAIN, False, True, {}, ONE, NOT_FOUND).startswith("BOM")
    # the first line as Codex's loosest pass reads it: trimmed, typographic punctuation as ASCII
    bom = {"f.txt": BOM + "print(\u201chi\u201d)\n    return x".encode()}
    loose = '*** Begin Patch\n*** Update File: f.txt\n@@\n print("hi")\n*** End Patch\n'
    error = b"Failed to find expected lines in /tmp/c1/f.txt:\n"
    assert differential.classify(bom, loose, False, True, {}, ONE, error).startswith("BOM")
    # a non-text file the patch does not update explains nothing
    tree = {"a.txt": b"x\n", "b.txt": b"\xff\x00"}
    assert differential.classify(tree, PLAIN, True, False, ONE, tree) == "unexplained"
    assert differential.classify({"a.txt": b"\xff\x00"}, PLAIN, True, False, ONE, {"a.txt": b"\xff\x00"}).startswith(
        "non-text"
    )
    # a pure addition explains a difference only in its own file
    two_files = {"a.txt": b"x\n", "b.txt": b"y\n"}
    addition = "*** Begin Patch\n*** Update File: b.txt\n@@ y\n+z\n*** Update File: a.txt\n@@\n-x\n+w\n*** End Patch"
    assert differential.classify(two_files, addition, True, True, ONE, TWO) == "unexplained"
    # an @@ line followed by + lines then context is not a pure addition
    mixed = "*** Begin Patch\n*** Update File: a.txt\n@@ x\n+y\n z\n*** End Patch"
    assert differential.classify(CRLF, mixed, True, True, ONE, TWO) == "unexplained"


def test_classifier_knows_where_the_bom_sits():
    # Codex inserting before the first line moves the BOM with it; ours keeps it first
    codex, ours = {"a.txt": b"new\n" + BOM + b"x\n"}, {"a.txt": BOM + b"new\nx\n"}
    assert differential.classify({"a.txt": BOM + b"x\n"}, "", True, True, codex, ours).startswith("BOM")
    # ours losing the BOM, or adding one, is not where it sits
    assert differential.classify({"a.txt": BOM + b"x\n"}, "", True, True, codex, {"a.txt": b"new\nx\n"}) == (
        "unexplained"
    )
    assert differential.classify({"a.txt": b"x\n"}, "", True, True, {"a.txt": b"x\n"}, {"a.txt": BOM + b"x\n"}) == (
        "unexplained"
    )


def test_classifier_names_the_recoveries_of_ours():
    indented = {"b.txt": b"\treturn y"}
    lost = "*** Begin Patch\n*** Update File: b.txt\n@@\n return y\n+    z\n*** End of File\n*** End Patch"
    codex, ours = {"b.txt": b"\treturn y\n    z\n"}, {"b.txt": b"\treturn y\n\t    z\n"}
    assert differential.classify(indented, lost, True, True, codex, ours).startswith("re-indented")
    # the note explains only a difference of indentation
    assert differential.classify(indented, lost, True, True, codex, {"b.txt": b"\treturn y\n\tq\n"}) == "unexplained"


# The classes below are checked against what Codex does with the patch as the model meant it, or
# with one section of it: they need the binary.


#: A recovery of ours where Codex refuses the patch, explained only by what Codex does with the
#: patch as the model meant it: (tree, patch, ours's result, a wrong result, the class).
AS_MEANT = {
    # Codex, given ' x', writes x, y
    "context line without its space": (
        {"a.txt": b"x\nz\n"},
        "*** Begin Patch\n*** Update File: a.txt\n@@\nx\n-z\n+y\n*** End Patch",
        {"a.txt": b"x\ny\n"},
        {"a.txt": b"y\n"},
        "context line",
    ),
    # no *** End Patch: read as if it followed
    "missing End Patch": (
        {"a.txt": b"x\n", "b.txt": b"y\n"},
        "*** Begin Patch\n*** Delete File: a.txt\n",
        {"b.txt": b"y\n"},
        {"a.txt": b"x\n", "b.txt": b"y\n"},
        "missing End Patch",
    ),
    # Codex, given the second chunk first, writes both
    "chunks out of file order": (
        {"a.txt": b"a\nb\nc\nd\n"},
        "*** Begin Patch\n*** Update File: a.txt\n@@\n c\n-d\n+D\n@@\n a\n-b\n+B\n*** End Patch",
        {"a.txt": b"a\nB\nc\nD\n"},
        {"a.txt": b"a\nB\nc\nd\n"},
        "chunks out of file order",
    ),
    # chunk 1's @@ line is among the lines chunk 2 removes, and chunk 2 is first in the file: no
    # order of one section is Codex's; each chunk a section of its own, in the patch's order, is
    "chunks out of file order, one section each": (
        {"b.txt": b"def f():\nprint(1)\ndef f():\nline 29\n\n    return x\n"},
        "*** Begin Patch\n*** Update File: b.txt\n@@ print(1)\n-\n+y\n@@\n def f():\n-print(1)\n-def f():\n*** End Patch",
        {"b.txt": b"def f():\nline 29\ny\n    return x\n"},
        {"b.txt": b"def f():\ny\nline 29\n    return x\n"},
        "chunks out of file order",
    ),
}


@needs_codex
@pytest.mark.parametrize("case", AS_MEANT.values(), ids=AS_MEANT.keys())
def test_a_recovery_of_ours_is_explained_only_by_codex_s_result_for_the_patch_as_meant(case, tmp_path):
    assert BINARY is not None
    tree, text, ours, wrong, name = case
    rerun = differential.codex_rerun(BINARY, tree, str(tmp_path / "r"))
    label = differential.classify(tree, text, False, True, {}, ours, rerun=rerun)
    assert label.startswith(name), label
    # a result of ours that is not Codex's for the patch as meant is not explained
    label = differential.classify(tree, text, False, True, {}, wrong, rerun=rerun)
    assert label.startswith("unexplained"), label
    # without Codex to ask, nothing is explained
    assert differential.classify(tree, text, False, True, {}, ours).startswith("unexplained")


def test_the_space_is_put_back_only_on_update_lines():
    text = "*** Begin Patch\n*** Add File: b.txt\n+q\n*** Update File: a.txt\n@@\nx\n+y\n-\tz\n\n*** End Patch"
    assert differential._with_spaces(text) == text.replace("\nx\n", "\n x\n")


@needs_codex
def test_an_already_applied_refusal_is_explained_only_where_codex_writes_the_lines_again(tmp_path):
    assert BINARY is not None
    tree = {"a.txt": b"line 17\nx = 1\n"}
    rerun = differential.codex_rerun(BINARY, tree, str(tmp_path / "r"))
    repeat = "*** Begin Patch\n*** Update File: a.txt\n*** Move to: new.txt\n@@\n line 17\n+x = 1\n*** End Patch"
    codex = {"new.txt": b"line 17\nx = 1\nx = 1\n"}
    label = differential.classify(tree, repeat, True, False, codex, tree, rerun=rerun)
    assert label.startswith("already applied"), label
    assert differential.classify(tree, repeat, True, False, codex, tree).startswith("unexplained")  # no Codex to ask
    # a false refusal (5059af6): '}' judged present, where Codex writes x then '}', '}' no more often than before
    tree = {"a.txt": b"}\n"}
    rerun = differential.codex_rerun(BINARY, tree, str(tmp_path / "r"))
    text = "*** Begin Patch\n*** Update File: a.txt\n@@\n-}\n+x\n@@\n+}\n*** End Patch"
    patch = parser.parse_patch(text)
    assert not differential._written_again(tree, text, patch, [("a.txt", [(1, 1)], True)], rerun)
    # a present '}' written again where the section removes another '}': as many '}' as before
    tree = {"a.txt": b"print(1)\n}\nz\n}\n"}
    rerun = differential.codex_rerun(BINARY, tree, str(tmp_path / "r"))
    text = "*** Begin Patch\n*** Update File: a.txt\n@@\n print(1)\n-}\n+bar\n@@\n+}\n*** End Patch"
    assert differential.classify(tree, text, True, False, {}, tree, rerun=rerun).startswith("already applied")
    # the present line kept as another chunk's context while that chunk removes its twin: Codex's
    # result is the file as it was, and the line is still there once the other chunk is applied
    tree = {"a.txt": b"    return x\n    return x\n"}
    rerun = differential.codex_rerun(BINARY, tree, str(tmp_path / "r"))
    text = "*** Begin Patch\n*** Update File: a.txt\n@@\n-    return x\n     return x\n*** End of File\n@@\n+    return x\n*** End of File\n*** End Patch"
    assert differential.classify(tree, text, True, False, tree, tree, rerun=rerun).startswith("already applied")
    tree = {"a.txt": b"}\n"}
    rerun = differential.codex_rerun(BINARY, tree, str(tmp_path / "r"))
    # the same check where the lines are there and Codex writes them again
    text = "*** Begin Patch\n*** Update File: a.txt\n@@\n+}\n*** End Patch"
    assert differential._written_again(tree, text, parser.parse_patch(text), [("a.txt", [(1, 1)], True)], rerun)


def test_an_indentation_refusal_is_explained_only_where_the_lines_match_with_other_indentation():
    tree = {"a.txt": b"def f():\n    x = 1\n    y = 2\n"}
    other = "*** Begin Patch\n*** Update File: a.txt\n@@\n x = 1\n-y = 2\n+y = 3\n*** End Patch"
    assert differential.classify(tree, other, True, False, ONE, tree).startswith("unexplained")  # ours re-indents it
    twice = {"a.txt": tree["a.txt"] * 2}  # two places, each only with other indentation: ours refuses
    assert differential.classify(twice, other, True, False, ONE, twice).startswith("indentation")
    assert differential._matched_only_trimmed(tree, other, "a.txt", None)
    exact = other.replace(" x = 1\n-y", "     x = 1\n-    y")
    assert not differential._matched_only_trimmed(tree, exact, "a.txt", None)
    assert not differential._matched_only_trimmed(tree, other, "b.txt", None)


@needs_codex
def test_an_indentation_refusal_is_judged_on_the_file_as_the_earlier_sections_left_it(tmp_path):
    assert BINARY is not None
    tree = {"b.txt": b"    x = 1\n"}
    rerun = differential.codex_rerun(BINARY, tree, str(tmp_path / "r"))
    # the Add File leaves 'x = 1' unindented: the update's '    x = 1' then matches only trimmed
    text = "*** Begin Patch\n*** Add File: b.txt\n+x = 1\n*** Update File: b.txt\n@@\n     x = 1\n+y\n*** End Patch"
    assert differential._matched_only_trimmed(tree, text, "b.txt", rerun)
    assert not differential._matched_only_trimmed(tree, text, "b.txt", None)  # (no Codex: the tree as it was)


def test_the_present_lines_checked_are_the_added_ones_not_the_context_around_them():
    section = ["*** Update File: a.txt", "@@", "+line 22", "     line 13", "@@", "+\tline 13"]
    # '    line 13' is context here: the range ours found holds it, Codex does not write it again
    assert differential._added_lines(section, ["line 22", "    line 13"]) == {"line 22": 1}
    # where no line is an added one as written, as the loosest reading finds them
    assert differential._added_lines(section, ["  line 22 ", "x"]) == {"  line 22 ": 1}
    # a context line that reads as an added one: as many as the section adds
    section = ["*** Update File: a.txt", "@@", " note ", "+note"]
    assert differential._added_lines(section, ["note", "note"]) == {"note": 1}


def test_an_indentation_refusal_is_judged_as_codex_s_loosest_pass_reads_lines():
    tree = {"a.txt": "    pass\nprint(\u201chi\u201d)\n".encode()}
    text = '*** Begin Patch\n*** Update File: a.txt\n@@\n pass\n print("hi")\n+x\n*** End Patch'
    assert differential._matched_only_trimmed(tree, text, "a.txt", None)


def test_a_chunk_named_out_of_order_is_tried_at_each_earlier_place():
    text = "*** Begin Patch\n*** Update File: a.txt\n@@ x\n-1\n@@\n-2\n*** End of File\n@@\n-3\n*** End Patch"
    mended = differential._in_file_order(
        text, ["Chunk 3 of a.txt is before the previous one in the file; applied in file order."]
    )
    bodies = [m.split("*** Update File: a.txt\n", 1)[1].split("\n*** End Patch")[0] for m in mended]
    assert bodies == [
        "@@\n-3\n@@ x\n-1\n@@\n-2\n*** End of File",
        "@@ x\n-1\n@@\n-3\n@@\n-2\n*** End of File",
        # each chunk a section of its own, in the patch's order
        "@@ x\n-1\n*** Update File: a.txt\n@@\n-2\n*** End of File\n*** Update File: a.txt\n@@\n-3",
    ]
    # a first chunk without an @@ line is given one where it moves; after a Move to, the file is there
    text = "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n-1\n@@\n-2\n*** End Patch"
    mended = differential._in_file_order(
        text, ["Chunk 2 of a.txt is before the previous one in the file; applied in file order."]
    )
    assert mended[0].split("\n", 3)[3].startswith("@@\n-2\n@@\n-1\n")
    assert "-1\n*** Update File: b.txt\n@@\n-2\n" in mended[1]


@needs_codex
def test_chunks_out_of_order_that_codex_takes_in_no_order_are_counted_apart(tmp_path):
    assert BINARY is not None
    tree = {"f.txt": b"def f():\n\tline 29\n"}
    rerun = differential.codex_rerun(BINARY, tree, str(tmp_path / "r"))
    # two chunks at the end of the file, the second found before the first's anchor: no order of
    # them, in one section or in several, is one Codex applies
    text = (
        "*** Begin Patch\n*** Update File: f.txt\n@@\n+    line 0\n def f():\n@@ \tline 29\n+# note\n*** End of File\n"
        "@@\n line 29\n+\treturn y\n*** End of File\n*** End Patch\n"
    )
    ours = {"f.txt": b"    line 0\ndef f():\n\tline 29\n# note\n\t\treturn y\n"}
    label = differential.classify(tree, text, False, True, {}, ours, rerun=rerun)
    assert label.endswith("(not compared)"), label


def test_an_indentation_refusal_at_the_end_of_the_file_is_judged_on_the_last_lines():
    tree = {"b.txt": b"\tline 21\nfoo\nline 21\n"}
    # '\tline 21 ' is the first line once trailing space is trimmed, but End of File looks at the
    # last line alone, which it matches only with other indentation
    text = "*** Begin Patch\n*** Update File: b.txt\n@@\n-\tline 21 \n+line 0\n*** End of File\n*** End Patch"
    assert differential._matched_only_trimmed(tree, text, "b.txt", None)
    assert not differential._matched_only_trimmed(tree, text.replace("*** End of File\n", ""), "b.txt", None)


@needs_codex
def test_a_line_found_present_with_other_indentation_counts_as_written_again_as_sent(tmp_path):
    assert BINARY is not None
    # ' bar  ' matches '  bar  ' only with other indentation; ours finds '+line 0' there as
    # '\tline 0' (the file's indentation), Codex writes 'line 0' as sent
    tree = {"a.txt": b"\tline 0\n  bar  \n\tline 0\n"}
    rerun = differential.codex_rerun(BINARY, tree, str(tmp_path / "r"))
    text = "*** Begin Patch\n*** Update File: a.txt\n@@\n bar  \n+line 0\n*** End Patch"
    assert differential.classify(tree, text, True, False, tree, tree, rerun=rerun).startswith("already applied")
