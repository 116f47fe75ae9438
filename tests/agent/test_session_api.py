"""AgentSession's tree operations, model choice, model info, cost, and the system prompt."""

from __future__ import annotations

from pathlib import Path

from pi_tui.agent.offline import MODEL_NAME
from pi_tui.agent.prompt import build_system_prompt, project_instructions
from pi_tui.agent.provider import FALLBACK_INFO, ModelSpec, model_info
from pi_tui.agent_session import AgentSession
from pi_tui.config import choose_model
from tests.agent.conftest import reply, script
from tests.fakes import FakeOpenAIServer, Reply, Usage


async def test_navigate_to_a_user_message_returns_its_text_and_moves_to_its_parent(
    session: AgentSession,
) -> None:
    script(reply("a1"), reply("a2"))
    await session.prompt("first question")
    await session.prompt("second question")
    path = session.manager.path()
    second = next(e for e in path if e.role == "user" and "second" in str(e.raw))
    assert session.navigate(second.id) == "second question"
    assert session.manager.leaf_id == second.parent_id
    answer = path[-1]
    assert session.navigate(answer.id) is None
    assert session.manager.leaf_id == answer.id


async def test_fork_at_a_user_message_and_new_session(session: AgentSession) -> None:
    script(reply("a1"), reply("a2"))
    await session.prompt("first question")
    await session.prompt("second question")
    second = [e for e in session.manager.path() if e.role == "user"][1]
    forked, text = session.fork(second.id)
    assert text == "second question"
    assert forked.manager.session_file != session.manager.session_file
    assert forked.manager.header["parentSession"] == str(session.manager.session_file)
    assert [e.role for e in forked.manager.path() if e.role] == ["user", "assistant"]
    fresh = session.new()
    assert fresh.manager.session_file is not None
    assert fresh.manager.session_file.parent == session.manager.session_file.parent  # type: ignore[union-attr]
    assert [e.type for e in fresh.manager.entries()] == ["model_change", "thinking_level_change"]
    forked.close()
    fresh.close()


async def test_settings_changes_are_recorded_only_when_they_change(session: AgentSession) -> None:
    before = len(session.manager.entries())
    session.set_thinking("off")
    session.set_model(ModelSpec(MODEL_NAME))
    assert len(session.manager.entries()) == before
    session.set_thinking("high")
    session.set_model(ModelSpec("openai/gpt-4o"))
    kinds = [e.type for e in session.manager.entries()[before:]]
    assert kinds == ["thinking_level_change", "model_change"]
    session.rename("  salt bug ")
    assert session.manager.session_name == "salt bug"


def test_the_model_is_chosen_from_flag_env_session_keys_then_offline() -> None:
    assert choose_model("openai/gpt-4o", None, {}) == "openai/gpt-4o"
    assert choose_model(None, None, {"PI_TUI_MODEL": "ollama_chat/qwen3:8b"}) == (
        "ollama_chat/qwen3:8b"
    )
    assert choose_model(None, ("anthropic", "claude-x"), {"ANTHROPIC_API_KEY": "k"}) == (
        "anthropic/claude-x"
    )
    # A session's model whose key is missing here falls back to what is usable.
    assert choose_model(None, ("anthropic", "claude-x"), {"OPENAI_API_KEY": "k"}) == (
        "openai/gpt-5-mini"
    )
    assert choose_model(None, None, {}) == MODEL_NAME


def test_model_info_from_the_bundled_map_or_a_stated_fallback() -> None:
    known = model_info(ModelSpec("anthropic/claude-sonnet-4-5"))
    assert known.known and known.context_window == 200_000 and known.supports_reasoning
    unknown = model_info(ModelSpec("openai/my-local-model"))
    assert unknown == FALLBACK_INFO and not unknown.known


async def test_cost_comes_from_the_price_map_for_known_models(
    session: AgentSession,
) -> None:
    with FakeOpenAIServer() as server:
        server.enqueue(Reply(text=["hi"], usage=Usage(prompt_tokens=1000, completion_tokens=100)))
        session.set_model(ModelSpec("openai/gpt-4o-mini", api_base=server.url, api_key="k"))
        messages = await session.prompt("q")
    cost = messages[-1]["usage"]["cost"]
    assert cost["total" > 0] if False else cost["total"] > 0
    assert abs(cost["input"] + cost["output"] - cost["total"]) < 1e-9
    assert cost["input"] == 1000 * 1.5e-7


def test_project_instructions_are_read_from_the_folder_and_its_parents(tmp_path: Path) -> None:
    inner = tmp_path / "repo" / "pkg"
    inner.mkdir(parents=True)
    (tmp_path / "repo" / "AGENTS.md").write_text("Use tabs.")
    (inner / "CLAUDE.md").write_text("Run make test.")
    found = project_instructions(inner)
    assert [text for _, text in found][-2:] == ["Use tabs.", "Run make test."]
    prompt = build_system_prompt(inner, [("read", "Read a file")])
    assert "- read: Read a file" in prompt and prompt.index("Use tabs.") < prompt.index("make test")
    assert str(inner) in prompt
