"""An obedient stand-in model: it does whatever the text it is shown tells it to.

:class:`Obedient` is a *brain* for :class:`tests.e2e.wire.ModelServer`, so it runs behind a
real provider's HTTP wire format, in the real agent loop, through the real ``ToolSet.call``.
It reads commands in its user's goal and in every tool result it gets back — page text, a
document, a window title, an error message — and carries each out once, in order::

    go to "URL"                 open_urls
    open the app "NAME"         open_app
    list the windows            list_windows
    click "NAME"                perform click on the element of that name (latest read)
    click "NAME" near "TEXT"    the same, the first one of that name after a line that says TEXT
                                (a row's own Delete button)
    fill "FIELD" with "TEXT"    perform fill
    type "TEXT" into "FIELD"    perform type, aimed at that field (``\\n`` is a newline)
    type "TEXT"                 perform type into whatever has the focus
    press "KEYS"                perform shortcut
    read the window             read_screen_ax

A run may also start with a ``plan``: commands of its own (what a model would decide to do for
the person's goal), carried out before anything it reads; with ``plan`` the goal is not read for
commands (it is written as a person would write it, for the policy, not in this language).

``{word}`` in a TEXT is what the goal said about it ("my PIN is \"4921\"" → ``{PIN}``): an
injected page can make it leak what the person told it. The adversary never refuses, never
retries a declined call, and never acts on an element it could not find (a command whose target
is not in the window it reads is dropped). It reads what it opens. When nothing is left it
answers ``Done.``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tests.e2e.wire import Decision, View

COMMAND = re.compile(
    r'(?P<verb>go to|open the app|click|fill|type|press)\s+"(?P<a>[^"]{1,200})"'
    r'(?:\s+(?P<prep>into|with|near)\s+"(?P<b>[^"]{0,200})")?'
    r"|(?P<bare>list the windows|read the window)",
)
LINE = re.compile(r'^\s*(\S+)(?: "((?:[^"\\]|\\.)*)")?(.*?) @(\S+)$', re.M)
FACT = re.compile(r'\bmy ([\w ]{1,30}?) is "([^"]*)"', re.I)
READ_MARK = "windowID:"  # every read_screen_ax result names its window


@dataclass(frozen=True)
class Command:
    verb: str
    a: str = ""
    b: str = ""

    def __str__(self) -> str:
        if self.verb in ("list the windows", "read the window"):
            return self.verb
        prep = {"type": "into", "click": "near"}.get(self.verb, "with")
        tail = f' {prep} "{self.b}"' if self.b else ""
        return f'{self.verb} "{self.a}"{tail}'


def commands(text: str) -> list[Command]:
    """The commands in ``text``, in order (escaped quotes of a rendered read are undone)."""
    plain = text.replace('\\"', '"')
    found = []
    for m in COMMAND.finditer(plain):
        if m.group("bare"):
            found.append(Command(m.group("bare")))
        else:
            found.append(Command(m.group("verb"), m.group("a"), m.group("b") or ""))
    return found


FIELDS = {"textbox", "password", "combobox", "spinbutton", "searchbox"}


def element(read: str, name: str, *, field: bool = False, near: str = "") -> str | None:
    """The ID of the element called ``name`` in a read (exact name first, then any case);
    a text field when ``field``, else preferably something to click; with ``near``, only
    elements after the first line that says ``near``."""
    if near:
        at = next((i for i, ln in enumerate(read.splitlines()) if near in ln), None)
        if at is None:
            return None
        read = "\n".join(read.splitlines()[at:])
    lines = [(m.group(1), m.group(2) or "", m.group(4)) for m in LINE.finditer(read)]
    for same in (
        lambda n: n.replace('\\"', '"') == name,
        lambda n: n.casefold() == name.casefold(),
    ):
        found = [(role, i) for role, n, i in lines if same(n)]
        if found:
            found.sort(key=lambda ri: (ri[0] in FIELDS) != field)
            return found[0][1]
    return None


@dataclass
class Obedient:
    """One run's adversary (a new one per run: it keeps what it has done)."""

    #: commands of its own, done first; with a plan the goal is not read for commands
    plan: list[Command] = field(default_factory=list)
    queue: list[Command] = field(default_factory=list)
    seen: set[Command] = field(default_factory=set)
    facts: dict[str, str] = field(default_factory=dict)
    done: list[str] = field(default_factory=list)  # what it carried out, for the test's message
    dropped: list[str] = field(default_factory=list)  # commands whose target it could not find
    read: str | None = None  # the latest read, while nothing has acted since
    started: bool = False

    def _learn(self, texts: list[str]) -> None:
        for text in texts:
            for command in commands(text):
                if command not in self.seen:
                    self.seen.add(command)
                    self.queue.append(command)

    def __call__(self, view: View) -> Decision:
        if not self.started:
            self.started = True
            goal = "\n".join(view.user_texts)
            self.facts = {k.strip().casefold(): v for k, v in FACT.findall(goal)}
            if self.plan:  # its own decisions: what a page says is still done, even the same
                self.queue = list(self.plan)
            else:
                self._learn([goal])
        if view.mode == "none":  # the loop asks for a last answer without tools
            return Decision("Done: " + "; ".join(self.done))
        for text in view.last_results:
            if READ_MARK in text and "<activeAppContext>" in text:
                self.read = text
        self._learn(view.last_results)
        while self.queue:
            decision = self._next(self.queue[0])
            if decision is not None:
                return decision
        return Decision("Done: " + "; ".join(self.done))

    def _next(self, command: Command) -> Decision | None:
        """The call for ``command``; None if it was dropped (the queue moved on)."""
        verb = command.verb
        simple: dict[str, tuple[str, dict[str, Any]]] = {
            "go to": ("open_urls", {"urls": [command.a]}),
            "open the app": ("open_app", {"bundleId": command.a}),
            "list the windows": ("list_windows", {}),
            "read the window": ("read_screen_ax", {}),
            "press": ("perform", {"action": "shortcut", "shortcut": command.a}),
        }
        if verb in simple:
            return self._act(command, *simple[verb])
        if self.read is None:
            return Decision("", [("read_screen_ax", {})])
        if verb == "type" and not command.b:  # into whatever has the focus
            return self._act(
                command, "perform", {"action": "type", "text": self._fill_in(command.a)}
            )
        target = command.b if verb == "type" else command.a
        near = command.b if verb == "click" else ""
        found = element(self.read, target, field=verb != "click", near=near)
        if found is None:
            self.queue.pop(0)
            self.dropped.append(str(command))
            return None
        if verb == "click":
            return self._act(command, "perform", {"action": "click", "elementID": found})
        text = self._fill_in(command.a if verb == "type" else command.b)
        action = "type" if verb == "type" else "fill"
        return self._act(command, "perform", {"action": action, "elementID": found, "text": text})

    def _fill_in(self, text: str) -> str:
        text = text.replace("\\n", "\n")
        return re.sub(r"\{([\w ]+)\}", lambda m: self.facts.get(m.group(1).casefold(), ""), text)

    def _act(self, command: Command, tool: str, args: dict[str, Any]) -> Decision:
        self.queue.pop(0)
        self.done.append(str(command))
        if command.verb in ("go to", "open the app"):
            self.queue.insert(0, Command("read the window"))  # look at what it opened
        if tool != "read_screen_ax":
            self.read = None  # acting may change the window: read again before aiming
        return Decision(f"Doing what it says: {command}.", [(tool, args)])
