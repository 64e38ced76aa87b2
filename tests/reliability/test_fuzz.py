"""Fuzzing (hypothesis) at CI size: the patch parser, the matcher/applier (random patches and patches
cut from the files they edit), the str_replace_editor arguments and the CLI argument vectors.
0 uncaught exceptions, 0 hangs; every failure is a coded error that leaves the tree untouched.
The full run (100,000 cases) is ``python -m benchmarks.reliability fuzz``."""

from __future__ import annotations

import pytest

from benchmarks.reliability import fuzz


# slow: a campaign at CI size (the fast tier, -m "not slow", leaves it to the full run)
@pytest.mark.slow
@pytest.mark.parametrize(
    ("target", "cases"), [("parser", 1000), ("apply", 600), ("apply-derived", 400), ("editor", 400), ("cli", 400)]
)
def test_fuzz_target(target, cases, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    report = fuzz.run(cases, targets=(target,))
    assert report.failures == [], report.render()
    assert report.counts[f"{target} cases"] >= cases
    if target in ("apply", "apply-derived", "editor"):  # the generators reach both outcomes, not only refusals
        assert report.counts.get(f"{target} ok", 0) > 0, report.render()
        assert sum(v for k, v in report.counts.items() if k.startswith(f"{target} FS_") or "PATCH_" in k) > 0


@pytest.mark.parametrize("verb", [["log"], ["undo"], ["recover"], ["apply", "*** Begin Patch\n*** End Patch"]])
def test_unknown_storage_option_is_a_coded_error(verb, tmp_path, capsys):
    from editors.cli import main

    status = main([*verb, "--root", str(tmp_path), "--storage-option", "bogus=1"])
    assert status in (1, 2)
    assert "bogus" in capsys.readouterr().err


def test_unknown_storage_option_is_invalid_argument_in_the_api(tmp_path):
    import vfs

    with pytest.raises(vfs.InvalidArgument):
        vfs.open_workspace(str(tmp_path), storage_options={"bogus": 1})
