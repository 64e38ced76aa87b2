"""Ctrl-C (SIGINT) in any verb: one line on stderr, exit status 130, never a traceback.

Each test starts a verb that blocks, waits until it is provably blocked (reading stdin, as the
kernel reports in ``/proc/PID/syscall``; or serving, as the server announces), then sends SIGINT.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.adapters.support import REPO, cli_env, start_http_server

INTERRUPTED = b"vfs: interrupted\n"
WAIT = 60.0  # seconds a process may take to start on a loaded machine (not a timed assertion)
READ_SYSCALL = "0"  # the number of read(2) on x86-64: the first field of /proc/PID/syscall

needs_proc_syscall = pytest.mark.skipif(
    not os.path.exists(f"/proc/{os.getpid()}/syscall") or os.uname().machine != "x86_64",
    reason="needs Linux's /proc/PID/syscall on x86-64 to see the process block in read(2)",
)


def _ctrl_c_as_at_a_terminal() -> None:
    # A job started in the background of a non-interactive shell (a CI script's `... &`) inherits
    # SIGINT ignored, and Python then leaves it ignored: the verb would never see the Ctrl-C.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def spawn(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "editors.cli", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(),
        cwd=REPO,
        preexec_fn=_ctrl_c_as_at_a_terminal,
    )


def wait_reading_stdin(process: subprocess.Popen[bytes]) -> None:
    """Until the process sits in read(2) on file descriptor 0."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        with open(f"/proc/{process.pid}/syscall") as handle:
            fields = handle.read().split()
        if fields[:2] == [READ_SYSCALL, "0x0"]:
            return
        time.sleep(0.02)
    raise AssertionError("the process never blocked reading stdin")


def interrupt(process: subprocess.Popen[bytes]) -> tuple[int, bytes, bytes]:
    """SIGINT, then the exit: stdin stays open until the process is gone (``communicate`` would
    close it at once, and a process scheduled late would read that end of input first)."""
    assert process.stdout is not None and process.stderr is not None and process.stdin is not None
    os.kill(process.pid, signal.SIGINT)
    status = process.wait(timeout=WAIT)
    out, err = process.stdout.read(), process.stderr.read()
    process.stdin.close()
    process.stdout.close()
    process.stderr.close()
    return status, out, err


def assert_interrupted(status: int, err: bytes) -> None:
    assert b"Traceback" not in err, err.decode()
    assert status == 130, err.decode()
    assert err.endswith(INTERRUPTED), err.decode()


@needs_proc_syscall
@pytest.mark.parametrize(
    "verb",
    [
        ("apply", "--root", "memory://ctrl-c"),
        ("tool", "str_replace_editor", "--root", "memory://ctrl-c"),
        ("tool", "apply_patch", "--root", "memory://ctrl-c"),
    ],
    ids=["apply", "tool-editor", "tool-patch"],
)
def test_a_verb_reading_stdin(verb: tuple[str, ...]) -> None:
    process = spawn(*verb)
    wait_reading_stdin(process)
    status, out, err = interrupt(process)
    assert out == b""
    assert err == INTERRUPTED
    assert_interrupted(status, err)


def test_serve_over_http(tmp_path: Path) -> None:
    server = start_http_server("memory://ctrl-c-http", tmp_path)
    try:
        os.kill(server.process.pid, signal.SIGINT)
        status = server.process.wait(timeout=WAIT)
    finally:
        server.stop()
    err = server.stderr().encode()
    assert_interrupted(status, err)
    assert err.splitlines()[-2].startswith(b"vfs serve: MCP over HTTP at ")  # then only the one line


@pytest.mark.slow  # a server process; test_serve_over_http is the fast twin
def test_serve_over_stdio() -> None:
    """Once the server has answered ``initialize``, it is serving: Ctrl-C stops it with 130."""
    process = spawn("serve", "--root", "memory://ctrl-c-stdio")
    assert process.stdin is not None and process.stdout is not None
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    process.stdin.write(json.dumps(request).encode() + b"\n")
    process.stdin.flush()
    answer = json.loads(process.stdout.readline())
    assert answer["id"] == 1 and "result" in answer, answer
    status, _, err = interrupt(process)
    assert err == INTERRUPTED
    assert_interrupted(status, err)
