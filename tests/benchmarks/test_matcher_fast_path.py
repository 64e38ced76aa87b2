"""The apply_patch fast path (``matcher.apply_exact``, added for the benchmarks' large-file
workloads) must give exactly what the general line model gives, whenever it gives anything."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from editors.apply_patch.errors import ApplyPatchError
from editors.apply_patch.matcher import SourceText, apply_chunks, apply_exact, apply_exact_bytes, compute_replacements
from editors.apply_patch.parser import parse_patch

VOCAB = ["", "a", "b", "  a", "a  ", "x = 1", "\tb", "def f():", "return x", "}", "\u2014q", "'q'"]


def general(text: str, chunks: list) -> str | ApplyPatchError:
    try:
        source = SourceText.parse(text)
        return source.replaced(compute_replacements(source.texts, chunks, "f")).render()
    except ApplyPatchError as exc:
        return exc


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, str]:
    lines = draw(st.lists(st.sampled_from(VOCAB), max_size=14))
    eol = draw(st.sampled_from(["\n"] * 6 + ["\r\n", "mixed"]))
    if eol == "mixed":
        text = "".join(line + draw(st.sampled_from(["\n", "\r\n", "\r"])) for line in lines)
    else:
        text = "".join(line + eol for line in lines)
    if text and draw(st.integers(0, 19)) == 0:
        text = text[:-1]
    if draw(st.integers(0, 9)) == 0:
        text = "\ufeff" + text
    out = ["*** Begin Patch", "*** Update File: f"]
    for _ in range(draw(st.integers(1, 4))):
        anchor = draw(st.sampled_from(["@@", "@@", "@@ " + draw(st.sampled_from(lines + VOCAB))]))
        out.append(anchor)
        if draw(st.integers(0, 6)) == 0:
            out.append("@@ " + draw(st.sampled_from(lines + VOCAB)))
        if lines and draw(st.booleans()):
            start = draw(st.integers(0, len(lines) - 1))
            segment = lines[start : start + draw(st.integers(0, 4))]
        else:
            segment = draw(st.lists(st.sampled_from(VOCAB), max_size=4))
        body = []
        for line in segment:
            kind = draw(st.sampled_from([" ", " ", "-", "-+"]))
            body.append(kind[0] + line)
            if kind == "-+":
                body.append("+" + draw(st.sampled_from(VOCAB)))
        if not body or draw(st.integers(0, 2)) == 0:
            body.append("+" + draw(st.sampled_from(VOCAB)))
        out.extend(body)
        if draw(st.integers(0, 9)) == 0:
            out.append("*** End of File")
    out.append("*** End Patch")
    return text, "\n".join(out)


@pytest.mark.slow  # 800 generated cases
@settings(max_examples=800, deadline=None)
@given(cases())
def test_fast_path_agrees_with_the_line_model(case: tuple[str, str]) -> None:
    text, patch_text = case
    try:
        chunks = parse_patch(patch_text).hunks[0].chunks  # type: ignore[union-attr]
    except ApplyPatchError:
        return
    fast = apply_exact(text, chunks)
    if fast is not None:
        assert fast == general(text, chunks)


@pytest.mark.slow  # 800 generated cases
@settings(max_examples=800, deadline=None)
@given(cases())
def test_fast_path_edits_land_where_the_line_models_do(case: tuple[str, str]) -> None:
    """The diff card's line numbers: the fast path edits whole chunks and counts the runs of
    changed lines only when asked; they must be the line model's replacements."""
    text, patch_text = case
    try:
        chunks = parse_patch(patch_text).hunks[0].chunks  # type: ignore[union-attr]
        data = text.encode("utf-8")
    except (ApplyPatchError, UnicodeEncodeError):
        return
    fast: list[tuple[int, int, int, int]] = []
    if apply_exact_bytes(data, chunks, hunks=fast) is not None:
        expected: list[tuple[int, int, int, int]] = []
        apply_chunks(text, chunks, "f", hunks=expected)
        assert fast == expected


def test_fast_path_declines_what_it_cannot_do_exactly() -> None:
    chunks = parse_patch("*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n*** End Patch").hunks[0].chunks  # type: ignore[union-attr]
    assert apply_exact("a\n", chunks) == "b\n"
    assert apply_exact("x\na\n", chunks) == "x\nb\n"
    assert apply_exact("\ufeffa\n", chunks) == "\ufeffb\n"
    assert apply_exact("a\r\n", chunks) is None  # CRLF: the line model keeps the endings
    assert apply_exact("a", chunks) is None  # no final line break
    assert apply_exact("a \n", chunks) is None  # only a lenient pass would match
    assert apply_exact("", chunks) is None


def _chunks(body: str) -> list:
    return parse_patch(f"*** Begin Patch\n*** Update File: f\n{body}\n*** End Patch").hunks[0].chunks  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "body"),
    [
        # lines added at the end, then a chunk ending at the end whose `+` line follows its context
        ("\ufeff\n", "@@\n+a\n*** End of File\n@@\n+a\n*** End of File\n@@\n \n+"),
        ("x\ny\n", "@@\n+a\n@@\n y\n+b"),
        # an insertion whose lines are already where it would put them (a repeat)
        ("x\nnew\ny\n", "@@\n x\n+new\n y"),
        ("x\nnew\ny\n", "@@\n+new\n y"),
        ("x\ny\nnew\n", "@@ y\n+new"),
    ],
)
def test_fast_path_leaves_to_the_line_model_what_it_would_order_or_read_otherwise(text: str, body: str) -> None:
    assert apply_exact(text, _chunks(body)) is None


def test_fast_path_takes_an_insertion_whose_lines_are_elsewhere_in_the_file() -> None:
    """Only the place where the lines would go is looked at, not the whole file."""
    text = "new\nx\ny\nnew\n"
    for body in ["@@\n x\n+new\n y", "@@ x\n+new", "@@\n+new\n y"]:
        fast = apply_exact(text, _chunks(body))
        assert fast is not None and fast == general(text, _chunks(body))
