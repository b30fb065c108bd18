"""Grants: what a task may do without asking, and whether one covers a finding.

A :class:`Grant` allows some acts (:mod:`deskpilot.policy.acts`) on what it names. Grants come
from two places, and only those two:

* **the person's goal** (:func:`deskpilot.policy.goals.derive`): "fill in the booking form and
  submit it" grants ``submit``; "email Ann that the report is ready" grants ``submit`` to Ann,
  of a message about the report; "delete the Globex order" grants ``delete`` of what says
  "Globex". Text read from the screen never adds to a grant: it is only what a grant is
  checked against;
* **a person's yes for the task** (the console card, MCP elicitation, the terminal prompt):
  this kind of effect, in this window, until the task ends (:func:`for_window`).

The ledger of a task's grants is :class:`deskpilot.policy.tasks.TaskGrants`.

:func:`check` says whether a grant covers a finding of the judge, and if not, why: the act must
be one it allows (a commit button judged by its place: any act of that effect class), and what
the finding is about must be what the grant names — the element's row, list item, dialog or
form must name one of its objects; the form's recipient fields must hold only its recipients;
its amount fields one of its amounts; a message box something of the goal's message; a
password typed must be one the goal gives; a button that acts on all of something ("Delete
all") needs a goal that says all.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from deskpilot.desktop.base import Node, WindowInfo
from deskpilot.policy.acts import ACT_WORDS, PLACE, SECRET, UNKNOWN, effect_of
from deskpilot.policy.effects import Finding
from deskpilot.policy.places import BUTTONS, DOCUMENTS, PLACES, Tree, is_field
from deskpilot.policy.vocabulary import Effect, WordSet, normalize

#: Acts whose target is a person or an account (recipient fields are checked).
TO_SOMEONE = frozenset({"submit", "reply", "forward", "share", "transfer", "pay", "donate", PLACE})
#: Acts that send a text someone wrote (the message box is checked against the goal).
MESSAGES = frozenset({"submit", "reply", "comment", "publish", "forward"})

ALL_WORDS = WordSet(
    (
        "all",
        "every",
        "everything",
        "entire",
        "each",
        "alle",
        "alles",
        "sämtliche",
        "tout",
        "tous",
        "toutes",
        "todo",
        "todos",
        "todas",
        "tutti",
        "tutte",
        "tutto",
        "allt",
        "alla",
        "wszystko",
        "wszystkie",
        "vše",
        "všechny",
        "alt",
        "allemaal",
    )
)
#: Labels of fields that say who something goes to.
RECIPIENT_FIELDS = WordSet(
    (
        "to",
        "to:",
        "recipient",
        "recipients",
        "send to",
        "cc",
        "bcc",
        "add people",
        "share with",
        "invite",
        "people",
        "iban",
        "account number",
        "to account",
        "payee",
        "beneficiary",
        "recipient name",
        "recipient account",
        "an",
        "empfänger",
        "kontonummer",
        "destinataire",
        "à",
        "bénéficiaire",
        "para",
        "destinatario",
        "beneficiario",
        "destinatário",
        "aan",
        "ontvanger",
        "do",
        "odbiorca",
        "till",
        "mottagare",
        "komu",
    )
)
AMOUNT_FIELDS = WordSet(
    (
        "amount",
        "sum",
        "betrag",
        "summe",
        "montant",
        "importe",
        "cantidad",
        "importo",
        "valor",
        "quantia",
        "bedrag",
        "kwota",
        "belopp",
        "beløb",
        "beløp",
        "částka",
    )
)
#: Labels of boxes where a message is written.
MESSAGE_FIELDS = WordSet(
    (
        "message",
        "body",
        "text",
        "comment",
        "reply",
        "your reply",
        "your message",
        "review",
        "your review",
        "note",
        "description",
        "what's happening",
        "write a message",
        "post",
        "nachricht",
        "kommentar",
        "antwort",
        "text",
        "commentaire",
        "réponse",
        "mensaje",
        "comentario",
        "messaggio",
        "commento",
        "mensagem",
        "bericht",
        "reactie",
        "wiadomość",
        "meddelande",
    )
)
#: Words too common to say that two messages are about the same thing.
STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "to",
        "of",
        "in",
        "on",
        "at",
        "for",
        "with",
        "from",
        "by",
        "about",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "am",
        "i",
        "me",
        "my",
        "you",
        "your",
        "he",
        "him",
        "his",
        "she",
        "her",
        "it",
        "its",
        "we",
        "us",
        "our",
        "they",
        "them",
        "their",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "what",
        "which",
        "who",
        "whom",
        "when",
        "where",
        "why",
        "how",
        "not",
        "no",
        "yes",
        "so",
        "if",
        "then",
        "than",
        "too",
        "very",
        "can",
        "could",
        "will",
        "would",
        "should",
        "may",
        "might",
        "must",
        "do",
        "does",
        "did",
        "done",
        "have",
        "has",
        "had",
        "just",
        "also",
        "hi",
        "hello",
        "hey",
        "dear",
        "thanks",
        "thank",
        "please",
        "ok",
        "okay",
        "all",
        "any",
        "some",
        "one",
        "two",
    ]
)

_ids = itertools.count(1)


@dataclass(frozen=True)
class Grant:
    """Acts a task may do without asking, and on what (see the module docstring)."""

    acts: frozenset[str]
    source: str  # "goal" (the person's goal) or "person" (a yes for the task)
    words: str  # the goal's words it came from, or what the person approved
    objects: tuple[str, ...] = ()  # names the target must carry ("Globex", "draft-old.txt")
    recipients: tuple[str, ...] = ()  # who it goes to ("Ann", "ann@example.test", an IBAN)
    content: tuple[str, ...] = ()  # words of the message the goal gives
    amounts: tuple[str, ...] = ()  # sums the goal names ("25")
    secrets: tuple[str, ...] = ()  # passwords the goal gives
    every: bool = False  # the goal says all of them
    effect: str = ""  # a person's grant: the effect class it was asked for
    window: str = ""  # a person's grant: the window it holds in (stable id)
    where: str = ""  # a person's grant: the window's title, as shown
    by: str = ""  # who granted it: "the goal", or the approver
    id: str = field(default_factory=lambda: f"g{next(_ids)}")

    def effect_classes(self) -> set[str]:
        found = {e.value for a in self.acts if (e := effect_of(a)) is not None}
        return found | ({self.effect} if self.effect else set())

    def describe(self) -> str:
        """One line for a person: what it allows, on what, from where."""
        return describe(self)

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "acts": sorted(self.acts),
            "source": self.source,
            "words": self.words,
            "text": self.describe(),
        }
        for key in ("objects", "recipients", "content", "amounts"):
            if getattr(self, key):
                out[key] = list(getattr(self, key))
        if self.secrets:
            out["secrets"] = len(self.secrets)  # how many, never what
        for key in ("every", "effect", "window", "where", "by"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        return out


# -- what a finding is about ------------------------------------------------------------------


@dataclass
class Around:
    """The evidence around a finding's element: its item (row, list item, dialog…), the
    place it submits (form, dialog), and that place's fields."""

    item_text: str
    place_text: str
    fields: list[tuple[str, str]]  # (label, value) of the fields where it submits
    own: str  # the element's own words

    @classmethod
    def of(cls, finding: Finding) -> Around | None:
        node, tree = finding.node, finding.tree
        if node is None or tree is None:
            return None
        top = _top(node, tree)
        item = _item(node, tree, top)
        scope = tree.place(node)
        if scope is None or scope.role in DOCUMENTS:
            scope = item if item is not top else top
        if scope is None:
            scope = node
        return cls(
            item_text=_text(item),
            place_text=" · ".join([_text(scope), tree.title]),
            fields=[(_label(f), _value(f)) for f in scope.walk()[:600] if is_field(f)],
            own=" ".join([node.name, node.label, node.description]),
        )


def _top(node: Node, tree: Tree) -> Node:
    """The page around ``node`` (not the browser's tabs and bars), else the window."""
    top = node
    for up in tree.ancestors(node):
        top = up
        if up.role in DOCUMENTS:
            break
    return top


def _item(node: Node, tree: Tree, top: Node) -> Node:
    """The part around ``node`` that is one of many: a table row, a list item, a card among
    cards — the first block whose parent holds another block of its kind with buttons of its
    own, or below which another element has the same name (a row of "Delete" buttons); else
    the dialog or form around it; at most the page. A label the page changed since (a
    "Publish" now "Published") does not make the item the whole page."""
    same = " ".join([node.name, node.label]).strip().casefold()
    child = node
    for up in tree.ancestors(node):
        if child is not node and any(
            c is not child and c.role == child.role and _presses(c) for c in up.children
        ):
            return child  # one block among blocks of its kind
        named = [
            n
            for n in up.walk()
            if n is not node
            and n.role in BUTTONS
            and " ".join([n.name, n.label]).strip().casefold() == same
        ]
        if named and same:
            return child
        if up is top or up.role in PLACES:
            return up
        child = up
    return child


def _presses(block: Node) -> bool:
    """Whether a block holds something to press (it is an item of a list, not a label)."""
    return any(n.role in BUTTONS for n in block.walk()[:200])


def _text(node: Node, limit: int = 400) -> str:
    parts: list[str] = []
    for n in node.walk()[:limit]:
        parts += [n.name, n.label, n.description, n.text or "", n.value or ""]
    return " · ".join(p for p in parts if p and p != "\ufffc")


def _label(node: Node) -> str:
    return " ".join(p for p in (node.label, node.name, node.description) if p)


def _value(node: Node) -> str:
    if node.text is not None:
        return node.text.replace("\ufffc", "").strip()
    if node.value is not None:
        return node.value
    return node.name if node.role == "combo-box" else ""


# -- does a grant cover a finding ---------------------------------------------------------------


def check(grant: Grant, finding: Finding, window: WindowInfo | None) -> str | None:
    """None when ``grant`` covers ``finding`` (in ``window``); else why not, in words."""
    act = finding.act
    if grant.window and (window is None or grant.window != window.stable_id):
        return f"the yes for this task was for another window ({grant.where or grant.window})"
    if not act or act == UNKNOWN:
        return "nobody can tell what it would do"
    if act == PLACE or (grant.source == "person" and grant.effect and not grant.acts):
        if finding.effect not in grant.effect_classes():
            return f"{_acts(grant)} is allowed, not to {finding.effect}"
    elif act not in grant.acts:
        return f"{_acts(grant)} is allowed, not {_act_words(act)}"
    if act == SECRET:
        if finding.text not in grant.secrets:
            return "the password typed is not one the goal gives"
        return None
    around = Around.of(finding)
    if around is None:
        if grant.objects or grant.recipients:
            return "what it acts on cannot be seen"
        return None
    if grant.objects and not _names(around.item_text + " · " + around.own, grant.objects):
        return f"the goal names {_list(grant.objects)}, and this is not about it"
    if not grant.every and ALL_WORDS.find(around.own):
        return "it acts on all of them, and the goal names what to act on"
    if grant.recipients and act in TO_SOMEONE:
        why = _recipients(grant, around)
        if why:
            return why
    if grant.amounts and act in TO_SOMEONE:
        for label, value in around.fields:
            if value and AMOUNT_FIELDS.find(label) and _number(value) not in grant.amounts:
                return f'"{label}" holds {value}, not {_list(grant.amounts)}'
    if grant.content and act in MESSAGES:
        why = _message(grant, around)
        if why:
            return why
    return None


def _names(text: str, names: Iterable[str]) -> bool:
    plain = normalize(text)
    return any(_has(plain, normalize(n)) for n in names)


def _has(plain: str, name: str) -> bool:
    return bool(name) and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", plain) is not None


def _recipients(grant: Grant, around: Around) -> str | None:
    given = [(label, value) for label, value in around.fields if value and _is_to(label)]
    if given:
        for label, value in given:
            if not _matches_someone(value, grant.recipients):
                return f'"{label}" holds {value!r}; the goal names {_list(grant.recipients)}'
        return None
    if _names(" · ".join([around.place_text, around.item_text]), _name_parts(grant.recipients)):
        return None
    return f"the goal names {_list(grant.recipients)}, and nothing here says it goes to them"


def _is_to(label: str) -> bool:
    plain = normalize(label)
    word = RECIPIENT_FIELDS.find(plain)
    if word is None:
        return False
    # "Your email", "Email address" of a sign-up form say who you are, not who it goes to
    return not re.search(r"\b(your|you|my|sender|from|von|de|votre|tu|su|il tuo)\b", plain)


def _matches_someone(value: str, recipients: Iterable[str]) -> bool:
    plain = normalize(value)
    digits = re.sub(r"[\s-]", "", plain)
    for who in recipients:
        want = normalize(who)
        if "@" in want:
            if want in plain:
                return True
            continue
        compact = re.sub(r"[\s-]", "", want)
        if any(c.isdigit() for c in compact) and len(compact) >= 6:
            if compact in digits:
                return True
            continue
        local = " ".join(re.split(r"[@._+-]", plain))
        if all(_has(plain, p) or _has(local, p) for p in want.split()):
            return True
    return False


def _name_parts(recipients: Iterable[str]) -> list[str]:
    """Names to look for in a place's words: each recipient, and an address's name part."""
    out: list[str] = []
    for who in recipients:
        out.append(who)
        if "@" in who:
            out.append(who.split("@", 1)[0])
    return out


def _message(grant: Grant, around: Around) -> str | None:
    """The message box of the place must say something of the goal's message."""
    want = _words(" ".join(grant.content))
    for label, value in around.fields:
        if not value or not MESSAGE_FIELDS.find(label) or _is_to(label):
            continue
        if not want & _words(value):
            return f'"{label}" says {value[:60]!r}, which is not what the goal asks to say'
    return None


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", normalize(text)) if len(w) > 2 and w not in STOP}


def _number(text: str) -> str:
    m = re.search(r"\d+(?:[.,]\d+)?", text.replace(" ", ""))
    if m is None:
        return ""
    number = m.group(0).replace(",", ".")
    return number.rstrip("0").rstrip(".") if "." in number else number


def number(text: str) -> str:
    """A sum as grants compare it ("25,00" and "25.00" are "25")."""
    return _number(text)


def _list(items: Iterable[str]) -> str:
    shown = [f'"{i}"' for i in items]
    return ", ".join(shown[:-1]) + (" or " if len(shown) > 1 else "") + shown[-1] if shown else ""


#: Acts no UI word names first, as a person says them.
UNNAMED = {
    "delete": "deleting",
    "pay": "paying",
    "password": "changing a password",
    "run": "running code",
    PLACE: "this",
    SECRET: "typing a password",
}


def _act_words(act: str) -> str:
    found = ACT_WORDS.get(act)
    if found is None or not found[1]:
        return UNNAMED.get(act, act)
    return f'"{found[1][0]}"'


def _acts(grant: Grant) -> str:
    if not grant.acts:
        return f"to {grant.effect}" if grant.effect else "nothing"
    return "only " + ", ".join(sorted(_act_words(a) for a in grant.acts))


def describe(grant: Grant) -> str:
    acts = sorted(grant.acts)
    what = ", ".join(ACT_PHRASES.get(a, a) for a in acts) or grant.effect
    parts = [what]
    if grant.objects:
        parts.append(f"of {_list(grant.objects)}" + (" (all of them)" if grant.every else ""))
    elif grant.every:
        parts.append("(all of them)")
    if grant.recipients:
        parts.append(f"to {_list(grant.recipients)}")
    if grant.amounts:
        parts.append(f"for {_list(grant.amounts)}")
    if grant.secrets:
        parts.append(f"with the password{'s' if len(grant.secrets) > 1 else ''} the goal gives")
    if grant.content:
        parts.append("saying what the goal says")
    if grant.window:
        parts.append(f"in {grant.where or grant.window}")
    return " ".join(parts)


#: How each act is said to a person.
ACT_PHRASES: dict[str, str] = {
    "submit": "send or submit",
    "publish": "post or publish",
    "share": "share",
    "reply": "reply",
    "forward": "forward",
    "comment": "comment",
    "delete": "delete",
    "uninstall": "uninstall",
    "format": "format a disk",
    "buy": "buy or order",
    "pay": "pay",
    "transfer": "transfer money",
    "donate": "donate",
    "subscribe": "subscribe",
    "funds": "add or withdraw funds",
    "close account": "close an account",
    "access": "grant or revoke access",
    "two-factor": "change two-factor authentication",
    "sign out": "sign out everywhere",
    "password": "change a password",
    SECRET: "type a password",
    "install": "install software",
    "run": "run code",
}


def best_reason(misses: list[str]) -> str:
    """The most telling reason among the grants that did not cover (not "another act")."""
    telling = [m for m in misses if "is allowed, not" not in m]
    return (telling or misses or [""])[0]


def for_window(finding: Finding, window: WindowInfo, by: str) -> Grant:
    """A person's yes for this kind of effect in this window, for the rest of the task."""
    act = finding.act if finding.act not in (PLACE, UNKNOWN, SECRET, "") else ""
    effect = finding.effect
    what = ACT_PHRASES.get(act, act) if act else _effect_words(effect)
    return Grant(
        acts=frozenset({act}) if act else frozenset(),
        source="person",
        words=f"{what} in this window, for this task",
        effect=effect,
        window=window.stable_id,
        where=window.title[:80],
        by=by,
    )


def _effect_words(effect: str) -> str:
    try:
        return Effect(effect).value
    except ValueError:
        return effect
