"""Status-bar totals along the active path, kept per entry."""

from __future__ import annotations

from typing import Any

from pi_tui.session import SessionManager
from pi_tui.ui.usage import UsageTotals
from tests.factories import assistant, user


def costly(text: str, tokens: int, cost: float, stop_reason: str = "stop") -> dict[str, Any]:
    message = assistant(text, stop_reason=stop_reason)
    message["usage"].update(
        input=tokens, output=1, cacheRead=2, totalTokens=tokens + 3, cost={"total": cost}
    )
    return message


def test_totals_follow_the_leaf_across_branches() -> None:
    manager = SessionManager.in_memory()
    question = manager.append_message(user("q"))
    manager.append_message(costly("a", 100, 0.5))
    totals = UsageTotals()
    first = totals.at_leaf(manager)
    assert (first.tokens_in, first.tokens_out, first.cost, first.context_tokens) == (
        102,
        1,
        0.5,
        103,
    )
    manager.append_message(user("q2"))
    manager.append_message(costly("b", 200, 0.25))
    second = totals.at_leaf(manager)
    assert (second.tokens_in, second.tokens_out, second.cost, second.context_tokens) == (
        304,
        2,
        0.75,
        203,
    )
    manager.branch(question)
    assert totals.at_leaf(manager).tokens_in == 0
    manager.append_message(costly("other", 50, 0.0))
    assert totals.at_leaf(manager).context_tokens == 53


def test_failed_replies_count_tokens_but_not_context() -> None:
    manager = SessionManager.in_memory()
    manager.append_message(user("q"))
    manager.append_message(costly("a", 100, 0.0))
    manager.append_message(user("q2"))
    manager.append_message(costly("", 900, 0.0, stop_reason="error"))
    result = UsageTotals().at_leaf(manager)
    assert result.tokens_in == 1004
    assert result.context_tokens == 103


def test_a_compaction_makes_the_context_count_unknown_until_the_next_reply() -> None:
    manager = SessionManager.in_memory()
    first = manager.append_message(user("q"))
    manager.append_message(costly("a", 100, 0.0))
    manager.append_compaction("summary", first, 103)
    totals = UsageTotals()
    assert totals.at_leaf(manager).context_tokens is None
    manager.append_message(user("q2"))
    manager.append_message(costly("b", 40, 0.0))
    assert totals.at_leaf(manager).context_tokens == 43
