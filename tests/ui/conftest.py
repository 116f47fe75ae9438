"""UI fixtures: an app on the scripted offline model in a temporary project."""

from __future__ import annotations

from pathlib import Path

from pi_tui.agent.offline import PlannedCall, PlannedReply
from pi_tui.agent.provider import ModelSpec
from pi_tui.agent_session import AgentSession
from pi_tui.session import SessionManager
from pi_tui.tools.base import ToolContext
from pi_tui.tools.registry import create_tools
from tests.model_fixtures import fast_offline_model, litellm_ready  # noqa: F401

QUESTION = "auth.ts 里的 salt 校验为什么失败？"
FOLLOW_UP = "先帮我看 hash 函数的实现"


def reference_script() -> list[PlannedReply]:
    """The reference debugging session's four model replies."""
    return [
        PlannedReply(
            "我先查看一下 auth.ts 的内容。", "", [PlannedCall("read", {"path": "src/auth.ts"})]
        ),
        PlannedReply("问题在第 23 行，salt 缺少 Base64 编码。", "salt is decoded twice"),
        PlannedReply("我搜索一下 hash 的定义。", "", [PlannedCall("grep", {"pattern": "hash"})]),
        PlannedReply("hash 在 src/auth.ts 第 2 行被调用，它对 salt 做了两次编码。"),
    ]


def make_project(root: Path) -> Path:
    """A small project to run tools in."""
    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / "src" / "auth.ts").write_text(
        "export function check(salt: string, stored: string) {\n"
        "  return hash(encode(salt)) === stored;\n}\n"
    )
    (root / "README.md").write_text("# auth service\n")
    return root


def make_agent(root: Path, manager: SessionManager | None = None) -> AgentSession:
    """An AgentSession on the offline model with the real tools."""
    manager = manager or SessionManager.create(root, root / ".pi" / "sessions")
    return AgentSession(
        manager,
        model=ModelSpec("offline/pi-tui"),
        tools=create_tools(ToolContext(root)),
        cwd=root,
    )
