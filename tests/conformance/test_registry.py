"""The backend registry is fully wired into the test suite, and importing vfs stays light."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import backends
import vfs
from tests.support.backends import FACTORIES, WIRING


def test_every_registered_backend_is_wired_into_the_suites():
    assert sorted(WIRING) == sorted(backends.REGISTRY), "add the backend's test flavours to tests/support/backends.py"
    for flavours in WIRING.values():
        assert flavours and all(f in FACTORIES for f in flavours)


def test_registry_entries_load_and_declare_capabilities():
    for entry in backends.REGISTRY.values():
        cls = entry.load()
        assert cls.name == entry.name
        assert isinstance(cls.capabilities, backends.Capabilities)
        assert callable(cls.from_url)


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("/tmp/x", "local"),
        ("file:///tmp/x", "local"),
        ("memory://n", "memory"),
        ("s3://b/p", "s3"),
        ("gcs://b", "fsspec"),
    ],
)
def test_urls_map_to_backends(url, name):
    assert backends.entry_for_url(url).name == name


def test_import_vfs_is_light():
    code = (
        "import sys, json, vfs, editors; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('s3fs', 'boto3', 'botocore', 'aiobotocore', 'fsspec', 'pydantic', 'mcp', 'lark', 'pytest'))))"
    )
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    # pytest too: the shipped contract suite (backends.testing) must stay out of `import vfs`
    assert json.loads(out) == []


def test_memory_urls_share_named_stores():
    a = vfs.open_workspace("memory://shared-store-test")
    b = vfs.open_workspace("memory://shared-store-test")
    c = vfs.open_workspace("memory://")
    a.write_bytes("/workspace/x", b"1")
    assert b.read_bytes("/workspace/x") == b"1"
    assert not c.exists("/workspace/x")


def test_open_accepts_pathlike_and_upath(tmp_path):
    upath = pytest.importorskip("upath")
    (tmp_path / "f.txt").write_bytes(b"hi")
    assert vfs.open_workspace(tmp_path).read_bytes("f.txt") == b"hi"
    assert vfs.open_workspace(upath.UPath(tmp_path)).read_bytes("f.txt") == b"hi"
    assert vfs.open_workspace(f"file://{tmp_path}").read_bytes("f.txt") == b"hi"
    mem = upath.UPath("memory://upath-test/")
    assert vfs.open_workspace(mem).mount == "/workspace"


def test_a_local_commit_loads_no_heavy_modules(tmp_path):
    """A commit on local disk locks with flock(2) and hashes with BLAKE3 alone: filelock (fork
    bookkeeping, logging...), OpenSSL's hashlib and secrets cost tens of ms of every `vfs apply`."""
    code = (
        "import sys, json; before = set(sys.modules); import vfs; "
        "ws = vfs.open_workspace(sys.argv[1]); "
        "tx = ws.transaction(); tx.write('a.txt', b'x'); tx.write('b/c.txt', b'y'); tx.commit(); "
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    loaded = set(json.loads(result.stdout))
    assert (tmp_path / "b" / "c.txt").read_bytes() == b"y"
    assert "vfs.transaction" in loaded  # the probe saw our imports
    assert not loaded & {"filelock", "_hashlib", "secrets", "hmac"}
