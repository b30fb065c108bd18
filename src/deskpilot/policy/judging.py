"""The judgement of a call's effect: what it touches, seen in its window's tree.

For each part of a call's reach (:mod:`deskpilot.policy.reach`) the window's tree is read once
(:class:`Scene`: the desktop, the session's element records and the element under a point, as
the door gives them) and the :class:`~deskpilot.policy.effects.Judge` of the rules asked:

* an element activated by ID — by the name the model was shown (a GTK 4 button named
  "GtkButton" shows its label "Send") when that says it all; a generic commit button ("OK"),
  a draft verb ("Reply": does it submit?) or a nameless element by its node in its place
  (only then is the tree read); a fill of a password field, or a fill with a newline (a web
  field that takes no text is filled by typing: Enter there submits);
* a pressed screen point — the element under it (through a button's label or icon), in the
  tree of the window it is pressed in: the call's own (an element tool's pointer step raises
  it for the press), else the window on top at the point (a native computer call);
* keys — Enter (a typed newline), shift+Enter, space and ctrl+Enter, by the element with the
  focus (the one ``type`` focuses first, or one an earlier step of the same call touched);
  text typed into a password field; the consequential shortcuts (alt+s…) where the keys
  were not judged by the focus (a user's own list always);
* a window whose tree cannot be read at all: Enter there is treated as consequential (nobody
  can tell what it would fire); with no window focused, keys fire nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from deskpilot.desktop.base import Desktop, LiveElement, Node, WindowInfo
from deskpilot.desktop.keys import MODIFIERS
from deskpilot.errors import DeskpilotError
from deskpilot.policy.acts import SECRET, UNKNOWN
from deskpilot.policy.effects import Finding, Tree
from deskpilot.policy.reach import Keys, Reach
from deskpilot.policy.rules import ConsequentialRules
from deskpilot.policy.vocabulary import COMMIT_SET, DRAFT_SET, MESSAGE_SET, Effect
from deskpilot.session import ElementRecord

log = logging.getLogger(__name__)

_ENTER = frozenset({"Return", "KP_Enter", "ISO_Enter"})
MODIFIER_KEYSYMS = frozenset(MODIFIERS.values()) | {
    "Control_R",
    "Shift_R",
    "Alt_R",
    "Super_R",
    "Meta_L",
    "Meta_R",
}


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


Records = Callable[[str], ElementRecord | None]
#: the element under a screen point: of the window given, else of the window on top there
Under = Callable[[int, int, WindowInfo | None], Awaitable[list[LiveElement]]]


async def _nobody_under(x: int, y: int, window: WindowInfo | None) -> list[LiveElement]:
    return []


@dataclass
class Scene:
    """What a judgement may look at: the desktop, the element records of the session (by
    element ID, None when unknown) and the element under a screen point (through a button's
    label or icon). Each window's tree is read once per judgement."""

    desktop: Desktop
    record: Records = field(default=lambda _eid: None)
    under: Under = field(default=_nobody_under)
    _trees: dict[int, Tree | None] = field(default_factory=dict, repr=False)

    async def tree(self, window: WindowInfo | None) -> Tree | None:
        if window is None:
            return None
        if window.handle not in self._trees:
            try:
                snap = await self.desktop.snapshot(window)
                self._trees[window.handle] = Tree(snap.root, window.title)
            except DeskpilotError as exc:
                log.info("no tree of %s to judge by: %s", window.stable_id, exc)
                self._trees[window.handle] = None
        return self._trees[window.handle]


@dataclass(frozen=True)
class Judged:
    """A consequential finding and the window it is in (None: not known)."""

    finding: Finding
    window: WindowInfo | None


async def judge(scene: Scene, rules: ConsequentialRules, reach: Reach) -> Judged | None:
    """What the call does that is consequential, with the evidence; None if nothing is."""
    for find in (_activations, _points, _keys):
        found = await find(scene, rules, reach)
        if found is not None:
            return found
    return None


#: Roles whose focus takes Enter as "the next cell" (a spreadsheet's sheet, a grid).
GRIDS = frozenset({"table", "table-cell", "tree-table"})


async def _plainly_typing(
    scene: Scene, rules: ConsequentialRules, window: WindowInfo, keys: Keys
) -> bool:
    """A quick look at the focus (no tree read) for the commonest keys: text typed into a
    field that is not a password field, and Enter (or a typed newline) in a document being
    edited (a new line) or in a spreadsheet (the next cell). False: judge with the tree."""
    if keys.keysyms and (
        rules.custom_shortcuts or key_kind(keys.keysyms) not in ("enter", "shift+enter")
    ):
        return False  # the user's own shortcuts are always asked about
    if "\t" in keys.text:
        return False  # a tab moves the focus first
    key = await scene.desktop.focused_element(window)
    live = await scene.desktop.inspect(key) if key is not None else None
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


def _node(scene: Scene, tree: Tree | None, element_id: str | None) -> Node | None:
    if tree is None or not element_id:
        return None
    record = scene.record(element_id)
    return tree.find(record.key) if record is not None else None


async def _activations(scene: Scene, rules: ConsequentialRules, reach: Reach) -> Judged | None:
    judge = rules.judge
    window = reach.window
    for act in reach.activations:
        if act.how == "focus":
            continue
        record = scene.record(act.element_id)
        if record is None:
            continue  # the tool reports the unknown ID
        shown = record.label or record.name  # the name the model saw ("Send", not "GtkButton")
        found: Finding | None
        if act.how == "fill":
            if record.role == "password-text":
                found = Finding(
                    Effect.ACCOUNT.value,
                    f'puts a password into "{shown}"',
                    SECRET,
                    text=act.text or "",
                )
                return Judged(await _seen(scene, found, window, record), window)
            if "\n" not in (act.text or "") and "\r" not in (act.text or ""):
                continue  # text in a field fires nothing (no tree to read)
        elif not needs_place(shown):  # its name says it all: the tree only for the evidence
            found = judge.by_name(shown, record.role)
            if found is not None:
                return Judged(await _seen(scene, found, window, record), window)
            continue
        tree = await scene.tree(window)
        node = tree.find(record.key) if tree is not None else None
        if act.how == "fill":
            found = judge.fill(node, act.text or "", tree) if node is not None else None
        else:
            found = judge.element(node, tree) if node is not None else None
            found = found or (judge.by_name(shown, record.role) if node is None else None)
        if found is not None:
            return Judged(found, window)
    return None


async def _seen(
    scene: Scene, found: Finding, window: WindowInfo | None, record: ElementRecord
) -> Finding:
    """``found`` with its element in its window's tree (what a grant is checked against)."""
    tree = await scene.tree(window)
    return found.seen(tree.find(record.key) if tree is not None else None, tree)


def needs_place(name: str) -> bool:
    """Whether an element called ``name`` is judged by its place too: a generic commit button
    ("OK", "Continue"), a draft verb ("Reply": does it submit?), or no name at all."""
    return not name.strip() or bool(COMMIT_SET.find(name) or DRAFT_SET.find(name))


async def _points(scene: Scene, rules: ConsequentialRules, reach: Reach) -> Judged | None:
    judge = rules.judge
    for point in reach.points:
        if not point.presses:
            continue
        unplaced = reach.window is not None and not reach.window.placed
        # a point pressed in the call's own window (raised for the press) is judged there,
        # not by a window that covers it now: a harmless button over "Send" hides nothing
        own = unplaced or (reach.window is not None and point.in_window)
        window = reach.window if own else await scene.desktop.window_at(point.x, point.y)
        tree = await scene.tree(window)
        if unplaced:
            # a window with no place on the screen (GNOME on Wayland) is pressed in its own
            # coordinates, once made active: what is there comes from its own tree (the
            # desktop cannot tell which window is under a point)
            for hit in tree.at(point.x, point.y) if tree is not None else []:
                found = judge.element(hit, tree) or judge.by_name(hit.name, hit.role)
                if found is not None:
                    return Judged(found, window)
            continue
        for element in await scene.under(point.x, point.y, window if own else None):
            node = tree.find(element.key) if tree is not None else None
            found = judge.element(node, tree) if node is not None else None
            found = found or judge.by_name(element.name, element.role)
            if found is not None:
                return Judged(found, window)
    return None


async def _keys(scene: Scene, rules: ConsequentialRules, reach: Reach) -> Judged | None:
    for keys in reach.keys:
        found = await _one_keys(scene, rules, keys)
        if found is not None:
            return found
    return None


async def _one_keys(scene: Scene, rules: ConsequentialRules, keys: Keys) -> Judged | None:
    kind = key_kind(keys.keysyms) if keys.keysyms else None
    newline = "\n" in keys.text or "\r" in keys.text
    if keys.text and not newline and keys.element_id:  # a secret typed into a password field?
        record = scene.record(keys.element_id)
        if record is None:
            return None
        if record.role == "password-text":
            name = record.label or record.name or "a password field"
            found = Finding(
                Effect.ACCOUNT.value,
                f'types into the password field "{name}"',
                SECRET,
                text=keys.text,
            )
            window = keys.window
            return Judged(await _seen(scene, found, window, record), window)
        return None
    judged = False  # the focused element was judged for these keys (Enter, space, ctrl+Enter)
    window = None
    if kind is not None or keys.text:
        window = keys.window or await scene.desktop.active_window()
        if (
            window is not None
            and not keys.element_id
            and await _plainly_typing(scene, rules, window, keys)
        ):
            return None
        tree = await scene.tree(window)
        if window is None:
            pass  # no window has the focus: the keys fire nothing
        elif tree is None:
            if kind not in ("space", None) or newline:
                found = Finding(
                    Effect.SEND.value,
                    "Enter in a window whose elements cannot be "
                    "read: nobody can tell what it would fire",
                    UNKNOWN,
                )
                return Judged(found, window)
        else:
            judge = rules.judge
            if keys.element_id:
                candidates = [_node(scene, tree, keys.element_id)]
            else:
                candidates = [tree.focused(), _node(scene, tree, keys.maybe_focus)]
            judged = any(c is not None for c in candidates)  # the focus is known
            seen: set[int] = set()
            for focused in candidates:
                if id(focused) in seen:
                    continue
                seen.add(id(focused))
                fired = (
                    judge.typed(keys.text, focused, tree)
                    if keys.text
                    else judge.keys(kind or "", focused, tree)
                )
                if fired is not None:
                    return Judged(fired, window)
    # the shortcuts that may send (alt+s…): the user's always; the defaults where the judge
    # did not look (ctrl+Enter in a text editor is a page break, not a Send)
    if keys.keysyms and (rules.custom_shortcuts or not judged):
        reason = rules.keys_reason(keys.keysyms, keys.shown or "+".join(keys.keysyms))
        if reason:
            return Judged(Finding(Effect.SEND.value, reason, "submit"), window)
    return None
