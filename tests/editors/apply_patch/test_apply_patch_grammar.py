"""The Lark grammar sent with the freeform tool, and the tool definitions."""

from __future__ import annotations

import json
from pathlib import Path

import lark
import pytest

from editors.apply_patch import tool
from editors.result import dumps

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "codex"
# Invalid (005 empty, 013 bad header), or only valid for the lenient parser (padded markers),
# or outside the grammar's intent (008: an Update with no change, which the grammar allows).
NOT_REQUIRED = {
    "005_rejects_empty_patch",
    "008_rejects_empty_update_hunk",
    "013_rejects_invalid_hunk_header",
    "017_whitespace_padded_hunk_header",
    "018_whitespace_padded_patch_markers",
    "020_whitespace_padded_patch_marker_lines",
}
SCENARIOS = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
ACCEPTED = [name for name in SCENARIOS if name not in NOT_REQUIRED]


def patch_of(name: str) -> str:
    return (CORPUS / name / "patch.txt").read_bytes().decode("utf-8")


@pytest.fixture(scope="module", params=["earley", "lalr"])
def grammar_parser(request: pytest.FixtureRequest) -> lark.Lark:
    # Building the parser at all proves there is no zero-width terminal (python lark refuses them).
    return lark.Lark(tool.grammar(), parser=request.param)


def test_corpus_is_complete() -> None:
    assert len(SCENARIOS) == 25
    assert len(ACCEPTED) == 19


@pytest.mark.parametrize("name", ACCEPTED)
def test_grammar_accepts_valid_corpus_patches(grammar_parser: lark.Lark, name: str) -> None:
    assert grammar_parser.parse(patch_of(name)).data == "start"


@pytest.mark.parametrize("name", ["005_rejects_empty_patch", "013_rejects_invalid_hunk_header"])
def test_grammar_rejects_invalid_corpus_patches(grammar_parser: lark.Lark, name: str) -> None:
    with pytest.raises(lark.exceptions.LarkError):
        grammar_parser.parse(patch_of(name))


@pytest.mark.parametrize(
    "text",
    [
        "*** Begin Patch\n*** Add File: a\n*** End Patch\n",  # add needs at least one + line
        "*** Begin Patch\n*** Add File: \n+x\n*** End Patch\n",  # empty file name
        "*** Begin Patch\n*** Update File: a\n@@ \n-x\n*** End Patch\n",  # "@@ " needs text
        "*** Begin Patch\n*** Update File: a\n@@\nx\n*** End Patch\n",  # unprefixed line
        "*** Begin Patch\n*** Delete File: a\n*** End Patch\nextra\n",
    ],
)
def test_grammar_rejects_malformed_patches(grammar_parser: lark.Lark, text: str) -> None:
    with pytest.raises(lark.exceptions.LarkError):
        grammar_parser.parse(text)


@pytest.mark.parametrize(
    "text",
    [
        "*** Begin Patch\n*** Add File: a\n+\n+x\n*** End Patch",  # empty added line, no final LF
        "*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@ ctx\n@@ more\n \n-x\n+y\n*** End of File\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: a\n -x\n*** Delete File: b\n*** End Patch\n",
    ],
)
def test_grammar_accepts_edge_forms(grammar_parser: lark.Lark, text: str) -> None:
    assert grammar_parser.parse(text).data == "start"


def test_grammar_has_the_spec_productions() -> None:
    text = tool.grammar()
    for rule in ("start:", "begin_patch:", "end_patch:", "hunk:", "add_hunk:", "delete_hunk:", "update_hunk:"):
        assert rule in text
    assert "%import common.LF" in text
    assert "/(.*)/" not in text


def test_custom_tool_definition() -> None:
    definition = tool.openai_custom_tool()
    assert definition["type"] == "custom"
    assert definition["name"] == "apply_patch"
    assert definition["format"] == {"type": "grammar", "syntax": "lark", "definition": tool.grammar()}
    assert "*** Begin Patch" in definition["description"]


def test_function_and_mcp_definitions_share_one_string_input() -> None:
    function = tool.openai_function_tool()
    mcp = tool.mcp_tool()
    assert function["parameters"] == mcp["inputSchema"]
    schema = function["parameters"]
    assert schema["required"] == ["input"]
    assert schema["properties"]["input"]["type"] == "string"
    assert schema["additionalProperties"] is False


def test_definitions_are_byte_stable_json() -> None:
    first = dumps(tool.tool_definitions())
    second = dumps(json.loads(first))
    assert first == second
    assert list(json.loads(first)) == sorted(json.loads(first))
