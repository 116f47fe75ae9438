"""Property: any sequence of appends and leaf moves, saved and reloaded, is the same session."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_tui.session import SessionManager
from tests.factories import assistant, user

Operation = tuple[str, int, str]

operations = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "user",
                "assistant",
                "assistant",
                "label",
                "unlabel",
                "name",
                "model",
                "thinking",
                "custom",
                "compaction",
                "branch",
                "branch",
                "reset",
                "summary",
            ]
        ),
        st.integers(min_value=0, max_value=10_000),
        st.text(max_size=12),
    ),
    max_size=40,
)


def apply(session: SessionManager, operation: Operation) -> None:
    kind, number, text = operation
    entries = session.entries()
    target = entries[number % len(entries)].id if entries else None
    if kind == "user":
        session.append_message(user(text))
    elif kind == "assistant":
        session.append_message(
            assistant(text, stop_reason=["stop", "error", "aborted"][number % 3])
        )
    elif kind in ("label", "unlabel") and target is not None:
        session.append_label(target, text or "x" if kind == "label" else None)
    elif kind == "name":
        session.append_session_info(text)
    elif kind == "model":
        session.append_model_change("prov", f"model-{number}")
    elif kind == "thinking":
        session.append_thinking_level_change(["off", "low", "high"][number % 3])
    elif kind == "custom":
        session.append_custom("state", {"n": number, "t": text})
    elif kind == "compaction" and target is not None:
        session.append_compaction(f"summary {text}", target, number)
    elif kind == "branch" and target is not None:
        session.branch(target)
    elif kind == "reset":
        session.reset_leaf()
    elif kind == "summary" and target is not None:
        session.branch_with_summary(target, f"learned {text}")


def snapshot(session: SessionManager) -> dict[str, Any]:
    rows = session.index.flatten()
    return {
        "tree": [(r.entry.id, r.tree_parent, r.order, r.label, r.entry.raw) for r in rows],
        "leaf": session.leaf_id,
        "path": [entry.id for entry in session.path()],
        "context": orjson.dumps(session.build_context().to_json()),
        "name": session.session_name,
    }


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations)
def test_save_and_reload_gives_the_same_tree_leaf_and_context(ops: list[Operation]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        session = SessionManager.create(Path(folder), Path(folder))
        for operation in ops:
            apply(session, operation)
        wrote_reply = any(entry.role == "assistant" for entry in session.entries())
        session.close()
        path = session.session_file
        assert path is not None
        if not wrote_reply:
            assert not path.exists()
            return
        reloaded = SessionManager.open(path, read_only=True)
        assert reloaded.warnings == []
        assert snapshot(reloaded) == snapshot(session)
