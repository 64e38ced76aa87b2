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

The tree is built from a copy of its source files (tracked, and new ones not ignored), not in
place: setuptools builds in the tree's ``build/`` folder, and a module deleted from the tree since
an earlier build would still be there, and installed.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.peers import cache_dir

#: What the report says of the processes' interpreter (``Context.process_python``).
DEVELOPMENT = "the runner's own interpreter (the development venv)"


def regular_install(repo: Path) -> tuple[str, str]:
    """The python of a venv holding a regular install of ``repo`` as it is now, and what the
    report says of it; the runner's own interpreter and why, where that cannot be made."""
    venv = cache_dir() / "install"
    python = venv / "bin" / "python"
    try:
        with tempfile.TemporaryDirectory(prefix="vfs-bench-source-") as tmp:
            source = source_copy(repo, Path(tmp) / "tree")
            # The dependencies every time (nothing to do once they are there; a dependency added to
            # the tree, or a first install cut short, is made good), then the tree, rebuilt as it is.
            pip = [str(python), "-m", "pip", "install", "-q"]
            steps = [[*pip, str(source)], [*pip, "--no-deps", "--force-reinstall", str(source)]]
            if not python.exists():
                steps.insert(0, [sys.executable, "-m", "venv", str(venv)])
            for step in steps:
                done = subprocess.run(step, capture_output=True, text=True, timeout=600)
                if done.returncode != 0:
                    last = (done.stderr.strip().splitlines() or ["no output"])[-1]
                    return sys.executable, f"{DEVELOPMENT}: a regular install could not be made ({last})"
    except (OSError, subprocess.SubprocessError) as exc:
        return sys.executable, f"{DEVELOPMENT}: a regular install could not be made ({exc})"
    return str(python), f"a venv made by `pip install .` of this tree ({venv})"


#: Left out of the copy where git cannot list the tree's files (no git, not a checkout).
NOT_SOURCE = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", "results", ".*_cache")


def source_copy(repo: Path, dest: Path) -> Path:
    """``dest`` holding ``repo``'s source files: what git tracks and the new files it does not
    ignore, as they are on disk (deleted ones left out); without git, the tree minus NOT_SOURCE."""
    try:
        listed = subprocess.run(
            ["git", "-C", str(repo), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        shutil.copytree(repo, dest, ignore=NOT_SOURCE, symlinks=True)
        return dest
    for name in filter(None, listed.decode("utf-8", "surrogateescape").split("\0")):
        origin = repo / name
        if not origin.is_file() and not origin.is_symlink():
            continue
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(origin, target, follow_symlinks=False)
    return dest
