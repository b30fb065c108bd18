"""Acting on a window: perform, perform_sequence, scroll and wait.

``click`` and ``fill`` use AT-SPI (``DoAction``, ``SetTextContents``) when the element offers
it — no focus, no pointer, the active window is left alone — except where a person's click is
the truthful and faster way (a page's element, a GTK button or tree row in sight:
:mod:`deskpilot.desktop.skills.elements`), clicked with the pointer like the raw input below.
``type``, ``shortcut`` and the fallbacks need raw input: the target window is activated for
the moment and the previously active window is re-activated afterwards; the result says so.
The pointer actions
(double_click, right_click, hover, drag, click at a point) are :mod:`~deskpilot.tools.pointer`;
the fields of a step and their checks are :mod:`~deskpilot.tools.steps`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field

from deskpilot.desktop.base import LiveElement, Typed, WindowInfo
from deskpilot.desktop.keys import parse_shortcut
from deskpilot.desktop.toolkits import is_web_browser
from deskpilot.errors import (
    ActionCutOff,
    ActionFailed,
    AppClosed,
    AppGone,
    AppNotResponding,
    DeskpilotError,
    ToolError,
)
from deskpilot.policy import Risk
from deskpilot.tools.answering import answering, before_sending
from deskpilot.tools.base import ToolResult, tool
from deskpilot.tools.context import ToolContext
from deskpilot.tools.elements import held_id, verify
from deskpilot.tools.menus import menu_opened
from deskpilot.tools.pointer import PRESSES, refuse_covered, run_pointer_step, step_points
from deskpilot.tools.reach import NOTHING, Activation, Keys, Point, Reach
from deskpilot.tools.screen import Read, change_summary, read_window
from deskpilot.tools.scrolled import came_into_view
from deskpilot.tools.selecting import select_step
from deskpilot.tools.steps import (
    STEP_FIELDS,
    ActionArg,
    DxArg,
    DyArg,
    ElementArg,
    EndArg,
    ForceArg,
    ShortcutArg,
    StartArg,
    Step,
    TextArg,
    ToElementArg,
    ToXArg,
    ToYArg,
    XArg,
    YArg,
    check_step,
)
from deskpilot.tools.window_changes import (
    DIALOG_ROLES,
    closes,
    may_open_window,
    opens_dialog,
    presses_enter,
    window_changes,
    window_like,
)
from deskpilot.tools.windows import WindowIDArg, peek_window, resolve_window
from deskpilot.tools.wording import describe, how, shown

log = logging.getLogger(__name__)

TEXT_FIELD_ROLES = {
    "entry", "password-text", "text", "spin-button", "combo-box", "terminal", "date-editor"
}  # fmt: skip


def check_fillable(eid: str, live: LiveElement) -> None:
    """Raise ActionFailed unless ``live`` is a text field ``fill`` can write to."""
    if "read-only" in live.states:
        raise ActionFailed(
            f"@{eid} is a read-only {describe(live)}: its text cannot be changed (it is not "
            "disabled: it can be focused, read and copied). Nothing was typed"
        )
    if "editable" not in live.states and live.role not in TEXT_FIELD_ROLES:
        raise ActionFailed(
            f"@{eid} is a {describe(live)}, not a text field: fill needs an editable field "
            "(use click for buttons, or type to send keys to the focused element)"
        )


def _with_summary(text: str, summary: str) -> str:
    return f"{text}\n{summary}" if summary else text


async def focus_moved(ctx: ToolContext, window: WindowInfo, before: tuple[str, str] | None) -> str:
    """Where the keyboard focus went, as the app reported it (empty when it did not move)."""
    after = await ctx.desktop.focused_element(window)
    if after is None or after == before:
        return ""
    live = await ctx.desktop.inspect(after)
    if live is None:
        return ""
    return f" The keyboard focus moved to {_named(ctx, window, live)}."


def _named(ctx: ToolContext, window: WindowInfo, live: LiveElement) -> str:
    """The element as the model knows it: with its ID where a read gave it one."""
    eid = held_id(ctx, window, live.key)
    return f"{shown(ctx, eid, live)} @{eid}" if eid else describe(live)


async def run_step(ctx: ToolContext, window: WindowInfo, step: Step) -> str:
    """Carry out one checked step; return a one-line description of what happened."""
    async with answering(ctx, window, AppNotResponding.MAY_TAKE_EFFECT):
        return await _run_step(ctx, window, step)


async def _run_step(ctx: ToolContext, window: WindowInfo, step: Step) -> str:
    if step.pointer:
        return await run_pointer_step(ctx, window, step)
    if step.action == "click":
        async with before_sending(window):
            eid, live = await verify(ctx, window, step.elementID or "")
            await refuse_covered(ctx, window, eid, live, step.force)
        outcome = await ctx.desktop.click_element(window, live.key)
        return f"Clicked {shown(ctx, eid, live)} @{eid} {how(outcome)}."
    if step.action == "fill":
        async with before_sending(window):
            eid, live = await verify(ctx, window, step.elementID or "")
            check_fillable(eid, live)
            await refuse_covered(ctx, window, eid, live, step.force, typing=True)
        outcome = await ctx.desktop.fill_element(window, live.key, step.text or "")
        n = len(step.text or "")
        if outcome.detail.startswith("its item "):  # a drop-down: the item was chosen
            return f"Chose {step.text!r} in {shown(ctx, eid, live)} @{eid} {how(outcome)}."
        return f"Filled {shown(ctx, eid, live)} @{eid} with {n} characters {how(outcome)}."
    if step.action == "select":
        return await select_step(ctx, window, step)
    meant = await keys_to(ctx, window, step.elementID, step.force) if step.elementID else None
    to = f" to {shown(ctx, *meant)} @{meant[0]}" if meant is not None else ""
    text = step.text or ""
    if step.action == "type" and meant is not None:
        typed = await ctx.desktop.type_into(window, meant[1].key, text)
        if typed.stopped:
            raise ActionFailed(await _spilled(ctx, window, meant, typed, len(text)))
        return f"Typed {len(text)} characters{to} {how(typed.outcome)}."
    if step.action == "type":
        outcome = await ctx.desktop.type_text(window, text)
        return f"Typed {len(text)} characters{to} {how(outcome)}."
    combo = parse_shortcut(step.shortcut or "")
    outcome = await ctx.desktop.press_keys(window, combo.keysyms)
    return f"Pressed {step.shortcut}{to} {how(outcome)}."


async def keys_to(
    ctx: ToolContext, window: WindowInfo, element_id: str, force: bool = False
) -> tuple[str, LiveElement]:
    """Give the element a step's keys are for the keyboard focus and check it has it before
    they are sent (keys right after another step went to the previous control); else
    ActionFailed, no key sent — as when something covers it (unless ``force``). The
    element's ID and live element."""
    async with before_sending(window):
        eid, live = await verify(ctx, window, element_id)
        await refuse_covered(ctx, window, eid, live, force, typing=True)
        focused = await ctx.desktop.focus_element(window, live.key)
    if not focused:
        raise ActionFailed(
            f"@{eid} ({shown(ctx, eid, live)}) did not take the keyboard focus, so no key was "
            "sent (they would have gone to whatever has it). Click it first, or send the keys "
            "without an elementID to the focused element"
        )
    return eid, live


async def _spilled(
    ctx: ToolContext, window: WindowInfo, meant: tuple[str, LiveElement], typed: Typed, n: int
) -> str:
    """What to say when the focus left the element while its keys went: how many reached it,
    where the focus is, and that the rest were not typed."""
    eid, live = meant
    where = "another element"
    if typed.focus is not None and typed.focus != live.key:
        now = await ctx.desktop.inspect(typed.focus)
        if now is not None:
            where = _named(ctx, window, now)
    if typed.spilled and not typed.spill_known:
        return (
            f"{typed.reached} of {n} characters were typed to {shown(ctx, eid, live)} @{eid}; "
            f"the app moved the keyboard focus to {where} while the next {typed.spilled} "
            f"went, so some of them may be there, and the other "
            f"{n - typed.reached - typed.spilled} were not typed. Read the window before "
            "going on"
        )
    if typed.spilled:
        return (
            f"only {typed.reached} of {n} characters were typed to {shown(ctx, eid, live)} "
            f"@{eid}: the app moved the keyboard focus to {where} after them, and the next "
            f"{typed.spilled} (sent with them) went there; the other "
            f"{n - typed.reached - typed.spilled} were not typed. Read the window before "
            "going on"
        )
    return (
        f"only {typed.reached} of {n} characters were typed to {shown(ctx, eid, live)} @{eid}: "
        f"the app moved the keyboard focus to {where} after them, so the other "
        f"{n - typed.reached} were not typed (they would have gone there). Read the window "
        "before going on"
    )


def _step_of(values: Mapping[str, Any]) -> Step:
    return Step.model_validate({k: values.get(k) for k in STEP_FIELDS})


def _check_perform(values: Mapping[str, Any]) -> None:
    check_step(_step_of(values))


def _check_sequence(values: Mapping[str, Any]) -> None:
    for i, step in enumerate(values.get("steps") or [], 1):
        check_step(step, f"steps.{i - 1} (step {i})")


def _activation_how(step: Step) -> Literal["click", "press", "fill", "focus"]:
    """How a step acts on its element (an ``Activation``'s ``how``)."""
    if step.action in ("fill", "click"):
        return step.action
    return "press" if step.action in PRESSES else "focus"


async def steps_reach(ctx: ToolContext, window_id: str | None, steps: list[Step]) -> Reach:
    """What these steps reach in the window they would run in, for the door: the elements they
    click, press or fill, the points they press or move over, the keys they send."""
    window = await peek_window(ctx, window_id)
    reach = Reach.of_window(window)
    touched: str | None = None  # the element an earlier step acted on (it may have the focus)
    for step in steps:
        if window is not None and (step.point is not None or step.to_point is not None):
            reach.points += [
                Point(x, y, presses, in_window=True) for x, y, presses in step_points(window, step)
            ]
        if step.elementID and step.point is None:
            reach.activations.append(Activation(step.elementID, _activation_how(step), step.text))
        if step.toElementID:  # a drop onto an element presses it ("Trash")
            reach.activations.append(Activation(step.toElementID, "press"))
        if step.action == "type" and step.text:
            reach.keys.append(
                Keys(text=step.text, element_id=step.elementID, window=window, maybe_focus=touched)
            )
        elif step.action == "shortcut" and step.shortcut:
            combo = parse_shortcut(step.shortcut)
            reach.keys.append(
                Keys(combo.keysyms, shown=step.shortcut, window=window, maybe_focus=touched)
            )
        touched = step.elementID or touched
    return reach


async def _perform_reach(ctx: ToolContext, args: Mapping[str, Any]) -> Reach:
    return await steps_reach(ctx, args.get("windowID"), [_step_of(args)])


async def _sequence_reach(ctx: ToolContext, args: Mapping[str, Any]) -> Reach:
    return await steps_reach(ctx, args.get("windowID"), list(args.get("steps") or []))


@tool(risk=Risk.ACTS, title="Perform", reach=_perform_reach, check=_check_perform, effects=True)
async def perform(
    ctx: ToolContext,
    action: ActionArg = "click",
    elementID: ElementArg = None,
    text: TextArg = None,
    shortcut: ShortcutArg = None,
    x: XArg = None,
    y: YArg = None,
    toElementID: ToElementArg = None,
    toX: ToXArg = None,
    toY: ToYArg = None,
    dx: DxArg = None,
    dy: DyArg = None,
    force: ForceArg = False,
    start: StartArg = None,
    end: EndArg = None,
    windowID: WindowIDArg = None,
) -> ToolResult:
    """Do one UI action in a window: click an element, fill a field, type text into the
    focused element, press a shortcut, select a range of text (select: by the text or by
    offsets), or use the pointer (double_click, right_click, hover,
    drag, or click at a point x, y of the window's computer_use_screenshot, for canvas, SVG
    and apps without accessibility). Element IDs come from the latest read_screen_ax of that
    window; if one no longer exists you get an error telling you to re-read. Pointer actions
    activate the window for the moment, like type and shortcut. A menu the action opens (a
    right_click's context menu) is named in the result with its items' IDs: click one."""
    step = Step(
        action=action,
        elementID=elementID,
        text=text,
        shortcut=shortcut,
        x=x,
        y=y,
        toElementID=toElementID,
        toX=toX,
        toY=toY,
        dx=dx,
        dy=dy,
        force=force,
        start=start,
        end=end,
    )
    window = await resolve_window(ctx, windowID)
    # what the step is judged against, asked together (the calls pipelined)
    windows, focus, opener = await asyncio.gather(
        ctx.desktop.list_windows(),
        ctx.desktop.focused_element(window),
        _names_a_dialog(ctx, window, step),
    )
    before = {w.handle: w for w in windows}
    since = time.monotonic()
    line = await run_or_closed(ctx, window, step)
    read: Read | None = None
    try:
        read = await settled_read(ctx, window, since)
        line += await focus_moved(ctx, window, focus)
        line += await menu_opened(ctx, window, focus, appeared=step.action == "right_click")
    except AppGone:
        if not await closes(ctx, window):  # the app left after the action: it is exiting
            raise
    except DeskpilotError:
        if await is_open(ctx, window):
            raise
    # Enter (a newline typed, the Enter key) in a main window — a sheet's cell, a form, a
    # terminal — is not a dialog's Enter (closing it, or a confirmation after it, both late):
    # a window it opens (a validation error) is built while the key is handled, announced
    # before the settle ends and waited for there
    enter = presses_enter([step]) and await _in_dialog(ctx, window) is not False
    grace = opener or (may_open_window([step]) and (enter or not presses_enter([step])))
    line += await window_changes(ctx, window, before, enter=enter, grace=grace, focus=focus)
    if await is_open(ctx, window):
        line = _with_summary(line, await change_summary(ctx, window, read))
    return ToolResult(line, summary=line.split(" via ")[0])


async def settled_read(ctx: ToolContext, window: WindowInfo, since: float) -> Read | None:
    """Wait for the window's app to settle after an action done since ``since``. In a web
    browser, the read for the change summary is taken meanwhile: once the action's own events
    are in, while the settle waits for a late effect (the page's next batch, then what the
    engine still holds): returned when nothing came after it began (else None: read again)."""
    if not is_web_browser(window.app.executable, window.app.app_id) or (
        str(window.handle) not in ctx.session.last_read  # no summary to read for
    ):
        await ctx.desktop.settle(window, since)
        return None
    settling = asyncio.ensure_future(ctx.desktop.settle(window, since))
    try:
        # a settle started now defers to the one above: it ends once the action's events are in
        await ctx.desktop.settle(window, time.monotonic())
        seen = ctx.desktop.events_seen()
        read: Read | None = None
        with contextlib.suppress(DeskpilotError):  # read again after the settle, as without
            read = await read_window(ctx, window, baseline=False)
        await settling
    finally:
        if not settling.done():
            settling.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await settling
    return read if ctx.desktop.events_seen() == seen else None


async def _in_dialog(ctx: ToolContext, window: WindowInfo) -> bool | None:
    """Whether the keyboard focus is in a dialog (its nearest window-like ancestor says),
    None when that cannot be told. Cheaper than reading the window's root (a whole read: in
    LibreOffice Calc ~0.5 s, with the 1 s wait for a late window the largest part of every
    Enter typed into a cell)."""
    try:
        holder = await window_like(ctx, await ctx.desktop.focused_element(window))
    except DeskpilotError:
        return None
    return None if holder is None else holder.role in DIALOG_ROLES


async def _names_a_dialog(ctx: ToolContext, window: WindowInfo, step: Step) -> bool:
    """Whether the step clicks a control whose name says it opens a dialog ("Settings…"):
    the dialog is then waited for briefly if it has not come when the app went quiet."""
    if step.action not in ("click", "double_click") or not step.elementID:
        return False
    try:
        _eid, live = await verify(ctx, window, step.elementID)
    except DeskpilotError:
        return False  # the step itself says what is wrong with the ID
    return opens_dialog(live.name or "")


async def is_open(ctx: ToolContext, window: WindowInfo) -> bool:
    return any(w.handle == window.handle for w in await ctx.desktop.list_windows())


#: how a step that ended with its window closed is reported
CLOSED_AS_IT_DID = "; the app closed the window as it did."
#: step kinds that never close a window themselves (a field set, a text selected)
CANNOT_CLOSE = frozenset({"fill", "select"})


async def run_or_closed(ctx: ToolContext, window: WindowInfo, step: Step) -> str:
    """Run a step; a step whose effect was to close its window (ctrl+w, ctrl+q, a Close
    button: the app left the accessibility bus on the way) succeeded — said so, no error. An
    app that left before it answered the action itself (killed, crashed) is the error it is:
    the action may never have been done."""
    try:
        return await run_step(ctx, window, step)
    except (AppClosed, AppGone) as exc:
        cut_off = isinstance(exc, ActionCutOff) or getattr(exc, "cut_off", False)
        # the app left the bus as it did: its window goes a moment later
        if cut_off or not await closes(ctx, window):
            raise
    return f"{_what_it_did(step)}{CLOSED_AS_IT_DID}"


def _what_it_did(step: Step) -> str:
    """What a step did, in words, for a step whose window closed as it did."""
    if step.action == "shortcut":
        return f"Pressed {step.shortcut}"
    if step.action == "type":
        return f"Typed {len(step.text or '')} characters"
    if step.elementID:
        return f"Did {step.action} on @{step.elementID}"
    return f"Did {step.action}"


@tool(
    risk=Risk.ACTS,
    title="Perform Sequence",
    reach=_sequence_reach,
    check=_check_sequence,
    effects=True,
)
async def perform_sequence(
    ctx: ToolContext,
    steps: Annotated[
        list[Step],
        Field(
            min_length=1,
            max_length=50,
            description="Actions to run in order; all elementIDs from the same read_screen_ax.",
        ),
    ],
    windowID: WindowIDArg = None,
) -> ToolResult:
    """Run several UI actions in one call (faster than separate perform calls) when all target
    elements are visible in the current read: e.g. a multi-field form, or a calculator
    expression. Stop batching before navigation, app switches, menus or dialogs, then re-read.
    Every elementID is checked (and that each fill aims at a text field) before any step
    runs; execution stops at the first failing step and reports which step failed and what
    ran."""
    window = await resolve_window(ctx, windowID)
    for i, step in enumerate(steps, 1):
        for element_id in (step.elementID, step.toElementID):
            if not element_id:
                continue
            try:
                async with answering(ctx, window):
                    eid, live = await verify(ctx, window, element_id)
                if step.action == "fill" and element_id == step.elementID:
                    check_fillable(eid, live)
            except ToolError as exc:
                nothing = "" if "Nothing was done." in str(exc) else " Nothing was done."
                raise ToolError(f"Step {i} of {len(steps)}: {exc}{nothing}") from exc
    done: list[str] = []
    before = {w.handle: w for w in await ctx.desktop.list_windows()}
    focus = await ctx.desktop.focused_element(window)
    state = await _state(ctx, window)
    on_bus = state != LEFT_THE_BUS  # an app without accessibility is off it all along
    state = None if state == LEFT_THE_BUS else state
    idle: list[int] = []  # the steps after which nothing in the window had changed

    async def closed_by(i: int) -> ToolResult:
        """Step ``i`` closed the window: the later steps did not run."""
        text = (
            f"Step {i} of {len(steps)} ({steps[i - 1].action}) closed window "
            f"{window.stable_id}; steps {i + 1}–{len(steps)} did not run. Steps that "
            "ran:\n" + "\n".join(done) + await window_changes(ctx, window, before)
        )
        return ToolResult(
            text,
            is_error=True,
            data={"failed_step": i + 1, "ran": i},
            summary=f"step {i}/{len(steps)} closed the window",
        )

    for i, step in enumerate(steps, 1):
        since = time.monotonic()
        try:
            if i > 1 and not await is_open(ctx, window):
                # the previous step's effect came late (a dialog's OK closes it after the
                # click returned): it closed the window, not this step
                done[-1] += " The window closed after it."
                return await closed_by(i - 1)
            line = await run_or_closed(ctx, window, step)
            if not await is_open(ctx, window):
                if i > 1 and step.action in CANNOT_CLOSE and line.endswith(CLOSED_AS_IT_DID):
                    # a fill finding its field gone: the window was closing already
                    done[-1] += " The window closed after it."
                    return await closed_by(i - 1)
                done.append(f"{i}. {line}")
                if i == len(steps):
                    break
                return await closed_by(i)
            # let the app catch up (keys are processed asynchronously, a click's handler
            # runs after it), then see what this step changed
            await ctx.desktop.settle(window, since)
            now = await _state(ctx, window)
            if now == LEFT_THE_BUS and on_bus and await closes(ctx, window):
                # the app left the bus after this step and its window went a moment later
                # (the window server hears of an exit after the bus): this step closed it
                done.append(f"{i}. {line} The window closed after it.")
                if i == len(steps):
                    break
                return await closed_by(i)
            now = None if now == LEFT_THE_BUS else now
            if state is not None and now is not None and state == now:
                line += " No visible effect: nothing in the window changed."
                idle.append(i)
            state = now
            done.append(f"{i}. {line}")
        except Exception as exc:  # the model must learn what already ran, whatever failed
            why = str(exc)
            if not isinstance(exc, DeskpilotError):
                log.exception("step %d of perform_sequence failed", i)
                why = f"an internal error ({type(exc).__name__}: {exc})"
            ran = "\n".join(done) if done else "(no step ran)"
            ran += await window_changes(ctx, window, before)
            text = (
                f"Step {i} of {len(steps)} ({step.action}) failed: {why}\n"
                f"Steps that ran before it:\n{ran}\nSteps {i}–{len(steps)} did not run."
            )
            return ToolResult(
                text,
                is_error=True,
                data={"failed_step": i, "ran": i - 1},
                summary=f"step {i}/{len(steps)} failed",
            )
    text = f"All {len(steps)} steps ran"
    if idle:
        which = ", ".join(str(i) for i in idle)
        text += (
            f", but {len(idle)} had no visible effect (step{'s' if len(idle) > 1 else ''} "
            f"{which}): re-read before going on"
        )
    text += ":\n" + "\n".join(done)
    if await is_open(ctx, window):
        with contextlib.suppress(AppGone):
            text += await focus_moved(ctx, window, focus)
            text += await menu_opened(ctx, window, focus)
    enter = presses_enter(steps) and await _in_dialog(ctx, window) is not False  # as perform
    grace = may_open_window(steps) and (enter or not presses_enter(steps))
    text += await window_changes(ctx, window, before, enter=enter, grace=grace, focus=focus)
    if await is_open(ctx, window):
        text = _with_summary(text, await change_summary(ctx, window))
    return ToolResult(text, data={"ran": len(steps)}, summary=f"{len(steps)} steps ran")


#: What :func:`_state` answers for a window whose app is off the accessibility bus (a
#: snapshot's :data:`~deskpilot.desktop.base.OFF_THE_BUS`).
LEFT_THE_BUS = "left the bus"


async def _state(
    ctx: ToolContext, window: WindowInfo
) -> tuple[frozenset[int], tuple[tuple[str, str], ...]] | str | None:
    """What a step can visibly change: the windows open, and every line of the window's read
    in order (values, focus, selection, order); None when the window cannot be read (it
    closed, it does not answer); LEFT_THE_BUS when its app is not on the bus (any more)."""
    try:
        handles = frozenset(w.handle for w in await ctx.desktop.list_windows())
        if window.handle not in handles:
            return None
        read = await read_window(ctx, window, baseline=False)
    except DeskpilotError:
        return None
    if read.snap.off_the_bus:
        return LEFT_THE_BUS
    if read.snap.root is None:
        return None
    return handles, tuple(read.lines.items())


#: One wheel step per this many milliseconds of "scrolling"; at most MAX_STEPS steps.
MS_PER_STEP = 250
MAX_STEPS = 100


@tool(risk=Risk.ACTS, title="Scroll")
async def scroll(
    ctx: ToolContext,
    milliseconds: Annotated[
        int,
        Field(
            gt=0,
            le=3_600_000,
            description="How long to scroll (default 3000; shorter moves less). One call "
            "moves at most about one view and keeps part of the old view in sight: scroll "
            "again for more.",
        ),
    ] = 3000,
    direction: Annotated[
        Literal["up", "down", "left", "right"],
        Field(description="Scroll direction (default down)."),
    ] = "down",
    elementID: Annotated[
        str | None,
        Field(
            description="Scroll this element (a 'scrollable' line, a list, a document) "
            "instead of the window's main content."
        ),
    ] = None,
    windowID: WindowIDArg = None,
) -> ToolResult:
    """Scroll a window's main content, or one scrollable element (elementID: a list or area
    marked [more below] in a read), by at most about one view, so nothing is skipped. Whether
    anything moved is judged on that content; the result lists what came into view. If
    nothing moved, re-read and try another direction. To read a whole scroll area without
    scrolling, read_screen_ax its elementID (what is off screen is marked offscreen)."""
    window = await resolve_window(ctx, windowID)
    steps = min(MAX_STEPS, max(1, math.ceil(milliseconds / MS_PER_STEP)))
    key, what = None, window.stable_id
    if elementID is not None and elementID.strip():
        eid, live = await verify(ctx, window, elementID)
        key, what = live.key, f"{shown(ctx, eid, live)} @{eid}"
    async with answering(ctx, window):
        before = await _lines_now(ctx, window)
        outcome, moved = await ctx.desktop.scroll(window, direction, steps, key)
    if moved:
        text = (
            f"Scrolled {direction} in {what} {how(outcome)} (at most about one view a "
            "scroll: part of the old view is still in sight)."
        )
        after = await _lines_now(ctx, window) if before is not None else None
        new = came_into_view(before or {}, after) if after is not None else []
        if new:
            text += " Came into view:\n" + "\n".join(f"  {line}" for line in new)
        elif after is not None:
            text += " Nothing new came into view in the read (re-read to see the area)."
        else:
            text += " The content moved: re-read to see it."
    else:
        text = (
            f"Scrolled {direction} ({steps} wheel steps) in {what}, but nothing moved: it "
            "may already be at the end. Re-read the window, or try another direction"
            + (
                " or another element."
                if key
                else ", or pass the elementID of the scrollable area to scroll."
            )
        )
    return ToolResult(
        text,
        data={"moved": moved, "steps": steps},
        summary=f"scroll {direction}: {'moved' if moved else 'nothing moved'}",
    )


async def _lines_now(ctx: ToolContext, window: WindowInfo) -> dict[str, str] | None:
    """The window's read lines now (no baseline), or None when it cannot be read."""
    try:
        return (await read_window(ctx, window, baseline=False)).lines
    except DeskpilotError:
        return None


@tool(risk=Risk.READ_ONLY, title="Wait", idempotent=True, reach=NOTHING)
async def wait(
    ctx: ToolContext,
    seconds: Annotated[float, Field(gt=0, le=3600, description="Seconds to wait (max 3600).")],
) -> ToolResult:
    """Pause, e.g. when a read is empty or still loading. Do not wait before every step."""
    await asyncio.sleep(seconds)
    return ToolResult(f"Waited {seconds:g} s.")
