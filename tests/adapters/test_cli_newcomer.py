"""Issue 18, a first hour without surprises: the CLI as a new user meets it, run as a subprocess
(under a pseudo-terminal where a terminal changes what happens)."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import vfs
from editors.adapters.integration import handle_tool_call
from tests.adapters.support import cli_env
from tests.support.tiers import tiered

PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n"
BAD_PATCH = "*** Begin Patch\n*** Update File: missing.txt\n@@\n-a\n+b\n*** End Patch\n"
ESCAPE = re.compile(rb"\x1b\[[0-9;]*[A-Za-z]")


def vfs_cli(
    *args: str, cwd: Path, input: bytes = b"", env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "editors.cli", *args],
        input=input,
        capture_output=True,
        cwd=cwd,
        env=env if env is not None else cli_env(),
        timeout=timeout,
        check=False,
    )


class Terminal:
    """``vfs ARGS`` with stdin and stderr on a pseudo-terminal, stdout on a pipe."""

    def __init__(self, *args: str, cwd: Path) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "editors.cli", *args],
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=slave,
            cwd=cwd,
            env=cli_env(),
            start_new_session=True,
        )
        os.close(slave)
        self.seen = b""

    def read_until(self, wanted: bytes, timeout: float = 60) -> bytes:
        deadline = time.monotonic() + timeout
        while wanted not in self.seen:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"never saw {wanted!r}; saw {self.seen!r}"
            ready, _, _ = select.select([self.master], [], [], remaining)
            if ready:
                with contextlib.suppress(OSError):  # EIO: the child closed the terminal
                    chunk = os.read(self.master, 4096)
                    if not chunk:
                        break
                    self.seen += chunk
        return self.seen

    def type(self, data: bytes) -> None:
        os.write(self.master, data)

    def finish(self, timeout: float = 60) -> tuple[int, bytes, bytes]:
        """(exit status, stdout, everything the terminal showed)."""
        assert self.process.stdout is not None
        stdout = self.process.stdout.read()
        self.process.stdout.close()
        status = self.process.wait(timeout=timeout)
        with contextlib.suppress(OSError):
            while select.select([self.master], [], [], 0.5)[0]:
                chunk = os.read(self.master, 4096)
                if not chunk:
                    break
                self.seen += chunk
        os.close(self.master)
        return status, stdout, self.seen


@pytest.fixture
def terminal() -> Iterator[list[Terminal]]:
    started: list[Terminal] = []
    yield started
    for term in started:
        if term.process.poll() is None:
            term.process.kill()
            term.process.wait(timeout=30)
        if term.process.stdout is not None and not term.process.stdout.closed:
            term.process.stdout.close()
        with contextlib.suppress(OSError):
            os.close(term.master)


# -- 1. vfs apply FILE, as git apply FILE ----------------------------------------------------------


def test_apply_reads_the_file_its_argument_names(tmp_path: Path) -> None:
    (tmp_path / "change.patch").write_text(PATCH)
    done = vfs_cli("apply", "change.patch", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        b"Success. Updated the following files:\nA hello.txt\n",
        b"",
    )
    assert (tmp_path / "hello.txt").read_text() == "hello\n"


def test_dry_run_of_a_file_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "change.patch").write_text(PATCH)
    done = vfs_cli("apply", "--dry-run", "change.patch", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(b"Dry run: nothing was changed. The patch would update:\nA hello.txt\n")
    assert b"+hello" in done.stdout
    assert not (tmp_path / "hello.txt").exists()


def test_a_dash_reads_stdin_and_the_patch_text_still_works(tmp_path: Path) -> None:
    assert vfs_cli("apply", "-", cwd=tmp_path, input=PATCH.encode()).returncode == 0
    assert (tmp_path / "hello.txt").read_text() == "hello\n"
    # Codex's form: the argument is the patch text, even where a file of that name could exist
    second = PATCH.replace("hello", "again")
    assert vfs_cli("apply", second, cwd=tmp_path).returncode == 0
    assert (tmp_path / "again.txt").read_text() == "again\n"


def test_an_argument_naming_no_file_is_parsed_as_a_patch(tmp_path: Path) -> None:
    done = vfs_cli("apply", "no-such.patch", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == b"Invalid patch: The first line of the patch must be '*** Begin Patch'\n"


def test_help_and_readme_show_the_file_form() -> None:
    done = vfs_cli("apply", "--help", cwd=Path.cwd())
    assert b"patch file" in done.stdout and b"- for stdin" in done.stdout


# -- 2. a terminal on stdin is told what the command waits for -------------------------------------


@pytest.mark.parametrize(
    ("args", "hint", "typed", "out"),
    [
        (["apply"], b"vfs apply: reading the patch from stdin", PATCH.encode(), b"A hello.txt\n"),
        (
            ["tool", "str_replace_editor"],
            b"vfs tool str_replace_editor: reading ARGS_JSON",
            b'{"command": "view", "path": "PATH/hello.txt"}',
            b"hello",
        ),
    ],
)
def test_a_terminal_on_stdin_is_told_what_is_awaited(
    tmp_path: Path, terminal: list[Terminal], args: list[str], hint: bytes, typed: bytes, out: bytes
) -> None:
    (tmp_path / "hello.txt").write_text("hello\n") if args[0] == "tool" else None
    term = Terminal(*args, "--root", str(tmp_path), cwd=tmp_path)
    terminal.append(term)
    term.read_until(hint)
    assert b"Ctrl-D" in term.read_until(b"Ctrl-D")
    term.type(typed.replace(b"PATH", str(tmp_path).encode()) + b"\n\x04")
    status, stdout, _ = term.finish()
    assert status == 0, term.seen
    assert out in stdout and hint not in stdout  # the hint is on stderr only


def test_no_hint_when_stdin_is_not_a_terminal(tmp_path: Path) -> None:
    done = vfs_cli("apply", cwd=tmp_path, input=PATCH.encode())
    assert (done.returncode, done.stderr) == (0, b"")


# -- 3. the demo never touches a user's files ------------------------------------------------------


def test_demo_in_a_directory_works_in_a_fresh_subdirectory(tmp_path: Path) -> None:
    (tmp_path / "OLD_NOTES.md").write_text("mine\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "main.py").write_text("print('mine')\n")
    done = vfs_cli("demo", "--root", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "OLD_NOTES.md").read_text() == "mine\n"
    assert (tmp_path / "app" / "main.py").read_text() == "print('mine')\n"
    (fresh,) = tmp_path.glob("vfs-demo-*")
    assert f"Workspace: {fresh}".encode() in done.stdout
    assert (fresh / "app" / "util" / "strings.py").exists()


@pytest.mark.parametrize("extra", [["--mode", "read-only"], ["--mount", "relative"]])
def test_a_failed_demo_leaves_the_directory_as_it_was(tmp_path: Path, extra: list[str]) -> None:
    (tmp_path / "mine.txt").write_text("mine\n")
    done = vfs_cli("demo", "--root", str(tmp_path), *extra, cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.decode().startswith("vfs demo: "), done
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]


def test_demo_help_says_where_it_runs() -> None:
    help_text = vfs_cli("demo", "--help", cwd=Path.cwd()).stdout.decode()
    assert "default: memory://" in help_text and "current directory" not in help_text


# -- 4. a wrong --root: one coded error, the same for every verb -----------------------------------

VERBS = [
    ["log"],
    ["undo"],
    ["redo"],
    ["recover"],
    ["checkpoint", "c1"],
    ["rewind", "c1"],
    ["demo"],
    ["serve"],
    ["apply", PATCH],
    ["tool", "apply_patch", json.dumps({"input": PATCH})],
    ["tool", "str_replace_editor", '{"command": "create", "path": "/x/a.txt", "file_text": "a"}'],
]


def _one_per_output_format(verb: list[str]) -> bool:
    """log (a verb's coded error), apply (Codex's text) and tool (the model's text, then the code)."""
    return verb[0] in ("log", "apply") or verb[:2] == ["tool", "apply_patch"]


@pytest.mark.parametrize("kind", ["missing", "a file"])
@pytest.mark.parametrize("verb", tiered(VERBS, _one_per_output_format), ids=lambda v: " ".join(v[:2])[:30])
def test_a_bad_root_is_one_coded_error_for_every_verb(tmp_path: Path, verb: list[str], kind: str) -> None:
    root = tmp_path / "nope"
    if kind == "a file":
        root.write_text("not a directory\n")
    args = (
        [*verb[:2], "--root", str(root), *verb[2:]]
        if verb[0] == "tool"
        else [*verb[:1], "--root", str(root), *verb[1:]]
    )
    done = vfs_cli(*args, cwd=tmp_path)
    problem = "does not exist" if kind == "missing" else "is not a directory"
    message = f"The workspace root {root} {problem}."
    assert done.returncode == 1, done
    shown = (done.stdout + done.stderr).decode()
    assert ".vfs" not in shown and "Traceback" not in shown
    if verb[0] == "tool":  # the model's text on stdout, the code on stderr
        assert done.stdout.decode() == f"Error: {message}\n"
        assert done.stderr.decode() == "vfs tool: call failed [FS_BAD_ROOT]\n"
    elif verb[0] == "apply":  # not a terminal: Codex's kind of text, no code
        assert done.stderr.decode() == message + "\n"
    else:
        assert done.stderr.decode() == f"vfs {verb[0]}: {message} [FS_BAD_ROOT]\n"
    if kind == "a file":
        assert root.read_text() == "not a directory\n"
    else:
        assert not root.exists()


def test_the_library_says_the_same() -> None:
    with pytest.raises(vfs.WorkspaceRootInvalid) as caught:
        vfs.open_workspace("/no/such/root/anywhere")
    assert (caught.value.code, caught.value.message) == (
        "FS_BAD_ROOT",
        "The workspace root /no/such/root/anywhere does not exist.",
    )


# -- 5. S3: missing credentials, a missing bucket ---------------------------------------------------


def _s3_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in cli_env().items() if not k.startswith("AWS_")}
    env.update(
        HOME=str(tmp_path),  # no ~/.aws
        AWS_CONFIG_FILE=str(tmp_path / "none"),
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
        AWS_EC2_METADATA_DISABLED="true",
    )
    env.update(extra)
    return env


S3_VERBS = [
    ["log"],
    ["undo"],
    ["recover"],
    ["apply", PATCH],
    ["tool", "str_replace_editor", '{"command": "view", "path": "/workspace"}'],
]


def _s3_args(verb: list[str], root: str, endpoint: str) -> list[str]:
    split = 2 if verb[0] == "tool" else 1
    return [*verb[:split], "--root", root, "-o", f"endpoint_url={endpoint}", *verb[split:]]


@pytest.mark.s3
# a process and moto a case: log in the fast tier (apply's and tool's texts: the local bad root above)
@pytest.mark.parametrize("verb", tiered(S3_VERBS), ids=lambda v: v[0])
def test_s3_without_credentials_says_how_to_give_them(tmp_path: Path, verb: list[str]) -> None:
    from tests.support import s3_servers

    ep = s3_servers.shared_moto_endpoint()
    bucket = s3_servers.make_bucket(ep, "nocreds")
    done = vfs_cli(*_s3_args(verb, f"s3://{bucket}/ws", ep.endpoint_url), cwd=tmp_path, env=_s3_env(tmp_path))
    assert done.returncode == 1, done
    shown = (done.stdout + done.stderr).decode()
    assert f"No S3 credentials were found for s3://{bucket}/ws." in shown
    assert "AWS_ACCESS_KEY_ID" in shown and "--storage-option key=" in shown
    assert "NoCredentialsError" not in shown and ".vfs" not in shown
    assert "FS_PERMISSION_DENIED" in done.stderr.decode() or verb[0] == "apply"


@pytest.mark.s3
# a process and moto a case: log in the fast tier (apply's and tool's texts: the local bad root above)
@pytest.mark.parametrize("verb", tiered(S3_VERBS), ids=lambda v: v[0])
def test_s3_a_missing_bucket_is_a_bad_root(tmp_path: Path, verb: list[str]) -> None:
    from tests.support import s3_servers

    ep = s3_servers.shared_moto_endpoint()
    env = _s3_env(
        tmp_path,
        AWS_ACCESS_KEY_ID=s3_servers.TEST_KEY,
        AWS_SECRET_ACCESS_KEY=s3_servers.TEST_SECRET,
        AWS_DEFAULT_REGION=s3_servers.REGION,
    )
    done = vfs_cli(*_s3_args(verb, "s3://no-such-bucket-18/ws", ep.endpoint_url), cwd=tmp_path, env=env)
    assert done.returncode == 1, done
    shown = (done.stdout + done.stderr).decode()
    assert "The bucket no-such-bucket-18 of the workspace root s3://no-such-bucket-18/ws does not exist" in shown
    assert ".vfs" not in shown
    assert "FS_BAD_ROOT" in done.stderr.decode() or verb[0] == "apply"


@pytest.mark.s3
def test_s3_with_credentials_as_storage_options(tmp_path: Path) -> None:
    from tests.support import s3_servers

    ep = s3_servers.shared_moto_endpoint()
    bucket = s3_servers.make_bucket(ep, "optcreds")
    args = ["-o", f"key={s3_servers.TEST_KEY}", "-o", f"secret={s3_servers.TEST_SECRET}"]
    root = f"s3://{bucket}/ws"
    done = vfs_cli(*_s3_args(["apply", PATCH], root, ep.endpoint_url), *args, cwd=tmp_path, env=_s3_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"Success. Updated the following files:\nA hello.txt\n"


# -- 6 and 10. on a terminal: the status line ends before an error, which has its code --------------


def test_on_a_terminal_an_apply_error_starts_its_own_line_with_its_code(
    tmp_path: Path, terminal: list[Terminal]
) -> None:
    (tmp_path / "change.patch").write_text(BAD_PATCH)
    term = Terminal("apply", "change.patch", cwd=tmp_path)
    terminal.append(term)
    status, stdout, seen = term.finish()
    assert (status, stdout) == (1, b"")
    lines = [ESCAPE.sub(b"", line).split(b"\r")[-1] for line in seen.replace(b"\r\n", b"\n").split(b"\n")]
    expected = (
        f"vfs apply: Failed to read file to update {tmp_path / 'missing.txt'}: No such file or directory"
        " (os error 2) [PATCH_FILE_NOT_FOUND]"
    ).encode()
    assert lines[0].startswith(b"applying patch to "), seen
    assert expected in lines, seen


def test_off_a_terminal_apply_prints_codex_text_exactly(tmp_path: Path) -> None:
    (tmp_path / "change.patch").write_text(BAD_PATCH)
    done = vfs_cli("apply", "change.patch", cwd=tmp_path)
    assert done.returncode == 1
    missing = tmp_path / "missing.txt"
    assert done.stderr == f"Failed to read file to update {missing}: No such file or directory (os error 2)\n".encode()


# -- 7. Add File over an existing file ---------------------------------------------------------------


def test_add_over_an_existing_file_says_A_like_codex_and_the_log_says_modify(tmp_path: Path) -> None:
    (tmp_path / "hello.txt").write_text("old\n")
    done = vfs_cli("apply", "--diff", PATCH, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary, diff = done.stdout.decode().split("\n", 2)[:2], done.stdout.decode()
    assert summary == ["Success. Updated the following files:", "A hello.txt"]  # Codex's text, as models know it
    assert "-old\n+hello\n" in diff  # the diff shows what was replaced
    (entry,) = json.loads(vfs_cli("log", "--json", cwd=tmp_path).stdout)
    assert entry["changes"] == [{"action": "modify", "path": str(tmp_path / "hello.txt")}]
    undone = vfs_cli("undo", cwd=tmp_path)
    assert undone.stdout.decode().splitlines()[1].split() == ["restored", str(tmp_path / "hello.txt")]
    assert (tmp_path / "hello.txt").read_text() == "old\n"


# -- 8. in process: a broken function call is said to be one -----------------------------------------


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ('{"input": "*** Begin Patch', "arguments of the apply_patch call are not valid JSON: Unterminated string"),
        ('{"pach": "*** Begin Patch"}', 'have no "input" key (got pach)'),
        ("[1, 2]", "must be a JSON object, got list"),
    ],
)
def test_a_broken_apply_patch_function_call_is_named(arguments: str, said: str) -> None:
    ws = vfs.open_workspace("memory://issue18-calls")
    for call in (
        {"type": "function_call", "call_id": "c1", "name": "apply_patch", "arguments": arguments},
        {"type": "function", "id": "c2", "function": {"name": "apply_patch", "arguments": arguments}},
    ):
        result = handle_tool_call(ws, call)
        assert result.is_error and result.code == "FS_INVALID_ARGUMENT"
        assert said in result.text and '"input"' in result.text
        assert "*** Begin Patch'" not in result.text  # not the parser's first-line complaint


def test_the_patch_envelope_models_send_by_mistake_is_still_accepted() -> None:
    ws = vfs.open_workspace("memory://issue18-envelope")
    call = {"type": "function_call", "call_id": "c", "name": "apply_patch", "arguments": json.dumps({"patch": PATCH})}
    assert handle_tool_call(ws, call).text == "Success. Updated the following files:\nA hello.txt\n"


# -- 9. --version, --json on the reporting verbs, undo says what it did ------------------------------


def test_version(tmp_path: Path) -> None:
    done = vfs_cli("--version", cwd=tmp_path)
    assert done.returncode == 0 and re.fullmatch(rb"vfs (\d+\.\d+\.\d+\S*|unknown)\n", done.stdout), done


def test_undo_says_what_it_did_and_every_reporting_verb_speaks_json(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("v1\n")
    (tmp_path / "gone.txt").write_text("bye\n")
    patch = (
        "*** Begin Patch\n*** Add File: new.txt\n+n\n*** Update File: keep.txt\n@@\n-v1\n+v2\n"
        "*** Delete File: gone.txt\n*** End Patch\n"
    )
    assert vfs_cli("apply", patch, cwd=tmp_path).returncode == 0
    checkpoint = json.loads(vfs_cli("checkpoint", "after", "--json", cwd=tmp_path).stdout)
    assert checkpoint["checkpoint"]["name"] == "after"
    undone = vfs_cli("undo", cwd=tmp_path).stdout.decode().splitlines()
    assert sorted(line.split() for line in undone[1:]) == [
        ["removed", str(tmp_path / "new.txt")],
        ["restored", str(tmp_path / "gone.txt")],
        ["restored", str(tmp_path / "keep.txt")],
    ]
    redone = json.loads(vfs_cli("redo", "--json", cwd=tmp_path).stdout)
    assert redone["redone"]["label"].startswith("undo ")  # redo takes back the undo
    undo_json = json.loads(vfs_cli("undo", "--json", cwd=tmp_path).stdout)
    assert {c["path"]: c["undone"] for c in undo_json["undone"]["changes"]}[str(tmp_path / "new.txt")] == "removed"
    recovered = json.loads(vfs_cli("recover", "--json", cwd=tmp_path).stdout)
    assert recovered["clean"] is True and recovered["rolled_back"] == []
    rewound = json.loads(vfs_cli("rewind", "after", "--dry-run", "--json", cwd=tmp_path).stdout)
    assert rewound["dry_run"] is True


def test_a_json_failure_has_its_code_on_stdout(tmp_path: Path) -> None:
    done = vfs_cli("undo", "--json", cwd=tmp_path)
    assert done.returncode == 1
    assert json.loads(done.stdout) == {
        "code": "FS_NOT_FOUND",
        "is_error": True,
        "text": "There is no transaction to undo.",
    }
    assert done.stderr == b"vfs undo: There is no transaction to undo. [FS_NOT_FOUND]\n"
