"""``import vfs`` stays light: the fsspec filesystem lives in its own module, loaded only by the
entry point (or by whoever imports vfs.filesystem)."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

from tests.fsspec_fs.support import PYTHON, subprocess_env

HEAVY = ("fsspec", "s3fs", "upath", "vfs.filesystem", "vfs.upath_path")
REPORT = "import sys, {module}; print(sorted(m for m in sys.modules if m.split('.')[0] in ('fsspec', 's3fs', 'upath') or m.startswith('vfs.')))"


def _loaded_by(module: str, tmp_path: Path) -> list[str]:
    done = subprocess.run(
        [PYTHON, "-c", REPORT.format(module=module)],
        env=subprocess_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    loaded: list[str] = ast.literal_eval(done.stdout.strip())
    return loaded


def test_import_vfs_loads_neither_fsspec_nor_the_filesystem_module(tmp_path: Path) -> None:
    loaded = _loaded_by("vfs", tmp_path)
    assert [m for m in loaded if m.startswith(HEAVY)] == []
    assert "vfs.workspace" in loaded  # the report does see what vfs imports


def test_the_filesystem_module_is_where_fsspec_comes_in(tmp_path: Path) -> None:
    assert "fsspec" in _loaded_by("vfs.filesystem", tmp_path)
