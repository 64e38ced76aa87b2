"""How the ``vfs`` program ends (``editors.adapters.cli.run``): without the interpreter's teardown
where nothing needs it, and never losing output, an exit handler or a thread's work."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.adapters.support import REPO, cli_env, run_cli

# A program that runs `vfs ARGS` as the console script does, after SETUP.
PROGRAM = """
import sys
{setup}
from editors.adapters.cli import run
sys.argv = ["vfs", *sys.argv[1:]]
run()
"""


def _program(tmp_path: Path, setup: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROGRAM.format(setup=setup), *args],
        capture_output=True,
        text=True,
        env=cli_env(),
        cwd=tmp_path,
        timeout=120,
        check=False,
    )


def _big_change(tmp_path: Path) -> Path:
    (tmp_path / "big.txt").write_text("".join(f"line {i}\n" for i in range(20_000)))
    patch = tmp_path / "change.patch"
    body = "".join(f"-line {i}\n+LINE {i}\n" for i in range(20_000))
    patch.write_text(f"*** Begin Patch\n*** Update File: big.txt\n@@\n{body}*** End Patch\n")
    return patch


def test_every_byte_of_a_large_output_reaches_the_pipe(tmp_path: Path) -> None:
    patch = _big_change(tmp_path)
    done = run_cli("apply", "--dry-run", "--root", str(tmp_path), str(patch))
    assert done.returncode == 0, done.stderr
    shown = done.stdout.decode()
    assert len(done.stdout) > 256 * 1024  # far beyond a pipe's buffer and stdout's
    assert shown.count("+LINE ") == 20_000 and "+LINE 19999" in shown


def test_a_short_output_left_in_the_buffer_is_written() -> None:
    done = run_cli("--version")  # a few bytes: what is in a buffer at the end is written
    assert done.returncode == 0
    assert done.stdout.decode().startswith("vfs ")


def test_the_status_of_a_failure_is_the_process_status(tmp_path: Path) -> None:
    done = run_cli("apply", "--root", str(tmp_path), "*** Begin Patch\n*** Delete File: nothing.txt\n*** End Patch\n")
    assert done.returncode == 1
    assert "nothing.txt" in done.stderr.decode()  # (Codex's wording, on stderr)


def test_exit_handlers_still_run(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    setup = "import atexit; atexit.register(lambda: print('exit handler ran', file=sys.stderr))"
    done = _program(
        tmp_path, setup, "apply", "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n"
    )
    assert done.returncode == 0, done.stderr
    assert "exit handler ran" in done.stderr
    assert (tmp_path / "a.txt").read_text() == "ONE\n"


def test_a_running_thread_is_waited_for(tmp_path: Path) -> None:
    marker = tmp_path / "thread-finished"
    setup = (
        "import threading, time\n"
        f"threading.Thread(target=lambda: (time.sleep(0.5), open({str(marker)!r}, 'w').close())).start()"
    )
    done = _program(tmp_path, setup, "--version")
    assert done.returncode == 0, done.stderr
    assert marker.exists()


def test_the_console_script_entry_point_is_run() -> None:
    text = (REPO / "pyproject.toml").read_text()
    assert 'vfs = "editors.adapters.cli:run"' in text
