"""The tree as rows a person reads: filters, pi's compact indentation, one-line entry text.

Pure functions over :class:`~pi_tui.session.tree.TreeNode`; the CLI prints them and the
navigator draws them. Chains keep their indent; only the children of a branch point are
indented, with ``├─``/``└─`` connectors and ``│`` gutters. Entries a filter hides pass their
children up to the nearest visible ancestor, so connectors stay right.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from .catalog import text_of
from .records import Entry
from .tree import SessionIndex, TreeNode

# Metadata: labels and names show as [label] and in the status bar, not as rows.
SETTINGS_TYPES = frozenset(
    {"label", "session_info", "custom", "model_change", "thinking_level_change"}
)
TEXT_WIDTH = 200

EntryFilter = Callable[[Entry], bool]


def default_filter(entry: Entry) -> bool:
    """pi's default tree view: settings, labels and app state hidden."""
    return entry.type not in SETTINGS_TYPES


def show_all(entry: Entry) -> bool:
    """Every entry."""
    return True


def filter_tree(roots: list[TreeNode], keep: EntryFilter) -> list[TreeNode]:
    """A copy of the tree with hidden nodes removed and their children lifted up."""
    result: list[TreeNode] = []
    # Each frame: a source node and the list its visible copy (or its lifted children) joins.
    stack: list[tuple[TreeNode, list[TreeNode]]] = [(root, result) for root in reversed(roots)]
    # Children must land in order, so a node's children are pushed in reverse.
    while stack:
        node, target = stack.pop()
        if keep(node.entry):
            copy = TreeNode(node.entry, [], node.label)
            target.append(copy)
            destination = copy.children
        else:
            destination = target
        stack.extend((child, destination) for child in reversed(node.children))
    return result


@dataclass(frozen=True, slots=True)
class LayoutRow:
    """One printed line of the tree."""

    entry: Entry
    prefix: str
    label: str | None
    depth: int


def connectors(gutter: str, last: bool) -> tuple[str, str]:
    """A branch child's prefix and the gutter its own children continue with."""
    return gutter + ("└─ " if last else "├─ "), gutter + ("   " if last else "│  ")


def layout_tree(roots: list[TreeNode]) -> list[LayoutRow]:
    """Rows in depth-first order with pi's compact connectors."""
    rows: list[LayoutRow] = []
    many_roots = len(roots) > 1
    stack: list[tuple[TreeNode, str, str, int]] = []
    for position in range(len(roots) - 1, -1, -1):
        last = position == len(roots) - 1
        if many_roots:
            stack.append((roots[position], "└─ " if last else "├─ ", "   " if last else "│  ", 1))
        else:
            stack.append((roots[position], "", "", 0))
    while stack:
        node, prefix, gutter, depth = stack.pop()
        rows.append(LayoutRow(node.entry, prefix, node.label, depth))
        children = node.children
        if len(children) == 1:
            stack.append((children[0], gutter, gutter, depth))
            continue
        for position in range(len(children) - 1, -1, -1):
            child_prefix, child_gutter = connectors(gutter, position == len(children) - 1)
            stack.append((children[position], child_prefix, child_gutter, depth + 1))
    return rows


def _one_line(text: str, width: int = TEXT_WIDTH) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _find_tool_call(index: SessionIndex, entry: Entry, call_id: Any) -> dict[str, Any] | None:
    for ancestor in index.ancestors(entry.id):
        message = ancestor.message
        if message is None or message.get("role") != "assistant":
            continue
        for block in message.get("content") or ():
            if isinstance(block, dict) and (block.get("type"), block.get("id")) == (
                "toolCall",
                call_id,
            ):
                found: dict[str, Any] = block
                return found
        return None
    return None


def describe_tool_call(name: str, arguments: dict[str, Any]) -> str:
    """``[read: path:1-20]``, ``[bash: cmd…]``: a tool call the way a person scans it."""
    path = arguments.get("path")
    if name == "read":
        start = arguments.get("offset")
        limit = arguments.get("limit")
        where = str(path)
        if isinstance(start, int):
            end = f"-{start + limit - 1}" if isinstance(limit, int) else ""
            where += f":{start}{end}"
        return f"[read: {where}]"
    if name in ("write", "edit", "ls"):
        return f"[{name}: {path or '.'}]"
    if name == "bash":
        return f"[bash: {_one_line(str(arguments.get('command', '')), 50)}]"
    if name == "grep":
        return f"[grep: /{arguments.get('pattern', '')}/ in {path or '.'}]"
    if name == "find":
        return f"[find: {arguments.get('pattern', '')} in {path or '.'}]"
    encoded = orjson.dumps(arguments).decode()
    return f"[{name}: {_one_line(encoded, 40)}]"


def describe_calls(message: dict[str, Any]) -> str:
    """The tool calls of an assistant message, each as :func:`describe_tool_call` shows it."""
    return " ".join(
        describe_tool_call(str(block.get("name")), block.get("arguments") or {})
        for block in message.get("content") or ()
        if isinstance(block, dict) and block.get("type") == "toolCall"
    )


def describe_entry(entry: Entry, index: SessionIndex) -> str:
    """One line of text for an entry, as the tree shows it."""
    raw = entry.raw
    kind = entry.type
    message = entry.message
    if message is not None:
        role = message.get("role")
        if role == "user":
            return "user: " + _one_line(text_of(message.get("content")))
        if role == "assistant":
            text = text_of(message.get("content"))
            if text.strip():
                return "assistant: " + _one_line(text)
            if message.get("stopReason") == "aborted":
                return "assistant: (aborted)"
            if message.get("errorMessage"):
                return "assistant: " + _one_line(str(message["errorMessage"]), 80)
            return "assistant: " + (describe_calls(message) or "(no content)")
        if role == "toolResult":
            call = _find_tool_call(index, entry, message.get("toolCallId"))
            name = str(message.get("toolName", "tool"))
            arguments = call.get("arguments") if call else None
            shown = describe_tool_call(name, arguments if isinstance(arguments, dict) else {})
            return shown + (" (error)" if message.get("isError") else "")
        if role == "bashExecution":
            return "[bash]: " + _one_line(str(message.get("command", "")))
        if role == "custom":
            return f"[{message.get('customType')}]: " + _one_line(text_of(message.get("content")))
        return f"[{role}]"
    if kind == "custom_message":
        return f"[{raw.get('customType')}]: " + _one_line(text_of(raw.get("content")))
    if kind == "compaction":
        tokens = raw.get("tokensBefore")
        size = f"{round(tokens / 1000)}k" if isinstance(tokens, int) else "?"
        return f"[compaction: {size} tokens]"
    if kind == "branch_summary":
        return "[branch summary]: " + _one_line(str(raw.get("summary", "")))
    if kind == "model_change":
        return f"[model: {raw.get('modelId')}]"
    if kind == "thinking_level_change":
        return f"[thinking: {raw.get('thinkingLevel')}]"
    if kind == "custom":
        return f"[custom: {raw.get('customType')}]"
    if kind == "label":
        return f"[label: {raw.get('label') or '(cleared)'}]"
    if kind == "session_info":
        return f"[name: {raw.get('name') or '(cleared)'}]"
    return f"[{kind}]"
