"""App messages become provider messages by pi's replay rules."""

from __future__ import annotations

from pi_tui.agent.convert import (
    BRANCH_PREAMBLE,
    COMPACTION_PREAMBLE,
    MISSING_RESULT_TEXT,
    to_provider_messages,
)
from tests.factories import assistant, tool_call, tool_result, user


def test_plain_turns_with_a_system_prompt() -> None:
    converted = to_provider_messages(
        [user("hi"), assistant("hello")], system_prompt="be brief", provider="p1", model="m1"
    )
    assert converted == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]


def test_tool_calls_and_results_use_openai_shapes() -> None:
    converted = to_provider_messages(
        [
            user("read it"),
            assistant("", tool_calls=[tool_call("read", "c1", path="a.py")], stop_reason="toolUse"),
            tool_result("c1", "read", "print(1)"),
        ]
    )
    assert converted[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "read", "arguments": '{"path":"a.py"}'},
            }
        ],
    }
    assert converted[2] == {"role": "tool", "tool_call_id": "c1", "content": "print(1)"}


def test_errored_and_aborted_turns_are_dropped_with_their_results() -> None:
    converted = to_provider_messages(
        [
            user("q"),
            assistant("partial", stop_reason="aborted", tool_calls=[tool_call("read", "c1")]),
            tool_result("c1", "read", "orphan result"),
            assistant("", stop_reason="error"),
            assistant("real answer"),
        ]
    )
    assert [m["role"] for m in converted] == ["user", "assistant"]
    assert converted[1]["content"] == "real answer"


def test_missing_tool_results_are_synthesized_before_the_next_message() -> None:
    converted = to_provider_messages(
        [
            user("q"),
            assistant(
                "",
                tool_calls=[tool_call("read", "c1"), tool_call("read", "c2")],
                stop_reason="toolUse",
            ),
            tool_result("c2", "read", "two"),
            user("next"),
        ]
    )
    assert converted[2:] == [
        {"role": "tool", "tool_call_id": "c2", "content": "two"},
        {"role": "tool", "tool_call_id": "c1", "content": MISSING_RESULT_TEXT},
        {"role": "user", "content": "next"},
    ]


def test_app_only_roles_become_user_text() -> None:
    converted = to_provider_messages(
        [
            {
                "role": "bashExecution",
                "command": "ls",
                "output": "a\nb\n",
                "exitCode": 1,
                "cancelled": False,
                "truncated": False,
                "timestamp": 1,
            },
            {
                "role": "bashExecution",
                "command": "secret",
                "output": "x",
                "exitCode": 0,
                "cancelled": False,
                "truncated": False,
                "timestamp": 1,
                "excludeFromContext": True,
            },
            {
                "role": "custom",
                "customType": "note",
                "content": "remember 42",
                "display": True,
                "timestamp": 1,
            },
            {"role": "branchSummary", "summary": "tried X", "fromId": "a", "timestamp": 1},
            {"role": "compactionSummary", "summary": "earlier", "tokensBefore": 5, "timestamp": 1},
        ]
    )
    assert [m["role"] for m in converted] == ["user"] * 4
    assert converted[0]["content"] == "Ran `ls`\n```\na\nb\n```\n\nCommand exited with code 1"
    assert converted[1]["content"] == "remember 42"
    assert converted[2]["content"].startswith(BRANCH_PREAMBLE)
    assert "<summary>\ntried X\n</summary>" in converted[2]["content"]
    assert converted[3]["content"].startswith(COMPACTION_PREAMBLE)


def test_reasoning_goes_back_only_to_the_model_that_wrote_it() -> None:
    thought = {
        **assistant("answer", provider="anthropic", model="claude"),
        "content": [
            {"type": "thinking", "thinking": "let me see", "thinkingSignature": "sig"},
            {"type": "text", "text": "answer"},
        ],
    }
    same = to_provider_messages([user("q"), thought], provider="anthropic", model="claude")
    assert same[1]["reasoning_content"] == "let me see"
    assert same[1]["thinking_blocks"] == [
        {"type": "thinking", "thinking": "let me see", "signature": "sig"}
    ]
    other = to_provider_messages([user("q"), thought], provider="openai", model="gpt")
    assert "reasoning_content" not in other[1] and "thinking_blocks" not in other[1]


def test_images_become_data_urls() -> None:
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "what is this"},
            {"type": "image", "data": "QUJD", "mimeType": "image/png"},
        ],
        "timestamp": 1,
    }
    converted = to_provider_messages([message])
    assert converted[0]["content"] == [
        {"type": "text", "text": "what is this"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}},
    ]
