"""The rows of the session-tree navigator, computed without any UI code.

:class:`TreeModel` turns a session's entry tree into the flattened list of rows pi's ``/tree``
selector shows: filters and text search hide entries (hidden entries pass their children up
to the nearest visible ancestor), single-child chains keep their indent, the children of a
branch point get ``├─``/``└─`` connectors and ``│`` gutters, the branch that holds the current
leaf is listed first, and branch-point children can be folded.

Every walk is iterative, so a 100k-deep chain is as safe as a short one. The entry tree is read
once per :meth:`TreeModel.refresh`; filter, search and fold changes only redo the cheaper
visibility and flattening passes; one-line entry text is computed lazily and cached, so a
10 000-entry session costs only what the visible rows need.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, get_args, overload

from pi_tui.session.catalog import text_of
from pi_tui.session.layout import SETTINGS_TYPES, connectors, describe_entry
from pi_tui.session.loader import gc_paused
from pi_tui.session.records import Entry
from pi_tui.session.tree import SessionIndex, TreeNode, stamp_key

if TYPE_CHECKING:
    from pi_tui.session.manager import SessionManager

FilterMode = Literal["default", "no-tools", "user-only", "labeled", "all"]
"""The navigator's filters, in the order ``f`` cycles through them."""

FILTER_MODES: tuple[FilterMode, ...] = get_args(FilterMode)

DEFAULT_HIDDEN_TYPES = SETTINGS_TYPES
"""Entry types the ``default`` filter (and every narrower one) hides."""

TOOL_ONLY_STOP_REASONS = frozenset({"stop", "toolUse"})

FOLD_OPEN = "⊟"
FOLD_CLOSED = "⊞"


def is_tool_call_only(entry: Entry) -> bool:
    """An assistant turn with no visible text that ended normally: a pure tool-call turn."""
    message = entry.message
    if message is None or message.get("role") != "assistant":
        return False
    if message.get("stopReason") not in TOOL_ONLY_STOP_REASONS:
        return False
    return not text_of(message.get("content")).strip()


# Entry kinds, the only facts the filters look at besides labels.
_KIND_SETTINGS = 0
_KIND_USER = 1
_KIND_TOOL_RESULT = 2
_KIND_TOOL_ONLY = 3
_KIND_OTHER = 4

_KINDS_SHOWN: dict[FilterMode, frozenset[int]] = {
    "default": frozenset({_KIND_USER, _KIND_TOOL_RESULT, _KIND_OTHER}),
    "no-tools": frozenset({_KIND_USER, _KIND_OTHER}),
    "user-only": frozenset({_KIND_USER}),
    "labeled": frozenset({_KIND_SETTINGS, _KIND_USER, _KIND_TOOL_RESULT, _KIND_OTHER}),
    "all": frozenset(range(5)),
}


def _kind_of(entry: Entry) -> int:
    if entry.type in DEFAULT_HIDDEN_TYPES:
        return _KIND_SETTINGS
    role = entry.role
    if role == "user":
        return _KIND_USER
    if role == "toolResult":
        return _KIND_TOOL_RESULT
    return _KIND_TOOL_ONLY if is_tool_call_only(entry) else _KIND_OTHER


def passes_filter(entry: Entry, mode: FilterMode, labels: Mapping[str, str]) -> bool:
    """Whether the filter mode itself (not the tool-call rule, not search) keeps ``entry``."""
    if mode == "labeled":
        return entry.id in labels
    kind = _kind_of(entry)
    shown = _KINDS_SHOWN[mode]
    return kind in shown or (kind == _KIND_TOOL_ONLY and _KIND_OTHER in shown)


class _EntryCache:
    """Per-entry facts that never change (entries are immutable), computed on first use."""

    __slots__ = ("_index", "_kind", "_search", "_text")

    def __init__(self, index: SessionIndex) -> None:
        self._index = index
        self._kind: dict[str, int] = {}
        self._text: dict[str, str] = {}
        self._search: dict[str, str] = {}

    def kind(self, entry: Entry) -> int:
        found = self._kind.get(entry.id)
        if found is None:
            found = self._kind[entry.id] = _kind_of(entry)
        return found

    def text(self, entry: Entry) -> str:
        found = self._text.get(entry.id)
        if found is None:
            found = self._text[entry.id] = describe_entry(entry, self._index)
        return found

    def searchable(self, entry: Entry) -> str:
        """Role and entry text, lower-cased (the label is added by the caller: it can change)."""
        found = self._search.get(entry.id)
        if found is None:
            found = f"{entry.role or entry.type} {self.text(entry)}".lower()
            self._search[entry.id] = found
        return found


@dataclass(frozen=True, slots=True, eq=False)
class TreeRow:
    """One visible line of the navigator."""

    entry: Entry
    prefix: str
    """Connectors and gutters (``│  ├─ ``), three columns per depth level."""
    depth: int
    """How many branch levels deep the row is drawn (``len(prefix) // 3``)."""
    on_active_path: bool
    """The entry lies on root → current leaf."""
    is_leaf: bool
    """The entry is the session's current leaf."""
    label: str | None
    foldable: bool
    """Has visible children and is a root or a child of a branch point."""
    folded: bool
    _cache: _EntryCache = field(repr=False)

    @property
    def entry_id(self) -> str:
        """The id of the entry this row shows."""
        return self.entry.id

    @property
    def text(self) -> str:
        """The entry as one line (``user: …``, ``[read: a.py]``), from ``describe_entry``."""
        return self._cache.text(self.entry)

    @property
    def display_prefix(self) -> str:
        """The prefix with the fold marker drawn into the connector (``├⊟ ``, ``└⊞ ``, ``⊞ ``)."""
        if not self.foldable:
            return self.prefix
        marker = FOLD_CLOSED if self.folded else FOLD_OPEN
        if self.prefix.endswith(("├─ ", "└─ ")):
            return self.prefix[:-2] + marker + " "
        return self.prefix + FOLD_CLOSED + " " if self.folded else self.prefix


class RowList(Sequence[TreeRow]):
    """The visible rows; each :class:`TreeRow` is built when first read."""

    __slots__ = ("_built", "_ids", "_layout", "_model")

    def __init__(
        self, model: TreeModel, ids: list[str], layout: list[tuple[str, int, bool, bool]]
    ) -> None:
        self._model = model
        self._ids = ids
        self._layout = layout
        self._built: dict[int, TreeRow] = {}

    def __len__(self) -> int:
        return len(self._ids)

    @overload
    def __getitem__(self, position: int) -> TreeRow: ...

    @overload
    def __getitem__(self, position: slice) -> list[TreeRow]: ...

    def __getitem__(self, position: int | slice) -> TreeRow | list[TreeRow]:
        if isinstance(position, slice):
            return [self[i] for i in range(*position.indices(len(self._ids)))]
        if position < 0:
            position += len(self._ids)
        row = self._built.get(position)
        if row is None:
            row = self._built[position] = self._model._make_row(
                self._ids[position], self._layout[position]
            )
        return row

    @property
    def ids(self) -> Sequence[str]:
        """Entry ids of the rows, top to bottom."""
        return self._ids


class TreeModel:
    """Visible rows of a session tree under a filter, a search query and folds.

    Build it with :meth:`from_manager` (or from a :class:`SessionIndex` and a leaf id) and call
    :meth:`refresh` after entries were appended or the leaf moved. Rows are recomputed eagerly
    on every change, so :attr:`rows` is always current.
    """

    def __init__(
        self,
        index: SessionIndex,
        leaf_id: str | None,
        *,
        filter_mode: FilterMode = "default",
    ) -> None:
        if filter_mode not in FILTER_MODES:
            raise ValueError(f"unknown filter mode {filter_mode!r}")
        self._index = index
        self._cache = _EntryCache(index)
        self._filter: FilterMode = filter_mode
        self._query = ""
        self._tokens: list[str] = []
        self._folded: set[str] = set()
        self._leaf_id: str | None = None
        # The whole tree in depth-first pre-order: entries, their kinds, parent positions.
        self._order: list[Entry] = []
        self._kinds: list[int] = []
        self._parents: list[int] = []
        self._active: set[str] = set()
        self._vparent: dict[str, str | None] = {}
        self._vchildren: dict[str | None, list[str]] = {}
        self._rows = RowList(self, [], [])
        self._row_index: dict[str, int] = {}
        self.refresh(leaf_id)

    @classmethod
    def from_manager(
        cls, manager: SessionManager, *, filter_mode: FilterMode = "default"
    ) -> TreeModel:
        """A model of the manager's tree at its current leaf."""
        return cls(manager.index, manager.leaf_id, filter_mode=filter_mode)

    # --- state ------------------------------------------------------------------------------

    @property
    def rows(self) -> RowList:
        """The visible rows, top to bottom."""
        return self._rows

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def index(self) -> SessionIndex:
        """The session index the rows come from."""
        return self._index

    @property
    def leaf_id(self) -> str | None:
        """The current leaf the active path leads to."""
        return self._leaf_id

    @property
    def filter_mode(self) -> FilterMode:
        """The active filter."""
        return self._filter

    @property
    def search_query(self) -> str:
        """The search text as typed."""
        return self._query

    @property
    def folded(self) -> frozenset[str]:
        """Ids of the folded rows."""
        return frozenset(self._folded)

    def is_on_active_path(self, entry_id: str) -> bool:
        """Whether the entry lies on root → current leaf."""
        return entry_id in self._active

    # --- changes ----------------------------------------------------------------------------

    def refresh(self, leaf_id: str | None, index: SessionIndex | None = None) -> None:
        """Re-read the tree (new entries, labels) and the leaf; filter, search and folds stay."""
        if index is not None and index is not self._index:
            self._index = index
            self._cache = _EntryCache(index)
        self._leaf_id = leaf_id if leaf_id is not None and leaf_id in self._index else None
        self._active = {entry.id for entry in self._index.path(self._leaf_id)}
        with gc_paused():
            order, parents = self._preorder()
            kind = self._cache.kind
            self._order = order
            self._parents = parents
            self._kinds = [kind(entry) for entry in order]
            self._rebuild_visible_now()

    def _preorder(self) -> tuple[list[Entry], list[int]]:
        """Every entry depth-first (children by timestamp), with its parent's position."""
        index = self._index
        entries = index.entries
        children_of = index.children
        order: list[Entry] = []
        parents: list[int] = []
        stack: list[tuple[Entry, int]] = [
            (entry, -1) for entry in reversed(entries) if index.is_root(entry)
        ]
        while stack and len(order) <= len(entries):
            entry, parent = stack.pop()
            position = len(order)
            order.append(entry)
            parents.append(parent)
            children = children_of.get(entry.id)
            if not children:
                continue
            if len(children) == 1:
                if children[0] is not entry:
                    stack.append((children[0], position))
                continue
            ordered = sorted(children, key=stamp_key)
            stack.extend((child, position) for child in reversed(ordered) if child is not entry)
        if len(order) == len(entries):
            return order, parents
        # Parent cycles leave entries unreachable from any root: let get_tree cut them loose.
        order.clear()
        parents.clear()
        nodes: list[tuple[TreeNode, int]] = [(root, -1) for root in reversed(index.get_tree())]
        while nodes:
            node, parent = nodes.pop()
            position = len(order)
            order.append(node.entry)
            parents.append(parent)
            nodes.extend((child, position) for child in reversed(node.children))
        return order, parents

    def set_filter(self, mode: FilterMode) -> None:
        """Switch the filter; folds are reset."""
        if mode not in FILTER_MODES:
            raise ValueError(f"unknown filter mode {mode!r}")
        self._filter = mode
        self._folded.clear()
        self._rebuild_visible()

    def cycle_filter(self, step: int = 1) -> FilterMode:
        """Move to the next (or, with ``step=-1``, previous) filter and return it."""
        position = FILTER_MODES.index(self._filter)
        self.set_filter(FILTER_MODES[(position + step) % len(FILTER_MODES)])
        return self._filter

    def set_search(self, query: str) -> None:
        """Show only rows whose text holds every whitespace-separated token; folds are reset."""
        if query == self._query:
            return
        self._query = query
        self._tokens = query.lower().split()
        self._folded.clear()
        self._rebuild_visible()

    def fold(self, entry_id: str) -> bool:
        """Fold a foldable row; False if it is not foldable or already folded."""
        position = self._row_index.get(entry_id)
        if position is None or entry_id in self._folded:
            return False
        if not self._rows[position].foldable:
            return False
        self._folded.add(entry_id)
        self._flatten()
        return True

    def unfold(self, entry_id: str) -> bool:
        """Unfold a folded row; False if it was not folded."""
        if entry_id not in self._folded:
            return False
        self._folded.discard(entry_id)
        self._flatten()
        return True

    def toggle_fold(self, entry_id: str) -> bool:
        """Fold or unfold; False if nothing changed."""
        if entry_id in self._folded:
            return self.unfold(entry_id)
        return self.fold(entry_id)

    # --- navigation -------------------------------------------------------------------------

    def index_of(self, entry_id: str | None) -> int | None:
        """Row index of an entry, or None if it is not visible."""
        return self._row_index.get(entry_id) if entry_id is not None else None

    def nearest_visible(self, entry_id: str | None) -> str | None:
        """The entry itself if it has a row, else its nearest ancestor that has one."""
        if entry_id is None:
            return None
        for entry in self._index.ancestors(entry_id):
            if entry.id in self._row_index:
                return entry.id
        return None

    def leaf_index(self) -> int | None:
        """Row of the current leaf, or of its nearest visible ancestor."""
        return self.index_of(self.nearest_visible(self._leaf_id))

    def parent_index(self, index: int) -> int | None:
        """Row of the visible parent of the row at ``index`` (None for roots)."""
        if not 0 <= index < len(self._rows):
            return None
        parent = self._vparent.get(self._rows.ids[index])
        return self.index_of(parent)

    def prev_sibling_branch(self, index: int) -> int | None:
        """Row of the previous sibling at the nearest enclosing branch point, if any."""
        return self._sibling_branch(index, -1)

    def next_sibling_branch(self, index: int) -> int | None:
        """Row of the next sibling at the nearest enclosing branch point, if any."""
        return self._sibling_branch(index, 1)

    def _sibling_branch(self, index: int, step: int) -> int | None:
        if not 0 <= index < len(self._rows):
            return None
        node: str | None = self._rows.ids[index]
        while node is not None:
            parent = self._vparent.get(node)
            siblings = self._vchildren.get(parent, [])
            if len(siblings) > 1:
                position = siblings.index(node) + step
                if 0 <= position < len(siblings):
                    return self.index_of(siblings[position])
                return None
            node = parent
        return None

    # --- computing --------------------------------------------------------------------------

    def _keep_flags(self) -> list[bool]:
        """For each entry in pre-order: does the filter, the tool-call rule and search keep it."""
        mode = self._filter
        kinds = self._kinds
        order = self._order
        labels = self._index.labels
        if mode == "labeled":
            keep = [
                entry.id in labels and kind != _KIND_TOOL_ONLY
                for entry, kind in zip(order, kinds, strict=True)
            ]
        else:
            shown = _KINDS_SHOWN[mode]
            keep = [kind in shown for kind in kinds]
        leaf = self._leaf_id
        if leaf is not None and mode != "all":
            # The current leaf escapes the tool-call rule, not the filter mode.
            for position, entry in enumerate(order):
                if entry.id == leaf:
                    if kinds[position] == _KIND_TOOL_ONLY:
                        keep[position] = passes_filter(entry, mode, labels)
                    break
        tokens = self._tokens
        if tokens:
            searchable = self._cache.searchable
            for position, entry in enumerate(order):
                if not keep[position]:
                    continue
                haystack = searchable(entry)
                label = labels.get(entry.id)
                if label:
                    haystack = f"{label.lower()} {haystack}"
                keep[position] = all(token in haystack for token in tokens)
        return keep

    def _rebuild_visible(self) -> None:
        """Visible parent/children maps for the current filter and search, then the rows."""
        with gc_paused():
            self._rebuild_visible_now()

    def _rebuild_visible_now(self) -> None:
        keep = self._keep_flags()
        order = self._order
        parents = self._parents
        vparent: dict[str, str | None] = {}
        vchildren: dict[str | None, list[str]] = {}
        # targets[i]: the visible entry that entry i's children hang under.
        targets: list[str | None] = [None] * len(order)
        for position, entry in enumerate(order):
            parent_position = parents[position]
            parent = targets[parent_position] if parent_position >= 0 else None
            if keep[position]:
                entry_id = entry.id
                vparent[entry_id] = parent
                siblings = vchildren.get(parent)
                if siblings is None:
                    vchildren[parent] = [entry_id]
                else:
                    siblings.append(entry_id)
                targets[position] = entry_id
            else:
                targets[position] = parent
        by_id = self._index.by_id
        active = self._active
        for siblings in vchildren.values():
            if len(siblings) > 1:
                siblings.sort(key=lambda child: (child not in active, stamp_key(by_id[child])))
        self._vparent = vparent
        self._vchildren = vchildren
        self._folded.intersection_update(vparent)
        self._flatten()

    def _flatten(self) -> None:
        """Depth-first rows with connectors, skipping the descendants of folded rows."""
        ids: list[str] = []
        layout: list[tuple[str, int, bool, bool]] = []
        vchildren = self._vchildren
        folded = self._folded
        roots = vchildren.get(None, [])
        # Frame: entry id, prefix, gutter for its descendants, depth, child of a branch point.
        stack: list[tuple[str, str, str, int, bool]] = []
        if len(roots) > 1:
            for position in range(len(roots) - 1, -1, -1):
                last = position == len(roots) - 1
                stack.append(
                    (roots[position], "└─ " if last else "├─ ", "   " if last else "│  ", 1, True)
                )
        elif roots:
            stack.append((roots[0], "", "", 0, True))
        while stack:
            entry_id, prefix, gutter, depth, branch_child = stack.pop()
            # Follow a single-child chain in place: it keeps the indent and needs no stack.
            while True:
                children = vchildren.get(entry_id)
                foldable = branch_child and children is not None
                is_folded = foldable and entry_id in folded
                ids.append(entry_id)
                layout.append((prefix, depth, foldable, is_folded))
                if children is None or is_folded:
                    break
                if len(children) == 1:
                    entry_id = children[0]
                    prefix = gutter
                    branch_child = False
                    continue
                for position in range(len(children) - 1, -1, -1):
                    child_prefix, child_gutter = connectors(gutter, position == len(children) - 1)
                    stack.append((children[position], child_prefix, child_gutter, depth + 1, True))
                break
        self._rows = RowList(self, ids, layout)
        self._row_index = dict(zip(ids, range(len(ids)), strict=True))

    def _make_row(self, entry_id: str, layout: tuple[str, int, bool, bool]) -> TreeRow:
        prefix, depth, foldable, folded = layout
        return TreeRow(
            self._index.by_id[entry_id],
            prefix,
            depth,
            entry_id in self._active,
            entry_id == self._leaf_id,
            self._index.labels.get(entry_id),
            foldable,
            folded,
            self._cache,
        )
