"""The interpreter the whole-process series run: a venv holding a regular install of this tree.

Users run ``vfs`` from ``pip install .``; the development venv is an editable install (setuptools'
finder, a ``.pth`` that imports ``pathlib``, ``importlib.util`` and more at every start) with the
test extras, and each of its starts is slower: ``python -c pass`` 40-43 ms there against 17-18 ms
in a venv made by ``pip install .`` (session 14, AMD EPYC). Timing ``vfs apply`` there, and the
bare interpreter beside it, measures the development set-up, not the product.

The venv lives beside the peers (``$VFS_BENCH_CACHE/install``); it is made once with the runtime
dependencies, and at each run the dependencies are checked and this tree, as it is, is installed
into it again (a fresh build). Where that cannot be done (no network for the first install, say), the series run
the runner's own interpreter and the report says so.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from benchmarks.peers import cache_dir

#: What the report says of the processes' interpreter (``Context.process_python``).
DEVELOPMENT = "the runner's own interpreter (the development venv)"


def regular_install(repo: Path) -> tuple[str, str]:
    """The python of a venv holding a regular install of ``repo`` as it is now, and what the
    report says of it; the runner's own interpreter and why, where that cannot be made."""
    venv = cache_dir() / "install"
    python = venv / "bin" / "python"
    # The dependencies every time (nothing to do once they are there; a dependency added to the
    # tree, or a first install cut short, is made good), then the tree itself, rebuilt as it is.
    pip = [str(python), "-m", "pip", "install", "-q"]
    steps = [[*pip, str(repo)], [*pip, "--no-deps", "--force-reinstall", str(repo)]]
    if not python.exists():
        steps.insert(0, [sys.executable, "-m", "venv", str(venv)])
    for step in steps:
        try:
            done = subprocess.run(step, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return sys.executable, f"{DEVELOPMENT}: a regular install could not be made ({exc})"
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            return sys.executable, f"{DEVELOPMENT}: a regular install could not be made ({last})"
    return str(python), f"a venv made by `pip install .` of this tree ({venv})"
