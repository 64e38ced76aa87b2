"""seek_sequence (Codex's four passes, EOF anchoring) and the line-ending preserving rewrite."""

from __future__ import annotations

import time

import pytest

from editors.apply_patch.errors import PatchContextNotFound, PatchLinesNotFound
from editors.apply_patch.matcher import (
    LineHunks,
    LineIndex,
    SourceText,
    _find_lines,
    apply_chunks,
    apply_chunks_bytes,
    compute_replacements,
    normalise_punctuation,
    seek_sequence,
)
from editors.apply_patch.parser import Chunk, UpdateFile, parse_patch


def chunks_of(body: str) -> list[Chunk]:
    hunk = parse_patch(f"*** Begin Patch\n*** Update File: f.txt\n{body}\n*** End Patch").hunks[0]
    assert isinstance(hunk, UpdateFile)
    return hunk.chunks


def update(text: str, body: str) -> str:
    return apply_chunks(text, chunks_of(body), "f.txt")


# -- seek_sequence --------------------------------------------------------------------------------

SEEKS: list[tuple[str, list[str], list[str], int, bool, int | None]] = [
    ("exact", ["foo", "bar", "baz"], ["bar", "baz"], 0, False, 1),
    ("rstrip", ["foo   ", "bar\t\t"], ["foo", "bar"], 0, False, 0),
    ("trim", ["    foo   ", "   bar\t"], ["foo", "bar"], 0, False, 0),
    ("pattern side is trimmed too", ["foo"], ["  foo  "], 0, False, 0),
    ("exact beats an earlier fuzzy match", ["foo  ", "foo"], ["foo"], 0, False, 1),
    ("rstrip beats an earlier trim match", ["  foo", "foo  "], ["foo"], 0, False, 1),
    ("starts at start", ["a", "b", "a"], ["a"], 1, False, 2),
    ("nothing after start", ["a", "b"], ["a"], 1, False, None),
    ("empty pattern", ["a"], [], 1, False, 1),
    ("pattern longer than input", ["just one"], ["too", "many"], 0, False, None),
    ("eof takes the last window", ["a", "b", "a", "b"], ["a", "b"], 0, True, 2),
    ("eof does not fall back", ["a", "b", "c"], ["a", "b"], 0, True, None),
    ("eof start past last window", ["a", "b", "a", "b"], ["a", "b"], 3, True, None),
    ("eof fuzzy", ["x", "tail  "], ["tail"], 0, True, 1),
    ("en dash", ["x = a \u2013 b"], ["x = a - b"], 0, False, 0),
    ("curly quotes", ["say \u201chi\u201d and \u2018yo\u2019"], ["say \"hi\" and 'yo'"], 0, False, 0),
    ("minus sign", ["a \u2212 b"], ["a - b"], 0, False, 0),
    ("nbsp inside", ["a\u00a0=\u00a01"], ["a = 1"], 0, False, 0),
    ("ascii in file, fancy in patch", ["a - b"], ["a \u2014 b"], 0, False, 0),
    ("no NFC", ["caf\u00e9"], ["cafe\u0301"], 0, False, None),
    ("no case folding", ["Foo"], ["foo"], 0, False, None),
    ("em quad is not folded inside a line", ["a\u2001b"], ["a b"], 0, False, None),
    ("double vertical line is not a dash", ["a\u2016b"], ["a-b"], 0, False, None),
]


@pytest.mark.parametrize(("name", "lines", "pattern", "start", "eof", "expected"), SEEKS, ids=[s[0] for s in SEEKS])
def test_seek_sequence(
    name: str, lines: list[str], pattern: list[str], start: int, eof: bool, expected: int | None
) -> None:
    assert seek_sequence(lines, pattern, start, eof) == expected
    # the shared index gives the same answer as a fresh one
    assert seek_sequence(lines, pattern, start, eof, LineIndex(lines)) == expected


@pytest.mark.parametrize(
    "char",
    ["\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2015", "\u2212"],
)
def test_every_dash_folds_to_hyphen(char: str) -> None:
    assert normalise_punctuation(f"a{char}b") == "a-b"


@pytest.mark.parametrize(
    ("chars", "ascii"),
    [("\u2018\u2019\u201a\u201b", "'"), ("\u201c\u201d\u201e\u201f", '"')],
)
def test_every_quote_folds(chars: str, ascii: str) -> None:
    assert normalise_punctuation(chars) == ascii * len(chars)


@pytest.mark.parametrize(
    "char",
    [
        "\u00a0",
        "\u2002",
        "\u2003",
        "\u2004",
        "\u2005",
        "\u2006",
        "\u2007",
        "\u2008",
        "\u2009",
        "\u200a",
        "\u202f",
        "\u205f",
        "\u3000",
    ],
)
def test_every_odd_space_folds_inside_a_line(char: str) -> None:
    assert normalise_punctuation(f"a{char}b") == "a b"


def test_index_search_handles_repeated_lines() -> None:
    lines = ["}", "", "}", "", "x", "}", "", "y"]
    assert seek_sequence(lines, ["}", "", "y"], 0, False) == 5
    assert seek_sequence(lines, ["}", ""], 3, False) == 5
    assert seek_sequence(lines, ["}", "", "z"], 0, False) is None


# -- compute_replacements -------------------------------------------------------------------------


def test_context_then_lines_after_it() -> None:
    text = "def a():\n    return 1\ndef b():\n    return 1\n"
    assert (
        update(text, "@@ def b():\n-    return 1\n+    return 2") == "def a():\n    return 1\ndef b():\n    return 2\n"
    )


def test_missing_context_error_text() -> None:
    # The chunk's own lines are not in the file either: Codex's error, plus the cause named.
    with pytest.raises(PatchContextNotFound) as info:
        update("a\n", "@@ nowhere\n-z\n+b")
    assert info.value.cli_message == "Failed to find context 'nowhere' in f.txt"
    assert info.value.message.startswith("apply_patch verification failed: Failed to find context 'nowhere' in f.txt")
    assert "@@ line (hunk header)" in info.value.message
    assert info.value.code == "PATCH_CONTEXT_NOT_FOUND"


def test_missing_context_is_ignored_when_the_chunk_matches_once() -> None:
    # Ours: a wrong @@ line (a unified-diff header, a made-up function) does not decide where.
    assert update("a\nb\n", "@@ nowhere\n-a\n+A") == "A\nb\n"
    assert update("a\nb\n", "@@ -1,2 +1,2 @@\n-a\n+A\n b") == "A\nb\n"
    with pytest.raises(PatchContextNotFound):
        update("a\nb\na\n", "@@ nowhere\n-a\n+A")  # two places: the header was needed


def test_missing_lines_error_text_joins_all_old_lines() -> None:
    with pytest.raises(PatchLinesNotFound) as info:
        update("a\nb\n", "@@\n a\n-missing\n+new")
    assert info.value.cli_message == "Failed to find expected lines in f.txt:\na\nmissing"
    assert info.value.code == "PATCH_LINES_NOT_FOUND"


def test_chunks_out_of_file_order_apply_in_file_order() -> None:
    # Ours: the second chunk's lines exist only before the first chunk: found there, once.
    assert update("x\ny\n", "@@\n-y\n+Y\n@@\n-x\n+X") == "X\nY\n"


def test_chunks_out_of_order_are_refused_when_ambiguous_or_overlapping() -> None:
    with pytest.raises(PatchLinesNotFound) as info:
        update("x\nq\nx\ny\n", "@@\n-y\n+Y\n@@\n-x\n+X")
    assert "not in file order" in info.value.message
    with pytest.raises(PatchLinesNotFound) as info:
        update("x\ny\n", "@@\n x\n-y\n+Y\n@@\n-x\n+X")
    assert "overlaps chunk 1" in info.value.message


def test_empty_last_line_retry() -> None:
    # old lines end with an empty line that stands for the final newline: retried without it,
    # and the trailing empty new line is dropped too.
    assert update("a\nb\n", "@@\n a\n-b\n+B\n") == "a\nB\n"
    chunk = chunks_of("@@\n a\n-b\n+B\n ")[0]
    assert chunk.old_lines == ["a", "b", ""]
    assert compute_replacements(["a", "b"], [chunk], "f.txt") == [(1, 1, ["B"])]


def test_end_of_file_marker_anchors_at_the_end() -> None:
    text = "x\nend\ny\nend\n"
    assert update(text, "@@\n-end\n+END\n*** End of File") == "x\nend\ny\nEND\n"
    assert update(text, "@@\n-end\n+END") == "x\nEND\ny\nend\n"


def test_pure_addition_without_context_appends() -> None:
    assert update("a\nb\n", "@@\n+c") == "a\nb\nc\n"
    assert update("a\n\n", "@@\n+c") == "a\n\nc\n"  # after a final empty line too (Codex 0.171)
    assert update("a\nb", "@@\n+c") == "a\nb\nc\n"
    assert update("", "@@\n+c") == "c\n"


def test_pure_addition_after_context_is_inserted_there() -> None:
    """Ours: Codex appends this at the end of the file while reporting success (codex#30946);
    we insert it right after the ``@@`` line, where the model asked for it."""
    text = "import os\n\ndef main():\n    pass\n"
    assert update(text, "@@ import os\n+import sys") == "import os\nimport sys\n\ndef main():\n    pass\n"


def test_pure_addition_with_end_of_file_still_appends() -> None:
    assert update("a\nb\n", "@@ a\n+c\n*** End of File") == "a\nb\nc\n"


def test_successive_anchors_narrow_the_search() -> None:
    """Ours: Codex rejects consecutive ``@@`` lines at parse time."""
    text = "class A:\n    def m(self):\n        return 0\nclass B:\n    def m(self):\n        return 0\n"
    got = update(text, "@@ class B:\n@@     def m(self):\n-        return 0\n+        return 1")
    assert got == "class A:\n    def m(self):\n        return 0\nclass B:\n    def m(self):\n        return 1\n"
    with pytest.raises(PatchContextNotFound) as info:
        update(text, "@@ class B:\n@@ class A:\n-x\n+y")
    assert info.value.cli_message == "Failed to find context 'class A:' in f.txt"


# -- line endings, BOM ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "body", "after"),
    [
        ("one\r\ntwo\r\n", "@@\n-one\n+ONE\n two\n+three", "ONE\r\ntwo\r\nthree\r\n"),
        ("one\rtwo\r", "@@\n one\n+mid\n two", "one\rmid\rtwo\r"),
        ("a\nb\r\nc\rd", "@@\n b\n-c\n+C", "a\nb\r\nC\nd\n"),  # first-seen ending is LF
        ("a\r\nb\nc", "@@\n-c\n+C", "a\r\nb\nC\r\n"),  # first-seen ending is CRLF
        ("no newline", "@@\n no newline\n+next", "no newline\nnext\n"),
        ("keep", "@@\n keep", "keep\n"),  # even a context-only update ends with a line break
        ("x\n\n\n", "@@\n x\n+y", "x\ny\n\n\n"),
    ],
)
def test_line_endings_are_kept_per_line(before: str, body: str, after: str) -> None:
    assert update(before, body) == after


def test_context_lines_keep_their_original_bytes() -> None:
    # matched by the trim pass: the file's own spacing and CR survive around the change
    before = "  alpha  \r\nbeta\ngamma\r\n"
    assert update(before, "@@\n alpha\n-beta\n+BETA\n gamma") == "  alpha  \r\nBETA\r\ngamma\r\n"


def test_bom_is_ignored_for_matching_and_kept() -> None:
    """Ours: Codex reads the BOM as part of the first line, so ``-first`` never matches it."""
    before = "\ufefffirst\r\nsecond\r\n"
    assert update(before, "@@\n-first\n+FIRST") == "\ufeffFIRST\r\nsecond\r\n"


def test_source_text_round_trips_every_ending() -> None:
    for text in ["", "x", "a\r\nb", "a\rb\n", "a\nb\r\n\r", "\ufeffa\n", "\r\n\r\n", "a\n\n"]:
        assert SourceText.parse(text).render() == text


def test_many_chunks_on_a_large_file_stay_fast() -> None:
    lines = [f"    value_{i} = compute({i})" if i % 7 else "" for i in range(100_000)]
    text = "\n".join(lines) + "\n"
    body = []
    for k in range(1_000):
        i = k * 97 + 3
        i += 0 if lines[i] else 1
        body += ["@@", f" {lines[i - 1]}", f"-{lines[i]}", f"+{lines[i]}  # changed"]
    start = time.perf_counter()
    out = update(text, "\n".join(body))
    elapsed = time.perf_counter() - start
    assert out.count("# changed\n") == 1_000
    assert elapsed < 10, elapsed  # linear: about 0.1 s here; a quadratic search takes minutes


def test_fast_path_hunks_are_counted_on_first_use_and_agree_with_the_line_model() -> None:
    """The fast path's line numbers take a pass over the file: only a diff card asks for them."""
    text = "".join(f"line {i}\n" for i in range(40))
    chunks = chunks_of("@@\n line 3\n-line 4\n+LINE 4\n+more\n@@\n line 30\n-line 31\n-line 32")
    data, where = apply_chunks_bytes(text.encode(), chunks, "f.txt")
    assert isinstance(data, list)  # the fast path's pieces
    assert where._hunks is None  # nothing counted yet
    general: list[tuple[int, int, int, int]] = []
    apply_chunks(text, chunks, "f.txt", hunks=general)
    assert where.get() == tuple(general) == ((4, 1, 4, 2), (31, 2, 32, 0))
    assert where == LineHunks(general) and hash(where) == hash(tuple(general))


@pytest.mark.parametrize(
    ("data", "cursor", "base", "expected"),
    [
        (b"a\nb\nx\na\nb\n", 0, 0, 0),  # at the cursor itself, the first line
        (b"x\na\nb\na\nb\n", 2, 0, 2),  # at the cursor itself, a later line
        (b"x\na\nb\na\nb\n", 4, 0, 6),  # the next line start after the cursor
        (b"xa\nb\na\nb\n", 0, 0, 5),  # never in the middle of a line
        (b"a\nb\nx\n", 2, 0, -1),  # nothing at or after the cursor
        (b"\xef\xbb\xbfa\nb\n", 3, 3, 3),  # after a BOM
    ],
)
def test_fast_path_finds_whole_lines_from_the_cursor(data: bytes, cursor: int, base: int, expected: int) -> None:
    assert _find_lines(data, b"a\nb\n", cursor, base) == expected


@pytest.mark.parametrize("decoys", [1, 7, 8, 9, 40])
def test_fast_path_search_by_a_needles_head_checks_each_hit_in_full(decoys: int) -> None:
    """The search looks for the first bytes of the lines, then checks the whole of them there:
    lines that begin the same but differ further on are passed over, however many there are."""
    head = "    value = compute(request, context, retries=3)"  # longer than the search key
    body = f"{head}\n    return value\n".encode()
    decoy = f"{head}\n    return None\n".encode()
    data = b"x\n" + decoy * decoys + body + decoy + body
    expected = 2 + len(decoy) * decoys
    assert _find_lines(data, body, 2, 0) == expected
    assert _find_lines(data, body, expected + len(body), 0) == expected + len(body) + len(decoy)
    assert _find_lines(data[: expected + 1], body, 0, 0) == -1  # the head is there, the lines are not
