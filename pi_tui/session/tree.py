"""The tree index over a session's entries: ids, children, labels, name, paths, the tree.

Built in one pass when a file loads and kept current as entries are appended. Every walk is
iterative and guarded, so a 100k-deep chain or a corrupted parent cycle cannot overflow the
stack or hang.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from .ids import iso_from_ms, ms_from_iso
from .loader import LoadWarning, gc_paused
from .records import Entry

CANONICAL_STAMP_LENGTH = len("2026-01-01T00:00:00.000Z")


def stamp_key(entry: Entry) -> str:
    """A sortable key for an entry timestamp; ISO strings in pi's form sort as they are."""
    stamp = entry.timestamp
    if len(stamp) == CANONICAL_STAMP_LENGTH and stamp.endswith("Z"):
        return stamp
    return iso_from_ms(ms_from_iso(stamp)) if stamp else ""


@dataclass(slots=True, eq=False)
class TreeNode:
    """One entry in :meth:`SessionIndex.get_tree`, with its children sorted by timestamp."""

    entry: Entry
    children: list[TreeNode] = field(default_factory=list)
    label: str | None = None


@dataclass(frozen=True, slots=True)
class FlatNode:
    """One row of the depth-first flattened tree."""

    entry: Entry
    depth: int
    tree_parent: str | None
    order: int
    label: str | None


class SessionIndex:
    """Index of entries by id and by parent, plus labels and the session name."""

    def __init__(self, entries: Iterable[Entry] = ()) -> None:
        self.entries: list[Entry] = []
        """Every indexed entry in file order (a duplicate id replaces its earlier twin)."""
        self.by_id: dict[str, Entry] = {}
        self.children: dict[str, list[Entry]] = {}
        self.labels: dict[str, str] = {}
        self.warnings: list[LoadWarning] = []
        self._name: str | None = None
        self._cycles_reported: set[str] = set()
        for entry in entries:
            self.add(entry)

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self.by_id

    # --- building ---------------------------------------------------------------------------

    def add(self, entry: Entry) -> None:
        """Index one entry (appended or loaded, in file order)."""
        earlier = self.by_id.get(entry.id)
        if earlier is not None:
            # pi's rule: the later record wins the id. The earlier one stays in the file.
            self.warnings.append(
                LoadWarning(
                    entry.line,
                    f"duplicate id {entry.id} (also on line {earlier.line}); the later one is used",
                )
            )
            self.entries.remove(earlier)
            if earlier.parent_id is not None:
                siblings = self.children.get(earlier.parent_id)
                if siblings is not None and earlier in siblings:
                    siblings.remove(earlier)
        self.entries.append(entry)
        self.by_id[entry.id] = entry
        if entry.parent_id is not None:
            self.children.setdefault(entry.parent_id, []).append(entry)
        if entry.type == "label":
            self._apply_label(entry)
        elif entry.type == "session_info":
            name = entry.raw.get("name")
            if isinstance(name, str) and name.strip():
                self._name = name.strip()

    def _apply_label(self, entry: Entry) -> None:
        target = entry.raw.get("targetId")
        if not isinstance(target, str):
            return
        label = entry.raw.get("label")
        if isinstance(label, str) and label:
            self.labels[target] = label
        else:
            self.labels.pop(target, None)

    # --- reading ----------------------------------------------------------------------------

    @property
    def session_name(self) -> str | None:
        """The latest non-empty ``session_info`` name anywhere in the file."""
        return self._name

    @property
    def last_entry(self) -> Entry | None:
        """The last entry in file order: pi's leaf after loading."""
        return self.entries[-1] if self.entries else None

    def get(self, entry_id: str) -> Entry | None:
        """The entry with this id, if any."""
        return self.by_id.get(entry_id)

    def label_of(self, entry_id: str) -> str | None:
        """The current label of an entry."""
        return self.labels.get(entry_id)

    def children_of(self, entry_id: str) -> list[Entry]:
        """Direct children in file order."""
        return list(self.children.get(entry_id, ()))

    def is_root(self, entry: Entry) -> bool:
        """Roots: no parent, self-parented, or a parent missing from the file (orphans)."""
        parent = entry.parent_id
        return parent is None or parent == entry.id or parent not in self.by_id

    def ancestors(self, entry_id: str) -> Iterator[Entry]:
        """The entry and its ancestors, leaf first; stops at a missing parent or a cycle."""
        seen: set[str] = set()
        current = self.by_id.get(entry_id)
        while current is not None and current.id not in seen:
            seen.add(current.id)
            yield current
            parent = current.parent_id
            current = self.by_id.get(parent) if parent is not None else None

    def path(self, leaf_id: str | None) -> list[Entry]:
        """Root → leaf, all entry types; empty for None or an unknown id."""
        if leaf_id is None:
            return []
        chain = list(self.ancestors(leaf_id))
        chain.reverse()
        return chain

    def get_tree(self) -> list[TreeNode]:
        """The whole tree: roots in file order, children sorted by timestamp.

        Entries caught in a parent cycle are unreachable from any root; the first of each
        such group in file order is cut loose and shown as a root, so nothing disappears.
        """
        with gc_paused():
            return self._build_tree()

    def _build_tree(self) -> list[TreeNode]:
        nodes = {
            entry.id: TreeNode(entry, label=self.labels.get(entry.id)) for entry in self.entries
        }
        roots: list[TreeNode] = []
        for entry in self.entries:
            node = nodes[entry.id]
            parent_id = entry.parent_id
            parent = nodes.get(parent_id) if parent_id and parent_id != entry.id else None
            if parent is None:
                roots.append(node)
            else:
                parent.children.append(node)
        reached = self._mark_reachable(roots)
        if len(reached) < len(nodes):
            for entry in self.entries:
                if entry.id in reached:
                    continue
                node = nodes[entry.id]
                nodes[str(entry.parent_id)].children.remove(node)
                if entry.id not in self._cycles_reported:
                    self._cycles_reported.add(entry.id)
                    self.warnings.append(
                        LoadWarning(entry.line, f"parent cycle through {entry.id}; shown as a root")
                    )
                roots.append(node)
                reached |= self._mark_reachable([node])
        stack = list(roots)
        while stack:
            node = stack.pop()
            if len(node.children) > 1:
                node.children.sort(key=lambda child: stamp_key(child.entry))
            stack.extend(node.children)
        return roots

    @staticmethod
    def _mark_reachable(roots: list[TreeNode]) -> set[str]:
        reached: set[str] = set()
        stack = list(roots)
        while stack:
            node = stack.pop()
            if node.entry.id in reached:
                continue
            reached.add(node.entry.id)
            stack.extend(node.children)
        return reached

    def flatten(self, roots: list[TreeNode] | None = None) -> list[FlatNode]:
        """Depth-first pre-order rows of the tree with depth, tree parent and sibling order."""
        if roots is None:
            roots = self.get_tree()
        with gc_paused():
            return self._flatten(roots)

    @staticmethod
    def _flatten(roots: list[TreeNode]) -> list[FlatNode]:
        rows: list[FlatNode] = []
        stack: list[tuple[TreeNode, int, str | None, int]] = [
            (node, 0, None, order) for order, node in reversed(list(enumerate(roots)))
        ]
        while stack:
            node, depth, parent, order = stack.pop()
            rows.append(FlatNode(node.entry, depth, parent, order, node.label))
            for child_order in range(len(node.children) - 1, -1, -1):
                stack.append((node.children[child_order], depth + 1, node.entry.id, child_order))
        return rows
