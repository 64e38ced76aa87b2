"""What every workload needs: where to put files, sizes, the peers, and how to run a process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import peers
from benchmarks.core import Measured, VerificationError

REPO = Path(__file__).resolve().parent.parent
PYCACHE = REPO / "benchmarks" / "results" / "pycache"

#: Size profiles; a workload's DEFAULTS maps profile -> its parameters.
PROFILES = ("full", "quick", "tiny")


@dataclass
class ProcessResult:
    seconds: float
    returncode: int
    stdout: bytes
    stderr: bytes
    max_rss: int  # bytes (ru_maxrss of the child alone)
    cpu: float = 0.0  # user + system seconds of the child

    def time(self) -> Measured:
        """Wall seconds, with the CPU seconds on the side (steadier on a loaded machine)."""
        return Measured(self.seconds, {"cpu_s": self.cpu})

    def memory(self) -> Measured:
        return Measured(float(self.max_rss), {"wall_s": self.seconds, "cpu_s": self.cpu})


@dataclass
class Context:
    root: Path  # scratch directory for every workload's files
    profile: str = "full"
    overrides: dict[str, dict[str, str]] = field(default_factory=dict)
    python: str = sys.executable
    keep: bool = False
    #: the interpreter of our whole-process series and of the bare interpreter beside them: a
    #: regular install where the runner made one (benchmarks/install.py), else ``python``
    process_python: str = sys.executable

    def settle(self, *paths: Path) -> None:
        """Wait out the racy window (see :func:`wait_until_settled`); skipped at tiny size."""
        if self.profile != "tiny":
            wait_until_settled(*paths)

    # -- parameters ---------------------------------------------------------------------------

    def params(self, workload: str, defaults: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """The workload's parameters for this profile, with ``--set workload.key=value`` applied."""
        out = dict(defaults[self.profile])
        for key, raw in self.overrides.get(workload, {}).items():
            if key not in out:
                raise SystemExit(f"unknown parameter {workload}.{key} (known: {', '.join(sorted(out))})")
            kind = type(out[key])
            out[key] = kind(float(raw)) if kind is int else kind(raw)
        return out

    def workdir(self, name: str) -> Path:
        path = self.root / name
        if path.exists():
            shutil.rmtree(path)
        path.mkdir(parents=True)
        return path

    # -- peers --------------------------------------------------------------------------------

    @property
    def codex(self) -> peers.Peer:
        return peers.codex()

    @property
    def openhands(self) -> peers.Peer:
        return peers.openhands()

    # -- processes ----------------------------------------------------------------------------

    def env(self) -> dict[str, str]:
        """The environment of every child: bytecode cached, and ours importable from the checkout
        where the processes run the runner's interpreter (a regular install imports its own copy).

        Bytecode goes to a cache under ``benchmarks/results/`` (``PYTHONPYCACHEPREFIX``) even when
        ``PYTHONDONTWRITEBYTECODE`` is set (as in some sandboxes): an installed package has its
        ``.pyc`` files, and recompiling every module on every start would be measured otherwise.
        The warm-up run fills the cache.
        """
        env = dict(os.environ)
        if self.process_python == self.python:
            path = env.get("PYTHONPATH")
            env["PYTHONPATH"] = str(REPO) + (os.pathsep + path if path else "")
        env.pop("VFS_TEST_CRASH_AT", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
        return env

    def vfs_cli(self, *args: str) -> list[str]:
        """``python -m editors.cli ARGS`` with the processes' interpreter (never a pyenv shim script)."""
        return [self.process_python, "-m", "editors.cli", *args]

    def run(self, argv: list[str], *, stdin: bytes | None = None, cwd: Path | None = None) -> ProcessResult:
        """Run a process to completion: wall time from spawn to reaping, and its own peak RSS.

        The child is spawned by a small launcher (``python -S -I``, stdlib only) rather than by this
        process: on Linux a child's ``ru_maxrss`` starts at the RSS of whoever forked it (the
        forked address space's high-water mark carries over ``execve``), and the runner holds
        the large inputs. The launcher's own footprint is the floor of every RSS reported (the
        ``memory`` workload measures it). Wall time is taken inside the launcher too.
        """
        with tempfile.TemporaryFile() as inp, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            if stdin is not None:
                inp.write(stdin)
                inp.seek(0)
            with tempfile.NamedTemporaryFile("r", suffix=".json") as report:
                launcher = [self.python, "-S", "-I", "-c", _LAUNCHER, report.name, *argv]
                proc = subprocess.run(launcher, stdin=inp, stdout=out, stderr=err, cwd=cwd, env=self.env(), check=False)
                text = report.read()
            out.seek(0)
            err.seek(0)
            if proc.returncode != 0 or not text:
                raise VerificationError(
                    f"launcher failed for {argv[0]}: {err.read().decode('utf-8', 'replace')[-500:]}"
                )
            seconds, returncode, max_rss, cpu = json.loads(text)
            return ProcessResult(seconds, returncode, out.read(), err.read(), max_rss, cpu)


#: argv: REPORT CMD...; runs CMD with this process's stdio, writes [seconds, exit code, maxrss bytes,
#: user + system CPU seconds].
_LAUNCHER = """
import json, os, sys, time
report, argv = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
pid = os.posix_spawnp(argv[0], argv, os.environ)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - start
with open(report, "w") as handle:
    json.dump([seconds, os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024,
               usage.ru_utime + usage.ru_stime], handle)
"""


# -- helpers shared by workloads --------------------------------------------------------------


def racy_window_s() -> float:
    """How long after a write the local backend still hashes a file's content into its version."""
    try:
        from backends import local

        return float(getattr(local, "RACY_WINDOW_NS", 0)) / 1e9
    except ImportError:  # pragma: no cover
        return 0.0


def wait_until_settled(*paths: Path) -> None:
    """Sleep until every path's mtime and ctime are older than the racy window (+50 ms).

    A file written moments ago cannot be vouched for by its stat tuple alone, so vfs hashes its
    content into the version; a file an agent edits has usually been sitting for longer than that.
    Every tool waits the same (untimed), so the comparison stays fair.
    """
    window = racy_window_s()
    if window <= 0:
        return
    newest = max(max(p.stat().st_mtime_ns, p.stat().st_ctime_ns) for p in paths)
    remaining = (newest + int((window + 0.05) * 1e9) - time.time_ns()) / 1e9
    if remaining > 0:
        time.sleep(remaining)


def restore(files: dict[Path, bytes]) -> None:
    """Put the original bytes back (untimed): plain writes, so every tool starts from the same state."""
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)


def check_files(expected: dict[Path, bytes], who: str) -> None:
    for path, data in expected.items():
        try:
            actual = path.read_bytes()
        except FileNotFoundError:
            raise VerificationError(f"{who}: {path.name} is missing after the run") from None
        if actual != data:
            raise VerificationError(
                f"{who}: {path.name} differs from the reference ({len(actual)} bytes, expected {len(data)})"
            )


def check_process(result: ProcessResult, who: str) -> None:
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).decode("utf-8", "replace").strip()[:500]
        raise VerificationError(f"{who} exited with {result.returncode}: {detail}")


def reset_history(root: Path) -> None:
    """Empty the workspace's transaction history (untimed), so every run commits into the same state."""
    tx = root / ".vfs" / "tx"
    if tx.is_dir():
        for entry in tx.iterdir():
            if entry.is_file():
                entry.unlink()
