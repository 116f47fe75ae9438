"""End to end through the real command: print mode, JSON mode, --from, SIGINT, the offline model.

Each test starts ``pi-tui`` as a subprocess (LiteLLM's import costs seconds, so there are few).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from pi_tui.session import SessionManager, read_session_file
from pi_tui.session.entries import parse_entry

QUESTION = "auth.ts 里的 salt 校验为什么失败？"
FOLLOW_UP = "先帮我看 hash 函数的实现"
MODEL_KEYS = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "OPENROUTER_API_KEY",
    "PI_TUI_MODEL",
    "PI_TUI_SESSION_DIR",
    "PI_TUI_SCRIPT",
)


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in MODEL_KEYS}
    env["PI_TUI_OFFLINE_DELAY_MS"] = "0"
    env.update(extra)
    return env


def pi_tui(cwd: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pi_tui", *argv],
        cwd=cwd,
        env=environment(**env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def write_script(path: Path, *replies: dict[str, Any]) -> str:
    path.write_text(json.dumps({"replies": list(replies)}, ensure_ascii=False))
    return str(path)


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "auth.ts").write_text(
        "export function check(salt: string) {\n  return hash(salt) === stored;\n}\n"
    )
    (root / "README.md").write_text("# demo\n")
    return root


def only_session(root: Path) -> Path:
    files = list((root / ".pi" / "sessions").glob("*.jsonl"))
    assert len(files) == 1, files
    return files[0]


def test_reference_scenario_with_a_branch_from_the_question(tmp_path: Path) -> None:
    root = project(tmp_path)
    first = write_script(
        tmp_path / "first.json",
        {
            "text": "我先查看一下 auth.ts 的内容。",
            "tool_calls": [{"name": "read", "arguments": {"path": "src/auth.ts"}}],
        },
        {"thinking": "line 23", "text": "问题在第 23 行，salt 缺少 Base64 编码。"},
    )
    run = pi_tui(root, "-p", QUESTION, PI_TUI_SCRIPT=first)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "问题在第 23 行，salt 缺少 Base64 编码。"
    path = only_session(root)
    entries = read_session_file(path).entries
    kinds = [e.role or e.type for e in entries]
    assert kinds == [
        "model_change",
        "thinking_level_change",
        "user",
        "assistant",
        "toolResult",
        "assistant",
    ]
    assert entries[0].parent_id is None
    assert entries[0].raw["provider"] == "offline"
    assert "hash(salt)" in entries[4].raw["message"]["content"][0]["text"]
    question = entries[2]

    second = write_script(
        tmp_path / "second.json",
        {
            "text": "我搜索一下 hash。",
            "tool_calls": [{"name": "grep", "arguments": {"pattern": "hash"}}],
        },
        {"text": "hash 函数在 src/auth.ts 第 2 行被调用。"},
    )
    run = pi_tui(root, "--mode", "json", "--from", question.id, FOLLOW_UP, PI_TUI_SCRIPT=second)
    assert run.returncode == 0, run.stderr
    events = [orjson.loads(line) for line in run.stdout.splitlines()]
    assert events[0]["type"] == "agent_start" and events[-1]["type"] == "agent_end"
    starts = [e for e in events if e["type"] == "tool_execution_start"]
    assert starts[0]["toolName"] == "grep" and starts[0]["args"] == {"pattern": "hash"}
    ends = [e for e in events if e["type"] == "tool_execution_end"]
    assert "src/auth.ts" in ends[0]["result"]["content"][0]["text"]

    session = SessionManager.open(path, read_only=True)
    assert only_session(root) == path
    children = session.get_children(question.id)
    assert len(children) == 2  # the old answer and the new question: both branches kept
    new_question = next(c for c in children if c.role == "user")
    assert new_question.raw["message"]["content"][0]["text"] == FOLLOW_UP
    assert [e.role for e in session.path()][-4:] == ["user", "assistant", "toolResult", "assistant"]
    for entry in session.entries():
        parse_entry(entry.raw)  # every entry is valid pi v3


def test_list_files_works_with_no_key_and_no_network(tmp_path: Path) -> None:
    root = project(tmp_path)
    run = pi_tui(root, "-p", "list files")
    assert run.returncode == 0, run.stderr
    assert "README.md" in run.stdout and "src/" in run.stdout


def test_sigint_aborts_and_leaves_a_loadable_file(tmp_path: Path) -> None:
    root = project(tmp_path)
    script = write_script(tmp_path / "slow.json", {"text": "slowly " * 400})
    process = subprocess.Popen(
        [sys.executable, "-m", "pi_tui", "--mode", "json", "tell me a story"],
        cwd=root,
        env=environment(PI_TUI_SCRIPT=script, PI_TUI_OFFLINE_DELAY_MS="20"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    deadline = time.monotonic() + 90
    for line in process.stdout:
        if '"message_update"' in line:
            break
        assert time.monotonic() < deadline
    process.send_signal(signal.SIGINT)
    remaining, errors = process.communicate(timeout=30)
    assert process.returncode == 130, errors
    assert '"agent_end"' in remaining
    loaded = read_session_file(only_session(root))
    assert loaded.warnings == []
    last = loaded.entries[-1].raw["message"]
    assert last["role"] == "assistant" and last["stopReason"] == "aborted"
    assert last["errorMessage"] == "Operation aborted"
    assert 0 < len(last["content"][0]["text"]) < len("slowly " * 400)
    for entry in loaded.entries:
        parse_entry(entry.raw)


def test_compact_and_a_summarized_branch_from_the_shell(tmp_path: Path) -> None:
    from tests.factories import assistant, tool_call, tool_result, user

    root = project(tmp_path)
    manager = SessionManager.create(root, root / ".pi" / "sessions")
    manager.append_model_change("offline", "pi-tui")
    manager.append_message(user("why does the salt check fail?"))
    call = tool_call("read", path="src/auth.ts")
    manager.append_message(assistant("reading", tool_calls=[call], stop_reason="toolUse"))
    manager.append_message(tool_result("c1", "read", "return hash(salt) === stored;"))
    first_answer = manager.append_message(assistant("the salt is not encoded"))
    manager.append_message(user("and the hash?"))
    manager.append_message(assistant("hash is fine", provider="offline", model="pi-tui"))
    session_id = manager.session_id[:8]
    manager.close()
    path = only_session(root)

    run = pi_tui(
        root, "compact", session_id, "--keep-recent-tokens", "1", "--instructions", "the salt"
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("Compacted ")
    compaction = read_session_file(path).entries[-1].raw
    assert compaction["type"] == "compaction"
    assert "the salt" in compaction["summary"]
    assert compaction["details"] == {"readFiles": ["src/auth.ts"], "modifiedFiles": []}

    size = path.stat().st_size
    again = pi_tui(root, "compact", session_id)
    assert again.returncode == 1
    assert again.stderr.strip() == "pi-tui: Already compacted: the last entry is a compaction."
    assert path.stat().st_size == size

    moved = pi_tui(
        root, "--session", session_id, "--from", first_answer, "--summarize-branch", "-p", "ls"
    )
    assert moved.returncode == 0, moved.stderr
    assert "summarized the branch left behind" in moved.stderr
    session = SessionManager.open(path, read_only=True)
    summary = next(e for e in session.entries() if e.type == "branch_summary")
    assert summary.parent_id == first_answer
    assert summary.raw["fromId"] == first_answer
    assert "and the hash?" in summary.raw["summary"]
    question = next(c for c in session.get_children(summary.id))
    assert question.role == "user"
