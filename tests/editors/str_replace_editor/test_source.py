"""An ASCII file's text read in place (``source.AsciiText``) must behave as the decoded text does,
offset for offset, and an edit worked out on it must be the one worked out on the str."""

from __future__ import annotations

import pytest

import vfs
from editors.str_replace_editor import edits, source
from editors.str_replace_editor.source import AsciiText, source_of

TEXT = "def f(x):\n    if x:\n        return 1\n    return 2\n\r\nclass A:\n\tpass\n"
NEEDLES = ["\n", "    ", "return", "return 3", "x:\n", "\r\n", "", "é", "\ud800", "\t", "class A:\n\tpass\n"]


@pytest.mark.parametrize("needle", NEEDLES)
def test_the_str_methods_answer_as_on_the_decoded_text(needle: str) -> None:
    view = AsciiText(TEXT.encode())
    for start, end in [(None, None), (0, None), (5, 30), (12, 12), (len(TEXT) - 3, None)]:
        assert view.find(needle, start, end) == TEXT.find(needle, start, end)
        assert view.rfind(needle, start, end) == TEXT.rfind(needle, start, end)
        assert view.count(needle, start, end) == TEXT.count(needle, start, end)
    assert view.startswith(needle, 4) == TEXT.startswith(needle, 4)
    assert (needle in view) == (needle in TEXT)


def test_slices_length_and_str_are_the_text() -> None:
    view = AsciiText(TEXT.encode())
    assert len(view) == len(TEXT)
    assert str(view) == TEXT
    assert view[3:17] == TEXT[3:17] and view[-5:] == TEXT[-5:] and view[40:] == TEXT[40:]


def test_only_ascii_without_nul_is_read_in_place() -> None:
    assert isinstance(source_of(b"plain\n", "a.py"), AsciiText)
    assert source_of("caf\u00e9\n".encode(), "a.py") == "caf\u00e9\n"
    assert source_of(vfs.encode_text("x\n", bom=True), "a.py") == "x\n"  # a BOM is not ASCII: decoded, set aside
    with pytest.raises(vfs.NotText):
        source_of(b"a\x00b", "a.py")
    with pytest.raises(vfs.NotText):
        source_of(b"a\xffb", "a.py")


FILE = (
    "def handler(request):\n"
    "    value = request.get('v')\n"
    "    if value is None:\n"
    "        return None\n"
    "    return value\n"
    "\n"
    "class Copy:\n"
    "        value = request.get('v')\n"
    "        if value is None:\n"
    "            return None\n"
    "twice = 1\n"
    "twice = 1\n"
)
CASES = [
    ("    return value\n", "    return value * 2\n"),  # exact, unique
    ("twice = 1\n", "twice = 2\n"),  # ambiguous
    ("return value\n", "return 0\n    x = 2\n"),  # after indentation: new's next lines would lose it
    ("class Copy:\n", "class Copy:\n        value = request.get('v')\n"),  # sent twice: already applied
    ("    value = request.get('v')\n    if value is None:\n", "    v = 1\n"),  # the same lines indented elsewhere
    ("def handler(request):\n", "def handler(request):\n    log()\n"),  # new holds old: not a re-apply here
    ("    return  value\n", "    return 0\n"),  # no exact match: the tolerant rules, on the decoded text
    ("nowhere at all\n", "x\n"),  # not found
    ("return \u201cvalue\u201d", "x"),  # a non-ASCII old_str in an ASCII file
]


def _outcome(content: source.Source, old: str, new: str) -> object:
    try:
        replaced = edits.replace_unique(content, old, new, path="/m.py")
    except vfs.VfsError as exc:
        return (type(exc).__name__, exc.message)
    return (replaced.start, replaced.end, replaced.replacement, replaced.line, replaced.old_last_line,
            replaced.new_last_line, replaced.adapted_line_endings, replaced.note, replaced.text)  # fmt: skip


@pytest.mark.parametrize(("old", "new"), CASES)
@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_an_edit_on_the_bytes_read_in_place_is_the_edit_on_the_text(old: str, new: str, newline: str) -> None:
    text = FILE.replace("\n", newline)
    assert _outcome(AsciiText(text.encode()), old, new) == _outcome(text, old, new)


def test_the_edited_bytes_and_the_card_marks_are_the_same() -> None:
    data = FILE.encode()
    on_text = edits.replace_unique(FILE, "    return value\n", "    return 0\n", path="/m.py")
    in_place = edits.replace_unique(AsciiText(data), "    return value\n", "    return 0\n", path="/m.py")
    assert in_place.encoded(data) == on_text.encoded(data) == FILE.replace("return value", "return 0").encode()
    assert in_place.unchanged(data) == on_text.unchanged(data)
    assert in_place.mark(data) == on_text.mark(data) != (0, 0)


def test_an_insert_reads_the_text_decoded() -> None:
    data = FILE.encode()
    assert edits.inserted(AsciiText(data), 1, "# note").text == edits.inserted(FILE, 1, "# note").text
