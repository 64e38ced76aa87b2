"""Differential test against the real DSH ``str_replace_editor`` (npm, under node).

The same call sequences run on the peer (one node process for every case, over
``@deepseek-ai/dsh-fs-local`` on a real directory) and on ours (in process, one-shot mode, over a
local workspace on an identical directory at the same path). The model-visible text, the error
flag, the peer's error code where it gives one, and the file tree afterwards are compared. Every
difference must match a named entry of ``ALLOWED``, each of which points to an entry of
``docs/differences.md``; any other difference fails the test.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import vfs
from editors.str_replace_editor.tool import StrReplaceEditor
from tests.support import dsh
from tests.support.dsh.cases import Case, hand_cases, random_cases

DOCS = Path(__file__).resolve().parents[2] / "docs" / "differences.md"
RANDOM_CASES = 320
SEED = 20261203


@dataclass
class Difference:
    case: Case
    index: int  # the call's index in the case; -1 for the tree afterwards
    args: dict[str, Any]
    peer: dsh.Reply | None
    ours: dsh.Reply | None
    root: str = ""
    trees: tuple[dict[str, Any], dict[str, Any]] | None = None  # (peer's, ours) for a tree difference

    def __str__(self) -> str:
        if self.index < 0 and self.trees is not None:
            peer, ours = self.trees
            changed = {k: (peer.get(k), ours.get(k)) for k in set(peer) | set(ours) if peer.get(k) != ours.get(k)}
            return f"{self.case.name}: the trees differ afterwards (peer, ours): {changed}"
        return f"{self.case.name} call {self.index} {self.args!r}:\n  peer: {self.peer}\n  ours: {self.ours}"


@dataclass(frozen=True)
class Allowed:
    """A known, documented difference: ``doc`` is the bold title of its docs/differences.md entry."""

    name: str
    doc: str
    matches: Callable[[Difference], bool]


KNOWN = {"command", "path", "file_text", "old_str", "new_str", "insert_line", "view_range"}
CLIPPED = "<response clipped>"
MUTATING = {"create", "str_replace", "insert"}


def _err(reply: dsh.Reply | None, start: str = "") -> bool:
    return reply is not None and reply.error and reply.text.startswith("Error: " + start)


def _null_refused(d: Difference) -> bool:
    nulls = [key for key, value in d.args.items() if value is None]
    return any(_err(d.peer, "invalid arguments:") and f'"{key}" must be' in d.peer.text for key in nulls)


def _unknown(d: Difference) -> bool:
    return bool(set(d.args) - KNOWN) and _err(d.ours, "Unknown parameter")


def _typed(d: Difference) -> bool:
    return _err(d.peer, "invalid arguments:") and _err(d.ours) and d.ours.code == "FS_INVALID_ARGUMENT"


def _relative(d: Difference) -> bool:
    prefix = "The path {} is not an absolute path".format(d.args.get("path"))
    return _err(d.peer, prefix) and _err(d.ours, prefix)


def _head(reply: dsh.Reply) -> str:
    return reply.text.split(CLIPPED, 1)[0].replace("\r\n", "\n").rstrip("\n")


def _clipped(d: Difference) -> bool:
    """Both clipped, and what both show agrees: one shown part is the start of the other."""
    if d.peer is None or d.ours is None or CLIPPED not in d.peer.text or CLIPPED not in d.ours.text:
        return False
    peer, ours = _head(d.peer), _head(d.ours)
    return peer.startswith(ours) or ours.startswith(peer)


def _header_whole(d: Difference) -> bool:
    return _clipped(d) and d.ours is not None and "<NOTE>Shown: no lines of" in d.ours.text


def _identical(d: Difference) -> bool:
    return "old_str" in d.args and d.args.get("old_str") == d.args.get("new_str") and _err(d.ours, "No replacement")


def _crlf_view(d: Difference) -> bool:
    return d.peer is not None and d.ours is not None and d.peer.text.replace("\r\n", "\n") == d.ours.text


def _crlf_only(d: Difference) -> bool:
    """The trees differ only in line endings: ours writes CRLF into a CRLF file."""
    if d.trees is None:
        return False
    peer, ours = d.trees
    for key in set(peer) | set(ours):
        a, b = peer.get(key), ours.get(key)
        if a != b and not (
            isinstance(a, bytes) and isinstance(b, bytes) and a.replace(b"\r\n", b"\n") == b.replace(b"\r\n", b"\n")
        ):
            return False
    return True


def _file(d: Difference) -> bytes:
    path = str(d.args.get("path", ""))
    data = d.case.tree.get(path[len(d.root) + 1 :]) if path.startswith(d.root + "/") else None
    return data if isinstance(data, bytes) else b""


def _crlf_match(d: Difference) -> bool:
    """Ours matches an LF ``old_str`` in a CRLF file; the peer finds nothing."""
    lf = "\n" in str(d.args.get("old_str", "")) and b"\r\n" in _file(d)
    return lf and _err(d.peer, "No replacement was performed") and d.ours is not None and not d.ours.error


def _diagnosed(d: Difference) -> bool:
    """Same refusal, and ours goes on to say what nearly matched."""
    if d.peer is None or d.ours is None or d.peer.code != "FS_EDIT_NOT_FOUND":
        return False
    return d.ours.code == d.peer.code and d.ours.text.startswith(d.peer.text + " ")


def _bom_kept(d: Difference) -> bool:
    if d.trees is None:
        return False
    peer, ours = d.trees
    changed = [key for key in set(peer) | set(ours) if peer.get(key) != ours.get(key)]
    return all(isinstance(peer.get(k), bytes) and ours.get(k) == b"\xef\xbb\xbf" + peer[k] for k in changed)


def _not_text(d: Difference) -> bool:
    return (
        _err(d.peer)
        and _err(d.ours)
        and d.peer is not None
        and d.ours is not None
        and d.peer.code == d.ours.code == "FS_NOT_TEXT"
    )


def _parent_file(d: Difference) -> bool:
    return (
        _err(d.peer, "cannot resolve")
        and "a parent path segment is not a directory" in d.peer.text
        and (d.ours is not None and d.ours.code == "FS_NOT_DIRECTORY")
    )


def _leaving(d: Difference) -> bool:
    """Links leading out of the root: ours shows them as `?` and never follows them."""
    leaving = [
        d.root + "/" + k
        for k, v in d.case.tree.items()
        if isinstance(v, dsh.Link) and v.target.startswith("..") and "/" not in k
    ]
    if not leaving or d.peer is None or d.ours is None:
        return False
    if d.ours.code == "FS_SANDBOX_DENIED":
        path = str(d.args.get("path", ""))
        return any(path == link or path.startswith(link + "/") for link in leaving)

    def rows(text: str) -> list[str]:
        return [
            row
            for row in text.split("\n")
            if not any(row.endswith("\t" + link) or ("\t" + link + "/") in row for link in leaving)
        ]

    return rows(d.peer.text) == rows(d.ours.text)


def _dangling_create(d: Difference) -> bool:
    """``create`` at a symlink inside the root whose target is missing: ours creates the target."""
    path = str(d.args.get("path", ""))
    link = d.case.tree.get(path[len(d.root) + 1 :]) if path.startswith(d.root + "/") else None
    if d.args.get("command") != "create" or not isinstance(link, dsh.Link) or link.target.startswith(("/", "..")):
        return False
    return link.target not in d.case.tree and _err(d.peer, f'cannot write "{path}": not a regular file')


def _tolerated(note: str) -> Callable[[Difference], bool]:
    """The peer finds no verbatim match; ours applies the edit by a tolerant rule and says which."""

    def matches(d: Difference) -> bool:
        refused = _err(d.peer, "No replacement was performed") and d.peer is not None
        return refused and d.ours is not None and not d.ours.error and note in d.ours.text

    return matches


def _already_applied(d: Difference) -> bool:
    return d.ours is not None and d.ours.code == "FS_ALREADY_APPLIED" and _err(d.ours, "this change is already present")


def _refused_where_peer_applies(code: str, text: str) -> Callable[[Difference], bool]:
    def matches(d: Difference) -> bool:
        applied = d.peer is not None and not d.peer.error
        return applied and d.ours is not None and d.ours.code == code and _err(d.ours) and text in d.ours.text

    return matches


TOLERANT = "`old_str` may"
ALLOWED: list[Allowed] = [
    Allowed("null-is-absent", "`null` is an absent optional argument", _null_refused),
    Allowed("unknown-parameters", "Unknown parameters are refused", _unknown),
    Allowed("argument-type-texts", "Argument errors are worded per parameter", _typed),
    Allowed("relative-path-suggestion", "A relative path's suggestion is under the workspace", _relative),
    Allowed("clipping", "Long output is clipped at a line boundary", _clipped),
    Allowed("header-never-cut", "The header of a view is never cut", _header_whole),
    Allowed("identical-edit", "`old_str` equal to `new_str` is refused", _identical),
    Allowed("crlf-view", "Views do not show the CR of a CRLF line ending", _crlf_view),
    Allowed("crlf-edits", "Edits keep a CRLF file's line endings", _crlf_only),
    Allowed("crlf-match", "Edits keep a CRLF file's line endings", _crlf_match),
    Allowed("no-match-diagnosis", "A failed match says what nearly matched", _diagnosed),
    Allowed("bom-kept", "A UTF-8 BOM survives an edit", _bom_kept),
    Allowed("not-text-texts", "Binary and non-UTF-8 files: the message says why", _not_text),
    Allowed("parent-is-a-file", "A parent that is a file is named", _parent_file),
    Allowed("links-leaving-root", "Symlinks leading out of the workspace are not followed", _leaving),
    Allowed("create-through-dangling-link", "`create` through a dangling symlink creates its target", _dangling_create),
    Allowed("trailing-whitespace", f"{TOLERANT} drop trailing whitespace", _tolerated("ignoring trailing whitespace")),
    Allowed(
        "indentation",
        f"{TOLERANT} be indented otherwise (tabs as spaces, lost or shifted indentation)",
        _tolerated("ignoring indentation"),
    ),
    Allowed("unicode-punctuation", f"{TOLERANT} write unicode punctuation as ASCII", _tolerated("vs ASCII")),
    Allowed("line-numbers", f"{TOLERANT} carry the view's line numbers", _tolerated("line-number prefixes")),
    Allowed("elision", "An `...` line in `old_str` stands for unchanged lines", _tolerated("the `...` line")),
    Allowed("already-applied", "An edit sent twice is `FS_ALREADY_APPLIED`", _already_applied),
    Allowed(
        "lost-indentation",
        "A match after a line's indentation is refused when `new_str`'s lines would lose it",
        _refused_where_peer_applies("FS_EDIT_NOT_FOUND", "after the line's indentation"),
    ),
    Allowed(
        "other-indentation",
        "A match whose lines also sit elsewhere at another indentation is refused",
        _refused_where_peer_applies("FS_AMBIGUOUS_EDIT", "at another indentation"),
    ),
]


def _expand(value: Any, root: str) -> Any:
    return value.replace("{r}", root) if isinstance(value, str) else value


def _calls(case: Case, root: Path) -> list[dict[str, Any]]:
    return [{k: _expand(v, str(root)) for k, v in call.items()} for call in case.calls]


def _ours(case: Case, root: Path) -> list[dsh.Reply]:
    ws = vfs.open_workspace(str(root))
    editor = StrReplaceEditor(ws, config={"max_output_chars": case.max_output_chars}, session=False)
    replies = []
    for args in _calls(case, root):
        result = editor.run(args)
        replies.append(dsh.Reply(result.text, result.is_error, result.code))
    return replies


def _differences(
    case: Case, root: str, calls: list[dict[str, Any]], peer: list[dsh.Reply], ours: list[dsh.Reply]
) -> list[Difference]:
    out = []
    for index, (args, theirs, mine) in enumerate(zip(calls, peer, ours, strict=True)):
        same = theirs.text == mine.text and theirs.error == mine.error
        if not same or (theirs.code is not None and theirs.code != mine.code):
            out.append(Difference(case, index, args, theirs, mine, root))
    return out


def run_differential(cases: list[Case], base: Path) -> tuple[list[Difference], int]:
    """Run ``cases`` on both editors; return the differences and the number of calls compared."""
    roots = {case.name: base / f"c{n:04d}" / "root" for n, case in enumerate(cases)}
    for case in cases:
        dsh.build_tree(roots[case.name], case.tree)
    batch = [
        {"id": case.name, "root": str(roots[case.name]), "max_output_chars": case.max_output_chars,
         "calls": _calls(case, roots[case.name])}
        for case in cases
    ]  # fmt: skip
    peer = dsh.run_peer(batch)
    peer_trees = {name: dsh.read_tree(root) for name, root in roots.items()}
    differences: list[Difference] = []
    for case, item in zip(cases, batch, strict=True):
        root = roots[case.name]
        dsh.build_tree(root, case.tree)
        ours = _ours(case, root)
        differences += _differences(case, str(root), item["calls"], peer[case.name], ours)
        tree = dsh.read_tree(root)
        if tree != peer_trees[case.name]:
            differences.append(Difference(case, -1, {}, None, None, str(root), (peer_trees[case.name], tree)))
    return differences, sum(len(item["calls"]) for item in batch)


def _explain(differences: list[Difference]) -> list[tuple[Difference, list[str]]]:
    """Each difference with the names of the entries that explain it. A difference that none
    explains but that follows an edit one editor made and the other refused (same case, earlier
    call) is explained by that edit's entries: the trees have parted."""
    out: list[tuple[Difference, list[str]]] = []
    parted: dict[str, list[str]] = {}
    for d in differences:
        names = [entry.name for entry in ALLOWED if entry.matches(d)]
        if not names:
            names = parted.get(d.case.name, [])
        out.append((d, names))
        mutated = d.args.get("command") in MUTATING and d.peer is not None and d.ours is not None
        if mutated and d.peer.error != d.ours.error and names:
            parted.setdefault(d.case.name, []).extend(names)
    return out


def _unexplained(differences: list[Difference]) -> tuple[list[Difference], dict[str, int]]:
    unexplained, used = [], {}
    for d, names in _explain(differences):
        for name in set(names):
            used[name] = used.get(name, 0) + 1
        if not names:
            unexplained.append(d)
    return unexplained, used


@dataclass
class Outcome:
    cases: list[Case]
    calls: int
    differences: list[Difference]


@pytest.fixture(scope="module")
def outcome() -> Iterator[Outcome]:
    """Every case, hand-written and random, through one node process and then through ours.
    The trees are laid out twice per case: on a RAM disk where there is one (3x faster)."""
    missing = dsh.missing_reason()
    if missing is not None:
        pytest.skip(f"DSH peer unavailable: {missing}")
    shm = "/dev/shm"
    with tempfile.TemporaryDirectory(prefix="vfs-dsh-", dir=shm if os.access(shm, os.W_OK) else None) as base:
        cases = hand_cases() + random_cases(RANDOM_CASES, SEED)
        differences, calls = run_differential(cases, Path(base))
        yield Outcome(cases, calls, differences)


def _report(differences: list[Difference], calls: int) -> str:
    shown = "\n".join(str(d) for d in differences[:40])
    return f"{len(differences)} unexplained differences in {calls} calls:\n{shown}"


# slow: the differential run itself (every case through node, then through ours: ~5 s idle). The
# fast tier keeps the editors' exact-text tests (tests/editors/str_replace_editor), which pin the DSH
# texts in process, and the allow-list's check against docs/differences.md below.
@pytest.mark.slow
def test_every_difference_matches_a_documented_entry(outcome: Outcome) -> None:
    assert len(outcome.cases) >= RANDOM_CASES + 20 and outcome.calls >= 2 * RANDOM_CASES
    unexplained, _ = _unexplained(outcome.differences)
    assert not unexplained, _report(unexplained, outcome.calls)


@pytest.mark.slow  # the differential run (above)
def test_parity_cases_do_not_differ_at_all(outcome: Outcome) -> None:
    # The order of checks, symlinks inside the root, listing order, ...: matched, not allowed.
    same = {case.name for case in outcome.cases if case.same}
    assert len(same) >= 10
    differing = [d for d in outcome.differences if d.case.name in same]
    assert not differing, _report(differing, outcome.calls)


@pytest.mark.slow  # the differential run (above)
def test_every_allow_list_entry_is_exercised(outcome: Outcome) -> None:
    _, used = _unexplained(outcome.differences)
    assert sorted(entry.name for entry in ALLOWED if entry.name not in used) == []


def test_allow_list_points_to_documented_entries() -> None:
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("## The DSH editor (str_replace_editor)", 1)[1].split("\n## ", 1)[0]
    titles = set(re.findall(r"^- \*\*(.+?)\.?\*\*", section, flags=re.M))
    assert len({entry.name for entry in ALLOWED}) == len(ALLOWED)
    for entry in ALLOWED:
        assert entry.doc in titles, f"{entry.name}: no entry titled {entry.doc!r} in {DOCS.name}"
