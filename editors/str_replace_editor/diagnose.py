"""Near misses of ``str_replace`` (**Ours**): why ``old_str`` did not match, and where it almost did.

When ``old_str`` does not appear verbatim, a few forgiving comparisons are tried in order; the
first that finds the text names the line and the difference, and shows the exact text of the file
there (so the model's retry can succeed first time). Nothing is ever edited on a near miss.

1. line numbers copied from the ``view`` output (``"    12  "`` prefixes);
2. a leading or trailing line break that the file does not have there;
3. unicode punctuation vs ASCII (:data:`UNICODE_MAP`: curly quotes, unicode dashes and spaces,
   the set Codex's apply_patch normalises);
4. whitespace: indentation (tabs vs spaces), trailing spaces, spacing inside lines, line endings;
5. punctuation and whitespace together.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from backends.values import value

QUOTE_MAP = {
    "\u2018": "'",  # left single quotation mark
    "\u2019": "'",  # right single quotation mark
    "\u201a": "'",  # single low-9 quotation mark
    "\u201b": "'",  # single high-reversed-9 quotation mark
    "\u2032": "'",  # prime
    "\u201c": '"',  # left double quotation mark
    "\u201d": '"',  # right double quotation mark
    "\u201e": '"',  # double low-9 quotation mark
    "\u201f": '"',  # double high-reversed-9 quotation mark
    "\u2033": '"',  # double prime
}
#: Codex's set (apply_patch's last matching pass): dashes and minus to ``-``, unicode spaces to ``' '``.
DASH_MAP = {chr(code): "-" for code in (*range(0x2010, 0x2016), 0x2212)}
SPACE_MAP = {chr(code): " " for code in (0x00A0, *range(0x2002, 0x200B), 0x202F, 0x205F, 0x3000)}
#: Every look-alike that is compared as its ASCII twin (one character for one: offsets are kept).
UNICODE_MAP = {**QUOTE_MAP, **DASH_MAP, **SPACE_MAP}
_QUOTES = str.maketrans(UNICODE_MAP)
_LINE_NUMBER = re.compile(r"^ *\d+(?:  |\t)")
#: The file text quoted in a hint is capped; past this, the hint points at the lines instead.
MAX_QUOTED = 2000
MAX_LINES_LISTED = 10


@value(frozen=True)
class Near:
    start: int  # offsets of the matching text in the file
    end: int


def _line_at(content: str, offset: int) -> int:
    return content.count("\n", 0, offset) + 1


def _literal(content: str, needle: str) -> list[Near]:
    """Non-overlapping literal matches, also allowing a bare LF of ``needle`` to be CRLF in the file."""
    found: list[Near] = []
    start = 0
    while needle:
        index = content.find(needle, start)
        if index < 0:
            break
        found.append(Near(index, index + len(needle)))
        start = index + len(needle)
    if not found and "\n" in needle and "\r" not in needle and "\r\n" in content:
        pattern = re.compile(r"\r?\n".join(re.escape(part) for part in needle.split("\n")))
        found = [Near(m.start(), m.end()) for m in pattern.finditer(content)]
    return found


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _whitespace_pattern(old: str) -> re.Pattern[str] | None:
    """A regex matching ``old`` with whitespace ignored, without ever splitting or joining words.

    Between two characters of ``old`` that are both part of a word, whitespace stays required
    (``\\s+``) or forbidden as in ``old``; anywhere else any run of whitespace, or none, matches.
    """
    chars = [(index, char) for index, char in enumerate(old) if not char.isspace()]
    if not chars:
        return None
    parts: list[str] = [r"(?<!\w)" if _is_word(chars[0][1]) else ""]
    for position, (index, char) in enumerate(chars):
        if position:
            previous_index, previous = chars[position - 1]
            spaced = index - previous_index > 1
            if _is_word(previous) and _is_word(char):
                parts.append(r"\s+" if spaced else "")
            else:
                parts.append(r"\s*")
        parts.append(re.escape(char))
    if _is_word(chars[-1][1]):
        parts.append(r"(?!\w)")
    return re.compile("".join(parts))


def _whitespace_matches(content: str, old: str) -> list[Near]:
    """Matches of ``old`` when whitespace is ignored, widened to whole whitespace runs as in ``old``."""
    pattern = _whitespace_pattern(old)
    if pattern is None:
        return []
    return [Near(*_widen(content, old, m.start(), m.end())) for m in pattern.finditer(content)]


def _widen(content: str, old: str, begin: int, end: int) -> tuple[int, int]:
    """Take in the file's leading indentation / trailing whitespace where ``old`` has some."""
    if old[:1].isspace():
        while begin > 0 and content[begin - 1] in " \t":
            begin -= 1
        if "\n" in old[: len(old) - len(old.lstrip())]:
            while begin > 0 and content[begin - 1] in "\r\n":
                begin -= 1
                if content[begin] == "\n":
                    break
    if old[-1:].isspace():
        while end < len(content) and content[end] in " \t":
            end += 1
        if old.rstrip(" \t").endswith("\n") and end < len(content):
            if content.startswith("\r\n", end):
                end += 2
            elif content[end] == "\n":
                end += 1
    return begin, end


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _whitespace_detail(found: str, old: str) -> str:
    """What differs between the file's text and ``old_str`` when only whitespace does."""
    if ("\r\n" in found) != ("\r\n" in old):
        return (
            "the line endings differ (the file uses CRLF there)"
            if "\r\n" in found
            else "the line endings differ (old_str uses CRLF, the file uses LF there)"
        )
    file_lines = found.replace("\r\n", "\n").split("\n")
    old_lines = old.replace("\r\n", "\n").split("\n")
    if len(file_lines) != len(old_lines):
        return "the line breaks differ"
    for file_line, old_line in zip(file_lines, old_lines, strict=True):
        file_indent, old_indent = _indent(file_line), _indent(old_line)
        if file_indent != old_indent and file_line.strip() and old_line.strip():
            if "\t" in file_indent and "\t" not in old_indent:
                return "the file indents with tabs where old_str uses spaces"
            if "\t" in old_indent and "\t" not in file_indent:
                return "the file indents with spaces where old_str uses tabs"
            return "the indentation differs"
    for file_line, old_line in zip(file_lines, old_lines, strict=True):
        if file_line.rstrip() != file_line.rstrip(" \t") or old_line.rstrip() != old_line.rstrip(" \t"):
            continue
        if file_line.rstrip(" \t") == old_line.rstrip(" \t") and file_line != old_line:
            return "the trailing whitespace differs"
    return "the spacing inside a line differs"


def normalise_unicode(text: str) -> str:
    """``text`` with each look-alike of :data:`UNICODE_MAP` replaced by its ASCII twin."""
    return text.translate(_QUOTES)


def name_unicode(chars: set[str]) -> str:
    """``curly quotes (U+2019), unicode dashes (U+2014)``: the kinds present, each with its characters."""
    kinds = (("curly quotes", QUOTE_MAP), ("unicode dashes", DASH_MAP), ("non-breaking or unicode spaces", SPACE_MAP))
    named = []
    for label, table in kinds:
        found = sorted(char for char in chars if char in table)
        if found:
            named.append(f"{label} ({' '.join(f'U+{ord(char):04X}' for char in found)})")
    return ", ".join(named)


def _quote_detail(found: str, old: str) -> str:
    file_chars = {char for char in found if char in UNICODE_MAP}
    old_chars = {char for char in old if char in UNICODE_MAP}
    if file_chars and not old_chars:
        return f"the file has {name_unicode(file_chars)} where old_str has ASCII"
    if old_chars and not file_chars:
        return f"old_str has {name_unicode(old_chars)} where the file has ASCII"
    return "unicode punctuation (curly quotes, dashes or spaces) differs"


def _where(content: str, found: Sequence[Near]) -> str:
    lines = [_line_at(content, near.start) for near in found]
    if len(lines) == 1:
        return f"line {lines[0]}"
    listed = ", ".join(str(line) for line in lines[:MAX_LINES_LISTED])
    more = ", ..." if len(lines) > MAX_LINES_LISTED else ""
    return f"lines [{listed}{more}]"


def _exact(content: str, found: Sequence[Near]) -> str:
    """The file's own text at a unique near match, quoted as JSON (tabs and CRs visible)."""
    if len(found) != 1:
        return " Add surrounding lines to make old_str unique, using the file's exact text."
    near = found[0]
    text = content[near.start : near.end]
    if len(text) > MAX_QUOTED:
        first = _line_at(content, near.start)
        last = _line_at(content, near.end)
        return f" Copy the exact text from `view` with `view_range` [{first}, {last}]."
    return f" The exact text in the file is: {json.dumps(text, ensure_ascii=False)}"


def _strip_line_numbers(old: str) -> str | None:
    lines = old.split("\n")
    numbered = [line for line in lines if line.strip()]
    if not numbered or not all(_LINE_NUMBER.match(line) for line in numbered):
        return None
    return "\n".join(_LINE_NUMBER.sub("", line, count=1) for line in lines)


def _check_line_numbers(content: str, old: str) -> str | None:
    stripped = _strip_line_numbers(old)
    if stripped is None:
        return None
    found = _literal(content, stripped)
    if not found:
        return None
    return (
        f"old_str seems to include the line numbers of the `view` output; without them it matches at "
        f"{_where(content, found)}. Leave the line-number prefixes out of old_str."
    )


def _check_newlines(content: str, old: str) -> str | None:
    """``old`` starts or ends with a line break that the file lacks at its very start or end."""
    stripped = old.strip("\r\n")
    if stripped == old or not stripped:
        return None
    leading = old[: len(old) - len(old.lstrip("\r\n"))]
    trailing = old[len(old.rstrip("\r\n")) :]
    candidates = [
        near
        for near in _literal(content, stripped)
        if (not leading or near.start == 0 or content.endswith(leading, 0, near.start))
        and (not trailing or near.end == len(content) or content.startswith(trailing, near.end))
    ]
    found = [near for near in candidates if (leading and near.start == 0) or (trailing and near.end == len(content))]
    if len(found) != 1:
        return None
    near = found[0]
    if trailing and near.end == len(content):
        what = "the file does not end with a line break (no final newline)"
        fix = "Remove the trailing line break from old_str"
    else:
        what = "the file does not start with a line break"
        fix = "Remove the leading line break from old_str"
    return f"old_str would match at {_where(content, found)}, but {what}. {fix}.{_exact(content, found)}"


def _check_quotes(content: str, old: str) -> str | None:
    if not any(char in UNICODE_MAP for char in content + old):
        return None
    normalised_content = content.translate(_QUOTES)  # one char for one char: offsets are kept
    found = _literal(normalised_content, old.translate(_QUOTES))
    if not found:
        return None
    detail = _quote_detail(content[found[0].start : found[0].end], old)
    return (
        f"old_str would match at {_where(content, found)} if unicode punctuation were treated as ASCII: "
        f"{detail}.{_exact(content, found)}"
    )


def _check_whitespace(content: str, old: str, translate: Callable[[str], str] = lambda s: s) -> str | None:
    found = _whitespace_matches(translate(content), translate(old))
    if not found:
        return None
    region = content[found[0].start : found[0].end]
    detail = _whitespace_detail(region, old)
    quotes = ""
    if translate(old) != old or translate(region) != region:
        quotes = " and unicode punctuation were treated as ASCII"
        detail += "; " + _quote_detail(region, old)
    return (
        f"old_str would match at {_where(content, found)} if whitespace were ignored{quotes}: "
        f"{detail}.{_exact(content, found)}"
    )


def diagnose(content: str, old: str) -> str | None:
    """A sentence naming the near miss of ``old`` in ``content`` and its line, or ``None``."""
    for check in (_check_line_numbers, _check_newlines, _check_quotes, _check_whitespace):
        hint = check(content, old)
        if hint:
            return hint
    if any(char in UNICODE_MAP for char in content + old):
        return _check_whitespace(content, old, lambda s: s.translate(_QUOTES))
    return None
