"""Tool definitions: valid JSON Schema, the same bytes in every run, one source for every surface."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import lark
import pytest
from jsonschema import Draft202012Validator

from editors.adapters.cli import main
from editors.apply_patch.tool import grammar
from editors.result import dumps
from editors.str_replace_editor.args import input_schema as editor_input_schema
from editors.tools import FORMATS, TOOL_NAMES, definition, definitions, input_schema
from tests.adapters.support import run_cli
from tests.support.tiers import tiered

VALID_PATCH = (
    "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** Update File: b.txt\n@@ def f():\n-x\n+y\n*** End Patch\n"
)
INVALID_PATCH = "*** Begin Patch\n*** Frobnicate File: a.txt\n*** End Patch\n"


def schema_cli(*args: str, hash_seed: str = "0") -> bytes:
    """``vfs schema ARGS`` in a subprocess (with its own hash seed: set and dict orders differ)."""
    done = run_cli("schema", *args, env={"PYTHONHASHSEED": hash_seed})
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    return done.stdout


def schema_inproc(capsysbinary: pytest.CaptureFixture[bytes], *args: str) -> bytes:
    assert main(["schema", *args]) == 0
    out, err = capsysbinary.readouterr()
    assert err == b""
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_input_schema_is_valid_json_schema(fmt: str, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    defs = json.loads(schema_inproc(capsysbinary, "--format", fmt))
    assert [d["name"] for d in defs] == list(TOOL_NAMES)
    checked = 0
    for d in defs:
        schema = input_schema(d)
        if schema is None:  # the freeform custom tool: a grammar, not a schema
            assert fmt == "openai" and d["name"] == "apply_patch"
            continue
        Draft202012Validator.check_schema(schema)  # against the Draft 2020-12 meta-schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        checked += 1
    assert checked == (1 if fmt == "openai" else 2)


@pytest.mark.parametrize(
    "args",
    tiered(
        [  # two processes a case: one format in the fast tier
            ("--format", "openai"),
            ("--format", "openai-function"),
            ("--format", "anthropic"),
            ("--format", "mcp", "--enable-undo"),
            ("--format", "mcp", "--tool", "str_replace_editor"),
        ]
    ),
)
def test_schema_output_is_byte_identical_across_runs(args: tuple[str, ...]) -> None:
    first = schema_cli(*args, hash_seed="1")
    second = schema_cli(*args, hash_seed="2")
    assert first == second
    assert first.endswith(b"\n") and not first.endswith(b"\n\n")
    value = json.loads(first)
    assert first.decode("utf-8") == json.dumps(value, sort_keys=True, ensure_ascii=False, indent=2) + "\n"


def test_schema_cli_prints_what_the_registry_generates(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    for fmt in FORMATS:
        assert schema_inproc(capsysbinary, "--format", fmt).decode("utf-8") == dumps(definitions(fmt))
        for name in TOOL_NAMES:
            out = schema_inproc(capsysbinary, "--format", fmt, "--tool", name)
            assert out.decode("utf-8") == dumps(definition(name, fmt))
    assert json.loads(schema_inproc(capsysbinary)) == definitions("openai")  # the default format


def test_schemas_come_from_the_tools_own_models() -> None:
    editor_schema = editor_input_schema(False)
    assert definition("str_replace_editor", "mcp")["inputSchema"] == editor_schema
    assert definition("str_replace_editor", "anthropic")["input_schema"] == editor_schema
    assert definition("str_replace_editor", "openai")["parameters"] == editor_schema
    assert definition("str_replace_editor", "openai-function", config={"enable_undo": True})[
        "parameters"
    ] == editor_input_schema(True)
    patch_schema = definition("apply_patch", "mcp")["inputSchema"]
    assert definition("apply_patch", "anthropic")["input_schema"] == patch_schema
    assert definition("apply_patch", "openai-function")["parameters"] == patch_schema
    assert patch_schema["required"] == ["input"]


@pytest.mark.parametrize(
    ("fmt", "keys"),
    [
        ("anthropic", {"name", "description", "input_schema"}),
        ("mcp", {"name", "description", "inputSchema", "outputSchema"}),
        ("openai-function", {"type", "name", "description", "strict", "parameters"}),
    ],
)
def test_format_shapes(fmt: str, keys: set[str]) -> None:
    for d in definitions(fmt):
        assert set(d) == keys
        assert d["description"].strip()
        if fmt == "openai-function":
            assert d["type"] == "function"


def test_openai_format_sends_apply_patch_as_a_grammar_tool() -> None:
    openai = {d["name"]: d for d in json.loads(schema_cli("--format", "openai"))}  # what a user pipes
    custom = openai["apply_patch"]
    assert custom["type"] == "custom"
    assert custom["format"]["type"] == "grammar" and custom["format"]["syntax"] == "lark"
    assert custom["format"]["definition"] == grammar()
    assert openai["str_replace_editor"]["type"] == "function"
    # the grammar that goes over the wire parses patches, and rejects a malformed one
    parser = lark.Lark(custom["format"]["definition"], start="start")
    parser.parse(VALID_PATCH)
    with pytest.raises(lark.exceptions.LarkError):
        parser.parse(INVALID_PATCH)


@pytest.mark.parametrize(
    ("arguments", "valid"),
    [
        ({"command": "view", "path": "/workspace/a.py"}, True),
        ({"command": "view", "path": "/workspace/a.py", "view_range": [1, 5]}, True),
        ({"command": "insert", "path": "/w/a", "insert_line": 3, "new_str": "x"}, True),
        ({"command": "view"}, False),  # path is required
        ({"command": "explode", "path": "/w/a"}, False),
        ({"command": "view", "path": "/w/a", "replace_all": True}, False),
        ({"command": "insert", "path": "/w/a", "insert_line": "3", "new_str": "x"}, False),
    ],
)
def test_editor_schema_accepts_and_rejects_arguments(arguments: dict[str, Any], valid: bool) -> None:
    schema = definition("str_replace_editor", "mcp")["inputSchema"]
    errors = list(Draft202012Validator(schema).iter_errors(arguments))
    assert (errors == []) is valid, errors


def test_apply_patch_schema_accepts_and_rejects_arguments() -> None:
    schema = definition("apply_patch", "mcp")["inputSchema"]
    jsonschema.validate({"input": VALID_PATCH}, schema, cls=Draft202012Validator)
    for bad in ({}, {"input": 3}, {"input": VALID_PATCH, "patch": VALID_PATCH}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema, cls=Draft202012Validator)


def test_enable_undo_changes_only_the_editor(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    plain = {d["name"]: d for d in json.loads(schema_inproc(capsysbinary, "--format", "mcp"))}
    undo = {d["name"]: d for d in json.loads(schema_inproc(capsysbinary, "--format", "mcp", "--enable-undo"))}
    assert "undo_edit" not in plain["str_replace_editor"]["inputSchema"]["properties"]["command"]["enum"]
    assert "undo_edit" in undo["str_replace_editor"]["inputSchema"]["properties"]["command"]["enum"]
    assert plain["apply_patch"] == undo["apply_patch"]


def test_registry_refuses_unknown_names() -> None:
    with pytest.raises(ValueError, match="unknown format"):
        definition("apply_patch", "openai-chat")
    with pytest.raises(ValueError, match="unknown tool"):
        definition("rm_rf", "mcp")
