"""Helpers for the adapter tests: the CLI as a subprocess, ``vfs serve`` over HTTP, MCP results.

Every subprocess runs ``python -m editors.cli ...`` with ``PYTHONPATH`` set to the repository
root, so the tests exercise this checkout whether or not the package is installed.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SERVE = (sys.executable, "-m", "editors.cli", "serve")
STARTUP_TIMEOUT = 60.0  # importing the MCP SDK takes seconds on a loaded machine


def cli_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("PYTHONWARNINGS", None)
    env.update(extra)
    return env


def run_cli(
    *args: str, input: bytes | None = None, timeout: float = 120.0, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``python -m editors.cli ARGS`` in a subprocess (empty stdin unless ``input`` is given)."""
    return subprocess.run(
        [sys.executable, "-m", "editors.cli", *args],
        input=input if input is not None else b"",
        capture_output=True,
        env=cli_env(**(env or {})),
        cwd=REPO,
        timeout=timeout,
        check=False,
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class HttpServer:
    """A ``vfs serve --transport http`` subprocess; ``url`` is the MCP endpoint it announced."""

    process: subprocess.Popen[bytes]
    stderr_path: Path
    url: str
    root: Path

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> int:
        """SIGTERM by PID, then SIGKILL if it lingers; the exit status."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                return self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=20)
        return int(self.process.returncode)


def start_http_server(
    root: Path | str, log_dir: Path, *extra: str, port: int | None = None, env: dict[str, str] | None = None
) -> HttpServer:
    """Start ``vfs serve --transport http`` on a free 127.0.0.1 port; return once it accepts connections."""
    port = free_port() if port is None else port
    stderr_path = log_dir / f"serve-{port}.stderr"
    with open(stderr_path, "wb") as err:
        process = subprocess.Popen(
            [*SERVE, "--root", str(root), "--transport", "http", "--port", str(port), *extra],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=cli_env(**(env or {})),
            cwd=REPO,
        )
    return wait_for_announcement(process, stderr_path, root, port)


def wait_for_announcement(
    process: subprocess.Popen[bytes], stderr_path: Path, root: Path | str, port: int = 0
) -> HttpServer:
    """Wait until ``vfs serve`` announces its URL on stderr and accepts connections."""
    deadline = time.monotonic() + STARTUP_TIMEOUT
    server = HttpServer(process, stderr_path, "", Path(root))
    while time.monotonic() < deadline:
        match = re.search(r"MCP over HTTP at (\S+)", server.stderr())
        if match:
            server.url = match.group(1)
            announced = int(server.url.rsplit(":", 1)[1].split("/")[0])
            assert port in (0, announced), server.url
            with socket.create_connection(("127.0.0.1", announced), timeout=5):
                pass  # accepts connections
            return server
        if process.poll() is not None:
            raise AssertionError(f"vfs serve exited with {process.returncode}: {server.stderr()}")
        time.sleep(0.05)
    server.stop()
    raise AssertionError(f"vfs serve did not announce readiness in {STARTUP_TIMEOUT}s: {server.stderr()}")


def text_of(result: Any) -> str:
    """The text content of an MCP ``CallToolResult`` (one text block)."""
    assert len(result.content) == 1, result
    assert result.content[0].type == "text", result
    return str(result.content[0].text)


def ok_text(result: Any) -> str:
    assert result.is_error is False, text_of(result)
    return text_of(result)


def error_code(result: Any) -> str:
    """The code of an MCP tool error; checks the error's shape (text + structured content)."""
    assert result.is_error is True, text_of(result)
    structured = result.structured_content
    assert structured is not None and structured["is_error"] is True, result
    assert structured["text"] == text_of(result)
    return str(structured["code"])
