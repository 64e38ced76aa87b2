"""The README's shell and Python blocks, run as written.

Every fenced block of the README is listed in :data:`BLOCKS`, found by a line of it that no other
block has: run here, run by another test (named), or skipped for a reason stated below. A block
added to the README fails :func:`test_every_block_is_accounted_for` until it is listed.

Shell blocks run under ``bash -e`` in a fresh directory with ``vfs`` (this checkout) and
``python`` (this interpreter) on ``PATH``, and ``pip`` as a no-op that records its arguments: the
package is already importable here, and a test does not install into the interpreter it runs in.
The one change made to a block: on S3, the README's endpoint ``http://127.0.0.1:9000`` becomes the
moto server's, whose port is picked at run time.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.adapters.support import REPO, cli_env

README_ENDPOINT = "http://127.0.0.1:9000"
PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n"


@dataclass(frozen=True)
class Block:
    heading: str
    lang: str
    code: str


def readme_blocks() -> list[Block]:
    """Every fenced block of the README, with the heading it is under."""
    blocks: list[Block] = []
    heading = ""
    lines = (REPO / "README.md").read_text(encoding="utf-8").split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        fence = re.fullmatch(r"```(\w*)", line)
        if fence:
            end = lines.index("```", index + 1)
            blocks.append(Block(heading, fence.group(1), "\n".join(lines[index + 1 : end]) + "\n"))
            index = end
        index += 1
    return blocks


RUN = "run here"
# A line of each block (unique to it) -> how it is covered.
BLOCKS: dict[str, str] = {
    "pip install . && vfs demo": RUN,
    "pip install -e '.[test]' && python -m pytest": (
        "skip: the whole test suite (~4,800 tests, minutes on 2 cores) cannot run inside one of its tests"
    ),
    'ws = vfs.open_workspace("memory://demo")': RUN,
    "vfs apply change.patch                          #": RUN,
    "vfs serve --root /path/to/repo ": (
        "skip: servers that run until stopped, on the reader's paths (/path/to/repo, a bucket at 127.0.0.1:9000); "
        "vfs serve over stdio and HTTP is tested in tests/adapters/test_mcp.py"
    ),
    'export VFS_SERVE_TOKEN="$(python3': "run by tests/adapters/test_mcp_auth.py::test_readme_command_serves_with_a_token",
    "async def main():": RUN,
    "vfs apply --json --root . --mount /workspace greet.patch": RUN,
    "$ vfs checkpoint before-agent": "run by tests/adapters/test_history_terminal.py::test_every_command_runs_as_written",
    '"text": "Success. Updated the following files:\\nM app.py\\n",': (
        "run by tests/adapters/test_readme_commands.py::test_the_structured_result_example_is_what_the_command_prints"
    ),
    "response = client.responses.create(": (
        "skip: needs a live model (an OpenAI API key and the openai package); compiled here"
    ),
    "reply = client.messages.create(": (
        "skip: needs a live model (an Anthropic API key and the anthropic package); compiled here"
    ),
    "export AWS_ACCESS_KEY_ID=my-key": RUN,
    "vfs serve --root s3://my-bucket/sandbox-42": (
        "skip: a stdio MCP server that runs until its client goes away; vfs serve on S3 is tested in tests/s3/"
    ),
    '    "s3://my-bucket/sandbox-42",': RUN,
    "pip install '.[azure]'": (
        "skip: needs Azurite or an Azure account; the CLI on Azurite is tested in tests/azure/test_azure_cli.py"
    ),
    'ws = vfs.open_workspace("az://my-container/sandbox-42"': (
        "skip: needs an Azure account (myacct); opening az:// roots is tested on Azurite in tests/azure/"
    ),
    'with fsspec.open("vfs::memory://notes/todo.txt", "w") as f:': "run by tests/fsspec_fs/test_readme.py",
    'fs = fsspec.filesystem("vfs", target="s3://my-bucket/reports")': "run by tests/fsspec_fs/test_readme.py",
    "bash benchmarks/install_peers.sh     #": (
        "skip: installs the peers (npm and PyPI, hundreds of MB) and runs for minutes; "
        "tests/benchmarks/ run the workloads at small sizes"
    ),
    "python -m benchmarks.replay                 #": (
        "skip: installs the peers and replays 544 attempts (minutes); tests/benchmarks/test_replay.py runs a few"
    ),
}


def block(key: str) -> Block:
    (found,) = [b for b in readme_blocks() if key in b.code]
    return found


def test_every_block_is_accounted_for() -> None:
    blocks = readme_blocks()
    for found in blocks:
        keys = [key for key in BLOCKS if key in found.code]
        assert len(keys) == 1, f"README block under '{found.heading}' is not listed once in BLOCKS: {found.code!r}"
    for key in BLOCKS:
        assert sum(key in b.code for b in blocks) == 1, f"no single README block holds {key!r}"
    assert all(b.lang in ("bash", "python", "json", "console") for b in blocks)
    assert all(
        b.lang not in ("json", "console") or "run by " in BLOCKS[next(k for k in BLOCKS if k in b.code)] for b in blocks
    )


def test_the_blocks_left_to_a_live_model_compile() -> None:
    for key, how in BLOCKS.items():
        if "live model" in how:
            compile(block(key).code, "README.md", "exec")


def test_the_tests_named_for_blocks_exist() -> None:
    for how in BLOCKS.values():
        if how.startswith("run by "):
            path, _, name = how.removeprefix("run by ").partition("::")
            text = (REPO / path).read_text(encoding="utf-8")
            assert "README" in text and (not name or f"def {name}(" in text), how


# -- running blocks ----------------------------------------------------------------------------------


def _shims(tmp_path: Path) -> tuple[Path, Path]:
    """A ``bin`` directory with ``vfs``, ``python`` and a recording ``pip``; the pip record."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    record = tmp_path / "pip-calls"
    shims = {
        "vfs": f'#!/bin/sh\nexec "{sys.executable}" -m editors.cli "$@"\n',
        "python": f'#!/bin/sh\nexec "{sys.executable}" "$@"\n',
        "pip": f'#!/bin/sh\necho "$@" >> "{record}"\n',
    }
    for name, text in shims.items():
        path = bin_dir / name
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return bin_dir, record


def run_block(
    found: Block, cwd: Path, tmp_path: Path, *, env: dict[str, str] | None = None, endpoint: str | None = None
) -> tuple[subprocess.CompletedProcess[str], Path]:
    bin_dir, record = _shims(tmp_path)
    code = found.code if endpoint is None else found.code.replace(README_ENDPOINT, endpoint)
    environment = cli_env(PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", **(env or {}))
    command = ["bash", "-e", "-c", code] if found.lang == "bash" else [sys.executable, "-c", code]
    done = subprocess.run(
        command,
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    return done, record


def test_set_up_block_runs_the_demo(tmp_path: Path) -> None:
    done, record = run_block(block("pip install . && vfs demo"), tmp_path, tmp_path)
    assert record.read_text() == "install .\n"
    assert "Workspace: memory://" in done.stdout and "FS_STALE_VERSION" in done.stdout


def test_python_transaction_block(tmp_path: Path) -> None:
    done, _ = run_block(block('ws = vfs.open_workspace("memory://demo")'), tmp_path, tmp_path)
    lines = done.stdout.splitlines()
    assert lines[0] == "['add /workspace/pkg/a.py', 'add /workspace/pkg/c.py']"
    assert lines[1].startswith("FS_STALE_VERSION ")


def test_the_tools_block(tmp_path: Path) -> None:
    work = tmp_path / "repo"
    work.mkdir()
    (work / "change.patch").write_text(PATCH)  # the files the block names
    (work / "app.py").write_text("print('app')\n")
    done, _ = run_block(block("vfs apply change.patch                          #"), work, tmp_path)
    out = done.stdout
    assert out.count("Success. Updated the following files:\nA hello.txt\n") == 2  # the file, then stdin
    assert "Dry run: nothing was changed." in out
    assert re.search(r"^ +1\s+print\('app'\)$", out, flags=re.M)  # the view of /repo/app.py
    assert "Undid " in out and "Recovery: rolled back 0" in out
    assert re.search(r"^vfs \S+$", out, flags=re.M)  # --version
    assert done.stderr == ""


def _shape(value: object) -> object:
    """The keys and nesting of a JSON value (what an example shows), not its values."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(item) for item in value]
    return type(value).__name__


def test_the_structured_result_example_is_what_the_command_prints(tmp_path: Path) -> None:
    """The README's JSON is the output of the block above it: same keys, same nesting, and the
    same values but for the txid and the version, which differ at every run."""
    import json

    done, _ = run_block(block("vfs apply --json --root . --mount /workspace greet.patch"), tmp_path, tmp_path)
    printed = json.loads(done.stdout)
    shown = json.loads(block('"text": "Success. Updated the following files:\\nM app.py\\n",').code)
    assert _shape(shown) == _shape(printed)
    for result in (printed, shown):
        result["data"]["txid"] = result["data"]["files"][0]["version"] = "varies"
    assert shown == printed


# slow: a server process and an MCP client (~3 s idle); the fast tier's twin is
# tests/adapters/test_mcp.py::test_stdio_lists_tools_and_runs_every_command[auto]
@pytest.mark.slow
def test_the_mcp_client_block(tmp_path: Path) -> None:
    done, _ = run_block(block("async def main():"), tmp_path, tmp_path)
    assert done.stdout == "New file created successfully at: /workspace/hi.txt\n"


@pytest.mark.s3
@pytest.mark.slow  # CLI processes on S3 (moto); the fast tier runs the same verbs on local disk above
def test_the_s3_blocks(tmp_path: Path) -> None:
    from tests.support import s3_servers

    ep = s3_servers.shared_moto_endpoint()
    client = ep.client()
    if "my-bucket" not in {b["Name"] for b in client.list_buckets()["Buckets"]}:
        client.create_bucket(Bucket="my-bucket")
    env = {"HOME": str(tmp_path), "AWS_EC2_METADATA_DISABLED": "true", "AWS_DEFAULT_REGION": s3_servers.REGION}
    (tmp_path / "change.patch").write_text(PATCH)
    done, record = run_block(
        block("export AWS_ACCESS_KEY_ID=my-key"), tmp_path, tmp_path, env=env, endpoint=ep.endpoint_url
    )
    assert record.read_text() == "install .[s3]\n"
    assert done.stdout.startswith("Success. Updated the following files:\nA hello.txt\n")
    assert "add    /workspace/hello.txt" in done.stdout
    shown, _ = run_block(
        block('    "s3://my-bucket/sandbox-42",'), tmp_path, tmp_path, env=env, endpoint=ep.endpoint_url
    )
    assert shown.stdout == "hello\n"
