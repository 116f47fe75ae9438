"""The tool registry and the JSON schemas the model sees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_tui.tools.base import ToolContext, ToolError
from pi_tui.tools.registry import ALL_TOOLS, create_tools


def parameters(context: ToolContext, name: str) -> dict[str, Any]:
    schema = create_tools(context, [name])[name].schema()
    assert schema["type"] == "function"
    assert schema["function"]["name"] == name
    assert schema["function"]["description"]
    result: dict[str, Any] = schema["function"]["parameters"]
    return result


def test_all_tools_in_order() -> None:
    assert [tool.name for tool in ALL_TOOLS] == [
        "read",
        "write",
        "edit",
        "bash",
        "grep",
        "find",
        "ls",
    ]


def test_create_tools_by_name(context: ToolContext) -> None:
    assert list(create_tools(context)) == [tool.name for tool in ALL_TOOLS]
    chosen = create_tools(context, ["ls", "read"])
    assert list(chosen) == ["ls", "read"]
    assert chosen["ls"].context is context


def test_unknown_tool_lists_the_known_ones(context: ToolContext) -> None:
    with pytest.raises(ValueError, match=r"Unknown tool.*teleport.*read, write, edit, bash"):
        create_tools(context, ["read", "teleport"])


@pytest.mark.parametrize(
    ("name", "properties", "required"),
    [
        ("read", ["path", "offset", "limit"], ["path"]),
        ("write", ["path", "content"], ["path", "content"]),
        ("edit", ["path", "oldText", "newText"], ["path", "oldText", "newText"]),
        ("bash", ["command", "timeout"], ["command"]),
        (
            "grep",
            ["pattern", "path", "glob", "ignoreCase", "literal", "context", "limit"],
            ["pattern"],
        ),
        ("find", ["pattern", "path", "limit"], ["pattern"]),
        ("ls", ["path", "limit"], []),
    ],
)
def test_schemas(
    context: ToolContext, name: str, properties: list[str], required: list[str]
) -> None:
    schema = parameters(context, name)
    assert schema["type"] == "object"
    assert list(schema["properties"]) == properties
    assert sorted(schema.get("required", [])) == sorted(required)
    assert schema["additionalProperties"] is False
    for spec in schema["properties"].values():
        assert spec["description"]
        assert "title" not in spec


def test_numeric_bounds_are_in_the_schema(context: ToolContext) -> None:
    read = parameters(context, "read")["properties"]
    assert read["offset"]["anyOf"][0] == {"type": "integer", "minimum": 1}
    assert parameters(context, "grep")["properties"]["limit"]["default"] == 100


def test_bad_arguments_are_a_readable_tool_error(tmp_path: Path) -> None:
    tool = create_tools(ToolContext(tmp_path), ["read"])["read"]
    with pytest.raises(ToolError, match=r"offset: Input should be greater than or equal to 1"):
        tool.parse_args({"path": "a", "offset": 0})
    with pytest.raises(ToolError, match=r"Extra inputs are not permitted"):
        tool.parse_args({"path": "a", "bogus": 1})
