"""Property: for a random file (LF, CRLF, CR or mixed endings, maybe a BOM, maybe no final newline)
and random edits, the patch a model would write applies and yields exactly the edited file."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from editors.apply_patch.applier import plan_patch
from editors.apply_patch.parser import parse_patch

ENDINGS = ("\n", "\r\n", "\r")
# Anything but line breaks: tabs, typographic punctuation, odd spaces, trailing spaces...
LINE_TEXT = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\r\n"),
    max_size=12,
)


@dataclass
class Edit:
    start: int  # first original line replaced
    removed: int  # how many original lines are replaced
    added: list[str]


@st.composite
def files_and_edits(draw: st.DrawFn) -> tuple[list[str], list[str], bool, list[Edit]]:
    count = draw(st.integers(min_value=1, max_value=40))
    # Every line is unique (its number leads), so the patch can only match where it was made.
    texts = [f"L{i}:{draw(LINE_TEXT)}" for i in range(count)]
    style = draw(st.sampled_from(["lf", "crlf", "cr", "mixed"]))
    if style == "mixed":
        endings = [draw(st.sampled_from(ENDINGS)) for _ in range(count)]
    else:
        endings = [{"lf": "\n", "crlf": "\r\n", "cr": "\r"}[style]] * count
    if draw(st.booleans()):
        endings[-1] = ""  # no final line break
    bom = draw(st.booleans())
    edits: list[Edit] = []
    position = 0
    while position < count and len(edits) < 6:
        start = position + draw(st.integers(min_value=0, max_value=5))
        if start > count:
            break
        removed = draw(st.integers(min_value=0, max_value=min(3, count - start)))
        added = [f"N{len(edits)}.{k}:{draw(LINE_TEXT)}" for k in range(draw(st.integers(0, 3)))]
        if removed == 0 and not added:
            added = [f"N{len(edits)}.only"]
        edits.append(Edit(start, removed, added))
        position = start + removed + 2  # leave room for one line of context after, one before
    if not edits:
        edits.append(Edit(count, 0, ["appended"]))
    return texts, endings, bom, edits


def render(texts: list[str], endings: list[str], bom: bool) -> bytes:
    body = "".join(t + e for t, e in zip(texts, endings, strict=True))
    return (("\ufeff" if bom else "") + body).encode("utf-8")


def expected_result(texts: list[str], endings: list[str], bom: bool, edits: list[Edit]) -> bytes:
    """The line model, independently: untouched lines keep their bytes, new lines take the
    first-seen ending, and every line ends with a break."""
    preferred = next((e for e in endings if e), "\n")
    out: list[tuple[str, str]] = []
    cursor = 0
    for edit in edits:
        out.extend(zip(texts[cursor : edit.start], endings[cursor : edit.start], strict=True))
        out.extend((text, preferred) for text in edit.added)
        cursor = edit.start + edit.removed
    out.extend(zip(texts[cursor:], endings[cursor:], strict=True))
    body = "".join(text + (ending or preferred) for text, ending in out)
    return (("\ufeff" if bom else "") + body).encode("utf-8")


def write_patch(texts: list[str], edits: list[Edit]) -> str:
    lines = ["*** Begin Patch", "*** Update File: src/file.txt"]
    for edit in edits:
        lines.append("@@")
        before = [edit.start - 1] if edit.start > 0 else []
        after_index = edit.start + edit.removed
        after = [after_index] if after_index < len(texts) else []
        if not before and not after and edit.removed == 0:
            raise AssertionError("unreachable: count >= 1 gives every edit some context")
        lines.extend(f" {texts[i]}" for i in before)
        lines.extend(f"-{texts[i]}" for i in range(edit.start, edit.start + edit.removed))
        lines.extend(f"+{text}" for text in edit.added)
        lines.extend(f" {texts[i]}" for i in after)
        if not after:
            lines.append("*** End of File")
    lines.append("*** End Patch")
    return "\n".join(lines) + "\n"


@pytest.mark.slow  # 300 generated cases
@settings(max_examples=300, deadline=None)
@given(files_and_edits())
def test_generated_patch_applies_exactly(case: tuple[list[str], list[str], bool, list[Edit]]) -> None:
    texts, endings, bom, edits = case
    original = render(texts, endings, bom)
    patch = parse_patch(write_patch(texts, edits))

    def read(path: str) -> bytes | None:
        return original if path == "src/file.txt" else None

    plan = plan_patch(patch, read)
    (change,) = plan.changes
    assert change.before == original
    assert change.after == expected_result(texts, endings, bom, edits)
    assert plan.summary == "Success. Updated the following files:\nM src/file.txt\n"


@settings(max_examples=100, deadline=None)
@given(st.lists(LINE_TEXT, min_size=0, max_size=8))
def test_add_file_writes_lines_with_lf(lines: list[str]) -> None:
    patch = parse_patch(
        "*** Begin Patch\n*** Add File: new.txt\n" + "".join(f"+{t}\n" for t in lines) + "*** End Patch"
    )
    plan = plan_patch(patch, lambda path: None)
    # no lines: an empty file (Codex's parser accepts it, though the grammar asks for one line)
    assert plan.changes[0].after == "".join(t + "\n" for t in lines).encode("utf-8")
    assert plan.summary == "Success. Updated the following files:\nA new.txt\n"
