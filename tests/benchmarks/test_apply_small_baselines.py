"""apply_small's "our code loaded, no work" baseline imports exactly what `vfs apply` imports.

Both run as `python -m` under a wrapper whose `os._exit` first prints the modules loaded: the
command ends through `os._exit` (no teardown), as the baseline's module does. A module the apply
imported and the baseline did not (or the reverse) would move its cost between "loading" and
"the work" in the report, so the lists must stay equal when the command's imports change.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from benchmarks.context import REPO
from benchmarks.workloads import apply_small

WRAPPER = """\
import os, runpy, sys
real_exit = os._exit

def report(code):
    sys.stdout.flush()
    sys.stderr.write("\\n".join(sorted(sys.modules)) + "\\n")
    sys.stderr.flush()
    real_exit(code)

os._exit = report
sys.argv = [sys.argv[1], *sys.argv[2:]]
sys.path.insert(0, os.getcwd())
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""


def _modules_loaded(argv: list[str], cwd: Path, stdin: str = "") -> set[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, *argv], input=stdin, capture_output=True, text=True, cwd=cwd, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return set(done.stderr.split())


def test_the_loaded_baseline_imports_what_vfs_apply_imports(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("one\ntwo\n")
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+three\n*** End Patch\n"
    applied = _modules_loaded(["editors.cli", "apply"], workspace, patch)
    assert (workspace / "a.txt").read_text() == "one\nthree\n"

    baselines = tmp_path / "baselines"
    baselines.mkdir()
    apply_small.write_baselines(baselines)
    loaded = _modules_loaded([apply_small.LOADED_MODULE], baselines) - {apply_small.LOADED_MODULE}

    ours = ("vfs", "backends", "editors", "blake3")
    assert any(name.startswith(ours) for name in loaded)
    assert applied - {"editors.cli"} == loaded, (
        f"only the apply: {sorted(applied - loaded)}; only the baseline: {sorted(loaded - applied)}"
    )
