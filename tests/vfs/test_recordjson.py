"""vfs.recordjson writes the bytes ``json.dumps(obj, sort_keys=True)`` writes, without importing json."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.adapters.support import REPO
from vfs import recordjson

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_the_same_bytes_as_json_dumps_with_sorted_keys(obj: object) -> None:
    assert recordjson.dumps(obj) == json.dumps(obj, sort_keys=True).encode()


@pytest.mark.parametrize("obj", [{"a": object()}, [b"bytes"], {"k": {1, 2}}])
def test_what_json_cannot_encode_is_a_type_error(obj: object) -> None:
    with pytest.raises(TypeError, match="is not JSON serializable"):
        recordjson.dumps(obj)


def test_reading_is_json_loads() -> None:
    text = b'{"a": [1, 2.5, null, true, "\\u00e9"]}'
    assert recordjson.loads(text) == json.loads(text)
    with pytest.raises(ValueError):
        recordjson.loads(b'{"a": ')


def test_writing_a_record_imports_no_json() -> None:
    code = "import sys, vfs.recordjson as r; r.dumps({'a': [1.5]}); print('json' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert done.stdout.strip() == "False"
