"""The session-tree navigator: pi's ``/tree`` view as a Textual line-API widget.

:class:`SessionNavigator` draws the rows of a :class:`~pi_tui.ui.tree_model.TreeModel`
one line at a time (``render_line``), so a session of any size or depth costs only the lines
on screen. It does not use Textual's ``Tree`` widget, whose recursive layout fails on the long
parent→child chains sessions are made of. The widget never changes the session: choosing,
editing and labelling entries are reported as messages for the host to act on.
"""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from pi_tui.session.manager import SessionManager
from pi_tui.session.tree import SessionIndex

from .tree_model import FilterMode, TreeModel, TreeRow

CURSOR_MARK = "› "
ACTIVE_MARK = "• "
ELLIPSIS = "…"

FILTER_TAGS: dict[FilterMode, str] = {
    "default": "",
    "no-tools": "[no-tools]",
    "user-only": "[user]",
    "labeled": "[labeled]",
    "all": "[all]",
}


class _NavigatorMessage(Message):
    """Base of the navigator's messages: ``control`` is the navigator that posted it."""

    def __init__(self, navigator: SessionNavigator | None = None) -> None:
        super().__init__()
        self.navigator = navigator

    @property
    def control(self) -> SessionNavigator | None:
        """The navigator that posted the message (so ``@on(..., "#id")`` works)."""
        return self.navigator


class SessionNavigator(ScrollView, can_focus=True, inherit_bindings=False):
    """Browse a session's entry tree the way pi's ``/tree`` does.

    One row per visible entry: connectors only at branch points, ``•`` on every entry of the
    active path (root → current leaf), the current leaf emphasised, ``[label]`` before labelled
    entries, ``⊟``/``⊞`` on foldable rows. The bottom line shows ``(i/N)``, the filter when it
    is not ``default`` and the search query.

    Keys: ↑/↓ move (wrapping), PgUp/PgDn/Home/End jump, ← folds (or goes to the parent row),
    → unfolds, ``[``/``]`` previous/next sibling at the enclosing branch point, ``g`` the
    current leaf, ``f`` cycles filters, Enter selects, ``e`` asks to edit a user message, ``L``
    asks to label, Escape clears the query or dismisses. Any other printable key starts a
    search (``/`` starts one explicitly, for a query that begins with a command letter); while
    typing, every printable key edits the query until Enter or Escape; Backspace deletes.

    Call :meth:`refresh_tree` after entries were appended or the leaf moved.
    """

    HELP: ClassVar[str | None] = """\
## Session tree

- **↑ / ↓** move the cursor (wraps around); **PgUp / PgDn / Home / End** jump.
- **←** fold a branch, or go to the parent row; **→** unfold.
- **[ / ]** previous / next sibling at the enclosing branch point.
- **g** jump to the current leaf.
- **f** cycle filters: default → no-tools → user-only → labeled → all.
- **Type** to filter rows (every word must match); **/** starts a search that begins with
  one of the command letters. **Backspace** deletes, **Enter** keeps the query and ends
  typing, **Escape** clears it.
- **Enter** go to the entry; **e** edit a user message; **L** label the entry.
- **Escape** clear the search, or close the tree.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor_up", "Up", show=False),
        Binding("down", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
        Binding("left", "fold_or_parent", "Fold", show=False),
        Binding("right", "unfold", "Unfold", show=False),
        Binding("enter", "select", "Go"),
        Binding("slash", "start_search", "Search"),
        Binding("f", "cycle_filter", "Filter"),
        Binding("g", "goto_leaf", "Leaf"),
        Binding("left_square_bracket", "prev_branch", "Prev branch", key_display="["),
        Binding("right_square_bracket", "next_branch", "Next branch", key_display="]"),
        Binding("e", "edit", "Edit"),
        Binding("L", "label", "Label"),
        Binding("shift+l", "label", "Label", show=False),
        Binding("backspace", "search_backspace", "Delete", show=False),
        Binding("escape", "dismiss", "Close"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "session-navigator--cursor",
        "session-navigator--connector",
        "session-navigator--active",
        "session-navigator--leaf",
        "session-navigator--label",
        "session-navigator--status",
        "session-navigator--search",
    }

    DEFAULT_CSS = """
    SessionNavigator {
        height: 1fr;
        overflow-x: hidden;
        overflow-y: auto;
        background: $surface;
        color: $foreground;
        & > .session-navigator--cursor {
            color: $block-cursor-blurred-foreground;
            background: $block-cursor-blurred-background;
            text-style: $block-cursor-blurred-text-style;
        }
        &:focus > .session-navigator--cursor {
            color: $block-cursor-foreground;
            background: $block-cursor-background;
            text-style: $block-cursor-text-style;
        }
        & > .session-navigator--connector {
            color: $text-muted;
        }
        & > .session-navigator--active {
            color: $accent;
        }
        & > .session-navigator--leaf {
            color: $text-accent;
            text-style: bold;
        }
        & > .session-navigator--label {
            color: $text-warning;
        }
        & > .session-navigator--status {
            color: $text-muted;
            background: $panel;
        }
        & > .session-navigator--search {
            color: $text-accent;
            text-style: bold;
        }
    }
    """

    class EntrySelected(_NavigatorMessage):
        """Enter on a row: the host should navigate the session to ``entry_id``."""

        def __init__(self, entry_id: str, navigator: SessionNavigator | None = None) -> None:
            super().__init__(navigator)
            self.entry_id = entry_id

    class EditRequested(_NavigatorMessage):
        """``e`` on a user message: the host should offer its text for editing."""

        def __init__(self, entry_id: str, navigator: SessionNavigator | None = None) -> None:
            super().__init__(navigator)
            self.entry_id = entry_id

    class LabelRequested(_NavigatorMessage):
        """``L`` on a row: the host should ask for a label for ``entry_id``."""

        def __init__(self, entry_id: str, navigator: SessionNavigator | None = None) -> None:
            super().__init__(navigator)
            self.entry_id = entry_id

    class Dismissed(_NavigatorMessage):
        """Escape with an empty search query: the host should close the navigator."""

    def __init__(
        self,
        manager: SessionManager,
        *,
        filter_mode: FilterMode = "default",
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
        disabled: bool = False,
        defer_build: bool = False,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes, disabled=disabled)
        self._manager = manager
        # Deferred: the rows are built by the first refresh_tree, so a big tree does not hold
        # back the app's first frame.
        self._model = (
            TreeModel(SessionIndex(), None, filter_mode=filter_mode)
            if defer_build
            else TreeModel.from_manager(manager, filter_mode=filter_mode)
        )
        self._cursor: int | None = None
        self._cursor_id: str | None = None
        """The entry the cursor is on, remembered while no row is visible."""
        self._searching = False
        self._place_cursor(None)

    # --- public state -----------------------------------------------------------------------

    @property
    def model(self) -> TreeModel:
        """The rows being drawn."""
        return self._model

    @property
    def manager(self) -> SessionManager:
        """The session this navigator shows."""
        return self._manager

    @property
    def filter_mode(self) -> FilterMode:
        """The active filter."""
        return self._model.filter_mode

    @property
    def search_query(self) -> str:
        """The current search text."""
        return self._model.search_query

    @property
    def searching(self) -> bool:
        """True while printable keys edit the search query (after ``/``)."""
        return self._searching

    @property
    def cursor_index(self) -> int | None:
        """Row index of the cursor; None when no row is visible."""
        return self._cursor

    @property
    def cursor_entry_id(self) -> str | None:
        """Id of the entry under the cursor; None when no row is visible."""
        if self._cursor is None:
            return None
        return self._model.rows.ids[self._cursor]

    # --- public operations ------------------------------------------------------------------

    def refresh_tree(self, keep_cursor: bool = True) -> None:
        """Re-read the session (new entries, labels, a moved leaf) and redraw.

        With ``keep_cursor`` the cursor stays on its entry, unless it was on the current leaf,
        in which case it follows the leaf to its new place; otherwise it goes to the leaf.
        """
        model = self._model
        was_on_leaf = self._cursor_id in (model.leaf_id, model.nearest_visible(model.leaf_id))
        model.refresh(self._manager.leaf_id, self._manager.index)
        self._place_cursor(self._cursor_id if keep_cursor and not was_on_leaf else None)

    def set_manager(self, manager: SessionManager) -> None:
        """Show another session (after /new, /resume or /fork); the filter is kept."""
        self._manager = manager
        self._model = TreeModel.from_manager(manager, filter_mode=self._model.filter_mode)
        self._searching = False
        self._place_cursor(None)

    def move_cursor_to(self, entry_id: str) -> bool:
        """Put the cursor on an entry (or its nearest visible ancestor); False if impossible."""
        position = self._model.index_of(self._model.nearest_visible(entry_id))
        if position is None:
            return False
        self._set_cursor(position)
        return True

    def set_filter(self, mode: FilterMode) -> None:
        """Switch the filter (folds reset); the cursor keeps its entry or nearest ancestor."""
        self._model.set_filter(mode)
        self._place_cursor(self._cursor_id)

    def set_search(self, query: str) -> None:
        """Replace the search query (folds reset); the cursor keeps its entry if it can."""
        self._model.set_search(query)
        self._place_cursor(self._cursor_id)

    # --- cursor and scrolling ---------------------------------------------------------------

    def _place_cursor(self, entry_id: str | None) -> None:
        """After the rows changed: cursor on ``entry_id`` or its nearest visible ancestor.

        ``None`` means the current leaf. When neither the entry nor an ancestor has a row, the
        cursor parks on the first row (if any) and the entry is remembered and restored once
        a filter or search shows it again (pi's rule for an empty filter).
        """
        model = self._model
        target = entry_id if entry_id is not None else model.leaf_id
        self._cursor_id = target
        position = model.index_of(model.nearest_visible(target))
        if position is not None:
            self._cursor_id = model.rows.ids[position]
        elif len(model):
            # Neither the entry nor an ancestor is shown: park on the first row but keep
            # remembering the entry, so it comes back when the filter or search allows.
            position = 0
        self._cursor = position
        self._update_virtual_size()
        if self.is_mounted:
            self._scroll_to_cursor()
        self.refresh()

    def _set_cursor(self, position: int) -> None:
        """Move the cursor to a row (no model change)."""
        if not len(self._model):
            return
        position = max(0, min(position, len(self._model) - 1))
        self._cursor = position
        self._cursor_id = self._model.rows.ids[position]
        self._scroll_to_cursor()
        self.refresh()

    def _update_virtual_size(self) -> None:
        # One line more than the rows: the status line at the bottom never covers a row.
        self.virtual_size = Size(0, len(self._model) + 1)

    def _page_height(self) -> int:
        """Rows visible at once (the viewport minus the status line)."""
        return max(1, self.scrollable_content_region.height - 1)

    def _scroll_to_cursor(self) -> None:
        if self._cursor is None:
            return
        top = round(self.scroll_y)
        page = self._page_height()
        if self._cursor < top:
            self.scroll_to(y=self._cursor, animate=False, immediate=True)
        elif self._cursor >= top + page:
            self.scroll_to(y=self._cursor - page + 1, animate=False, immediate=True)

    def on_mount(self) -> None:
        """Show the cursor once the widget has a size."""
        self._update_virtual_size()
        self.call_after_refresh(self._scroll_to_cursor)

    def on_resize(self, event: events.Resize) -> None:
        """Keep the cursor row on screen when the viewport changes."""
        self.call_after_refresh(self._scroll_to_cursor)

    # --- drawing ----------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        """One screen line: a tree row, or the status line at the bottom."""
        region = self.scrollable_content_region
        width = region.width
        if width <= 0:
            return Strip.blank(0)
        if region.height > 1 and y == region.height - 1:
            return self._render_status(width)
        position = round(self.scroll_y) + y
        base = self.rich_style
        if not 0 <= position < len(self._model):
            return Strip.blank(width, base)
        return self._render_row(self._model.rows[position], position == self._cursor, width)

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"session-navigator--{name}", partial=True)

    def _render_row(self, row: TreeRow, is_cursor: bool, width: int) -> Strip:
        base = self.rich_style
        if is_cursor:
            base = base + self.get_component_rich_style("session-navigator--cursor")
        text_style = base + self._style("leaf") if row.is_leaf else base
        segments = [Segment(CURSOR_MARK if is_cursor else "  ", base)]
        prefix = row.display_prefix
        if prefix:
            segments.append(Segment(prefix, base + self._style("connector")))
        if row.on_active_path:
            segments.append(Segment(ACTIVE_MARK, base + self._style("active")))
        if row.label:
            segments.append(Segment(f"[{row.label}] ", base + self._style("label")))
        segments.append(Segment(row.text, text_style))
        return self._fit(segments, width, base)

    def _render_status(self, width: int) -> Strip:
        style = self.get_component_rich_style("session-navigator--status")
        model = self._model
        total = len(model)
        position = 0 if self._cursor is None else self._cursor + 1
        right = f"({position}/{total})"
        tag = FILTER_TAGS[model.filter_mode]
        if tag:
            right += f" {tag}"
        query = model.search_query
        if self._searching:
            left = f" /{query}▏"
        elif query:
            left = f" search: {query}"
        elif total == 0:
            left = " No entries"
        else:
            left = ""
        if total == 0 and query:
            left += "  No entries found"
        search_style = style + self._style("search")
        gap = max(1, width - cell_len(left) - cell_len(right) - 1)
        segments = [Segment(left, search_style), Segment(" " * gap, style), Segment(right, style)]
        return self._fit(segments, width, style)

    @staticmethod
    def _fit(segments: list[Segment], width: int, style: Style) -> Strip:
        strip = Strip(segments)
        if strip.cell_length > width:
            strip = Strip.join([strip.crop(0, width - 1), Strip([Segment(ELLIPSIS, style)])])
        return strip.extend_cell_length(width, style)

    # --- keys -------------------------------------------------------------------------------

    async def on_key(self, event: events.Key) -> None:
        """Printable keys that are not commands start a search; while searching, printable
        keys, Backspace, Enter and Escape edit the query."""
        if not self._searching:
            if not self._starts_search(event):
                return
            self._searching = True
        if event.key == "enter":
            self._searching = False
            self.refresh()
        elif event.key == "escape":
            self._searching = False
            self.set_search("")
        elif event.key == "backspace":
            self.set_search(self._model.search_query[:-1])
        elif event.is_printable and event.character:
            self.set_search(self._model.search_query + event.character)
        else:
            return
        event.stop()
        event.prevent_default()

    def _starts_search(self, event: events.Key) -> bool:
        character = event.character
        if not event.is_printable or not character or character.isspace():
            return False
        return event.key not in self._bindings.key_to_bindings

    def on_click(self, event: events.Click) -> None:
        """A click puts the cursor on the clicked row."""
        offset = event.get_content_offset(self)
        if offset is None:
            return
        region = self.scrollable_content_region
        if region.height > 1 and offset.y >= region.height - 1:
            return
        position = round(self.scroll_y) + offset.y
        if 0 <= position < len(self._model):
            self._set_cursor(position)

    def action_cursor_up(self) -> None:
        """Previous row, wrapping to the last."""
        if self._cursor is not None:
            self._set_cursor((self._cursor - 1) % len(self._model))

    def action_cursor_down(self) -> None:
        """Next row, wrapping to the first."""
        if self._cursor is not None:
            self._set_cursor((self._cursor + 1) % len(self._model))

    def action_page_up(self) -> None:
        """One page up."""
        if self._cursor is not None:
            self._set_cursor(self._cursor - self._page_height())

    def action_page_down(self) -> None:
        """One page down."""
        if self._cursor is not None:
            self._set_cursor(self._cursor + self._page_height())

    def action_first(self) -> None:
        """First row."""
        self._set_cursor(0)

    def action_last(self) -> None:
        """Last row."""
        self._set_cursor(len(self._model) - 1)

    def action_fold_or_parent(self) -> None:
        """Fold the cursor row; if it cannot fold (or is folded), go to its parent row."""
        entry_id = self.cursor_entry_id
        if entry_id is None or self._cursor is None:
            return
        if self._model.fold(entry_id):
            self._place_cursor(entry_id)
            return
        parent = self._model.parent_index(self._cursor)
        if parent is None:
            self.app.bell()
        else:
            self._set_cursor(parent)

    def action_unfold(self) -> None:
        """Unfold the cursor row."""
        entry_id = self.cursor_entry_id
        if entry_id is not None and self._model.unfold(entry_id):
            self._place_cursor(entry_id)
        else:
            self.app.bell()

    def _jump(self, position: int | None) -> None:
        if position is None:
            self.app.bell()
        else:
            self._set_cursor(position)

    def action_prev_branch(self) -> None:
        """Previous sibling at the nearest enclosing branch point."""
        if self._cursor is not None:
            self._jump(self._model.prev_sibling_branch(self._cursor))

    def action_next_branch(self) -> None:
        """Next sibling at the nearest enclosing branch point."""
        if self._cursor is not None:
            self._jump(self._model.next_sibling_branch(self._cursor))

    def action_goto_leaf(self) -> None:
        """The current leaf (or its nearest visible ancestor)."""
        self._jump(self._model.leaf_index())

    def action_cycle_filter(self) -> None:
        """Next filter: default → no-tools → user-only → labeled → all."""
        self._model.cycle_filter()
        self._place_cursor(self._cursor_id)

    def action_start_search(self) -> None:
        """Printable keys edit the search query until Enter or Escape."""
        self._searching = True
        self.refresh()

    def action_search_backspace(self) -> None:
        """Delete the last character of the search query."""
        query = self._model.search_query
        if query:
            self.set_search(query[:-1])

    def action_select(self) -> None:
        """Post :class:`EntrySelected` for the cursor row."""
        entry_id = self.cursor_entry_id
        if entry_id is not None:
            self.post_message(self.EntrySelected(entry_id, self))

    def action_edit(self) -> None:
        """Post :class:`EditRequested` when the cursor row is a user message."""
        entry_id = self.cursor_entry_id
        entry = self._manager.get_entry(entry_id) if entry_id is not None else None
        if entry is None or entry.role != "user":
            self.app.bell()
            return
        self.post_message(self.EditRequested(entry.id, self))

    def action_label(self) -> None:
        """Post :class:`LabelRequested` for the cursor row."""
        entry_id = self.cursor_entry_id
        if entry_id is not None:
            self.post_message(self.LabelRequested(entry_id, self))

    def action_dismiss(self) -> None:
        """Clear the search query, or post :class:`Dismissed` when it is empty."""
        if self._model.search_query:
            self.set_search("")
        else:
            self.post_message(self.Dismissed(self))
