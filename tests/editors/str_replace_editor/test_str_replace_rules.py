"""Issue 15's tolerant rules for ``str_replace`` (pure): each applies only where the intent is
unambiguous (positive case: exact bytes written, the reply's note) and otherwise refuses naming
the cause (the file untouched is the tool tests' business: here nothing is returned)."""

from __future__ import annotations

import pytest

from editors.str_replace_editor import tolerant
from editors.str_replace_editor.edits import replace_unique
from vfs.errors import AlreadyApplied, AmbiguousEdit, EditNotFound


def apply(content: str, old: str, new: str) -> tuple[str, str | None]:
    done = replace_unique(content, old, new, path="/w/f")
    return done.text, done.note


# -- the wrong edits of the replay, now refused ----------------------------------------------------


def test_match_after_a_lines_indentation_with_new_lines_is_refused():
    content = "def f():\n    x = 1\n    return x\n"
    with pytest.raises(EditNotFound) as info:
        replace_unique(content, "x = 1", "x = 1\ny = 2", path="/w/f")
    assert "line 2" in info.value.message and "after the line's indentation '    '" in info.value.message


def test_match_after_indentation_is_literal_when_old_str_shows_its_frame():
    # old_str's second line matched at its absolute indentation: new_str's lines are absolute too (as DSH)
    content = "def f():\n    x = 1\n    return x\n"
    text, note = apply(content, "x = 1\n    return x", "x = 1\n    y = 2\n    return x")
    assert text == "def f():\n    x = 1\n    y = 2\n    return x\n" and note is None


def test_single_line_match_after_indentation_without_new_lines_applies():
    text, _ = apply("def f():\n    x = 1\n", "x = 1", "x = 2")
    assert text == "def f():\n    x = 2\n"


def test_exact_match_with_a_copy_at_another_indentation_is_refused():
    content = "if a:\n    b()\n    c()\nif d:\n        b()\n        c()\n"
    with pytest.raises(AmbiguousEdit) as info:
        replace_unique(content, "        b()\n        c()", "        b()", path="/w/f")
    assert "line 5" in info.value.message and "another indentation at line 2" in info.value.message


# -- trailing whitespace ----------------------------------------------------------------------------


def test_trailing_whitespace_dropped_keeps_the_files_bytes_on_unchanged_lines():
    content = "a = 1  \nb = 2\t\nc = 3\n"
    text, note = apply(content, "a = 1\nb = 2\nc = 3", "a = 1\nb = 20\nc = 3")
    assert text == "a = 1  \nb = 20\nc = 3\n"
    assert note is not None and note.startswith("Matched ignoring trailing whitespace")


def test_trailing_whitespace_insertion_aligns_lines_by_diff():
    content = "x = 1\ny = 2  \nz = 3\n"
    text, _ = apply(content, "x = 1\ny = 2\nz = 3", "x = 1\n# new\ny = 2\nz = 3")
    assert text == "x = 1\n# new\ny = 2  \nz = 3\n"


def test_trailing_whitespace_in_a_crlf_file():
    content = "a = 1 \r\nb = 2\r\nc\r\n"
    text, _ = apply(content, "a = 1\nb = 2", "a = 1\nb = 3")
    assert text == "a = 1 \r\nb = 3\r\nc\r\n"


def test_trailing_whitespace_ambiguous_is_refused_naming_it():
    with pytest.raises(AmbiguousEdit) as info:
        replace_unique("a \nb\na\t\nb\n", "a\nb", "c\nb", path="/w/f")
    assert "ignoring trailing whitespace it matches at lines [1, 3]" in info.value.message


# -- indentation map --------------------------------------------------------------------------------


def test_tabs_as_spaces_reindents_new_str_with_tabs():
    content = "func f() {\n\tif ok {\n\t\treturn\n\t}\n}\n"
    text, note = apply(
        content, "    if ok {\n        return\n    }", "    if ok {\n        log()\n        return\n    }"
    )
    assert text == "func f() {\n\tif ok {\n\t\tlog()\n\t\treturn\n\t}\n}\n"
    assert note is not None and "4 spaces of old_str are one tab of the file" in note


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("if a:\n    b()", "if a:\n    b()\n    c()"),  # indentation lost (column 0)
        ("  if a:\n      b()", "  if a:\n      b()\n      c()"),  # dedented by 2
        ("        if a:\n            b()", "        if a:\n            b()\n            c()"),  # indented by 4
    ],
)
def test_shifted_block_is_reindented_by_the_prefix_map(old: str, new: str):
    content = "def f():\n    if a:\n        b()\n    return\n"
    text, note = apply(content, old, new)
    assert text == "def f():\n    if a:\n        b()\n        c()\n    return\n"
    assert note is not None and "re-indented" in note


def test_inconsistent_indentation_is_refused_naming_it():
    content = "def f():\n    if a:\n        b()\n"
    with pytest.raises(EditNotFound) as info:  # line 1 shifted by 4, line 2 by 6: no one map
        replace_unique(content, "if a:\n  b()", "if a:\n  c()", path="/w/f")
    assert "indentation differs" in info.value.message


def test_new_line_indented_less_than_the_map_allows_is_refused():
    content = "def f():\n    if a:\n        b()\n"
    with pytest.raises(EditNotFound) as info:  # the map strips 4 spaces; the new line has 2
        replace_unique(content, "        if a:\n            b()", "        if a:\n  c()", path="/w/f")
    assert "indented less than that" in info.value.message


def test_indentation_ambiguous_is_refused_naming_it():
    content = "    a()\n    b()\n        a()\n        b()\n"
    with pytest.raises(AmbiguousEdit) as info:
        replace_unique(content, "a()\nb()\n", "a()\n", path="/w/f")
    assert "ignoring indentation it matches at lines [1, 3]" in info.value.message


def test_indent_map_prefers_tabs_for_a_tab_file():
    mapping = tolerant.indent_map([("    ", "\t"), ("        ", "\t\t")])
    assert mapping is not None and mapping.apply("            ") == "\t\t\t"
    assert tolerant.indent_map([("  ", "    "), ("    ", "  ")]) is None


# -- unicode punctuation ----------------------------------------------------------------------------


@pytest.mark.parametrize("char", ["\u2019", "\u2014", "\u00a0", "\u2212", "\u3000"])
def test_unicode_punctuation_matches_and_unchanged_lines_keep_it(char: str):
    ascii_twin = {"\u2019": "'", "\u2014": "-", "\u00a0": " ", "\u2212": "-", "\u3000": " "}[char]
    content = f"x = 1\ns = 'a{char}b'\ny = 2\n"
    text, note = apply(content, f"x = 1\ns = 'a{ascii_twin}b'", f"x = 1\ns = 'a{ascii_twin}b'\nz = 3")
    assert text == f"x = 1\ns = 'a{char}b'\nz = 3\ny = 2\n"
    assert note is not None and f"U+{ord(char):04X}" in note


def test_unicode_refusal_names_dashes():
    with pytest.raises(EditNotFound) as info:  # a partial line: the rule needs whole lines; the diagnosis names it
        replace_unique("a \u2014 b = 1\n", "- b", "- c", path="/w/f")
    assert "unicode dashes (U+2014)" in info.value.message


# -- line-number prefixes ---------------------------------------------------------------------------


def test_line_number_prefixes_are_stripped_when_they_match_the_place():
    content = "a\nb\nc\nd\n"
    text, note = apply(content, "     2  b\n     3  c", "     2  b\n     3  C")
    assert text == "a\nb\nC\nd\n"
    assert note is not None and "line-number prefixes" in note


def test_line_number_prefixes_in_a_crlf_file():
    text, _ = apply("a\r\nb\r\nc\r\n", "     2  b\n     3  c", "b\nC")
    assert text == "a\r\nb\r\nC\r\n"


def test_line_number_prefixes_after_indentation_keep_the_lost_indentation_refusal():
    with pytest.raises(EditNotFound) as info:
        replace_unique("def f():\n    x = 1\n", "     2  x = 1", "x = 1\ny = 2", path="/w/f")
    assert "after the line's indentation" in info.value.message


def test_line_number_prefixes_with_the_wrong_numbers_are_refused():
    with pytest.raises(EditNotFound) as info:
        replace_unique("a\nb\nc\nd\n", "     7  b\n     8  c", "b\nC", path="/w/f")
    assert "line numbers" in info.value.message


def test_non_consecutive_numbers_are_not_a_prefix():
    assert tolerant.strip_line_numbers("     2  b\n     4  c") is None
    assert tolerant.strip_line_numbers("     2  b\n     3  c") == ("b\nc", 2)


# -- elision ----------------------------------------------------------------------------------------

ELIDED = "def f():\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n    return a\n"


def test_elision_keeps_the_elided_lines():
    text, note = apply(ELIDED, "    a = 1\n    ...\n    return a", "    a = 10\n    ...\n    return a")
    assert text == ELIDED.replace("a = 1\n", "a = 10\n")
    assert note is not None and "lines 3-5" in note


def test_elision_without_the_same_line_in_new_str_is_refused():
    with pytest.raises(EditNotFound) as info:
        replace_unique(ELIDED, "    a = 1\n    ...\n    return a", "    a = 10\n    return a", path="/w/f")
    assert "elision line (`...`)" in info.value.message


def test_elision_matching_two_gaps_is_refused():
    content = "a\nx\n)\ny\n)\n"
    with pytest.raises(EditNotFound) as info:
        replace_unique(content, "a\n...\n)", "A\n...\n)", path="/w/f")
    assert "match at 2 places" in info.value.message


# -- already applied (no session: new_str uniquely present, old_str nowhere) ------------------------


def test_already_applied_when_old_is_gone_and_new_is_present_as_whole_lines():
    content = "a\nb = 2\nc\n"
    with pytest.raises(AlreadyApplied) as info:
        replace_unique(content, "a\nb = 1", "a\nb = 2", path="/w/f")
    assert info.value.message == "this change is already present at lines 1-2; nothing was changed"
    assert info.value.code == "FS_ALREADY_APPLIED"


def test_one_generic_line_is_not_proof_of_an_earlier_application():
    with pytest.raises(EditNotFound):
        replace_unique("a\nb = 2\nc\n", "b = 1", "b = 2", path="/w/f")


def test_a_fragment_of_a_line_is_not_already_applied():
    with pytest.raises(EditNotFound):
        replace_unique("alpha\nbeta\n", "zeta", "eta", path="/w/f")


def test_a_near_miss_of_old_beats_already_applied():
    with pytest.raises(EditNotFound) as info:  # old_str is still there (spacing differs): not applied yet
        replace_unique("x  = 1\nx = 2\n", "x = 1", "x = 2", path="/w/f")
    assert "spacing inside a line" in info.value.message


def test_an_insertion_sent_twice_without_a_session_is_already_applied():
    content = "x = 1\n\ny = 2\n"
    once = replace_unique(content, "x = 1\n\n", "x = 1\n# why\n\n", path="/w/f").text
    assert once == "x = 1\n# why\n\ny = 2\n"
    with pytest.raises(AlreadyApplied) as info:  # old_str still matches, inside the inserted text's place
        replace_unique(once, "x = 1\n", "x = 1\n# why\n", path="/w/f")
    assert info.value.message == "this change is already present at lines 1-2; nothing was changed"


def test_new_text_elsewhere_does_not_block_an_insertion():
    content = "x = 1\n# why\nz\nx = 2\n"
    text, _ = apply(content, "x = 2\n", "x = 2\n# why\n")  # "# why" is present, but not after x = 2
    assert text == "x = 1\n# why\nz\nx = 2\n# why\n"
