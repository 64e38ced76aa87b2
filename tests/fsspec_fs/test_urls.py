"""The URL forms of the vfs protocol: found through the package's entry points with nothing
imported by hand, chained URLs, the workspace root a chained URL picks, UPath."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import fsspec
import pytest
from upath import UPath

from backends.memory import forget_store
from tests.fsspec_fs.conftest import Target
from tests.fsspec_fs.support import PYTHON, subprocess_env

ENTRY_POINTS_ONLY = textwrap.dedent(
    """
    import sys, fsspec
    from upath import UPath
    with fsspec.open("vfs::memory://ep/a.txt", "w") as f:
        f.write("hello")
    fs = fsspec.filesystem("vfs", target="memory://ep")
    assert fs.cat("/ep/a.txt") == b"hello", fs.cat("/ep/a.txt")
    path = UPath("vfs::memory://ep/a.txt")
    assert path.read_text() == "hello"
    print(type(fs).__module__, type(path).__name__)
    """
)


def test_the_entry_points_alone_make_vfs_urls_work_in_a_fresh_interpreter(tmp_path: Path) -> None:
    done = subprocess.run(
        [PYTHON, "-W", "error", "-c", ENTRY_POINTS_ONLY],  # -W error: UPath warns about a protocol it does not know
        env=subprocess_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["vfs.filesystem", "VfsPath"]


def test_a_chained_url_names_a_file_whose_folder_is_the_root_unless_a_wider_root_is_open() -> None:
    for store in ("chain1", "chain1/deep", "chain2", "chain2/deep"):
        forget_store(store)
    alone, path = fsspec.core.url_to_fs("vfs::memory://chain1/deep/f.txt")
    assert (alone.target, path) == ("memory:///chain1/deep", "/chain1/deep/f.txt")
    wide = fsspec.filesystem("vfs", target="memory://chain2")
    joined, _ = fsspec.core.url_to_fs("vfs::memory://chain2/deep/g.txt")
    assert joined is wide
    explicit, _ = fsspec.core.url_to_fs("vfs::memory://chain2/deep/g.txt", vfs={"target": "memory://chain2/deep"})
    assert explicit.target == "memory:///chain2/deep"


def test_a_path_outside_the_root_is_refused(target: Target) -> None:
    fs = target.make_fs()
    outside = target.path.rsplit("/", 1)[0] + "/elsewhere.txt"
    with pytest.raises(PermissionError):
        fs.pipe(outside, b"no")
    with pytest.raises(PermissionError):
        fs.pipe(f"{target.path}/.vfs/lock", b"no")  # the workspace's own records


def test_the_chained_url_forms_of_every_target(target: Target) -> None:
    protocol = target.url.split(":")[0]
    with fsspec.open(target.chained("data.csv"), "w", **{protocol: target.options}) as f:
        f.write("a,b\n1,2\n")
    fs = target.make_fs()
    assert fs.cat(f"{target.path}/data.csv") == b"a,b\n1,2\n"
    with fsspec.open(target.chained("data.csv"), "r", **{protocol: target.options}) as f:
        assert f.read() == "a,b\n1,2\n"
    path = UPath(target.chained("data.csv"), **{protocol: target.options})
    assert path.read_text() == "a,b\n1,2\n"
    (path.parent / "more.txt").write_text("more")
    assert fs.cat(f"{target.path}/more.txt") == b"more"
    assert sorted(p.name for p in path.parent.iterdir()) == ["data.csv", "more.txt"]
