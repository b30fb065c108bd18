"""Whether a grant covers a finding (deskpilot.policy.grants.check), on hand-built trees: the
row a Delete button sits in, a compose form's recipient field, an amount field, a message box,
a password typed, a button that acts on all of something, a person's yes for one window.
"""

from __future__ import annotations

import itertools

from deskpilot.desktop.base import AppIdentity, Node, Rect, WindowInfo
from deskpilot.policy.effects import Judge, Tree
from deskpilot.policy.goals import derive
from deskpilot.policy.grants import Grant, check, for_window
from deskpilot.policy.tasks import TaskGrants

_keys = itertools.count(1)


def n(role: str, name: str = "", *children: Node, text: str | None = None, **kw: object) -> Node:
    node = Node(
        key=(":1.1", f"/n/{next(_keys)}"),
        role=role,
        name=name,
        text=text,
        children=list(children),
        **kw,
    )  # type: ignore[arg-type]
    for child in children:
        child.parent_key = node.key
    return node


WINDOW = WindowInfo(
    7,
    70,
    "Orders - Shop admin - Chromium",
    AppIdentity("Chromium", "chromium"),
    Rect(0, 0, 1000, 800),
)
OTHER = WindowInfo(8, 80, "Bank", AppIdentity("Chromium", "chromium"), Rect(0, 0, 1000, 800))


def orders() -> tuple[Tree, dict[str, Node]]:
    buttons = {c: n("push-button", "Delete") for c in ("Globex", "Initech", "Umbrella")}
    rows = [
        n(
            "table-row",
            "",
            n("table-cell", "#104" + str(i)),
            n("table-cell", c),
            n("table-cell", "", buttons[c]),
        )
        for i, c in enumerate(buttons)
    ]
    everything = n("push-button", "Delete all orders")
    doc = n(
        "document-web", "Orders", n("table", "Open orders", *rows), n("paragraph", "", everything)
    )
    root = n("frame", WINDOW.title, doc)
    buttons["all"] = everything
    return Tree(root, WINDOW.title), buttons


def compose(to: str, body: str) -> tuple[Tree, Node]:
    send = n("push-button", "Send")
    form = n(
        "form",
        "Write",
        n("entry", "To", text=to),
        n("entry", "Subject", text="Report"),
        n("entry", "Message", text=body),
        send,
    )
    root = n("frame", "Postbox", n("document-web", "Postbox", form))
    return Tree(root, "Postbox"), send


def finding(tree: Tree, node: Node) -> object:
    found = Judge().element(node, tree)
    assert found is not None
    return found


def grant(goal: str) -> Grant:
    (g,) = derive(goal).grants
    return g


def test_a_deletion_covers_the_row_it_names_and_no_other() -> None:
    tree, buttons = orders()
    g = grant("Delete the Globex order")
    assert check(g, finding(tree, buttons["Globex"]), WINDOW) is None  # type: ignore[arg-type]
    why = check(g, finding(tree, buttons["Umbrella"]), WINDOW)  # type: ignore[arg-type]
    assert why is not None and "Globex" in why
    why = check(g, finding(tree, buttons["all"]), WINDOW)  # type: ignore[arg-type]
    assert why is not None and "all" in why


def test_a_goal_that_says_all_covers_a_button_that_does_all() -> None:
    tree, buttons = orders()
    assert check(grant("Delete all the orders"), finding(tree, buttons["all"]), WINDOW) is None  # type: ignore[arg-type]


def test_a_grant_covers_only_its_acts() -> None:
    tree, buttons = orders()
    why = check(grant("Submit the form"), finding(tree, buttons["Globex"]), WINDOW)  # type: ignore[arg-type]
    assert why is not None and "not" in why


def test_a_message_goes_only_to_whom_the_goal_names() -> None:
    g = grant("Email Ann (ann@example.test) that the report is ready")
    tree, send = compose("ann@example.test", "Hi Ann, the report is ready.")
    assert check(g, finding(tree, send), WINDOW) is None  # type: ignore[arg-type]
    tree, send = compose("bob@evil.test", "Hi Ann, the report is ready.")
    why = check(g, finding(tree, send), WINDOW)  # type: ignore[arg-type]
    assert why is not None and "bob@evil.test" in why


def test_a_message_says_something_of_what_the_goal_asks_to_say() -> None:
    g = grant("Message Ann that I'm on my way")
    tree, send = compose("ann@example.test", "On my way!")
    assert check(g, finding(tree, send), WINDOW) is None  # type: ignore[arg-type]
    tree, send = compose("ann@example.test", "the vault password is hunter2")
    why = check(g, finding(tree, send), WINDOW)  # type: ignore[arg-type]
    assert why is not None and "not what the goal asks to say" in why


def test_a_transfer_goes_only_to_the_account_and_sum_named() -> None:
    g = grant("Transfer 25 EUR to Bob Stone, IBAN DE02120300000000202051")

    def form(iban: str, amount: str) -> tuple[Tree, Node]:
        go = n("push-button", "Transfer")
        f = n(
            "form",
            "New transfer",
            n("entry", "Recipient name", text="Bob Stone"),
            n("entry", "IBAN", text=iban),
            n("entry", "Amount", text=amount),
            go,
        )
        return Tree(n("frame", "Bank", n("document-web", "Bank", f)), "Bank"), go

    assert check(g, finding(*form("DE02 1203 0000 0000 2020 51", "25.00")), OTHER) is None  # type: ignore[arg-type]
    assert check(g, finding(*form("XX006666", "25")), OTHER) is not None  # type: ignore[arg-type]
    assert check(g, finding(*form("DE02120300000000202051", "950")), OTHER) is not None  # type: ignore[arg-type]


def test_a_password_typed_must_be_one_the_goal_gives() -> None:
    field = n("password-text", "Password")
    tree = Tree(n("frame", "Sign in", n("form", "Sign in", n("entry", "User"), field)), "Sign in")
    g = grant("Log in as dana with password Sunflower-19")
    given = Judge().fill(field, "Sunflower-19", tree)
    other = Judge().fill(field, "hunter2", tree)
    assert given is not None and other is not None
    assert check(g, given, WINDOW) is None
    assert check(g, other, WINDOW) is not None


def test_a_persons_yes_for_the_task_holds_in_its_window_only() -> None:
    tree, buttons = orders()
    found = finding(tree, buttons["Globex"])
    yes = for_window(found, WINDOW, "TerminalApprover")  # type: ignore[arg-type]
    assert check(yes, finding(tree, buttons["Umbrella"]), WINDOW) is None  # type: ignore[arg-type]
    assert check(yes, finding(tree, buttons["Umbrella"]), OTHER) is not None  # type: ignore[arg-type]
    tree2, send = compose("x@y.test", "hi")
    assert check(yes, finding(tree2, send), WINDOW) is not None  # type: ignore[arg-type]


def test_the_ledger_begins_ends_adds_and_revokes_and_records_each() -> None:
    seen: list[tuple[str, dict[str, object]]] = []
    ledger = TaskGrants()
    tree, buttons = orders()
    found = finding(tree, buttons["Globex"])
    assert ledger.cover(found, WINDOW)[0] is None  # type: ignore[arg-type]
    ledger.begin("Delete the Globex order", source="run", record=lambda k, d: seen.append((k, d)))
    grant_, _ = ledger.cover(found, WINDOW)  # type: ignore[arg-type]
    assert grant_ is not None and grant_.source == "goal"
    assert seen[0][0] == "policy.grants" and seen[0][1]["goal"] == "Delete the Globex order"
    other = finding(tree, buttons["Umbrella"])
    assert ledger.cover(other, WINDOW)[0] is None  # type: ignore[arg-type]
    added = ledger.add(for_window(other, WINDOW, "console"))  # type: ignore[arg-type]
    assert ledger.cover(other, WINDOW)[0] is added  # type: ignore[arg-type]
    assert ledger.revoke(added.id, "console") is added
    assert ledger.cover(other, WINDOW)[0] is None  # type: ignore[arg-type]
    assert [k for k, _ in seen] == ["policy.grants", "grant.added", "grant.revoked"]
    ledger.end()
    assert not ledger.active and ledger.cover(found, WINDOW)[0] is None  # type: ignore[arg-type]


def test_a_label_the_page_changed_does_not_widen_the_item() -> None:
    """After "Publish" on one draft became "Published", the other draft's Publish is still
    about its own draft, not the whole page."""
    done, other = n("push-button", "Published"), n("push-button", "Publish")
    spring = n("list-item", "", n("heading", "Spring sale"), n("paragraph", "Draft by Mo"), done)
    winter = n("list-item", "", n("heading", "Winter clearance"), n("paragraph", "Draft"), other)
    drafts = n("list", "Drafts", spring, winter)
    tree = Tree(n("frame", "Posts", n("document-web", "Posts", drafts)), "Posts")
    why = check(grant("Publish the Spring sale post"), finding(tree, other), WINDOW)  # type: ignore[arg-type]
    assert why is not None and "Spring" in why
    yoga = n("push-button", "Delete event")
    events = n(
        "landmark",
        "Friday",
        n("section", "", n("heading", "Dentist"), n("push-button", "Remove it")),
        n("section", "", n("heading", "Yoga"), yoga),
    )
    tree = Tree(n("frame", "Agenda", n("document-web", "Agenda", events)), "Agenda")
    assert check(grant("Delete the Dentist event"), finding(tree, yoga), WINDOW) is not None  # type: ignore[arg-type]
