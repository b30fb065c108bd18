"""The policy's one interface: :func:`decide` — may this call run, and who said so?

The door (:meth:`deskpilot.tools.toolset.ToolSet.call`) hands every call to :func:`decide` as a
:class:`Call` (what is called, what it reaches, and who and what the policy may consult) and
gets a :class:`Decision`. In order:

1. **blocked** — a blocked app anywhere in the call's reach (its windows, the window under a
   point it presses, the window with the focus for keys, an app it starts): refused before
   anything of the app is read;
2. **the risk** — declared by the tool; raised to consequential when the call's effect is
   (:mod:`deskpilot.policy.judging`: what it activates, presses or types, in its place) under
   ``confirm = consequential``; raised or explained by the tool's own judgement (``assess``);
3. **grants** — under ``confirm = consequential``, a consequential effect the task's grants
   cover (:mod:`deskpilot.policy.grants`: what the person's goal names, or a person's yes for
   the task) is allowed without asking; what only a person may answer never is;
4. **asking** — what the confirm mode says needs a yes is put to the approver (``confirm.asked``
   and ``confirm.answered``), with the act in words, the element to highlight and, for a
   judged effect, the offer of a yes for this kind of effect in this window for the task; a
   yes for the task becomes a grant (``grant.added``); an automatic approver never answers
   what only a person may; after a yes the reach is checked again for blocked apps;
5. **the record** — one ``policy.decided`` event per judged call (every call that may act, and
   every refused one): the effect class and act, the evidence (the words, the place, the
   element, the window, the grant that covered it), the outcome (``allowed``, ``asked``,
   ``declined``, ``blocked``) and who answered (and whether a person stands behind it).

A yes to a ``covers`` call (a native computer call whose actions a person saw) covers the acting
calls it makes (:func:`covering`).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from deskpilot.config import Settings
from deskpilot.errors import ActionDeclined, AppBlocked
from deskpilot.policy.acts import SECRET, UNKNOWN
from deskpilot.policy.approval import (
    ApprovalInterrupt,
    ApprovalRequest,
    Approver,
    PauseRequest,
    Risk,
    Scope,
    Verdict,
    approved,
    is_automatic,
    is_person,
    needs_confirmation,
)
from deskpilot.policy.blocklist import Blocklist
from deskpilot.policy.effects import Finding
from deskpilot.policy.grants import Around, Grant, for_window
from deskpilot.policy.judging import Judged, Scene, judge
from deskpilot.policy.places import quoted
from deskpilot.policy.reach import Reach
from deskpilot.policy.records import decided_sentence
from deskpilot.policy.rules import ConsequentialRules
from deskpilot.policy.tasks import TaskGrants

log = logging.getLogger(__name__)

Outcome = Literal["allowed", "asked", "declined", "blocked"]
Record = Callable[[str, dict[str, Any]], None]

#: Surfaces whose every call is a task of its own (``deskpilot tool``): nothing to grant for.
ONE_SHOT = frozenset({"cli"})

#: The risk rank a person's yes to the enclosing ``covers`` call already approved (-1: none).
_COVERED: contextvars.ContextVar[int] = contextvars.ContextVar("deskpilot_covered", default=-1)


@dataclass
class Call:
    """One call at the door, as the policy sees it."""

    tool: str
    args: Mapping[str, Any]  # as a person is shown them
    call_id: str
    risk: Risk  # declared by the tool
    reach: Reach
    scene: Scene  # what the policy may look at
    settings: Settings  # the confirm mode and the blocklist
    rules: ConsequentialRules
    approver: Approver
    grants: TaskGrants
    record: Record  # writes an event to the audit log, then to the observers
    surface: str = ""
    #: the tool's own judgement of the call (``assess``), asked once
    own: Callable[[], Awaitable[Verdict | tuple[Risk, str] | None]] | None = None
    #: lines a person sees with the question (what exactly will be saved)
    explain: Callable[[], Awaitable[list[str]]] | None = None
    #: a yes to it covers the acting calls it makes
    covers: bool = False
    #: the reach again, at dispatch (after a person was asked)
    again: Callable[[], Awaitable[Reach]] | None = None


@dataclass
class Decision:
    """What :func:`decide` decided, and why."""

    outcome: Outcome
    risk: Risk
    reason: str = ""
    judged: Judged | None = None
    grant: Grant | None = None
    by: str = ""  # who answered (an approver's name), "" when nobody was asked
    person: bool = False  # whether a person stands behind the answer
    scope: str = ""  # "once" or "task" for a yes
    refusal: AppBlocked | ActionDeclined | None = None
    reach: Reach = field(default_factory=Reach)
    #: what a yes to this ``covers`` call covers (a risk rank), else None
    covers: int | None = None

    @property
    def refused(self) -> bool:
        return self.refusal is not None


async def decide(call: Call) -> Decision:
    """May ``call`` run? (see the module docstring). Raises an approver's
    :class:`~deskpilot.policy.ApprovalInterrupt` after recording it."""
    call.grants.announce()  # a task's grants are on record before its first decision
    blocklist = Blocklist.from_settings(call.settings)
    try:
        await refuse_blocked(call.scene, blocklist, call.reach)
    except AppBlocked as exc:
        return _done(call, Decision("blocked", call.risk, str(exc), refusal=exc, reach=call.reach))
    verdict, judged = await _verdict(call)
    decision = Decision("allowed", verdict.risk, verdict.reason, judged, reach=call.reach)
    asks = verdict.person_only or (
        needs_confirmation(verdict.risk, call.settings.confirm)
        and verdict.risk.rank > _COVERED.get()
    )
    if asks and judged is not None and not verdict.person_only:
        grant, _why = call.grants.cover(judged.finding, judged.window)
        if grant is not None:
            decision.grant = grant
            return _done(call, decision)
    if not asks:
        return _done(call, decision)
    decision.outcome = "asked"
    try:
        await _ask(call, verdict, decision)
    except ApprovalInterrupt:
        decision.outcome = "declined"
        _done(call, decision)
        raise
    if decision.refused:
        return _done(call, decision)
    if call.again is not None:  # the reach at dispatch: a window may have changed meanwhile
        decision.reach = await call.again()
        try:
            await refuse_blocked(call.scene, blocklist, decision.reach)
        except AppBlocked as exc:
            decision.outcome, decision.refusal = "blocked", exc
            return _done(call, decision)
    if call.covers:
        decision.covers = verdict.risk.rank
    return _done(call, decision)


@contextlib.contextmanager
def covering(decision: Decision) -> Iterator[None]:
    """While the call runs: what a yes to a ``covers`` call approved covers its own calls."""
    if decision.covers is None:
        yield
        return
    token = _COVERED.set(decision.covers)
    try:
        yield
    finally:
        _COVERED.reset(token)


async def refuse_blocked(scene: Scene, rules: Blocklist, reach: Reach) -> None:
    """Raise AppBlocked if the call would reach a blocked app (see the module docstring)."""
    for window in reach.all_windows():
        rules.check_window(window)
    for app in reach.apps:
        rules.check_app(app)
    # a window with no place on the screen (GNOME on Wayland) is pressed in its own
    # coordinates once active: its points reach it alone (checked above)
    placed = reach.window is None or reach.window.placed
    for point in reach.points if placed else []:
        hit = await scene.desktop.window_at(point.x, point.y)
        if hit is not None:
            rules.check_window(hit)
    if any(k.window is None for k in reach.keys):
        focused = await scene.desktop.active_window()
        if focused is not None:
            rules.check_window(focused)


async def _verdict(call: Call) -> tuple[Verdict, Judged | None]:
    """The call's risk: declared, raised by its effect or by the tool's own judgement."""
    verdict = Verdict(call.risk)
    judged = None
    if call.risk is not Risk.READ_ONLY and call.settings.confirm == "consequential":
        judged = await judge(call.scene, call.rules, call.reach)
        if judged is not None and Risk.CONSEQUENTIAL.rank > verdict.risk.rank:
            verdict = Verdict(Risk.CONSEQUENTIAL, judged.finding.reason)
        elif judged is not None and not verdict.reason:
            verdict = Verdict(verdict.risk, judged.finding.reason)
    if call.own is not None:
        raised = await call.own()
        if isinstance(raised, tuple):
            raised = Verdict(*raised)
        # a higher risk, or the same one with a reason of its own (what a yes is for)
        if raised is not None and (
            raised.risk.rank >= verdict.risk.rank or raised.person_only or raised.details
        ):
            keep = raised.risk.rank >= verdict.risk.rank
            verdict = Verdict(
                raised.risk if keep else verdict.risk,
                raised.reason if keep or not verdict.reason else verdict.reason,
                raised.person_only,
                raised.details,
            )
    return verdict, judged


async def _ask(call: Call, verdict: Verdict, decision: Decision) -> None:
    """Put the call to the approver (see the module docstring); fills in ``decision``."""
    why = verdict.reason or f"{call.tool} is {verdict.risk.value}"
    details = verdict.details
    if call.explain is not None:  # what exactly a yes allows (what will be saved)
        details += tuple(await call.explain())
    judged = decision.judged
    offer = None
    if (
        judged is not None
        and not verdict.person_only
        and judged.window is not None
        and judged.finding.act not in (SECRET, UNKNOWN, "")
        and call.surface not in ONE_SHOT  # a yes for the task outlives the call
    ):
        offer = for_window(judged.finding, judged.window, type(call.approver).__name__)
    request = ApprovalRequest(
        tool=call.tool,
        args=call.args,
        risk=verdict.risk,
        reason=why,
        call_id=call.call_id,
        details=details,
        person_only=verdict.person_only,
        sentence=act_sentence(call, judged),
        offer=offer.words if offer is not None else "",
        target=target_of(judged),
    )
    asked: dict[str, Any] = {
        "tool": call.tool,
        "args": call.args,
        "call_id": call.call_id,
        "reason": why,
        "risk": verdict.risk.value,
    }
    if details:
        asked["details"] = list(details)
    if request.sentence:
        asked["sentence"] = request.sentence
    if request.offer:
        asked["offer"] = request.offer
    if request.target:
        asked["target"] = dict(request.target)
    call.record("confirm.asked", asked)
    by = type(call.approver).__name__
    decision.by, decision.person = by, is_person(call.approver)
    declined: ActionDeclined | None = None
    answer: object = False
    if verdict.person_only and is_automatic(call.approver):
        because = "only a person may approve it; the approver is automatic"
        declined = ActionDeclined(
            f"Declined: {call.tool} was not run ({why}: {because}). Nothing was done.",
            why=because,
        )
    else:
        try:
            answer = await call.approver.approve(request)
        except ActionDeclined as exc:  # declined, with the reason the model should read
            declined = exc
        except ApprovalInterrupt as signal:  # stop or pause the run: record, pass it on
            what = "paused" if isinstance(signal, PauseRequest) else "cancelled"
            call.record(
                "confirm.answered",
                {
                    "tool": call.tool,
                    "call_id": call.call_id,
                    "approved": False,
                    what: True,
                    "by": by,
                },
            )
            raise
        except Exception:
            log.exception("approver failed")
            answer = False
    yes = declined is None and approved(answer)
    task = yes and answer == Scope.TASK and offer is not None
    decision.scope = ("task" if task else "once") if yes else ""
    answered: dict[str, Any] = {
        "tool": call.tool,
        "call_id": call.call_id,
        "approved": yes,
        "by": by,
        "person": decision.person,
    }
    if yes:
        answered["scope"] = decision.scope
    call.record("confirm.answered", answered)
    if task and offer is not None:
        decision.grant = call.grants.add(offer, call.record)
    if yes:
        return
    decision.outcome = "declined"
    decision.refusal = declined or ActionDeclined(
        f"Declined: the user did not approve {call.tool} ({why}). Nothing was done. Do not "
        "retry it; continue without it or report that it needs the user's approval.",
        why="the user declined",
    )


def act_sentence(call: Call, judged: Judged | None) -> str:
    """The act in words, as a person is asked about it: 'Click "Delete" on "#1042 Initech
    88.50" in "Orders - Shop admin"'."""
    if judged is None:
        return ""
    finding = judged.finding
    head = finding.why
    if head.startswith("activates "):
        head = "Click " + head.removeprefix("activates ")
    elif head.startswith("puts a password into "):
        head = "Put a password into " + head.removeprefix("puts a password into ")
    else:
        head = head[:1].upper() + head[1:]
    around = Around.of(finding)
    if around is not None and finding.node is not None:
        item = _item_words(around.item_text, finding.node.name or finding.node.label)
        if item:
            head += f" on “{item}”"
    window = judged.window
    if window is not None and window.title:
        head += f" in “{window.title[:70]}”"
    return f"{head} — {finding.effect}"


def _item_words(text: str, own: str) -> str:
    parts = [p for p in text.split(" · ") if p and p != own]
    said = " ".join(dict.fromkeys(parts))
    return said[:70] + ("…" if len(said) > 70 else "") if parts and len(said) < 400 else ""


def target_of(judged: Judged | None) -> dict[str, Any] | None:
    """The element acted on, in its window's pixels (what the console highlights)."""
    if judged is None or judged.window is None or judged.finding.node is None:
        return None
    bounds, g = judged.finding.node.bounds, judged.window.geometry
    if bounds is None or bounds.width <= 0 or bounds.height <= 0:
        return None
    return {
        "window": judged.window.stable_id,
        "x": bounds.x - g.x,
        "y": bounds.y - g.y,
        "width": bounds.width,
        "height": bounds.height,
        "window_width": g.width,
        "window_height": g.height,
    }


def _done(call: Call, decision: Decision) -> Decision:
    """Record ``policy.decided`` for a judged call (every call that may act, every refusal)."""
    if decision.outcome == "allowed" and call.risk is Risk.READ_ONLY:
        return decision
    call.record("policy.decided", decided(call, decision))
    return decision


def decided(call: Call, decision: Decision) -> dict[str, Any]:
    """The ``policy.decided`` event's data."""
    data: dict[str, Any] = {
        "tool": call.tool,
        "call_id": call.call_id,
        "outcome": decision.outcome,
        "risk": decision.risk.value,
    }
    judged = decision.judged
    if judged is not None:
        finding = judged.finding
        data["effect"] = finding.effect
        data["act"] = finding.act
        data["evidence"] = evidence(finding, judged)
    elif decision.reason:
        data["evidence"] = {"why": decision.reason}
    if decision.grant is not None:
        grant = decision.grant
        data["grant"] = {
            "id": grant.id,
            "source": grant.source,
            "words": grant.words,
            "text": grant.describe(),
        }
    elif judged is not None and decision.outcome != "blocked":
        _grant, why = call.grants.cover(judged.finding, judged.window)
        if why:
            data["not_granted"] = why
    if decision.by:
        data["answer"] = {
            "by": decision.by,
            "person": decision.person,
            "approved": decision.outcome == "asked",
        }
        if decision.scope:
            data["answer"]["scope"] = decision.scope
    if decision.refusal is not None:
        data["refused"] = str(decision.refusal)[:300]
    data["sentence"] = decided_sentence(data)
    return data


def evidence(finding: Finding, judged: Judged) -> dict[str, Any]:
    """The evidence of a finding, as data: the words, the element, the place, the window."""
    out: dict[str, Any] = {"why": finding.reason}
    if finding.word:
        out["words"] = finding.word
    node = finding.node
    if node is not None:
        out["element"] = quoted(node)
        out["role"] = node.role
        place = finding.tree.place(node) if finding.tree is not None else None
        if place is not None and place is not node:
            out["place"] = f"{place.role} {quoted(place)}"
    if judged.window is not None:
        out["window"] = judged.window.title[:120]
    return out
