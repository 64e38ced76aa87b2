"""``python -m benchmarks.startup``: the ladder runs every step, with the interpreter it says."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from benchmarks import startup


def test_the_ladder_runs_each_step_and_profiles_our_imports() -> None:
    data = startup.measure(1, sys.executable)
    steps = [step["step"] for step in data["steps"]]
    assert steps[0] == "python -c pass"
    assert "python -m, an empty module (the -m launcher)" in steps
    assert "python -m, importing what vfs apply imports, no work" in steps
    assert "python -m editors.cli apply (3-file patch)" in steps
    assert all(step["wall_ms"] > 0 for step in data["steps"])
    assert {"vfs", "editors.apply_patch.tool", "backends.local.backend"} <= set(data["modules"])
    text = startup.render(data, top=5)
    assert "python -m editors.cli apply (3-file patch)" in text


def test_without_a_regular_install_it_says_which_interpreter_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the cache folder would be\n")
    monkeypatch.setenv("VFS_BENCH_CACHE", str(blocked))
    assert startup.main(["--runs", "1", "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Commands run ") and "could not be made" in out
    assert "Start-up ladder" in out
