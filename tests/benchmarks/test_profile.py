"""``python -m benchmarks.profile`` (shown in the README) runs and counts what it says it counts.

The README's benchmark block is skipped by tests/adapters/test_readme_commands.py (it installs the
peers and runs for minutes); this runs the profiler on its smallest case, as a subprocess.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_commit_profile_counts_hashes_fsyncs_and_directories() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.profile", "commit1", "--runs", "1", "--cprofile", "0"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    # A 4 KB file committed: its content hash is counted (a hash the tool does not wrap shows as
    # nothing), and the file's fsync and its folder's are told apart.
    hashed = re.search(r"(\d+) blake3 \(content_digest\)", done.stdout)
    assert hashed is not None and int(hashed.group(1)) >= 1, done.stdout
    assert re.search(r"1 fsync \(file\)", done.stdout), done.stdout
    assert re.search(r"1 fsync \(directory\)", done.stdout), done.stdout
