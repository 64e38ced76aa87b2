"""Every code block of the README's fsspec section runs as written, in a fresh interpreter that
finds the ``vfs`` protocol through the package's entry points (S3: the moto server, reached
through the usual ``AWS_*`` environment variables the README mentions)."""

from __future__ import annotations

import contextlib
import re
import subprocess
from pathlib import Path

import pytest

from tests.fsspec_fs.support import PYTHON, REPO, subprocess_env

HEADING = "## In the fsspec ecosystem"


def section_blocks() -> list[tuple[str, str]]:
    """(language, code) of every fenced block in the section."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index(HEADING)
    end = text.find("\n## ", start + 1)
    section = text[start : end if end != -1 else None]
    return re.findall(r"```(\w+)\n(.*?)```", section, flags=re.S)


def _run(code: str, tmp_path: Path, *warnings: str, **env: str) -> str:
    done = subprocess.run(
        [PYTHON, *warnings, "-c", code],
        env=subprocess_env(tmp_path / "meta", **env),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_section_shows_two_python_blocks_and_nothing_else() -> None:
    # a block added later must get a test here: this one fails until it does
    assert [lang for lang, _ in section_blocks()] == ["python", "python"]


def test_the_url_forms_block(tmp_path: Path) -> None:
    code = section_blocks()[0][1]
    # -W error: UPath warns about a protocol it has no class for (the entry point gives it one)
    assert _run(code, tmp_path, "-W", "error") == "ship it\n# demo\n"


@pytest.mark.s3
@pytest.mark.slow  # pandas through vfs:: URLs on S3 (moto); test_the_url_forms_block is the fast twin
def test_the_pandas_block_on_s3(tmp_path: Path) -> None:
    from tests.support import s3_servers

    ep = s3_servers.shared_moto_endpoint()
    with contextlib.suppress(Exception):  # made by an earlier run in this process
        ep.client().create_bucket(Bucket="my-bucket")
    out = _run(
        section_blocks()[1][1],
        tmp_path,
        AWS_ENDPOINT_URL=ep.endpoint_url,
        AWS_ACCESS_KEY_ID=s3_servers.TEST_KEY,
        AWS_SECRET_ACCESS_KEY=s3_servers.TEST_SECRET,
        AWS_DEFAULT_REGION=s3_servers.REGION,
    )
    assert out.splitlines() == [
        "FS_STALE_VERSION",
        "False",
        "b'region,sales\\nnorth,999\\n'",
        "b'total\\n999\\n'",
        "['modify', 'add']",
    ]
