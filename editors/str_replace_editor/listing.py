"""The text of ``view`` on a directory: children and grandchildren, hidden entries left out.

Rows are ``d\\t<abs path>`` (directory), ``f\\t<abs path>`` (regular file) or ``?\\t<abs path>``
(anything else), each ending ``\\n``: the root row first, then every other row sorted by the
path's UTF-16 code units (as the DSH editor sorts). Skipped (and not descended into): names starting
with ``.``, and names exactly ``node_modules`` or ``__pycache__`` (``node_modules_old`` and
``__pycache__backup`` are listed). A symlink is shown as what it leads to (``f``, ``d``; ``?`` when
dangling or leading out of the workspace), a link to a directory is descended into, and every row
keeps the path it was reached by (children of a link are shown under the link), as the DSH editor
does.

**Ours**: clipping keeps whole rows and says how many entries were shown.

Cost: one ``list_dir`` of the root and one of each shown level-1 folder (``Workspace.list``: one
level each, a ``scandir`` on disk, a delimiter LIST on S3, a prefix-index lookup in memory); no
folder below is ever listed, so a view costs what it shows, whatever the tree holds further down
(``benchmarks/workloads/dir_view.py``). Like the DSH editor, no folder's entries are capped: every
shown row is collected and sorted before the output is clipped.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from typing import Protocol

from editors.str_replace_editor.render import TRUNCATED_MESSAGE

SKIPPED_NAMES = frozenset({"node_modules", "__pycache__"})
DEPTH = 2


class Entry(Protocol):
    """What a directory listing yields per child (``vfs.Stat`` satisfies it)."""

    @property
    def path(self) -> str: ...

    @property
    def kind(self) -> str: ...


def is_skipped(name: str) -> bool:
    return name.startswith(".") or name in SKIPPED_NAMES


def kind_marker(kind: str) -> str:
    return {"directory": "d", "file": "f"}.get(kind, "?")


def header(path: str) -> str:
    return (
        f"Here're the files and directories up to {DEPTH} levels deep in {path}, excluding hidden items, "
        "node_modules, and Python cache directories:\n"
    )


def collect(
    root: str, list_dir: Callable[[str], Iterable[Entry]], link_kind: Callable[[str], str] = lambda _: "other"
) -> list[tuple[str, str]]:
    """``(marker, path)`` for the root, its children and grandchildren, in display order.

    ``list_dir(path)`` lists the direct children of a directory; ``link_kind(path)`` tells what a
    symlink leads to. An error listing the root propagates; a subdirectory that cannot be listed is
    shown without its children.
    """
    rows: list[tuple[str, str]] = []

    def visit(directory: str, depth: int) -> None:
        for entry in list_dir(directory):
            name = posixpath.basename(entry.path.rstrip("/"))
            if is_skipped(name):
                continue
            shown = posixpath.join(directory, name)  # the path it was reached by, through links too
            kind = link_kind(shown) if entry.kind == "symlink" else entry.kind
            rows.append((kind_marker(kind), shown))
            if kind == "directory" and depth < DEPTH:
                try:
                    visit(shown, depth + 1)
                except OSError:
                    continue

    visit(root, 1)
    rows.sort(key=lambda item: sort_key(item[1]))
    return [("d", root), *rows]


def sort_key(path: str) -> bytes:
    """UTF-16 code-unit order (JavaScript's string order), as the DSH editor sorts its rows."""
    return path.encode("utf-16-be", "surrogatepass")


def render_listing(path: str, rows: Iterable[tuple[str, str]], *, max_output_chars: int = 16000) -> str:
    """Header, rows, and a final ``\\n`` (as the reference tool prints it); clipped at a row boundary."""
    texts = [f"{marker}\t{entry_path}\n" for marker, entry_path in rows]
    total = sum(len(text) for text in texts)
    if total <= max_output_chars:
        return header(path) + "".join(texts) + "\n"
    used = 0
    kept = 0
    for text in texts:
        if used + len(text) > max_output_chars:
            break
        used += len(text)
        kept += 1
    note = f"\n<NOTE>Shown: {kept} of {len(texts)} entries. View a subdirectory to see the entries under it.</NOTE>\n"
    return header(path) + "".join(texts[:kept]) + TRUNCATED_MESSAGE + note
