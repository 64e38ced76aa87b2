"""The whole-process series run a regular install of the tree (benchmarks/install.py), or say why not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import install
from benchmarks.context import REPO


def test_a_venv_that_cannot_be_made_leaves_the_runner_interpreter_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the cache folder would be\n")
    monkeypatch.setenv("VFS_BENCH_CACHE", str(blocked))
    python, said = install.regular_install(REPO)
    assert python == sys.executable
    assert said.startswith(install.DEVELOPMENT) and "could not be made" in said


# slow: it makes a venv and installs the tree and its runtime dependencies (~30-60 s)
@pytest.mark.slow
def test_the_install_is_this_tree_without_an_editable_finder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VFS_BENCH_CACHE", str(tmp_path / "cache"))
    python, said = install.regular_install(REPO)
    assert python != sys.executable, said
    venv = tmp_path / "cache" / "install"
    assert python == str(venv / "bin" / "python")
    site = next(venv.glob("lib/python*/site-packages"))
    assert not list(site.glob("__editable__*")), "an editable install slows every start"
    where = subprocess.run(
        [python, "-c", "import editors, vfs; print(editors.__file__); print(vfs.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    ).stdout.split()
    assert all(Path(p).is_relative_to(site) for p in where), where  # the installed copy, not the tree
    patch = "*** Begin Patch\n*** Add File: a.txt\n+made by the installed vfs\n*** End Patch\n"
    done = subprocess.run(
        [python, "-m", "editors.cli", "apply"], input=patch, capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "a.txt").read_text() == "made by the installed vfs\n"
    # run again, the tree is installed again (a change to it reaches the processes measured)
    again, _ = install.regular_install(REPO)
    assert again == python


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_the_source_copy_is_the_tree_as_it_is_without_its_build_folder(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / ".gitignore").write_text("build/\n")
    (repo / "pkg" / "kept.py").write_text("tracked = 1\n")
    (repo / "pkg" / "gone.py").write_text("deleted since\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    (repo / "pkg" / "kept.py").write_text("tracked = 2  # changed, not committed\n")
    (repo / "pkg" / "gone.py").unlink()
    (repo / "pkg" / "new.py").write_text("new = 1\n")
    (repo / "build" / "lib" / "pkg").mkdir(parents=True)
    (repo / "build" / "lib" / "pkg" / "gone.py").write_text("a stale copy of a deleted module\n")

    copy = install.source_copy(repo, tmp_path / "copy")
    files = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file())
    assert files == [".gitignore", "pkg/kept.py", "pkg/new.py"]
    assert (copy / "pkg" / "kept.py").read_text() == "tracked = 2  # changed, not committed\n"


def test_without_git_the_copy_leaves_out_build_and_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    for name in ("pkg/mod.py", "build/lib/pkg/stale.py", "pkg/__pycache__/mod.cpython-311.pyc", "x.egg-info/PKG"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("x\n")
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools-here"))
    copy = install.source_copy(repo, tmp_path / "copy")
    assert sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file()) == ["pkg/mod.py"]
