"""Smoke test of the edit-replay benchmark at CI size: a few attempts per class, ours only.

It checks that every class is generated (deterministically from the seed), that each attempt's
intended bytes differ from the file before, and that ours makes no wrong edit (the call succeeds
but the bytes differ), that a refusal leaves the files untouched, and that the runner writes its
table and JSON. Peers are not run here (they are measured by ``python -m benchmarks.replay``).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from benchmarks.replay import corpus, runner, score, tools
from benchmarks.replay.tools import Run

PER_CLASS = 3
OURS = ("ours.str_replace_editor", "ours.apply_patch")


@pytest.fixture(scope="module")
def attempts() -> list[corpus.Attempt]:
    return corpus.generate(7, PER_CLASS)


@pytest.fixture(scope="module")
def outcomes(attempts: list[corpus.Attempt]) -> dict[str, list[score.Outcome]]:
    return runner.run(attempts, tools.ours_tools(), log=lambda _: None)


def test_every_class_is_generated(attempts: list[corpus.Attempt]) -> None:
    by_class = {cls: [a for a in attempts if a.cls == cls] for cls in corpus.CLASSES}
    assert all(len(v) == PER_CLASS for v in by_class.values()), {k: len(v) for k, v in by_class.items()}
    for attempt in attempts:
        assert attempt.patch is not None
        assert (attempt.editor_calls is None) == (attempt.cls in corpus.PATCH_ONLY)
        assert any(f.expected != f.original for f in attempt.files), attempt.id


def test_generation_is_deterministic(attempts: list[corpus.Attempt]) -> None:
    again = corpus.generate(7, PER_CLASS)
    assert [(a.id, a.patch, a.editor_calls, [f.expected for f in a.files]) for a in again] == [
        (a.id, a.patch, a.editor_calls, [f.expected for f in a.files]) for a in attempts
    ]
    other = corpus.generate(8, PER_CLASS, ["control"])
    assert [a.patch for a in other] != [a.patch for a in attempts if a.cls == "control"]


def test_environment_classes_shape_the_files(attempts: list[corpus.Attempt]) -> None:
    def first(cls: str) -> corpus.Attempt:
        return next(a for a in attempts if a.cls == cls)

    assert b"\r\n" in first("crlf_as_lf").files[0].original
    assert b"\n\t" in first("tabs_as_spaces").files[0].original
    assert first("bom").files[0].original.startswith(b"\xef\xbb\xbf")
    assert first("bom").files[0].expected.startswith(b"\xef\xbb\xbf")
    stale = first("stale_context").files[0]
    assert stale.viewed != stale.original and corpus.STALE_LINE.encode() in stale.expected
    assert all(a.repeat == 2 for a in attempts if a.cls == "sent_twice")
    assert json.loads(first("json_wrapped").patch or "")


def test_ours_control_succeeds(outcomes: dict[str, list[score.Outcome]]) -> None:
    for key, results in outcomes.items():
        control = [o for o in results if o.cls == "control"]
        assert control and all(o.outcome == "success" for o in control), (key, [o.message for o in control])


def test_ours_makes_no_wrong_edit(outcomes: dict[str, list[score.Outcome]]) -> None:
    for key, results in outcomes.items():
        wrong = sorted({o.cls for o in results if o.outcome == "wrong"})
        assert wrong == [], (key, wrong)


def _zero_wrong_cases() -> list[object]:
    cases: list[object] = []
    for key in OURS:
        for cls in corpus.CLASSES:
            cases.append(pytest.param(key, cls, id=f"{key}-{cls}"))
    return cases


@pytest.mark.parametrize(("key", "cls"), _zero_wrong_cases())
def test_ours_zero_wrong_edits(outcomes: dict[str, list[score.Outcome]], key: str, cls: str) -> None:
    results = [o for o in outcomes[key] if o.cls == cls]
    wrong = [(o.attempt, o.message) for o in results if o.outcome == "wrong"]
    assert not wrong, wrong


def test_ours_refusals_leave_files_untouched(
    attempts: list[corpus.Attempt], outcomes: dict[str, list[score.Outcome]]
) -> None:
    """A refused patch changes nothing. The editor's two-file attempts are two tool calls, two
    transactions: the first may land before the second is refused (by design, as with every
    editor), so there only a one-call attempt counts."""
    calls = {a.id: len(a.editor_calls or ()) for a in attempts}
    for key, results in outcomes.items():
        touched = [o.attempt for o in results if o.outcome == "refused_touched"]
        if key == "ours.str_replace_editor":
            touched = [t for t in touched if calls[t] <= 1]
        assert not touched, key


def test_judge_classifies_outcomes(attempts: list[corpus.Attempt]) -> None:
    a = next(x for x in attempts if x.cls == "control" and len(x.files) == 1)
    f = a.files[0]
    assert score.judge("t", a, Run(["ok"], [False], {f.path: f.expected})).outcome == "success"
    assert score.judge("t", a, Run(["ok"], [False], {f.path: f.expected + b"x"})).outcome == "wrong"
    assert (
        score.judge("t", a, Run(["ok"], [False], {f.path: f.original})).outcome == "wrong"
    )  # success claimed, nothing done
    refused = score.judge("t", a, Run(["Error: no"], [True], {f.path: f.original}))
    assert refused.outcome == "refused" and not refused.named
    t = next(x for x in attempts if x.cls == "tabs_as_spaces" and len(x.files) == 1)
    named = score.judge(
        "t", t, Run(["Error: the file indents with tabs"], [True], {t.files[0].path: t.files[0].original})
    )
    assert named.outcome == "refused" and named.named


def test_runner_writes_table_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = runner.main(["--per-class", "1", "--classes", "control,crlf_as_lf,json_wrapped", "--no-peers",
                        "--no-plot", "--out", str(tmp_path)])  # fmt: skip
    assert code == 0
    document = json.loads((tmp_path / "latest.json").read_text())
    assert document["config"]["attempts"] == 3
    assert {t["key"] for t in document["tools"]} == {"ours.str_replace_editor", "ours.apply_patch"}
    out = capsys.readouterr().out
    assert "| control |" in out and "n/a" in out  # json_wrapped has no editor form


@pytest.mark.parametrize("key", ["codex", "dsh", "openhands"])
def test_peer_harness_applies_the_control_attempts(attempts: list[corpus.Attempt], key: str) -> None:
    """Each installed peer gets the control attempts right: its harness feeds it the same bytes."""
    tool = next(t for t in tools.peer_tools() if t.key == key)
    if tool.run_all is None:
        pytest.skip(f"{key} is not installed: {tool.missing}")
    control = [a for a in attempts if a.cls == "control" and tools.applies(tool, a)]
    results = runner.run(control, [tool], log=lambda _: None)[key]
    assert [o.outcome for o in results] == ["success"] * len(control), [o.message for o in results]


def test_an_editor_span_is_unique_counting_the_files_final_newline() -> None:
    """An old_str that ends in a newline also matches the file's last line: a span whose text
    repeats there is not unique (the exact match would be the last line, not the intended one)."""
    lines = ["def f():", "    x = 1", "", "def g():", "    x = 1"]
    src = corpus.Source("site", "m.py", lines, ast.parse("\n".join(lines) + "\n"))
    doc = corpus.Doc(src, list(lines), list(lines))
    change = corpus.Change(2, 2, ["    z = 3"])
    span = corpus.editor_span(doc, change)
    assert span is not None
    call = corpus._editor_call("m.py", doc, change, span)
    assert doc.encode(doc.disk).decode().count(str(call["old_str"])) == 1, (span, call)
