"""The offline model's plans: scripts first, then rules that make real tool calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.agent.offline import HELP_TEXT, OfflineBrain, load_script, plan_from_rules

ALL_TOOLS = {"read", "write", "edit", "bash", "grep", "find", "ls"}


@pytest.mark.parametrize(
    ("request_text", "tool", "arguments"),
    [
        ("list files", "ls", {"path": "."}),
        ("Please list the files in src", "ls", {"path": "src"}),
        ("read README.md", "read", {"path": "README.md"}),
        ("grep TODO", "grep", {"pattern": "TODO"}),
        ("find *.py", "find", {"pattern": "*.py"}),
        ("run pytest -q", "bash", {"command": "pytest -q"}),
    ],
)
def test_plain_requests_become_tool_calls(
    request_text: str, tool: str, arguments: dict[str, str]
) -> None:
    reply = plan_from_rules([{"role": "user", "content": request_text}], ALL_TOOLS)
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [(tool, arguments)]
    assert reply.text


def test_anything_else_gets_the_honest_help_text() -> None:
    reply = plan_from_rules([{"role": "user", "content": "refactor my app"}], ALL_TOOLS)
    assert reply.text == HELP_TEXT and reply.tool_calls == []
    assert "ANTHROPIC_API_KEY" in HELP_TEXT and "--model" in HELP_TEXT


def test_a_disabled_tool_is_explained_not_called() -> None:
    reply = plan_from_rules([{"role": "user", "content": "run ls"}], {"read"})
    assert reply.tool_calls == [] and "bash" in reply.text


def test_tool_results_become_an_answer() -> None:
    reply = plan_from_rules(
        [
            {"role": "user", "content": "list files"},
            {"role": "assistant", "content": None, "tool_calls": []},
            {"role": "tool", "tool_call_id": "c", "content": "README.md\nsrc/\n"},
        ],
        ALL_TOOLS,
    )
    assert "README.md" in reply.text and "src/" in reply.text and reply.tool_calls == []


def test_script_replies_come_first_then_rules(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        '{"replies": [{"text": "scripted", "thinking": "t",'
        ' "tool_calls": [{"name": "read", "arguments": {"path": "a"}}]}]}'
    )
    brain = OfflineBrain(load_script(script))
    first = brain.next_reply([{"role": "user", "content": "x"}], ALL_TOOLS)
    assert (first.text, first.thinking) == ("scripted", "t")
    assert first.tool_calls[0].arguments == {"path": "a"}
    second = brain.next_reply([{"role": "user", "content": "list files"}], ALL_TOOLS)
    assert second.tool_calls[0].name == "ls"


def test_a_malformed_script_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"answers": []}')
    with pytest.raises(ValueError, match="replies"):
        load_script(bad)
    with pytest.raises(ValueError, match="cannot read"):
        load_script(tmp_path / "missing.json")
