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

from collections.abc import Iterable
from dataclasses import dataclass, replace

from deskpilot.desktop.base import Node
from deskpilot.policy.acts import PLACE, SECRET, act_of
from deskpilot.policy.places import (
    BUTTONS,
    DOCUMENTS,
    Tree,
    default_button,
    is_default,
    is_field,
    one_line,
    place_nodes,
    quoted,
    submits,
    words,
)
from deskpilot.policy.vocabulary import (
    COMMIT_SET,
    CONTEXT_SETS,
    DRAFT_SET,
    HARMLESS_SET,
    MESSAGE_SET,
    SEARCH_SET,
    VERB_SETS,
    Effect,
    WordSet,
)

__all__ = ["Finding", "Judge", "Tree", "default_button"]


@dataclass(frozen=True, eq=False)
class Finding:
    """A consequential effect and the evidence, in one line for a person and the model.

    Besides the line, the evidence a grant is checked against (:mod:`deskpilot.policy.grants`):
    the act (:mod:`deskpilot.policy.acts`), the word that says so, the element activated (or
    typed into) in its window's tree, and the text a fill or typing puts in."""

    effect: str  # an Effect's description, or "on your list of consequential words"
    why: str
    act: str = ""
    word: str = ""
    node: Node | None = None
    tree: Tree | None = None
    text: str = ""

    @property
    def reason(self) -> str:
        return f"{self.why}: {self.effect}"

    def seen(self, node: Node | None, tree: Tree | None) -> Finding:
        """The same finding with the element it is about, in its tree."""
        return replace(
            self,
            node=node if node is not None else self.node,
            tree=tree if tree is not None else self.tree,
        )


class Judge:
    """Judges elements and keys (see the module docstring).

    ``words`` replaces the built-in verbs with the user's own list (``[consequential] words``);
    places and keys are judged as always."""

    def __init__(self, words: Iterable[str] | None = None) -> None:
        self.custom = WordSet(words) if words is not None else None

    # -- elements --------------------------------------------------------------------------

    def named(self, *texts: str) -> tuple[str, str, bool] | None:
        """(effect, the word, whether it is a draft verb) when one of ``texts`` says a
        consequential verb; a verb inside a harmless phrase ("Order by price") does not count.
        The longest verb found wins ("Delete account" is closing an account, not deleting;
        "Send money" a transfer)."""
        for text in texts:
            if not text:
                continue
            if self.custom is not None:
                word = self.custom.find(text)
                if word is not None:
                    return "on your list of consequential words", word, False
                continue
            plain = HARMLESS_SET.without(text)
            found = [(e.value, w) for e, verbs in VERB_SETS.items() if (w := verbs.find(plain))]
            if found:
                effect, word = max(found, key=lambda f: len(f[1]))
                return effect, word, False
            word = DRAFT_SET.find(plain)
            if word is not None:
                return Effect.SEND.value, word, True
        return None

    def _act(self, effect: str, word: str) -> str:
        return word if self.custom is not None else act_of(effect, word)

    def place_effect(
        self, node: Node | None, tree: Tree, *, commit: bool = False
    ) -> tuple[str, str] | None:
        """(effect, what says so) for the place around ``node`` (or the whole window).

        For a generic ``commit`` button a compose window is not enough: sending is always
        said by its own verb ("Send"), and "Save" there keeps a draft."""
        place = tree.place(node) if node is not None else None
        scope = place if place is not None else tree.root
        if scope is None or scope.role == "file-chooser":
            return None  # a file chooser's Save or Open writes or reads a file the person names
        nodes = place_nodes(scope)
        if any(n.role == "password-text" for n in nodes):
            return Effect.ACCOUNT.value, "a form with a password field"
        page = tree.document_of(scope) if scope.role not in DOCUMENTS else None
        # the whole window: its title names the document open in it ("payments.ods"), not
        # what a button does
        said = words(nodes[1:] if place is None else nodes)
        text = " · ".join([page.name if page is not None else "", said])
        order = [Effect.PAY, Effect.DELETE, Effect.SEND, Effect.RUN, Effect.ACCOUNT]
        for effect in [e for e in order if not (commit and e is Effect.SEND)]:
            word = CONTEXT_SETS[effect].find(text)
            if word is not None:
                role = place.role if place is not None else ""
                where = {
                    "dialog": "a dialog",
                    "alert": "a dialog",
                    "form": "a form",
                    "landmark": "a part of the page",
                }.get(role, "a window")
                return effect.value, f'{where} that says "{word}"'
        return None

    def element(self, node: Node, tree: Tree | None = None) -> Finding | None:
        """A click or press on ``node``: its own verb, else (a commit button) its place."""
        hit = self.named(node.name, node.label, node.description)
        if hit is not None:
            effect, word, draft = hit
            if draft and tree is not None and not submits(node, tree):
                return None  # "Reply" opens a draft: what sends is the draft's Send
            return Finding(
                effect, f"activates {quoted(node)}", self._act(effect, word), word, node, tree
            )
        if tree is None or node.role not in BUTTONS or tree.in_bar(node):
            return None  # a toolbar's or menu's Save acts on the document, not on a form
        commit = COMMIT_SET.find(" ".join([node.name, node.label]))
        if commit is None:
            return None
        around = self.place_effect(node, tree, commit=True)
        if around is None:
            return None
        return Finding(
            around[0], f"activates {quoted(node)} in {around[1]}", PLACE, commit, node, tree
        )

    def by_name(self, name: str, role: str = "", description: str = "") -> Finding | None:
        """An element known only by its name (no tree to look around in)."""
        hit = self.named(name, description)
        if hit is None:
            return None
        return Finding(
            hit[0], f'activates "{name.strip()[:60]}"', self._act(hit[0], hit[1]), hit[1]
        )

    def fill(self, node: Node, text: str, tree: Tree | None) -> Finding | None:
        """A fill of ``node`` with ``text``: a password, or a newline that may submit (a web
        field is filled by typing when it takes no text otherwise)."""
        if node.role == "password-text":
            return Finding(
                Effect.ACCOUNT.value,
                f"puts a password into {quoted(node)}",
                SECRET,
                node=node,
                tree=tree,
                text=text,
            )
        if tree is not None and ("\n" in text or "\r" in text) and one_line(node):
            return self.keys("enter", node, tree)
        return None

    # -- keys ------------------------------------------------------------------------------

    def keys(self, key: str, focused: Node | None, tree: Tree) -> Finding | None:
        """``key`` is "enter", "shift+enter", "space" or "ctrl+enter", sent to ``focused``
        (None: not known)."""
        if key == "shift+enter":  # submits a one-line field; a new line in a text area
            if focused is not None and (
                focused.role == "terminal" or (is_field(focused) and not one_line(focused))
            ):
                return None
            key = "enter"
        if focused is not None and focused.role in DOCUMENTS and not focused.editable:
            return None  # a page with nothing in it focused: Enter and space fire nothing
        if focused is None or not (
            focused.role in BUTTONS or is_field(focused) or focused.role == "terminal"
        ):
            if key == "space":
                return None
            return self._default(focused, tree, key)
        if focused.role == "terminal" and key != "space":
            return Finding(
                Effect.RUN.value,
                f"{_shown(key)} in a terminal runs the command",
                "run",
                node=focused,
                tree=tree,
            )
        if focused.role in BUTTONS:
            found = self.element(focused, tree)
            if found is None:
                return None
            what = found.why.removeprefix("activates ")
            return replace(found, why=f"{_shown(key)} on the focused {what} activates it")
        if key == "space":
            return None
        if key == "enter" and one_line(focused):
            return self._submit(focused, tree)
        return self._message_box(key, focused, tree)

    def typed(self, text: str, focused: Node | None, tree: Tree) -> Finding | None:
        """Typed text: into a password field it is a secret; each newline is an Enter in the
        focused element (a tab before it moves the focus within the same form: judged there)."""
        if focused is not None and focused.role == "password-text" and text:
            return Finding(
                Effect.ACCOUNT.value,
                f"types into the password field {quoted(focused)}",
                SECRET,
                node=focused,
                tree=tree,
                text=text,
            )
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
            if node.role in BUTTONS and is_default(node):
                found = self.element(node, tree)
                if found is None:
                    return None
                what = found.why.removeprefix("activates ")
                return replace(found, why=f"{_shown(key)} fires the default button {what}")
        around = self.place_effect(near, tree)
        if around is None:
            return None
        return Finding(
            around[0],
            f"{_shown(key)} in {around[1]}, with no field focused",
            PLACE,
            node=near,
            tree=tree,
        )

    def _submit(self, field: Node, tree: Tree) -> Finding | None:
        """Enter in a one-line field: the default button of its form, judged."""
        button = default_button(field, tree)
        if button is not None:
            found = self.element(button, tree)
            if found is not None:
                return replace(
                    found,
                    why=f"Enter in {quoted(field)} fires {found.why.removeprefix('activates ')}",
                )
            if SEARCH_SET.find(" ".join([button.name, button.label])) is not None:
                return None  # it fires a search
        around = self.place_effect(field, tree)
        if around is not None:
            return Finding(
                around[0],
                f"Enter in {quoted(field)} submits {around[1]}",
                PLACE,
                node=field,
                tree=tree,
            )
        return None

    def _message_box(self, key: str, box: Node, tree: Tree) -> Finding | None:
        """Enter or ctrl+Enter in a text box. ctrl+Enter sends when the box's place (its form,
        dialog or page, else its window) has a Send button (a toolbar's too: mail compose
        windows); Enter does when the box is a message box next to a Send button (chat apps) —
        in a mail compose window (To, Subject) Enter is a new line."""
        if key == "ctrl+enter":
            scope = tree.place(box) or tree.root
            sends = _send_buttons(scope.walk() if scope is not None else [])
            if sends:
                return Finding(
                    Effect.SEND.value,
                    f"Ctrl+Enter in {quoted(box)} sends it (with {quoted(sends[0])} there)",
                    "submit",
                    node=sends[0],
                    tree=tree,
                )
            return None
        around = self.place_effect(box, tree)
        if around is not None and around[0] == Effect.SEND.value:
            return None
        if not MESSAGE_SET.find(" ".join([box.name, box.label, box.description])):
            return None
        for up in tree.ancestors(box):
            buttons = [n for n in up.walk() if n.role in BUTTONS][:40]
            if not buttons:
                continue
            sends = _send_buttons(buttons)
            if sends:
                return Finding(
                    Effect.SEND.value,
                    f"{_shown(key)} in {quoted(box)} sends it ({quoted(sends[0])} is next to it)",
                    "submit",
                    node=sends[0],
                    tree=tree,
                )
            return None
        return None


def _send_buttons(nodes: Iterable[Node]) -> list[Node]:
    """The push buttons among ``nodes`` that send (not menu items: a File > Send menu of an
    editor is not what ctrl+Enter fires)."""
    verbs = VERB_SETS[Effect.SEND]
    return [
        n
        for n in nodes
        if n.role in ("push-button", "toggle-button", "link")
        and verbs.find(" ".join([n.name, n.label]))
    ]


def _shown(key: str) -> str:
    return {"enter": "Enter", "space": "Space", "ctrl+enter": "Ctrl+Enter"}.get(key, key)
