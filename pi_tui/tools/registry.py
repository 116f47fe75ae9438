"""The built-in tools, in the order they are offered to the model, and their construction."""

from __future__ import annotations

from collections.abc import Iterable

from .base import Tool, ToolContext
from .bash import BashTool
from .edit import EditTool
from .find import FindTool
from .grep import GrepTool
from .ls import LsTool
from .read import ReadTool
from .write import WriteTool

ALL_TOOLS: tuple[type[Tool], ...] = (
    ReadTool,
    WriteTool,
    EditTool,
    BashTool,
    GrepTool,
    FindTool,
    LsTool,
)


def create_tools(context: ToolContext, names: Iterable[str] | None = None) -> dict[str, Tool]:
    """Instances of the named tools (all of them when ``names`` is None), keyed by name.

    Raises ValueError for an unknown name.
    """
    known = {tool.name: tool for tool in ALL_TOOLS}
    chosen = list(known) if names is None else list(names)
    unknown = [name for name in chosen if name not in known]
    if unknown:
        raise ValueError(f"Unknown tool(s): {', '.join(unknown)}. Known tools: {', '.join(known)}")
    return {name: known[name](context) for name in chosen}
