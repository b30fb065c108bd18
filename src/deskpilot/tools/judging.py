"""The door's judgement of a call's effect: what it touches, seen in its window's tree.

For each part of a call's reach (:mod:`deskpilot.tools.reach`) the window's tree is read once
(:class:`Looks`) and the :class:`~deskpilot.policy.effects.Judge` of the context's rules asked:

* an element activated by ID — by the name the model was shown (a GTK 4 button named
  "GtkButton" shows its label "Send") when that says it all; a generic commit button ("OK"),
  a draft verb ("Reply": does it submit?) or a nameless element by its node in its place
  (only then is the tree read); a fill of a password field, or a fill with a newline (a web
  field that takes no text is filled by typing: Enter there submits);
* a pressed screen point — the element under it (through a button's label or icon), in the
  tree of the window under the point;
* keys — Enter (a typed newline), shift+Enter, space and ctrl+Enter, by the element with the
  focus (the one ``type`` focuses first, or one an earlier step of the same call touched);
  text typed into a password field; the consequential shortcuts (alt+s…) where the keys
  were not judged by the focus (a user's own list always);
* a window whose tree cannot be read at all: Enter there is treated as consequential (nobody
  can tell what it would fire); with no window focused, keys fire nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from deskpilot.desktop.base import Node, WindowInfo
from deskpilot.desktop.keys import MODIFIERS
from deskpilot.errors import DeskpilotError
from deskpilot.policy import Risk
from deskpilot.policy.effects import Finding, Tree
from deskpilot.policy.vocabulary import COMMIT_SET, DRAFT_SET, MESSAGE_SET, Effect
from deskpilot.tools.context import ToolContext
from deskpilot.tools.elements import lookup
from deskpilot.tools.pointer import element_under
from deskpilot.tools.reach import Keys, Reach

log = logging.getLogger(__name__)

_ENTER = frozenset({"Return", "KP_Enter", "ISO_Enter"})
MODIFIER_KEYSYMS = frozenset(MODIFIERS.values()) | {
    "Control_R", "Shift_R", "Alt_R", "Super_R", "Meta_L", "Meta_R",
}  # fmt: skip


def key_kind(keysyms: Sequence[str]) -> str | None:
    """ "enter", "shift+enter", "ctrl+enter" or "space" for keys that may fire a button."""
    mods = {k for k in keysyms if k in MODIFIER_KEYSYMS}
    rest = [k for k in keysyms if k not in MODIFIER_KEYSYMS]
    if len(rest) != 1:
        return None
    key = rest[0]
    ctrl = any(m.startswith("Control") for m in mods)
    others = {m for m in mods if not m.startswith(("Control", "Shift"))}
    if others:
        return None
    if key in _ENTER:
        if ctrl:
            return "ctrl+enter"
        return "shift+enter" if mods else "enter"
    if key in ("space", "KP_Space") and not mods:
        return "space"
    return None


class Looks:
    """The trees one judgement reads, each window once."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self._trees: dict[int, Tree | None] = {}

    async def tree(self, window: WindowInfo | None) -> Tree | None:
        if window is None:
            return None
        if window.xid not in self._trees:
            try:
                snap = await self.ctx.desktop.snapshot(window)
                self._trees[window.xid] = Tree(snap.root, window.title)
            except DeskpilotError as exc:
                log.info("no tree of %s to judge by: %s", window.stable_id, exc)
                self._trees[window.xid] = None
        return self._trees[window.xid]


async def judge(ctx: ToolContext, reach: Reach) -> tuple[Risk, str] | None:
    """The consequential risk of what the call does, with the reason; None if it is not."""
    looks = Looks(ctx)
    for find in (_activations, _points, _keys):
        found = await find(ctx, reach, looks)
        if found is not None:
            return Risk.CONSEQUENTIAL, found.reason
    return None


#: Roles whose focus takes Enter as "the next cell" (a spreadsheet's sheet, a grid).
GRIDS = frozenset({"table", "table-cell", "tree-table"})


async def _plainly_typing(ctx: ToolContext, window: WindowInfo, keys: Keys) -> bool:
    """A quick look at the focus (no tree read) for the commonest keys: text typed into a
    field that is not a password field, and Enter (or a typed newline) in a document being
    edited (a new line) or in a spreadsheet (the next cell). False: judge with the tree."""
    if keys.keysyms and (
        ctx.rules.custom_shortcuts or key_kind(keys.keysyms) not in ("enter", "shift+enter")
    ):
        return False  # the user's own shortcuts are always asked about
    if "\t" in keys.text:
        return False  # a tab moves the focus first
    key = await ctx.desktop.focused_element(window)
    live = await ctx.desktop.inspect(key) if key is not None else None
    if live is None or live.pid != window.pid or "focused" not in live.states:
        return False  # the focus is not known for sure
    enter = bool(keys.keysyms) or "\n" in keys.text or "\r" in keys.text
    if not enter:
        return live.role != "password-text" and "editable" in live.states
    if live.role in GRIDS and "editable" in live.states:
        return True
    return (
        "editable" in live.states
        and "multi-line" in live.states
        and live.role not in ("password-text", "terminal")
        and not MESSAGE_SET.find(live.name)  # a chat box: Enter may send
    )


def _node(ctx: ToolContext, tree: Tree | None, element_id: str | None) -> Node | None:
    if tree is None or not element_id:
        return None
    try:
        _eid, record = lookup(ctx.session, element_id)
    except DeskpilotError:
        return None
    return tree.find(record.key)


async def _activations(ctx: ToolContext, reach: Reach, looks: Looks) -> Finding | None:
    judge = ctx.rules.judge
    for act in reach.activations:
        if act.how == "focus":
            continue
        try:
            _eid, record = lookup(ctx.session, act.element_id)
        except DeskpilotError:
            continue  # the tool reports the unknown ID
        shown = record.label or record.name  # the name the model saw ("Send", not "GtkButton")
        if act.how == "fill":
            if record.role == "password-text":
                return Finding(Effect.ACCOUNT.value, f'puts a password into "{shown}"')
            if "\n" not in (act.text or "") and "\r" not in (act.text or ""):
                continue  # text in a field fires nothing (no tree to read)
        elif not needs_place(shown):  # its name says it all: no tree to read
            found = judge.by_name(shown, record.role)
            if found is not None:
                return found
            continue
        tree = await looks.tree(reach.window)
        node = tree.find(record.key) if tree is not None else None
        if act.how == "fill":
            found = judge.fill(node, act.text or "", tree) if node is not None else None
        else:
            found = judge.element(node, tree) if node is not None else None
            found = found or (judge.by_name(shown, record.role) if node is None else None)
        if found is not None:
            return found
    return None


def needs_place(name: str) -> bool:
    """Whether an element called ``name`` is judged by its place too: a generic commit button
    ("OK", "Continue"), a draft verb ("Reply": does it submit?), or no name at all."""
    return not name.strip() or bool(COMMIT_SET.find(name) or DRAFT_SET.find(name))


async def _points(ctx: ToolContext, reach: Reach, looks: Looks) -> Finding | None:
    judge = ctx.rules.judge
    for point in reach.points:
        if not point.presses:
            continue
        tree = await looks.tree(await ctx.desktop.window_at(point.x, point.y))
        for element in await element_under(ctx, point.x, point.y):
            node = tree.find(element.key) if tree is not None else None
            found = judge.element(node, tree) if node is not None else None
            found = found or judge.by_name(element.name, element.role)
            if found is not None:
                return found
    return None


async def _keys(ctx: ToolContext, reach: Reach, looks: Looks) -> Finding | None:
    for keys in reach.keys:
        found = await _one_keys(ctx, keys, looks)
        if found is not None:
            return found
    return None


async def _one_keys(ctx: ToolContext, keys: Keys, looks: Looks) -> Finding | None:
    kind = key_kind(keys.keysyms) if keys.keysyms else None
    newline = "\n" in keys.text or "\r" in keys.text
    if keys.text and not newline and keys.element_id:  # a secret typed into a password field?
        try:
            _eid, record = lookup(ctx.session, keys.element_id)
        except DeskpilotError:
            return None
        if record.role == "password-text":
            name = record.label or record.name or "a password field"
            return Finding(Effect.ACCOUNT.value, f'types into the password field "{name}"')
        return None
    judged = False  # the focused element was judged for these keys (Enter, space, ctrl+Enter)
    if kind is not None or keys.text:
        window = keys.window or await ctx.desktop.active_window()
        if window is not None and not keys.element_id and await _plainly_typing(ctx, window, keys):
            return None
        tree = await looks.tree(window)
        if window is None:
            pass  # no window has the focus: the keys fire nothing
        elif tree is None:
            if kind not in ("space", None) or newline:
                return Finding(Effect.SEND.value, "Enter in a window whose elements cannot be "
                               "read: nobody can tell what it would fire")  # fmt: skip
        else:
            judge = ctx.rules.judge
            if keys.element_id:
                candidates = [_node(ctx, tree, keys.element_id)]
            else:
                candidates = [tree.focused(), _node(ctx, tree, keys.maybe_focus)]
            judged = any(c is not None for c in candidates)  # the focus is known
            seen: set[int] = set()
            for focused in candidates:
                if id(focused) in seen:
                    continue
                seen.add(id(focused))
                found = (
                    judge.typed(keys.text, focused, tree)
                    if keys.text
                    else judge.keys(kind or "", focused, tree)
                )
                if found is not None:
                    return found
    # the shortcuts that may send (alt+s…): the user's always; the defaults where the judge
    # did not look (ctrl+Enter in a text editor is a page break, not a Send)
    if keys.keysyms and (ctx.rules.custom_shortcuts or not judged):
        reason = ctx.rules.keys_reason(keys.keysyms, keys.shown or "+".join(keys.keysyms))
        if reason:
            return Finding(Effect.SEND.value, reason)
    return None
