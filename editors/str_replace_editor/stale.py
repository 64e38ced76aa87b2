"""What changed in a file since the model's view (**Ours**, issue 14 item 3), and whether an edit
written against that view still means the same thing on the current text (the ``rebase`` option).

A refusal for a stale view shows a unified diff from the viewed version to the current one, so
the next call can be corrected without viewing the file again. The diff is bounded: past
``max_chars`` only the whole hunks nearest the edit are shown, and it is marked incomplete.
"""

from __future__ import annotations

import difflib

from backends.values import value
from editors.str_replace_editor.edits import Replaced


@value(frozen=True)
class Change:
    text: str  # the unified diff, possibly cut
    complete: bool  # every hunk is shown


def _lines(text: str) -> list[str]:
    return [line.removesuffix("\r") for line in text.split("\n")]


def describe(path: str, viewed: str, current: str, max_chars: int, focus: int | None = None) -> Change:
    """The unified diff (3 lines of context) from ``viewed`` to ``current``, within ``max_chars``.

    Past the bound, the hunks nearest ``focus`` (a line of the viewed text: where the edit is)
    are kept, shown in file order.
    """
    diff = list(difflib.unified_diff(_lines(viewed), _lines(current), f"{path} (your view)", f"{path} (now)",
                                     n=3, lineterm=""))  # fmt: skip
    hunks: list[list[str]] = []
    for line in diff[2:]:
        if line.startswith("@@"):
            hunks.append([])
        hunks[-1].append(line)
    order = sorted(range(len(hunks)), key=lambda i: _distance(hunks[i][0], focus))
    size = sum(len(line) + 1 for line in diff[:2])
    kept: set[int] = set()
    for index in order:
        hunk_size = sum(len(line) + 1 for line in hunks[index])
        if size + hunk_size > max_chars:
            break
        kept.add(index)
        size += hunk_size
    shown = diff[:2] + [line for index in sorted(kept) for line in hunks[index]]
    return Change("\n".join(shown), len(kept) == len(hunks))


def _distance(header: str, focus: int | None) -> int:
    """Lines from ``focus`` to the viewed-side span of a hunk (``@@ -a,b +c,d @@``); 0 inside."""
    if focus is None:
        return 0  # no focus: file order (the sort is stable)
    start, _, length = header.split()[1][1:].partition(",")
    first = int(start)
    last = first + max(int(length or "1") - 1, 0)
    return max(first - focus, focus - last, 0)


def same_place(viewed: str, current: str, before: Replaced, after: Replaced) -> bool:
    """Whether the edit matched the same, unchanged lines in the viewed and the current text, and
    makes the same new lines there: then the changes since the view are elsewhere (rebase is safe)."""
    old_viewed, old_current = viewed.split("\n"), current.split("\n")
    a, b = before.line - 1, before.old_last_line
    c = after.line - 1
    matcher = difflib.SequenceMatcher(None, old_viewed, old_current, autojunk=False)
    inside = any(
        tag == "equal" and i1 <= a and b <= i2 and c - j1 == a - i1 for tag, i1, i2, j1, _ in matcher.get_opcodes()
    )
    new_before = before.text.split("\n")[a : before.new_last_line]
    new_after = after.text.split("\n")[c : after.new_last_line]
    return inside and new_before == new_after


def changed_lines(viewed: str, current: str) -> str:
    """``line 3`` or ``lines 3-4, 40``: where the current text differs from the viewed one (for the reply)."""
    matcher = difflib.SequenceMatcher(None, viewed.split("\n"), current.split("\n"), autojunk=False)
    spans = []
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        spans.append(f"{j1 + 1}-{j2}" if j2 - j1 > 1 else f"{j1 + 1}" if j2 > j1 else f"{j1 + 1} (removed)")
    single = len(spans) == 1 and "-" not in spans[0]
    return ("line " if single else "lines ") + ", ".join(spans)
