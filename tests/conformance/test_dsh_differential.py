"""Differential test against the real DSH ``str_replace_editor`` (npm, under node).

The same call sequences run on the peer (one node process for every case, over
``@deepseek-ai/dsh-fs-local`` on a real directory) and on ours (in process, one-shot mode, over a
local workspace on an identical directory at the same path). The model-visible text, the error
flag, the peer's error code where it gives one, and the file tree afterwards are compared. Every
difference must match a named entry of ``ALLOWED``, each of which points to an entry of
``docs/differences.md``; any other difference fails the test.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import vfs
from editors.str_replace_editor.tool import StrReplaceEditor
from tests.support import dsh
from tests.support.dsh.cases import Case, random_cases

DOCS = Path(__file__).resolve().parents[2] / "docs" / "differences.md"
RANDOM_CASES = 320
SEED = 20261203

MISSING = dsh.missing_reason()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"DSH peer unavailable: {MISSING}")


@dataclass
class Difference:
    case: Case
    index: int  # the call's index in the case; -1 for the tree afterwards
    args: dict[str, Any]
    peer: dsh.Reply | None
    ours: dsh.Reply | None

    def __str__(self) -> str:
        if self.index < 0:
            return f"{self.case.name}: the trees differ afterwards"
        return f"{self.case.name} call {self.index} {self.args!r}:\n  peer: {self.peer}\n  ours: {self.ours}"


@dataclass(frozen=True)
class Allowed:
    """A known, documented difference: ``doc`` is the bold title of its docs/differences.md entry."""

    name: str
    doc: str
    matches: Callable[[Difference], bool]


ALLOWED: list[Allowed] = []


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
    case: Case, calls: list[dict[str, Any]], peer: list[dsh.Reply], ours: list[dsh.Reply]
) -> list[Difference]:
    out = []
    for index, (args, theirs, mine) in enumerate(zip(calls, peer, ours, strict=True)):
        same = theirs.text == mine.text and theirs.error == mine.error
        if not same or (theirs.code is not None and theirs.code != mine.code):
            out.append(Difference(case, index, args, theirs, mine))
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
        differences += _differences(case, item["calls"], peer[case.name], ours)
        if dsh.read_tree(root) != peer_trees[case.name]:
            differences.append(Difference(case, -1, {}, None, None))
    return differences, sum(len(item["calls"]) for item in batch)


def _unexplained(differences: list[Difference]) -> tuple[list[Difference], set[str]]:
    unexplained, used = [], set()
    for difference in differences:
        names = [entry.name for entry in ALLOWED if entry.matches(difference)]
        used.update(names)
        if not names:
            unexplained.append(difference)
    return unexplained, used


def test_random_cases_differ_only_where_documented(tmp_path: Path) -> None:
    cases = random_cases(RANDOM_CASES, SEED)
    differences, calls = run_differential(cases, tmp_path)
    assert calls >= RANDOM_CASES
    unexplained, _ = _unexplained(differences)
    report = "\n".join(str(d) for d in unexplained[:40])
    assert not unexplained, f"{len(unexplained)} unexplained differences of {calls} calls:\n{report}"


def test_allow_list_points_to_documented_entries() -> None:
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("## The DSH editor (str_replace_editor)", 1)[1].split("\n## ", 1)[0]
    titles = set(re.findall(r"^- \*\*(.+?)\*\*", section, flags=re.M))
    assert len({entry.name for entry in ALLOWED}) == len(ALLOWED)
    for entry in ALLOWED:
        assert entry.doc in titles, f"{entry.name}: no entry titled {entry.doc!r} in {DOCS.name}"
