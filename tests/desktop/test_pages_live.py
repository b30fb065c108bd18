"""The rule library while the agent browser runs: a changed, disabled or deleted rule (JS at
document start or later, CSS) never runs its old code in pages loaded afterwards; rule errors
reach the CLI from any tab, with no web tab open; a session keeps one browser connection and
gets over a browser that died or hung.
What a rule did is read through the test's own CDP connection (page globals set by the rule and
by the page's first script), which the tools do not use; connections are counted in the
kernel's socket table."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Page

from deskpilot._wait import async_wait_for
from deskpilot.config import Settings
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.pages import launch, service
from deskpilot.pages.browser import endpoint, extension_id
from deskpilot.pages.link import link_of
from deskpilot.pages.patterns import parse_patterns
from deskpilot.pages.store import extension_dir, open_library
from deskpilot.policy import CallbackApprover
from deskpilot.runtime import open_session
from deskpilot.session import Session
from tests.desktop.pages_rig import (
    Approvals,
    Rig,
    call,
    deskpilot,
    gone,
    goto,
    kill,
    open_rig,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")

#: a guard against a hang (a failure, not a timing assertion): far above any normal call
NO_HANG_S = 120


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def rig(desktop: DesktopFacade, desktop_settings: Settings) -> AsyncIterator[Rig]:
    async with open_rig(desktop, desktop_settings) as r:
        yield r


def version(v: str) -> str:
    return f"(window.__ran = window.__ran || []).push({json.dumps(v)});"


def idle_version(v: str) -> str:
    return f"(window.__idle = window.__idle || []).push({json.dumps(v)});"


def css_version(v: str) -> str:
    return f":root {{ --dp-version: {json.dumps(v)}; }}"


async def ran(page: Page) -> tuple[object, object]:
    """What rules ran in the document, and what the page's first script saw of it."""
    got = await page.evaluate("[window.__ran || null, window.__pageSaw]")
    return got[0], json.loads(got[1]) if isinstance(got[1], str) else got[1]


async def later(page: Page) -> tuple[list[str], str, int]:
    """What the document-idle rules ran (once the always-on sentinel rule, after them in the
    same pass, has), the rule CSS in effect, and how many adopted sheets set it (stale
    sheets left beside the new one would be more than 1)."""

    async def idle_ran() -> list[str] | None:
        got = await page.evaluate("window.__idle || null")
        return got if got and "sentinel" in got else None

    idle: list[str] = await async_wait_for(idle_ran, timeout=30, what="the idle rules to run")
    css, sheets = await page.evaluate(
        "[getComputedStyle(document.documentElement).getPropertyValue('--dp-version').trim(),"
        " document.adoptedStyleSheets.filter((s) => [...s.cssRules]"
        ".some((r) => r.cssText.includes('--dp-version'))).length]"
    )
    return idle, css, sheets


async def test_a_changed_disabled_or_deleted_rule_never_runs_its_old_code(
    rig: Rig, tmp_path: Path
) -> None:
    """JS at document start (the phase the launch-time set could run stale), JS at
    document-idle, and CSS: each load after a change has the new version only."""
    base = rig.site.url("")
    stale = parse_patterns([f"{base}/stale*"], "include")
    with open_library(rig.settings) as lib:
        f = lib.create_folder("Live")
        g = lib.create_group(f.id, "g")
        rule = lib.create_rule(
            g.id,
            "versioned",
            css=css_version("v1"),
            js=version("v1"),
            run_at="document-start",
            include=stale,
        )
        idle = lib.create_rule(
            g.id, "idle", js=idle_version("idle-v1"), run_at="document-idle", include=stale
        )
        s = lib.create_group(f.id, "always")
        lib.create_rule(
            s.id, "sentinel", js=idle_version("sentinel"), run_at="document-idle", include=stale
        )
    # the rules are in the set the browser starts with (its extension's manifest)
    page = await rig.restart(rig.site.url("/stale?launch"))
    assert await ran(page) == (["v1"], ["v1"])  # at document start, before the page's script
    assert await later(page) == (["idle-v1", "sentinel"], '"v1"', 1)

    def run(*args: str) -> None:
        done = deskpilot(rig.settings, "rules", *args)
        assert done.returncode == 0, done.stdout + done.stderr

    for n, v in enumerate(("v2", "v3"), 1):
        (tmp_path / f"{v}.js").write_text(version(v))
        (tmp_path / f"{v}.css").write_text(css_version(v))
        (tmp_path / f"idle-{v}.js").write_text(idle_version(f"idle-{v}"))
        run("edit", rule.id, "--js", str(tmp_path / f"{v}.js"), "--css", str(tmp_path / f"{v}.css"))
        run("edit", idle.id, "--js", str(tmp_path / f"idle-{v}.js"))
        # the editing processes have exited; a page loaded right now has the new code only
        await page.goto(rig.site.url(f"/stale?edit{n}"))
        assert await ran(page) == ([v], [v])
        assert await later(page) == ([f"idle-{v}", "sentinel"], f'"{v}"', 1)

    run("disable", rule.id)
    await page.goto(rig.site.url("/stale?disabled"))
    assert await ran(page) == (None, None)
    assert await later(page) == (["idle-v3", "sentinel"], "", 0)

    run("disable", g.id)  # the group: everything in it, without touching the rules' flags
    await page.goto(rig.site.url("/stale?group-disabled"))
    assert await ran(page) == (None, None)
    assert await later(page) == (["sentinel"], "", 0)

    run("enable", g.id)
    run("enable", rule.id)
    await page.goto(rig.site.url("/stale?enabled"))
    assert await ran(page) == (["v3"], ["v3"])
    assert await later(page) == (["idle-v3", "sentinel"], '"v3"', 1)

    run("delete", "--yes", g.id)
    await page.goto(rig.site.url("/stale?deleted"))
    assert await ran(page) == (None, None)
    assert await later(page) == (["sentinel"], "", 0)
    with open_library(rig.settings) as lib:
        lib.delete(f.id)
    await service.after_change(rig.settings)


async def _stop_worker(rig: Rig, page: Page) -> None:
    """Stop the extension's service worker (as Chromium does after 30 s idle)."""
    session = await page.context.new_cdp_session(page)
    await session.send("ServiceWorker.enable")
    await session.send("ServiceWorker.stopAllWorkers")
    await session.detach()
    browser_session = await rig.browser.new_browser_cdp_session()
    ext = extension_id(extension_dir(rig.settings))

    async def stopped() -> bool:
        targets = (await browser_session.send("Target.getTargets"))["targetInfos"]
        return not any(ext in t["url"] and t["type"] == "service_worker" for t in targets)

    await async_wait_for(stopped, timeout=30, what="the extension's worker to stop")
    await browser_session.detach()


async def _stored_errors(rig: Rig) -> list[str]:
    """The errors the extension holds, read by the test's own connection (from whichever of
    the worker's incarnations answers)."""
    ext = extension_id(extension_dir(rig.settings))

    async def read() -> list[str] | None:
        for worker in rig.browser.contexts[0].service_workers:
            if ext in worker.url:
                try:
                    got = await worker.evaluate("chrome.storage.local.get('errors')")
                except Exception:  # a stopped incarnation
                    continue
                return list(got.get("errors", []))
        return None

    found: list[str] = await async_wait_for(read, timeout=30, what="the extension's worker")
    return found


async def test_rule_errors_reach_the_cli_from_any_tab_with_no_web_tab_open(rig: Rig) -> None:
    base = rig.site.url("")
    with open_library(rig.settings) as lib:
        f = lib.create_folder("Errors")
        g = lib.create_group(f.id, "g")
        first = lib.create_rule(
            g.id,
            "first",
            js="throw new Error('boom-one');",
            include=parse_patterns([f"{base}/boom1"], "include"),
        )
        second = lib.create_rule(
            g.id,
            "second",
            js="null.boom;",
            run_at="document-end",
            include=parse_patterns([f"{base}/boom2"], "include"),
        )
    await service.after_change(rig.settings)

    # the first error in the tab the user sees, the second in another tab
    for path, rule, shows in (("/boom1", first, "boom-one"), ("/boom2", second, "TypeError")):
        if rule is first:
            page = await goto(rig, path)
        else:
            page = await rig.browser.contexts[0].new_page()
            await page.goto(rig.site.url(path))

        async def stored(rule_id: str = rule.id) -> bool:
            return any(json.loads(e)["rule"] == rule_id for e in await _stored_errors(rig))

        await async_wait_for(stored, timeout=30, what="the page to report the rule's error")
        # no web tab is left, and the worker sleeps: the CLI must still get the error
        await page.goto("chrome://version/")
        await _stop_worker(rig, page)
        if rule is first:
            shown = deskpilot(rig.settings, "rules", "show", rule.id)
            assert shown.returncode == 0, shown.stderr
            assert "js_exception" in shown.stdout and f"{base}{path}" in shown.stdout
            assert shows in shown.stdout
        else:
            listed = deskpilot(rig.settings, "rules", "list")
            assert listed.returncode == 0, listed.stderr
            line = next(ln for ln in listed.stdout.splitlines() if rule.id in ln)
            assert "1 error" in line, listed.stdout
            shown = deskpilot(rig.settings, "rules", "show", rule.id)
            assert shows in shown.stdout
    await page.close()  # the second tab
    assert await _stored_errors(rig) == []  # taken, not copied: nothing is counted twice
    with open_library(rig.settings) as lib:
        assert [e.count for e in lib.errors(first.id)] == [1]
        lib.delete(f.id)
    await service.after_change(rig.settings)


def devtools_connections(port: int) -> set[int]:
    """Local ports of the established TCP connections to the browser's DevTools port."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, remote, state = line.split()[1:4]
            if state == "01" and int(remote.rsplit(":", 1)[1], 16) == port:
                found.add(int(local.rsplit(":", 1)[1], 16))
    return found


def _port(rig: Rig) -> int:
    url = endpoint(rig.settings)
    assert url is not None
    return int(url.rsplit(":", 1)[1])


async def test_a_session_keeps_one_connection_and_gets_over_a_dead_or_hung_browser(
    rig: Rig,
) -> None:
    page = await goto(rig, "/article")
    # the door every surface uses (chat, MCP, runs, the console, Python) gives the session
    # its kept resources
    approver = CallbackApprover(Approvals(), person=True)
    async with open_session(
        rig.settings, surface="python", approver=approver, desktop=rig.desktop, session=Session()
    ) as ctx:
        mine = devtools_connections(_port(rig))  # the test's own
        got = await call(ctx, "query_page", {"selector": ".comment"})
        assert not got.is_error and got.text.startswith("2 matches"), got.text
        first = devtools_connections(_port(rig)) - mine  # the session's (Playwright's websocket)
        assert first
        for _ in range(2):
            got = await call(ctx, "query_page", {"selector": ".comment"})
            assert not got.is_error and got.text.startswith("2 matches"), got.text
            assert devtools_connections(_port(rig)) - mine <= first  # no new connection
        pane = await call(ctx, "open_temp_pane", {"kind": "css"})
        pane_id = pane.data["pane_id"] if pane.data else ""
        await call(ctx, "set_temp_pane_code", {"pane": pane_id, "code": ".comment{color: red}"})
        await call(ctx, "close_temp_pane", {"pane": pane_id})
        assert devtools_connections(_port(rig)) - mine <= first
        link = link_of(ctx)
        assert link is not None and link.attaches == 1

        # the browser dies: the next call says so (no hang), and one after a restart works
        kill(rig.pid)
        await async_wait_for(lambda: gone(rig.pid), timeout=30, what="the browser to exit")
        dead = await asyncio.wait_for(call(ctx, "query_page", {"selector": "p"}), NO_HANG_S)
        assert dead.is_error and "not running" in dead.text, dead.text
        page = await rig.restart(rig.site.url("/article?again"))
        mine = devtools_connections(_port(rig))  # the test's own, to the new browser
        back = await call(ctx, "query_page", {"selector": ".comment"})
        assert not back.is_error and "2 matches" in back.text, back.text
        assert link.attaches == 2

        # the browser hangs: a call fails in bounded time; once it answers again, calls work
        os.kill(rig.pid, signal.SIGSTOP)
        try:
            hung = await asyncio.wait_for(call(ctx, "query_page", {"selector": "p"}), NO_HANG_S)
        finally:
            os.kill(rig.pid, signal.SIGCONT)
        assert hung.is_error and "answer" in hung.text, hung.text
        again = await call(ctx, "query_page", {"selector": ".comment"})
        assert not again.is_error, again.text
        assert link.attaches == 3

    # the session ended: its connection is closed
    async def closed() -> bool:
        return not (devtools_connections(_port(rig)) - mine)

    await async_wait_for(closed, timeout=30, what="the session's connection to close")
    assert await page.evaluate("1") == 1  # the browser keeps running


async def test_deskpilot_tool_attaches_per_process_and_exits_cleanly(rig: Rig) -> None:
    await goto(rig, "/article")
    mine = devtools_connections(_port(rig))
    for _ in range(2):
        done = deskpilot(rig.settings, "tool", "query_page", json.dumps({"selector": ".comment"}))
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.startswith("2 matches")
        assert "Traceback" not in done.stderr and "Event loop" not in done.stderr, done.stderr
    assert not (devtools_connections(_port(rig)) - mine)  # nothing left attached


#: rule code enough that Chromium is still reading its extension when the first page loads
#: (on Chromium 156 every launch with 15 MB lost that race; 5 MB did not)
HEAVY_RULES, HEAVY_CHARS = 100, 190_000


async def test_a_first_page_that_loads_before_the_rules_gets_them_at_document_start(
    rig: Rig,
) -> None:
    """Chromium loads its first pages without waiting for its extensions: a page the browser
    starts with commits before a heavy rule set is read, and would run none of it. The start
    loads such a page again, so its rules run at document start as on every later load."""
    base = rig.site.url("")
    stale = parse_patterns([f"{base}/stale*"], "include")
    filler = "/*" + "x" * HEAVY_CHARS + "*/"
    with open_library(rig.settings) as lib:
        f = lib.create_folder("Heavy")
        g = lib.create_group(f.id, "g")
        lib.create_rule(g.id, "first", js=version("v1"), run_at="document-start", include=stale)
        for n in range(HEAVY_RULES):
            lib.create_rule(g.id, f"filler {n}", js=filler, run_at="document-start", include=stale)
    url = rig.site.url("/stale?heavy")
    page = await rig.restart(url)
    assert await ran(page) == (["v1"], ["v1"])  # at document start, before the page's script
    loads = rig.site.requests.count("/stale?heavy")
    assert 1 <= loads <= 1 + launch.MAX_RELOADS, rig.site.requests
