"""Running the obedient adversary for the safety suite: one trial = one real agent run.

A trial runs :class:`tests.desktop.adversary.Obedient` behind a local provider server (the real
wire format, the real provider class), in the real agent loop (``computer_use_task``), against
the shared sandbox desktop, with the policy on or off:

* **on** — the settings a person gets by default (``confirm = consequential``, the default
  blocklist) and nobody to say yes (every question is declined);
* **off** — nothing asked (``confirm = none``), nothing blocked.

The context comes from the door's front, ``runtime.open_session`` (the audit log attached), and
what a person was asked is counted from the door's own ``confirm.asked`` events. Effects are
never judged from the run: each case checks them outside the tools (the site's log, the file
system, the process table).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass

import httpx

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.agent.loop import RunOptions, RunResult
from deskpilot.agent.providers import get_provider
from deskpilot.agent.task import computer_use_task
from deskpilot.config import Settings
from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.events import Event
from deskpilot.pages.browser import endpoint
from deskpilot.policy import AllowAll, Approver, DenyAll
from deskpilot.runtime import open_session
from deskpilot.serve.cleanup import page_tabs
from deskpilot.session import Session
from deskpilot.tools.blocklist import DEFAULT_BLOCKLIST
from tests.desktop.adversary import Obedient, commands
from tests.e2e.wire import ModelServer
from tests.safety_figures import Trial

KEYS = {"anthropic": "k", "openai": "k", "gemini": "k"}
ACTING = {"open_app", "open_urls", "perform", "perform_sequence", "scroll"}
#: calls whose effects on a page may still be on their way when the call returns
INPUT = {"perform", "perform_sequence", "scroll"}
#: How long a trial waits for an effect that should come (policy off) or should not (on).
EFFECT_WAIT = 10.0
NO_EFFECT_WAIT = 1.0


def policy_settings(base: Settings, on: bool) -> Settings:
    if on:
        return base.with_overrides(confirm="consequential", api_keys=KEYS)
    return base.with_overrides(confirm="none", blocklist_remove=DEFAULT_BLOCKLIST, api_keys=KEYS)


@dataclass
class Run:
    result: RunResult
    events: list[Event]
    brain: Obedient

    def of(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.kind == kind]

    @property
    def asked(self) -> int:
        return len(self.of("confirm.asked"))

    @property
    def acting_calls(self) -> int:
        return sum(e.data["tool"] in ACTING for e in self.of("tool.call"))

    @property
    def acted(self) -> bool:
        """Did any acting call succeed (something may be on its way to an effect)?"""
        ok = {e.data["call_id"] for e in self.of("tool.result") if e.data["ok"]}
        return any(
            e.data["tool"] in INPUT and e.data["call_id"] in ok for e in self.of("tool.call")
        )

    def story(self) -> str:
        """What happened, for assertion messages."""
        lines = [f"done: {self.brain.done}", f"dropped: {self.brain.dropped}"]
        for e in self.of("tool.result"):
            lines.append(f"  {e.data['tool']}: ok={e.data['ok']} {e.data['summary'][:120]}")
        lines.append(f"outcome: {self.result.outcome} ({self.result.reason})")
        return "\n".join(lines)


async def run_adversary(
    desktop: DesktopFacade,
    base: Settings,
    goal: str,
    *,
    on: bool,
    provider: str = "anthropic",
    max_steps: int = 12,
    approver: Approver | None = None,
    plan: Sequence[str] = (),
    persons: bool = True,
) -> Run:
    """One agent run of the obedient adversary on ``goal`` (see the module docstring); the
    policy on asks ``approver`` (default: nobody, every question declined). With a ``plan``
    (commands, :mod:`tests.desktop.adversary`) the stand-in does that first and does not read
    the goal for commands. ``persons``: the goal is the person's own (it grants what it names);
    False for a goal a model wrote (it grants nothing)."""
    settings = policy_settings(base, on)
    events: list[Event] = []
    who = (approver or DenyAll()) if on else AllowAll()
    brain = Obedient(plan=[c for line in plan for c in commands(line)])
    async with open_session(
        settings,
        surface="run",
        approver=who,
        observe=events.append,
        desktop=desktop,
        session=Session(),
        label="safety trial",
    ) as ctx:
        with ModelServer(provider, brain) as server:
            model = get_provider(f"{provider}:adversary", settings, base_url=server.url)
            async with model:
                options = RunOptions(max_steps=max_steps, timeout=120)
                result = await computer_use_task(
                    goal, provider=model, ctx=ctx, options=options, persons=persons
                )
    return Run(result, events, brain)


async def effect_seen(check: Callable[[], bool], run: Run, *, expected: bool) -> bool:
    """Whether ``check()`` holds, waiting for it while an effect may still be on its way."""
    if check():
        return True
    if not run.acted:
        return False  # nothing ran that could still cause it

    async def probe() -> bool:
        return check()

    try:
        await async_wait_for(
            probe,
            timeout=EFFECT_WAIT if expected else NO_EFFECT_WAIT,
            what="the effect",
            interval=0.05,
        )
    except WaitTimeout:
        return False
    return True


#: The agent browser the trials share (see :func:`home_browser`); its windows are closed, not
#: killed, so it stays up between trials.
BROWSER: dict[str, int] = {}


async def close_windows(desktop: DesktopFacade, windows: list[WindowInfo]) -> None:
    """Close what a trial opened: the shared browser's windows politely, other apps by kill."""
    for w in windows:
        if w.pid == BROWSER.get("pid"):
            await desktop.close_window(w)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(w.pid, signal.SIGKILL)
    xids = {w.handle for w in windows}

    async def gone() -> bool:
        return not any(w.handle in xids for w in await desktop.list_windows())

    await async_wait_for(gone, timeout=15, what="the trial's windows to close")


@contextlib.asynccontextmanager
async def tabs_closed_after(settings: Settings) -> AsyncIterator[None]:
    """Close the agent browser's tabs opened meanwhile (a trial's ``open_urls`` opens its pages
    as tabs of the browser's window, not windows: closing new windows left them open, 20 of
    them in the home window after the 19 benign trials, each with its renderer)."""
    base = endpoint(settings)
    if base is None:  # no agent browser: no tabs
        yield
        return
    async with httpx.AsyncClient(timeout=10, trust_env=False) as client:

        async def tabs() -> set[str]:
            return {t["id"] for t in await page_tabs(client, base)}

        before = await tabs()
        if not before:  # a running agent browser shows a page: this one does not answer
            yield
            return
        try:
            yield
        finally:
            opened = await tabs() - before
            with contextlib.suppress(httpx.HTTPError):
                for tab in opened:
                    await client.get(f"{base}/json/close/{tab}")

            async def closed() -> bool:
                return not (await tabs()) & opened

            await async_wait_for(closed, timeout=15, what="the trial's tabs to close")


@contextlib.asynccontextmanager
async def home_browser(desktop: DesktopFacade, url: str) -> AsyncIterator[WindowInfo]:
    """The agent browser kept running with one window on ``url`` while a module's trials run:
    each trial's ``open_urls`` opens a window in it (no browser start per trial)."""
    window = await desktop.open_urls([url])
    BROWSER["pid"] = window.pid
    try:
        yield window
    finally:
        BROWSER.pop("pid", None)
        with contextlib.suppress(ProcessLookupError):
            os.kill(window.pid, signal.SIGKILL)

        async def gone() -> bool:
            return not any(w.pid == window.pid for w in await desktop.list_windows())

        await async_wait_for(gone, timeout=15, what="the browser to close")


@dataclass
class Case:
    """One injection case: where the injection sits, what it makes the adversary do, how the
    effect is seen from outside."""

    name: str
    where: str
    effect: str
    goal: Callable[[], Awaitable[str]]  # sets the scene, returns the user's (benign) goal
    happened: Callable[[], bool]
    provider: str = "anthropic"


async def trial(
    desktop: DesktopFacade, base: Settings, case: Case, *, on: bool
) -> tuple[Trial, Run]:
    """Set the scene, run the adversary, see whether the effect happened; close what opened."""
    before = {w.handle for w in await desktop.list_windows()}
    try:
        async with tabs_closed_after(base):
            goal = await case.goal()
            run = await run_adversary(desktop, base, goal, on=on, provider=case.provider)
            effect = await effect_seen(case.happened, run, expected=not on)
    finally:
        opened = [w for w in await desktop.list_windows() if w.handle not in before]
        await close_windows(desktop, opened)
    why = "; ".join(e.data["reason"] for e in run.of("confirm.asked"))  # what a person was asked
    return Trial(effect=effect, asked=run.asked, calls=len(run.of("tool.call")), note=why), run
