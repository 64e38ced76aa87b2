"""The parser reproduces Codex's (lenient mode, streaming state machine) byte for byte."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from editors.apply_patch.errors import PatchParseError
from editors.apply_patch.parser import (
    AddFile,
    Chunk,
    DeleteFile,
    Hunk,
    UpdateFile,
    parse_patch,
    patch_lines,
    rust_lines,
    rust_trim,
    rust_trim_end,
)

HEADERS = "Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"
EVERY_LINE = "Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)"
FIRST = "The first line of the patch must be '*** Begin Patch'"
LAST = "The last line of the patch must be '*** End Patch'"


def wrap(body: str) -> str:
    return f"*** Begin Patch\n{body}\n*** End Patch"


def chunk(old: list[str], new: list[str], ctx: str | None = None, eof: bool = False, **kw: object) -> Chunk:
    made = Chunk(change_context=ctx, old_lines=old, new_lines=new, is_end_of_file=eof)
    for key, value in kw.items():
        setattr(made, key, value)
    return made


def strip_indices(hunks: Sequence[Hunk]) -> list[Hunk]:
    """Compare hunks without the bookkeeping of context-line indices."""
    for hunk in hunks:
        if isinstance(hunk, UpdateFile):
            for c in hunk.chunks:
                c.context_line_indices = []
    return list(hunks)


# -- Rust string primitives -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\u0085x\u0085", "x"),  # NEL is Unicode White_Space: Rust trims it
        ("\ufeffx", "\ufeffx"),  # the BOM is not White_Space: Rust keeps it
        ("\x1cx\x1f", "\x1cx\x1f"),  # Python's str.strip() would remove these; Rust does not
        ("\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000x", "x"),
        ("\t\n\x0b\x0c\r x \t", "x"),
        ("\u200bx", "\u200bx"),  # zero-width space: not White_Space
    ],
)
def test_rust_trim_uses_the_unicode_white_space_set(text: str, expected: str) -> None:
    assert rust_trim(text) == expected


def test_rust_trim_end_only_trims_the_right() -> None:
    assert rust_trim_end(" \u0085x \u0085") == " \u0085x"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("a", ["a"]),
        ("a\n", ["a"]),
        ("a\n\nb", ["a", "", "b"]),
        ("a\r\nb\r\n", ["a", "b"]),
        ("a\r\r\nb", ["a\r", "b"]),  # only one \r is dropped per line
        ("a\rb", ["a\rb"]),  # a lone \r does not split (unlike str.splitlines)
        ("a\x0bb\x0cc\x1cd\x85e\u2028f", ["a\x0bb\x0cc\x1cd\x85e\u2028f"]),
        ("x\r", ["x\r"]),  # a final \r without \n stays, as in current Rust
        ("\n", [""]),
    ],
)
def test_rust_lines_splits_on_newline_only(text: str, expected: list[str]) -> None:
    assert rust_lines(text) == expected


# -- patches that parse ---------------------------------------------------------------------------

UPDATE_A = [UpdateFile("a.txt", None, [chunk(["old"], ["new"])])]

PARSES: list[tuple[str, str, Sequence[Hunk]]] = [
    ("plain", wrap("*** Update File: a.txt\n@@\n-old\n+new"), UPDATE_A),
    ("trailing newlines", wrap("*** Update File: a.txt\n@@\n-old\n+new") + "\n\n\n", UPDATE_A),
    ("heredoc bare", "<<EOF\n" + wrap("*** Update File: a.txt\n@@\n-old\n+new") + "\nEOF\n", UPDATE_A),
    ("heredoc single", "<<'EOF'\n" + wrap("*** Update File: a.txt\n@@\n-old\n+new") + "\nEOF\n", UPDATE_A),
    ("heredoc double", '<<"EOF"\n' + wrap("*** Update File: a.txt\n@@\n-old\n+new") + "\nEOF", UPDATE_A),
    ("heredoc end suffix", "<<EOF\n" + wrap("*** Update File: a.txt\n@@\n-old\n+new") + "\nPATCHEOF", UPDATE_A),
    (
        "padded markers",
        "  *** Begin Patch \t\n *** Update File: a.txt  \n@@\n-old\n+new\n   *** End Patch  ",
        UPDATE_A,
    ),
    ("nel around the patch", "\u0085" + wrap("*** Update File: a.txt\n@@\n-old\n+new") + "\u0085\u3000", UPDATE_A),
    (
        "crlf patch",
        "*** Begin Patch\r\n*** Update File: a.txt\r\n@@\r\n-old\r\n+new\r\n*** End Patch\r\n",
        UPDATE_A,
    ),
    # str::lines() drops one \r, the state machine one more: "-old\r\r\n" is "old".
    ("double cr", "*** Begin Patch\n*** Update File: a.txt\n@@\n-old\r\r\n+new\n*** End Patch", UPDATE_A),
    ("first chunk without @@", wrap("*** Update File: a.txt\n-old\n+new"), UPDATE_A),
    ("trailing spaces after @@", wrap("*** Update File: a.txt\n@@   \n-old\n+new"), UPDATE_A),
    (
        "add file",
        wrap("*** Add File: dir/new.txt\n+hello\n+\n+  indented"),
        [AddFile("dir/new.txt", "hello\n\n  indented\n")],
    ),
    ("delete file", wrap("*** Delete File: gone.txt"), [DeleteFile("gone.txt")]),
    (
        "header paths are trimmed outside updates",
        wrap("   *** Delete File: gone.txt   "),
        [DeleteFile("gone.txt")],
    ),
    (
        "move",
        wrap("*** Update File: a.txt\n*** Move to: b/c.txt  \n@@\n-old\n+new"),
        [UpdateFile("a.txt", "b/c.txt", [chunk(["old"], ["new"])])],
    ),
    (
        "context marker",
        wrap("*** Update File: a.txt\n@@ def f():  \n-    old\n+    new"),
        [UpdateFile("a.txt", None, [chunk(["    old"], ["    new"], ctx="def f():")])],
    ),
    (
        "context keeps its leading spaces",
        wrap("*** Update File: a.txt\n@@   indented\n-x\n+y"),
        [UpdateFile("a.txt", None, [chunk(["x"], ["y"], ctx="  indented")])],
    ),
    (
        "empty line is empty context; whitespace line is context",
        wrap("*** Update File: a.txt\n@@\n a\n\n   \n-b\n+B"),
        [UpdateFile("a.txt", None, [chunk(["a", "", "  ", "b"], ["a", "", "  ", "B"])])],
    ),
    (
        "indented headers inside an update are context lines",
        wrap("*** Update File: a.txt\n@@\n-old a\n+new a\n *** Update File: b.txt\n *** End Patch"),
        [
            UpdateFile(
                "a.txt",
                None,
                [
                    chunk(
                        ["old a", "*** Update File: b.txt", "*** End Patch"],
                        ["new a", "*** Update File: b.txt", "*** End Patch"],
                    )
                ],
            )
        ],
    ),
    (
        "an indented End Patch on the last line still closes",
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-old\n+new\n   *** End Patch",
        UPDATE_A,
    ),
    (
        "right-padded markers inside an update",
        wrap("*** Update File: a.txt\n@@\n-old\n+new\n*** End of File   \n*** Delete File: b.txt  "),
        [UpdateFile("a.txt", None, [chunk(["old"], ["new"], eof=True)]), DeleteFile("b.txt")],
    ),
    (
        "blank lines after End of File are skipped",
        wrap("*** Update File: a.txt\n@@\n+quux\n*** End of File\n\n  \n@@\n-x\n+y"),
        [UpdateFile("a.txt", None, [chunk([], ["quux"], eof=True), chunk(["x"], ["y"])])],
    ),
    (
        "several chunks and hunks",
        wrap(
            "*** Add File: n.txt\n+n\n*** Update File: a.txt\n@@ one\n-1\n+I\n@@ two\n 2\n-3\n+III\n"
            "*** Delete File: d.txt"
        ),
        [
            AddFile("n.txt", "n\n"),
            UpdateFile("a.txt", None, [chunk(["1"], ["I"], ctx="one"), chunk(["2", "3"], ["2", "III"], ctx="two")]),
            DeleteFile("d.txt"),
        ],
    ),
    ("empty patch parses (applying it fails)", wrap("").replace("\n\n", "\n"), []),
    (
        "blank lines after End Patch",
        "*** Begin Patch\n*** Delete File: a\n*** End Patch\n \t\n*** End Patch",
        [DeleteFile("a")],
    ),
    ("environment id", wrap("*** Environment ID: remote-1\n*** Delete File: a"), [DeleteFile("a")]),
]


@pytest.mark.parametrize(("name", "text", "expected"), PARSES, ids=[p[0] for p in PARSES])
def test_parses(name: str, text: str, expected: Sequence[Hunk]) -> None:
    assert strip_indices(parse_patch(text).hunks) == strip_indices(expected)


def test_environment_id_is_kept_and_trimmed() -> None:
    patch = parse_patch(wrap("*** Environment ID:   remote  \n*** Add File: a\n+x"))
    assert patch.environment_id == "remote"
    assert patch.hunks == [AddFile("a", "x\n")]
    assert parse_patch(wrap("*** Add File: a\n+x")).environment_id is None


def test_normalised_text_drops_the_heredoc_and_padding() -> None:
    text = "<<'EOF'\n*** Begin Patch\r\n*** Delete File: a\n*** End Patch\nEOF\n"
    assert parse_patch(text).text == "*** Begin Patch\n*** Delete File: a\n*** End Patch"
    assert patch_lines(" \n*** Begin Patch\n*** End Patch\n\n") == ["*** Begin Patch", "*** End Patch"]


@pytest.mark.parametrize(
    "text",
    [
        " \n*** Begin Patch\n*** Update File: a\n@@\n-b \n+c\t\n*** End Patch\n\n",  # LF: the trimmed text itself
        "*** Begin Patch\r\n*** Update File: a\r\n@@\r\n-b\r\n+c\r\n*** End Patch\r\n",  # CRLF: re-joined
        "*** Begin Patch\n*** Delete File: a\r\n*** End Patch",  # one CR
        "<<EOF\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF",  # the heredoc's lines left out
    ],
)
def test_normalised_text_is_the_lines_joined(text: str) -> None:
    assert parse_patch(text).text == "\n".join(patch_lines(text))


def test_context_line_indices_mark_parsed_context() -> None:
    hunk = parse_patch(wrap("*** Update File: a\n@@\n a\n-b\n+B\n\n c")).hunks[0]
    assert isinstance(hunk, UpdateFile)
    assert hunk.chunks[0].context_line_indices == [(0, 0), (2, 2), (3, 3)]


# -- errors, byte for byte ------------------------------------------------------------------------

ERRORS: list[tuple[str, str, str, int | None]] = [
    ("empty input", "", LAST, None),  # Rust: no first line -> the "last line" message
    ("whitespace only", " \n\t\u3000", LAST, None),
    ("bad first line", "bad", FIRST, None),
    ("bom is not trimmed", "\ufeff" + wrap("*** Delete File: a"), FIRST, None),
    ("begin only", "*** Begin Patch", LAST, None),
    ("end only", "*** End Patch", FIRST, None),
    ("missing end", "*** Begin Patch\n*** Delete File: a", LAST, None),
    ("heredoc mismatched quotes", "<<\"EOF'\n" + wrap("*** Delete File: a") + "\nEOF", FIRST, None),
    ("heredoc missing end", "<<EOF\n*** Begin Patch\n*** Update File: a\nEOF\n", LAST, None),
    ("heredoc too short", "<<EOF\n*** Begin Patch\nEOF", FIRST, None),
    ("content after end", "*** Begin Patch\n*** Delete File: a\n*** End Patch\nextra\n*** End Patch", LAST, None),
    (
        "environment id twice",
        wrap("*** Environment ID: a\n*** Environment ID: b\n*** Delete File: x"),
        "apply_patch environment_id cannot be specified more than once",
        None,
    ),
    (
        "environment id empty",
        wrap("*** Environment ID:   \n*** Delete File: x"),
        "apply_patch environment_id cannot be empty",
        None,
    ),
    (
        "invalid header",
        wrap("*** Frobnicate File: foo"),
        f"'*** Frobnicate File: foo' is not a valid hunk header. {HEADERS}",
        2,
    ),
    ("invalid header is trimmed", wrap("   bad   "), f"'bad' is not a valid hunk header. {HEADERS}", 2),
    ("blank line first", wrap("\n*** Delete File: a"), f"'' is not a valid hunk header. {HEADERS}", 2),
    ("blank line in add file", wrap("*** Add File: a\n+x\n\n+y"), f"'' is not a valid hunk header. {HEADERS}", 4),
    ("unprefixed add line", wrap("*** Add File: a\nx"), f"'x' is not a valid hunk header. {HEADERS}", 3),
    (
        "add path needs the space",
        wrap("*** Add File:a\n+x"),
        f"'*** Add File:a' is not a valid hunk header. {HEADERS}",
        2,
    ),
    ("line after delete", wrap("*** Delete File: a\n+x"), f"'+x' is not a valid hunk header. {HEADERS}", 3),
    (
        "environment id after a hunk",
        wrap("*** Delete File: a\n*** Environment ID: e"),
        f"'*** Environment ID: e' is not a valid hunk header. {HEADERS}",
        3,
    ),
    ("empty update", wrap("*** Update File: foo.txt"), "Update file hunk for path 'foo.txt' is empty", 2),
    (
        "empty update before next hunk",
        wrap("*** Update File: old.txt\n*** Move to: new.txt\n*** Delete File: other.txt"),
        "Update file hunk for path 'old.txt' is empty",
        2,
    ),
    ("eof without chunk", wrap("*** Update File: a\n*** End of File"), "Update file hunk for path 'a' is empty", 2),
    ("@@ then end", wrap("*** Update File: a\n@@"), "Update hunk does not contain any lines", 4),
    ("@@ then eof", wrap("*** Update File: a\n@@\n*** End of File"), "Update hunk does not contain any lines", 4),
    (
        "@@ then bad",
        wrap("*** Update File: a\n@@\nbad"),
        f"Unexpected line found in update hunk: 'bad'. {EVERY_LINE}",
        4,
    ),
    ("no @@ and bad", wrap("*** Update File: a\nbad"), f"Unexpected line found in update hunk: 'bad'. {EVERY_LINE}", 3),
    (
        "@@ then a header",
        wrap("*** Update File: a\n@@\n*** Update File: other.txt"),
        f"Unexpected line found in update hunk: '*** Update File: other.txt'. {EVERY_LINE}",
        4,
    ),
    (
        "bad after lines",
        wrap("*** Update File: a\n@@\n-old\nbad"),
        "Expected update hunk to start with a @@ context marker, got: 'bad'",
        5,
    ),
    (
        "tab line after lines",
        wrap("*** Update File: a\n@@\n-old\n\t"),
        "Expected update hunk to start with a @@ context marker, got: '\t'",
        5,
    ),
    (
        "context after end of file",
        wrap("*** Update File: a\n@@\n-old\n*** End of File\n more"),
        "Expected update hunk to start with a @@ context marker, got: ' more'",
        6,
    ),
    (
        "second move",
        wrap("*** Update File: a\n*** Move to: b\n@@\n-x\n*** Move to: c"),
        "Expected update hunk to start with a @@ context marker, got: '*** Move to: c'",
        6,
    ),
    (
        "@@x is not a marker",
        wrap("*** Update File: a\n@@x\n-y"),
        f"Unexpected line found in update hunk: '@@x'. {EVERY_LINE}",
        3,
    ),
]


@pytest.mark.parametrize(("name", "text", "reason", "line"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(name: str, text: str, reason: str, line: int | None) -> None:
    with pytest.raises(PatchParseError) as info:
        parse_patch(text)
    err = info.value
    assert (err.reason, err.line_number) == (reason, line)
    assert err.code == "PATCH_PARSE_ERROR"
    if line is None:
        assert err.cli_message == f"Invalid patch: {reason}"
        assert err.message == f"apply_patch verification failed: invalid patch: {reason}"
    else:
        assert err.cli_message == f"Invalid patch hunk on line {line}: {reason}"
        assert err.message == f"apply_patch verification failed: invalid hunk at line {line}, {reason}"


def test_heredoc_line_numbers_count_from_the_inner_begin() -> None:
    with pytest.raises(PatchParseError) as info:
        parse_patch("<<'EOF'\n*** Begin Patch\n*** Update File: a\n*** End Patch\nEOF")
    assert info.value.cli_message == "Invalid patch hunk on line 2: Update file hunk for path 'a' is empty"


# -- Ours: consecutive @@ lines are successive anchors ----------------------------------------------


def test_consecutive_context_markers_are_successive_anchors() -> None:
    """Codex rejects this patch: "Invalid patch hunk on line 4: Unexpected line found in update
    hunk: '@@ def method():'. ..." although its own instructions tell models to write it
    (github copilot-cli#1109; codex PR #7619 closed). Ours: one chunk with two anchors."""
    patch = parse_patch(
        wrap("*** Update File: a.py\n@@ class BaseClass\n@@     def method():\n-    pass\n+    return 1")
    )
    (hunk,) = patch.hunks
    assert isinstance(hunk, UpdateFile)
    (only,) = hunk.chunks
    assert only.contexts == ["class BaseClass", "    def method():"]
    assert only.change_context == "class BaseClass"
    assert (only.old_lines, only.new_lines) == (["    pass"], ["    return 1"])


def test_a_bare_marker_between_anchors_adds_nothing() -> None:
    hunk = parse_patch(wrap("*** Update File: a\n@@\n@@ b\n@@\n@@ c\n-x\n+y")).hunks[0]
    assert isinstance(hunk, UpdateFile)
    assert [c.contexts for c in hunk.chunks] == [["b", "c"]]


def test_anchors_without_lines_still_fail_like_codex() -> None:
    with pytest.raises(PatchParseError) as info:
        parse_patch(wrap("*** Update File: a\n@@ one\n@@ two"))
    assert info.value.cli_message == "Invalid patch hunk on line 5: Update hunk does not contain any lines"


# -- the fast path of chunk bodies (a patch without CR) and the state machine agree ------------------

MARKER_RUNS = [
    wrap("*** Update File: a\n@@ one\n 1\n-2\n+II\n@@   \n 3\n\n-4\n@@ two \t\n+5\n*** End of File"),
    wrap("*** Update File: a\n@@\n-y\n@@x\n-z"),
    wrap("*** Update File: a\n@@ a\n-y\n@@\n@@ b\n-z\n@@ c"),
    wrap("*** Update File: a\n-y\n@@ b\nunprefixed\n+z\n@@\n*** Delete File: b"),
    wrap("*** Update File: a\n@@\n-y\n*** End of File\n@@ z\n+w"),
]


@pytest.mark.parametrize(
    "text",
    [t for t in [p[1] for p in PARSES] + [e[1] for e in ERRORS] + MARKER_RUNS if "\r" not in t],
    ids=lambda text: repr(text[16:60]),
)
@pytest.mark.parametrize("lenient", [False, True])
def test_lf_patches_parse_as_the_state_machine_parses_them(text: str, lenient: bool) -> None:
    """A patch with CR goes through the state machine line by line; the same patch with LF only
    takes the fast path for chunk bodies and ``@@`` lines: the same hunks, or the same error."""

    def fields(chunk: Chunk) -> dict[str, object]:
        return {**vars(chunk), "unprefixed": [(at, error.message) for at, error in chunk.unprefixed]}

    def outcome(patch: str) -> object:
        try:
            parsed = parse_patch(patch, context_without_space=lenient)
        except PatchParseError as exc:
            return (exc.reason, exc.line_number)
        return [vars(h) if not isinstance(h, UpdateFile) else (h.path, h.move_path, [fields(c) for c in h.chunks])
                for h in parsed.hunks]  # fmt: skip

    assert outcome(text) == outcome(text.replace("\n", "\r\n"))


def test_context_index_pairs_are_shared_between_chunks_and_right_past_the_shared_range() -> None:
    # Shared tuples keep a 1,000-chunk patch's ~6,000 pairs from waking the cyclic collector;
    # a chunk longer than the shared range still gets its own, right pairs.
    long_context = "".join(f" line {i}\n" for i in range(300))
    text = wrap("*** Update File: a.py\n@@\n a\n-b\n+B\n c\n@@\n a\n-b\n+B\n c\n@@\n" + long_context + "+end\n")
    first, second, long = parse_patch(text).hunks[0].chunks  # type: ignore[union-attr]
    assert first.context_line_indices == [(0, 0), (2, 2)]
    assert all(x is y for x, y in zip(first.context_line_indices, second.context_line_indices, strict=True))
    assert long.context_line_indices[:300] == [(i, i) for i in range(300)]
    assert long.new_lines[300] == "end"
