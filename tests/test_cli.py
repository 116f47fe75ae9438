"""The ``pi-tui`` command run as a real subprocess: exit codes, stdout, stderr."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

from pi_tui.session import SessionManager
from tests.factories import assistant, user


def run(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PI_TUI_SESSION_DIR"}
    return subprocess.run(
        [sys.executable, "-m", "pi_tui", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_sessions_tree_and_context_from_a_shell(tmp_path: Path) -> None:
    session = SessionManager.create(tmp_path)
    question = session.append_message(user("auth.ts 里的 salt 校验为什么失败？"))
    session.append_message(assistant("问题在第 23 行"))
    session.branch(question)
    session.append_message(user("先帮我看 hash 函数的实现"))
    session.append_session_info("salt bug")
    session.close()

    listing = run("sessions", cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    assert "salt bug" in listing.stdout and "3 msgs" in listing.stdout

    tree = run("tree", "salt bug", cwd=tmp_path)
    assert tree.returncode == 0, tree.stderr
    lines = tree.stdout.splitlines()
    assert lines[0].startswith(f"* {question}")
    assert any("├─" in line and "问题在第 23 行" in line for line in lines)
    assert any(line.startswith("* └─") and "hash" in line for line in lines)

    context = run("context", session.session_id[:8], "--json", cwd=tmp_path)
    assert context.returncode == 0, context.stderr
    payload = orjson.loads(context.stdout)
    assert payload["sessionName"] == "salt bug"
    assert [m["role"] for m in payload["context"]["messages"]] == ["user", "user"]


def test_errors_are_one_line_on_stderr_with_exit_2(tmp_path: Path) -> None:
    missing = run("tree", "no-such-session", cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stdout == ""
    assert missing.stderr.count("\n") == 1 and "No session matches" in missing.stderr

    bad = tmp_path / "notes.jsonl"
    bad.write_text("hello\n")
    not_session = run("context", str(bad), cwd=tmp_path)
    assert not_session.returncode == 2
    assert "not a pi session file" in not_session.stderr
    assert bad.read_text() == "hello\n"
