"""The text of ``view`` on a file: ``cat -n``-style rows, ``view_range`` checks, and clipping.

Lines are the elements of ``content.split("\\n")``: a file ending in a newline shows a last, empty
line and an empty file has 1 line. ``view_range`` and ``insert_line`` use the same numbering.

**Ours**: a CR right before an LF is not shown (the file keeps it), and long output is clipped at a
row boundary, never mid-line, with a note naming the lines shown and the ``view_range`` that
continues. The one exception: a single line longer than the whole budget is cut, and the note
says so. The header is never cut: when it leaves no room, no line is shown and the note says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from vfs.errors import InvalidArgument

TRUNCATED_MESSAGE = (
    "<response clipped><NOTE>To save on context only part of this file has been shown to you. You should "
    "retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers "
    "of what you are looking for.</NOTE>"
)

NUMBER_WIDTH = 6


class ViewRangeError(InvalidArgument):
    """A ``view_range`` that does not fit the file (exact texts of the reference tool)."""


def split_lines(text: str) -> list[str]:
    """The lines as the tool numbers them: ``text.split("\\n")`` (CRs kept)."""
    return text.split("\n")


def shown_line(lines: Sequence[str], index: int) -> str:
    """Line ``index`` (0-based) as displayed: without the CR of a CRLF ending."""
    line = lines[index]
    if index < len(lines) - 1 and line.endswith("\r"):
        return line[:-1]
    return line


def row(number: int, text: str) -> str:
    """One ``cat -n`` row: the number right-aligned in 6 columns, two spaces, the line, ``\\n``."""
    return f"{number:>{NUMBER_WIDTH}}  {text}\n"


def check_view_range(view_range: Sequence[int], n_lines: int) -> tuple[int, int]:
    """Validate ``[a, b]`` (1-based, inclusive, ``b = -1`` for the end) -> ``(first, last)`` 1-based."""
    if len(view_range) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) for x in view_range):
        raise ViewRangeError("Invalid `view_range`. It should be a list of two integers.")
    first, final = view_range
    shown = f"[{first}, {final}]"
    if first < 1 or first > n_lines:
        raise ViewRangeError(
            f"Invalid `view_range`: {shown}. Its first element `{first}` should be within the range of lines "
            f"of the file: [1, {n_lines}]"
        )
    if final > n_lines:
        raise ViewRangeError(
            f"Invalid `view_range`: {shown}. Its second element `{final}` should be smaller than the number "
            f"of lines in the file: `{n_lines}`"
        )
    if final != -1 and final < first:
        raise ViewRangeError(
            f"Invalid `view_range`: {shown}. Its second element `{final}` should be larger or equal than its "
            f"first `{first}`"
        )
    return first, (n_lines if final == -1 else final)


def file_header(path: str, n_lines: int, view_range: Sequence[int] | None = None) -> str:
    header = f"Here's the content of {path} with line numbers (which has a total of {n_lines} lines)"
    if view_range is not None:
        header += f" with view_range=[{view_range[0]}, {view_range[1]}]"
    return header + ":\n"


def render_file_view(
    path: str, text: str, view_range: Sequence[int] | None = None, *, max_output_chars: int = 16000
) -> str:
    """The whole ``view`` output for a file's decoded text (BOM already removed)."""
    lines = split_lines(text)
    n_lines = len(lines)
    first, last = (1, n_lines) if view_range is None else check_view_range(view_range, n_lines)
    header = file_header(path, n_lines, view_range)
    rows = [row(number, shown_line(lines, number - 1)) for number in range(first, last + 1)]
    total = len(header) + sum(len(r) for r in rows)
    if total <= max_output_chars:
        return header + "".join(rows)
    return _clip_file_view(path, lines, header, rows, first, last, view_range, max_output_chars)


def _clip_file_view(
    path: str,
    lines: Sequence[str],
    header: str,
    rows: Sequence[str],
    first: int,
    last: int,
    view_range: Sequence[int] | None,
    max_output_chars: int,
) -> str:
    n_lines = len(lines)
    used = len(header)
    kept = 0
    for r in rows:
        if used + len(r) > max_output_chars:
            break
        used += len(r)
        kept += 1
    parts = [header, *rows[:kept]]
    cut_note = ""
    if kept == 0:
        # A single line longer than the whole budget: the only case cut mid-line.
        number = first
        text = shown_line(lines, number - 1)
        prefix = f"{number:>{NUMBER_WIDTH}}  "
        room = max_output_chars - used - len(prefix) - 1
        if room <= 0:
            return header + TRUNCATED_MESSAGE + _no_room_note(max_output_chars, first, n_lines)
        parts.append(prefix + text[:room] + "\n")
        kept = 1
        cut_note = (
            f" Line {number} alone is longer than the output limit ({max_output_chars} characters); only its "
            f"first {room} of {len(text)} characters were shown."
        )
    shown_last = first + kept - 1
    note = f"\n<NOTE>Shown: lines {first}-{shown_last} of {n_lines}.{cut_note}"
    if shown_last < last:
        end_requested = -1 if view_range is None or view_range[1] == -1 else last
        cont_end = _continuation_end(path, lines, shown_last + 1, last, end_requested, max_output_chars)
        note += f" To continue, call `view` with `view_range`: [{shown_last + 1}, {cont_end}].</NOTE>\n"
    else:
        note += "</NOTE>\n"
    return "".join(parts) + TRUNCATED_MESSAGE + note


def _no_room_note(max_output_chars: int, first: int, n_lines: int) -> str:
    """The header is never cut (it carries the path and the line count), even when it alone fills
    the budget; then no line is shown and the note says why."""
    return (
        f"\n<NOTE>Shown: no lines of {n_lines} (from line {first}): the output limit ({max_output_chars} "
        "characters) leaves no room after this header.</NOTE>\n"
    )


def _continuation_end(
    path: str, lines: Sequence[str], start: int, last: int, end_requested: int, max_output_chars: int
) -> int:
    """The largest end whose ``view`` from ``start`` fits unclipped (at least ``start``)."""
    n_lines = len(lines)
    # An upper bound of the next header: the widest second element it may carry.
    widest = max(len(str(n_lines)), len(str(end_requested)))
    used = len(file_header(path, n_lines, (start, 0))) - 1 + widest
    end = start - 1
    for number in range(start, last + 1):
        size = len(row(number, shown_line(lines, number - 1)))
        if used + size > max_output_chars:
            break
        used += size
        end = number
    if end >= last:
        return end_requested
    return max(end, start)
