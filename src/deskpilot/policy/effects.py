"""Consequential by effect: what an action would do, judged from the element in its place.

The door asks :class:`Judge` about every element a call activates and every key it sends:

* **an element** (a click, a press at a point, a drop target) is judged by its own words —
  name, label, description — in the UI's language (:mod:`deskpilot.policy.vocabulary`: "Send",
  "Senden", "Supprimer", "Pay now"); a generic commit button ("OK", "Continue", "Weiter") by
  its place: the nearest dialog, form or page and the window title ("a compose window", "a
  checkout page with a card number field", "a dialog that says it cannot be undone", "a form
  with a password field");
* **keys that fire a button** — Enter (a typed "\\n" too), space, ctrl+Enter — by the focused
  element: on a button they activate it (judged as above); in a one-line field Enter fires the
  form's default button (its ``is-default`` button, else the nearest button that commits or has
  an effect, else the only one), and a form with a password or payment field is consequential
  even without one; in a message box Enter or ctrl+Enter sends when the box sits next to a
  Send button (chat apps); in a terminal Enter runs the command;
* **a fill** of a password field (what the user would otherwise type themselves).

Everything here is pure: it reads a :class:`Tree` (a window's nodes with parent links).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from deskpilot.desktop.base import Node
from deskpilot.policy.vocabulary import (
    COMMIT_SET,
    CONTEXT_SETS,
    MESSAGE_SET,
    VERB_SETS,
    Effect,
    WordSet,
)

#: Roles of what a click, Enter or space activates.
BUTTONS = frozenset({
    "push-button", "toggle-button", "menu-item", "check-menu-item", "radio-menu-item", "link",
    "push-button-menu", "check-box", "radio-button", "list-item", "tab", "page-tab",
})  # fmt: skip
#: Roles of fields where Enter submits (one line of text).
ONE_LINE = frozenset({"entry", "password-text", "spin-button", "combo-box", "search-box"})
#: Roles of text areas (Enter is a new line unless the state says single-line).
TEXT_AREAS = frozenset({"text", "paragraph", "document-text", "editbar"})
#: Roles of the places that say what their buttons do.
PLACES = frozenset({"dialog", "alert", "form", "file-chooser", "color-chooser", "notification"})
DOCUMENTS = frozenset({"document-web", "document-frame", "document-email", "embedded"})
#: Roles whose words describe a place (labels, headings, static text, field names).
WORDY = frozenset({
    "label", "heading", "static", "paragraph", "text", "caption", "section", "description-term",
    "entry", "password-text", "combo-box", "spin-button", "frame", "dialog", "alert", "form",
    "document-web", "document-frame", "title-bar", "status-bar", "page-tab", "link",
})  # fmt: skip
#: How many nodes of a place are read for its words.
PLACE_NODES = 400


@dataclass(frozen=True)
class Finding:
    """A consequential effect and the evidence, in one line for a person and the model."""

    effect: str  # an Effect's description, or "on your list of consequential words"
    why: str

    @property
    def reason(self) -> str:
        return f"{self.why}: {self.effect}"


def quoted(node: Node) -> str:
    """An element as a person would point at it: its name in quotes, else its role."""
    label = (node.name or node.label or node.description or "").strip()
    return f'"{label[:60]}"' if label else f"the {node.role.replace('-', ' ')}"


class Tree:
    """One window's nodes with parent links (what a judgement looks around in)."""

    def __init__(self, root: Node | None, title: str = "") -> None:
        self.root = root
        self.title = title
        self._nodes = root.walk() if root is not None else []
        self._parent: dict[tuple[str, str], Node] = {}
        self._by_key: dict[tuple[str, str], Node] = {}
        for node in self._nodes:
            self._by_key[node.key] = node
            for child in node.children:
                self._parent[child.key] = node

    def find(self, key: tuple[str, str]) -> Node | None:
        return self._by_key.get(key)

    def ancestors(self, node: Node) -> Iterator[Node]:
        parent = self._parent.get(node.key)
        while parent is not None:
            yield parent
            parent = self._parent.get(parent.key)

    def focused(self) -> Node | None:
        """The deepest node with the focus (a document and its field may both say so)."""
        found = [n for n in self._nodes if "focused" in n.states]
        return found[-1] if found else None

    def place(self, node: Node) -> Node | None:
        """The nearest dialog, alert or form around ``node``, else its document, else None."""
        document = None
        for up in self.ancestors(node):
            if up.role in PLACES:
                return up
            if document is None and up.role in DOCUMENTS:
                document = up
        return document


def _words(nodes: Iterable[Node]) -> str:
    parts: list[str] = []
    for i, node in enumerate(nodes):
        if i >= PLACE_NODES:
            break
        if node.role in WORDY or node.role in BUTTONS:
            parts += [node.name, node.label, node.description]
            if node.role in ("label", "static", "heading", "paragraph", "caption") and node.text:
                parts.append(node.text[:200])
    return " · ".join(p for p in parts if p)


class Judge:
    """Judges elements and keys (see the module docstring).

    ``words`` replaces the built-in verbs with the user's own list (``[consequential] words``);
    places and keys are judged as always."""

    def __init__(self, words: Iterable[str] | None = None) -> None:
        self.custom = WordSet(words) if words is not None else None

    # -- elements --------------------------------------------------------------------------

    def named(self, *texts: str) -> tuple[str, str] | None:
        """(effect, the word) when one of ``texts`` says a consequential verb."""
        for text in texts:
            if not text:
                continue
            if self.custom is not None:
                word = self.custom.find(text)
                if word is not None:
                    return "on your list of consequential words", word
                continue
            for effect, verbs in VERB_SETS.items():
                word = verbs.find(text)
                if word is not None:
                    return effect.value, word
        return None

    def place_effect(
        self, node: Node | None, tree: Tree, *, commit: bool = False
    ) -> tuple[str, str] | None:
        """(effect, what says so) for the place around ``node`` (or the whole window).

        For a generic ``commit`` button a compose window is not enough: sending is always
        said by its own verb ("Send"), and "Save" there keeps a draft."""
        place = tree.place(node) if node is not None else None
        scope = place if place is not None else tree.root
        nodes = scope.walk() if scope is not None else []
        if any(n.role == "password-text" for n in nodes[:PLACE_NODES]):
            return Effect.ACCOUNT.value, "a form with a password field"
        text = " · ".join([tree.title, _words(nodes)])  # the window title says where too
        order = [Effect.PAY, Effect.DELETE, Effect.SEND, Effect.RUN, Effect.ACCOUNT]
        for effect in [e for e in order if not (commit and e is Effect.SEND)]:
            word = CONTEXT_SETS[effect].find(text)
            if word is not None:
                where = "a dialog" if place is not None and place.role in ("dialog", "alert") else (
                    "a form" if place is not None and place.role == "form" else "a window"
                )  # fmt: skip
                return effect.value, f'{where} that says "{word}"'
        return None

    def element(self, node: Node, tree: Tree | None = None) -> Finding | None:
        """A click or press on ``node``."""
        hit = self.named(node.name, node.label, node.description)
        if hit is not None:
            return Finding(hit[0], f"activates {quoted(node)}")
        if tree is None or node.role not in BUTTONS:
            return None
        commit = COMMIT_SET.find(" ".join([node.name, node.label]))
        if commit is None:
            return None
        around = self.place_effect(node, tree, commit=True)
        if around is None:
            return None
        return Finding(around[0], f"activates {quoted(node)} in {around[1]}")

    def by_name(self, name: str, role: str = "", description: str = "") -> Finding | None:
        """An element known only by its name (no tree to look around in)."""
        hit = self.named(name, description)
        if hit is None:
            return None
        return Finding(hit[0], f'activates "{name.strip()[:60]}"')

    def fill(self, node: Node) -> Finding | None:
        if node.role == "password-text":
            return Finding(Effect.ACCOUNT.value, f"puts a password into {quoted(node)}")
        return None

    # -- keys ------------------------------------------------------------------------------

    def keys(self, key: str, focused: Node | None, tree: Tree) -> Finding | None:
        """``key`` is "enter", "shift+enter", "space" or "ctrl+enter", sent to ``focused``
        (None: not known)."""
        if key == "shift+enter":  # submits a one-line field; a new line in a text area
            if focused is not None and (focused.role in TEXT_AREAS or focused.role == "terminal"):
                return None
            key = "enter"
        if focused is None or not (
            focused.role in BUTTONS or focused.role in ONE_LINE or focused.role in TEXT_AREAS
            or focused.role == "terminal" or focused.editable
        ):  # fmt: skip
            if key == "space":
                return None
            return self._default(focused, tree, key)
        if focused.role == "terminal" and key != "space":
            return Finding(Effect.RUN.value, f"{_shown(key)} in a terminal runs the command")
        if focused.role in BUTTONS:
            found = self.element(focused, tree)
            if found is None:
                return None
            what = found.why.removeprefix("activates ")
            return Finding(found.effect, f"{_shown(key)} on the focused {what} activates it")
        if key == "space":
            return None
        one_line = focused.role in ONE_LINE or (
            focused.role in TEXT_AREAS and "single-line" in focused.states
        )
        if one_line and key == "enter":
            return self._submit(focused, tree)
        if focused.role in TEXT_AREAS or focused.role in ONE_LINE or focused.editable:
            return self._message_box(key, focused, tree)
        return None

    def typed(self, text: str, focused: Node | None, tree: Tree) -> Finding | None:
        """Typed text: into a password field it is a secret; each newline is an Enter in the
        focused element (a tab before it moves the focus within the same form: judged there)."""
        if focused is not None and focused.role == "password-text" and text:
            return Finding(Effect.ACCOUNT.value, f"types into the password field {quoted(focused)}")
        if "\n" not in text and "\r" not in text:
            return None
        head = text.replace("\r", "\n").split("\n", 1)[0]
        if "\t" in head and focused is not None:
            return self._submit(focused, tree) or self._message_box("enter", focused, tree)
        return self.keys("enter", focused, tree)

    def _default(self, near: Node | None, tree: Tree, key: str) -> Finding | None:
        """Enter with no field or button focused: the window's (or dialog's) default button."""
        scope = tree.place(near) if near is not None else None
        scope = scope or tree.root
        for node in scope.walk() if scope is not None else []:
            if node.role in BUTTONS and ("is-default" in node.states or "default" in node.states):
                found = self.element(node, tree)
                if found is None:
                    return None
                what = found.why.removeprefix("activates ")
                return Finding(found.effect, f"{_shown(key)} fires the default button {what}")
        around = self.place_effect(near, tree)
        if around is None:
            return None
        return Finding(around[0], f"{_shown(key)} in {around[1]}, with no field focused")

    def _submit(self, field: Node, tree: Tree) -> Finding | None:
        """Enter in a one-line field: the default button of its form, judged."""
        button = default_button(field, tree)
        if button is not None:
            found = self.element(button, tree)
            if found is not None:
                return Finding(
                    found.effect,
                    f"Enter in {quoted(field)} fires {found.why.removeprefix('activates ')}",
                )
        around = self.place_effect(field, tree)
        if around is not None:
            return Finding(around[0], f"Enter in {quoted(field)} submits {around[1]}")
        return None

    def _message_box(self, key: str, box: Node, tree: Tree) -> Finding | None:
        """Enter or ctrl+Enter in a text area that sits next to a Send button (chat apps). In
        a mail compose window (To, Subject) Enter is a new line; ctrl+Enter sends."""
        if key == "enter":
            around = self.place_effect(box, tree)
            if around is not None and around[0] == Effect.SEND.value:
                return None
        for up in tree.ancestors(box):
            buttons = [n for n in up.walk() if n.role in BUTTONS][:40]
            if not buttons:
                continue
            sends = [b for b in buttons if VERB_SETS[Effect.SEND].find(" ".join([b.name, b.label]))]
            messaging = key == "ctrl+enter" or MESSAGE_SET.find(
                " ".join([box.name, box.label, box.description])
            )
            if sends and messaging:
                return Finding(
                    Effect.SEND.value,
                    f"{_shown(key)} in {quoted(box)} sends it ({quoted(sends[0])} is next to it)",
                )
            return None
        return None


def default_button(field: Node, tree: Tree) -> Node | None:
    """The button Enter in ``field`` fires: the form's ``is-default`` button, else the nearest
    group of buttons' one that commits or has an effect, else the only button near it."""
    place = tree.place(field)
    scope = place if place is not None else tree.root
    if scope is not None:
        for node in scope.walk():
            if node.role in BUTTONS and ("is-default" in node.states or "default" in node.states):
                return node
    for up in tree.ancestors(field):
        buttons = [
            n
            for n in up.walk()
            if n.role == "push-button" or (n.role in BUTTONS and n.role != "link")
        ]
        if buttons:
            for button in buttons:
                label = " ".join([button.name, button.label])
                if COMMIT_SET.find(label) or any(v.find(label) for v in VERB_SETS.values()):
                    return button
            return buttons[0] if len(buttons) == 1 else None
        if up is place:
            break
    return None


def _shown(key: str) -> str:
    return {"enter": "Enter", "space": "Space", "ctrl+enter": "Ctrl+Enter"}.get(key, key)
