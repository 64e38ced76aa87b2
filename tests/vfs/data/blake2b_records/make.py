"""Writes ``tree/``: a workspace whose ``.vfs/`` records were written by vfs while its content hash
was BLAKE2b (commit e1ec70a), for ``tests/vfs/test_legacy_records.py``. Run with that vfs first
on the path: ``PYTHONPATH=<checkout of e1ec70a> python make.py``. Not collected by pytest.

History, oldest first: ``one`` (a.txt: a one-file ``.record``), ``two`` (a.txt and b.txt: a
journal and its decision), ``big`` (big.txt, 100 kB: too big for a ``.record``), a checkpoint
``mark``, then ``crashed`` (b.txt and c.txt), killed after its writes landed: its journal is
unresolved.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import vfs

HERE = Path(__file__).resolve().parent
TREE = HERE / "tree"
CRASH = """
import sys, vfs
ws = vfs.open_workspace(sys.argv[1], mount="/workspace")
with ws.transaction(label="crashed") as tx:
    tx.write(f"{ws.mount}/b.txt", b"b, crashed\\n")
    tx.write(f"{ws.mount}/c.txt", b"c, new\\n")
"""

shutil.rmtree(TREE, ignore_errors=True)
TREE.mkdir()
(TREE / "a.txt").write_bytes(b"a, first\n")
(TREE / "b.txt").write_bytes(b"b, first\n")
(TREE / "big.txt").write_bytes(b"0123456789abcdef\n" * 6000)
ws = vfs.open_workspace(str(TREE), mount="/workspace")
with ws.transaction(label="one") as tx:
    tx.write(f"{ws.mount}/a.txt", b"a, one\n")
with ws.transaction(label="two") as tx:
    tx.write(f"{ws.mount}/a.txt", b"a, two\n")
    tx.write(f"{ws.mount}/b.txt", b"b, two\n")
with ws.transaction(label="big") as tx:
    tx.write(f"{ws.mount}/big.txt", b"0123456789ABCDEF\n" * 6000)
ws.checkpoint("mark")
ws.close()
env = {**os.environ, "VFS_TEST_CRASH_AT": "applied-writes"}
result = subprocess.run([sys.executable, "-c", CRASH, str(TREE)], env=env, check=False)
assert result.returncode == -9, result.returncode
os.remove(TREE / ".vfs" / "lock")  # (a lock file is not a record: every open makes its own)
print(sorted(os.listdir(TREE / ".vfs" / "tx")))
