"""``vfs serve`` and ``vfs schema`` as subprocesses: help, bad input, exit codes, one-line errors."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.adapters.support import run_cli, start_http_server

USAGE = 2
FAILURE = 1


def one_line(stderr: bytes) -> str:
    text = stderr.decode("utf-8")
    assert text.endswith("\n") and text.count("\n") == 1, text
    assert "Traceback" not in text
    return text.rstrip("\n")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["schema", "--format", "yaml"], "vfs schema: argument --format: invalid choice: 'yaml'"),
        (["schema", "--tool", "rm"], "vfs schema: argument --tool: invalid choice: 'rm'"),
        (["schema", "--format"], "vfs schema: argument --format: expected one argument"),
        (["serve", "--transport", "carrier-pigeon"], "vfs serve: argument --transport: invalid choice"),
        (["serve", "--port", "http"], "vfs serve: argument --port: invalid port 'http'"),
        (["serve", "--port", "70000"], "vfs serve: argument --port: invalid port 70000"),
        (["serve", "--mode", "yolo"], "vfs serve: argument --mode: invalid choice: 'yolo'"),
        (["serve", "-o", "no-equals-sign"], "vfs serve: --storage-option expects KEY=VALUE"),
        (["serve", "--max-output-chars", "lots"], "vfs serve: argument --max-output-chars: expected a positive"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args: list[str], expected: str) -> None:
    done = run_cli(*args)
    assert done.returncode == USAGE
    line = one_line(done.stderr)
    assert line.startswith(expected), line
    assert line.endswith(f"(see 'vfs {args[0]} --help')")
    assert done.stdout == b""


@pytest.mark.parametrize("args", [["schema", "--bogus"], ["serve", "stray"]])
def test_unrecognized_arguments_exit_2(args: list[str]) -> None:
    # reported by the top-level parser (editors/adapters/cli/__init__.py), in one line like every usage error
    done = run_cli(*args)
    assert done.returncode == USAGE
    assert one_line(done.stderr) == f"vfs: unrecognized arguments: {args[-1]} (see 'vfs --help')"
    assert done.stdout == b""


def test_serve_refuses_a_missing_local_root(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "dir"
    done = run_cli("serve", "--root", str(missing))
    assert done.returncode == FAILURE
    assert one_line(done.stderr) == f"vfs serve: The workspace root {missing} does not exist. [FS_BAD_ROOT]"
    assert done.stdout == b""
    assert not missing.exists()


def test_serve_reports_a_taken_port(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = run_cli("serve", "--root", str(tmp_path), "--transport", "http", "--port", str(port))
    assert done.returncode == FAILURE
    assert one_line(done.stderr).startswith(f"vfs serve: cannot listen on 127.0.0.1:{port}: ")


def test_serve_stdio_exits_cleanly_when_the_client_closes_stdin(tmp_path: Path) -> None:
    done = run_cli("serve", "--root", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""  # stdout belongs to the protocol: nothing else is written there
    assert done.stderr == b""


def test_serve_http_port_zero_picks_a_free_port_and_stops_on_sigterm(tmp_path: Path) -> None:
    server = start_http_server(tmp_path, tmp_path, port=0)
    try:
        assert server.url.startswith("http://127.0.0.1:") and not server.url.startswith("http://127.0.0.1:0/")
    finally:
        assert server.stop() == 0
    assert "Traceback" not in server.stderr()


@pytest.mark.parametrize("verb", ["serve", "schema"])
def test_help_has_examples(verb: str) -> None:
    done = run_cli(verb, "--help")
    assert done.returncode == 0
    text = done.stdout.decode()
    assert text.startswith(f"usage: vfs {verb}")
    assert "examples:" in text and f"vfs {verb} --" in text


def test_top_level_help_lists_the_verbs() -> None:
    done = run_cli("--help")
    assert done.returncode == 0
    text = done.stdout.decode()
    assert "serve" in text and "schema" in text
