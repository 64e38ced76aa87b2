"""One indentation map per chunk, for chunks found only on a whitespace-tolerant pass (**Ours**).

Codex's rstrip / trim passes find lines whose indentation differs from the file's and then write
the ``+`` lines as sent: spaces into a tab-indented file, a dedented block at column 0. That is a
wrong edit the model believes succeeded. Instead, the matched (patch line, file line) pairs must
be explained by a single map of the leading whitespace, and the ``+`` lines are re-indented with
it; when no single map explains every pair, the chunk is refused (nothing is written verbatim).

Two maps are tried, in order:

* a prefix swap: the patch's indentation ``P + r`` is the file's ``Q + r`` on every line (this
  covers the identity, a block dedented to column 0, dedented by 4 or indented by 4);
* tabs: the patch indents with spaces where the file has tabs, ``w`` spaces to a tab (the width
  inferred from the pairs, the same on every line).
"""

from __future__ import annotations

from collections.abc import Sequence

from backends.values import value

_BLANKS = " \t"


def leading(line: str) -> str:
    """The leading spaces and tabs of a line."""
    return line[: len(line) - len(line.lstrip(_BLANKS))]


@value(frozen=True)
class IndentMap:
    """``P -> Q`` (prefix swap) when ``tab_width`` is 0, else ``tab_width`` spaces -> one tab."""

    old_prefix: str = ""
    new_prefix: str = ""
    tab_width: int = 0

    @property
    def identity(self) -> bool:
        return not self.tab_width and self.old_prefix == self.new_prefix

    def reindent(self, line: str) -> str | None:
        """``line`` with its leading whitespace mapped; ``None`` when the map does not cover it."""
        if not line.strip(_BLANKS):
            return line  # a blank line carries no indentation to map
        lead = leading(line)
        if self.tab_width:
            if lead.strip(" "):
                return line if lead == lead.lstrip(" ") else None  # already tabs: the file's style
            tabs, spaces = divmod(len(lead), self.tab_width)
            return "\t" * tabs + " " * spaces + line[len(lead) :]
        if not lead.startswith(self.old_prefix):
            return None  # less indented than every matched line: where it goes is a guess
        return self.new_prefix + line[len(self.old_prefix) :]


def _common_prefix(leads: Sequence[str]) -> str:
    first, last = min(leads), max(leads)
    size = 0
    while size < len(first) and first[size] == last[size]:
        size += 1
    return first[:size]


def _prefix_map(pairs: Sequence[tuple[str, str]]) -> IndentMap | None:
    model = _common_prefix([m for m, _ in pairs])
    file = _common_prefix([f for _, f in pairs])
    # The shared part of the two common prefixes is not part of the swap.
    shared = len(_common_prefix([model, file]))
    swap = IndentMap(model[shared:], file[shared:])
    if all(swap.reindent(m + "x") == f + "x" for m, f in pairs):
        return swap
    return None


def _tab_map(pairs: Sequence[tuple[str, str]]) -> IndentMap | None:
    width = 0
    for model, file in pairs:
        tabs = len(file) - len(file.lstrip("\t"))
        if model.strip(" ") or file[tabs:].strip(" "):
            return None  # the model's indentation has a tab, or the file's a tab after a space
        if tabs:
            pair_width, rest = divmod(len(model) - (len(file) - tabs), tabs)
            if rest or pair_width < 1 or (width and pair_width != width):
                return None
            width = pair_width
    if not width:
        return None
    tab_map = IndentMap(tab_width=width)
    if all(tab_map.reindent(m + "x") == f + "x" for m, f in pairs):
        return tab_map
    return None


def derive_map(pairs: Sequence[tuple[str, str]]) -> IndentMap | None:
    """The one map explaining every non-blank (patch line, file line) pair, or ``None``."""
    leads = [(leading(m), leading(f)) for m, f in pairs if m.strip(_BLANKS) and f.strip(_BLANKS)]
    if not leads or all(m == f for m, f in leads):
        return IndentMap()
    if any("\t" in f for _, f in leads) and not any("\t" in m for m, _ in leads):
        # Spaces for the file's tabs: a prefix swap would fit one level and misplace the next.
        return _tab_map(leads) or _prefix_map(leads)
    return _prefix_map(leads) or _tab_map(leads)


def first_mismatch(pairs: Sequence[tuple[str, str]]) -> int | None:
    """The index of the first pair whose indentation differs (for the refusal's message)."""
    for index, (model, file) in enumerate(pairs):
        if model.strip(_BLANKS) and leading(model) != leading(file):
            return index
    return None
