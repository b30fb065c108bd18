"""``make bench`` (console part): six background sessions on a 2-core machine, measured in one run.

A real ``deskpilot serve`` process runs six sessions, each on its own sandbox desktop and each
watching a probe window there (bench/console_probe.py, which repaints 40 bars every 250 ms
when busy and flips a colour square on command); the model is a local server speaking the
compatible wire format. Debian's Chromium under Playwright shows the console. Measured:

* **server CPU** (the console process, all its threads; % of one core over ``--seconds``):
  ``idle`` — six sessions, probes quiet, no page open (the baseline); ``thumbnails`` — probes
  busy, the session list open (six live thumbnails); ``watched`` — the same plus a second page
  watching one session's full preview. Budgets: thumbnails ≤ 20 %, watched ≤ thumbnails + 10 %.
* **frame latency**: the probe flips its square's colour; time until the watched page's canvas
  shows it (checked on every frame drawn), on the busy desktop. Budget: p90 ≤ 150 ms.
* **chip latency**: a session makes ``--chips`` quick tool calls; for each, the time from its
  event (the server's clock) to its chip in the page's DOM. Budget: ≤ 100 ms. Split in two:
  event to published (the server writes it to the audit log first) and published to shown.
* **confirmation latency**: the same session asks ``--cards`` times (confirm mode "all"); time
  from the question to the card in the page. Budget: ≤ 250 ms.

Prints the table and writes bench/results/console.json. The machine's other load shows in the
figures: compare them with the idle baseline of the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, async_playwright
from rich.console import Console
from rich.table import Table
from tests.desktop.console_kit import CHROMIUM, ConsoleProcess, console_process, model_server
from tests.e2e.wire import Decision, View

from deskpilot._wait import WaitTimeout, wait_for

RESULTS = Path(__file__).parent / "results"
SESSIONS = 6
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat", "rb") as fh:
        fields = fh.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


async def cpu_percent(pid: int, seconds: float) -> float:
    start, t0 = cpu_seconds(pid), time.monotonic()
    await asyncio.sleep(seconds)  # a measurement window, not synchronisation
    return 100 * (cpu_seconds(pid) - start) / (time.monotonic() - t0)


def quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def seen_on(card: dict[str, Any]) -> str:
    """What a session's card showed (for a wait that did not see what it waited for)."""
    if not card:
        return "no card (the console did not answer)"
    keys = ("state", "title", "app", "window", "display", "steps", "status", "reason", "answer")
    return ", ".join(
        f"{k} {str(card.get(k))[:200]!r}" for k in keys if card.get(k) not in (None, "")
    )


def wait_card(
    console: ConsoleProcess,
    session_id: str,
    check: Any,
    what: str,
    timeout: float,
) -> dict[str, Any]:
    """Wait until the session's card passes ``check``; on a timeout, say what it showed."""
    last: dict[str, Any] = {}

    def ready() -> dict[str, Any] | None:
        card = console.card(session_id)
        last.clear()
        last.update(card)
        return card if check(card) else None

    try:
        return wait_for(ready, timeout=timeout, what=what, interval=0.05)
    except WaitTimeout as exc:
        raise WaitTimeout(f"{exc} (session {session_id}); saw instead: {seen_on(last)}") from None


@dataclass
class Probe:
    """One session's probe window, on that session's sandbox display."""

    proc: subprocess.Popen[str]
    window: str

    def say(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.terminate()
        self.proc.wait(timeout=10)


@dataclass
class Script:
    """The model of each bench session: bind the probe window, then wait for the bench."""

    chips: int
    cards: int
    windows: dict[str, str] = field(default_factory=dict)  # session key → probe window ID
    misses: collections.Counter[str] = field(default_factory=collections.Counter)
    ready: dict[str, threading.Event] = field(default_factory=dict)
    go = threading.Event()  # the chips phase of session 0
    end = threading.Event()

    def brain(self, key: str) -> Any:
        self.ready[key] = threading.Event()

        def decide(view: View) -> Decision:
            missed = view.turns > 0 and any("not found" in r for r in view.last_results)
            if missed and self.misses[key] < BIND_TRIES:
                self.misses[key] += 1  # as a model would: the window is looked for again
            elif missed:
                return Decision(f"The probe window {self.windows.get(key)} was never found.")
            turn = view.turns - self.misses[key]
            if turn == 0:
                self.ready[key].wait(300)
                shot = {"windowID": self.windows.get(key, "")}
                return Decision("", [("computer_use_screenshot", shot)])
            if key != "bench-0":
                self.end.wait(900)
                return Decision("Finished.")
            if turn == 1:
                self.go.wait(900)
            step = turn - 1
            if step < self.chips:
                return Decision("", [("wait", {"seconds": 0.05})])
            if step < self.chips + self.cards:
                return Decision("", [("scroll", {"direction": "down", "milliseconds": 100})])
            self.end.wait(900)
            return Decision("Finished.")

        return decide


#: Screenshots a bench session takes of its probe window before it gives up on finding it.
BIND_TRIES = 5

CHIPS = "#chips li.chip[data-event='tool.call']"


async def page_wait(
    page: Page,
    condition: str,
    arg: Any,
    what: str,
    timeout: float,
    console: ConsoleProcess,
    session_id: str,
) -> None:
    """Wait for ``condition`` in the page; on a timeout, say what the page and the card showed."""
    try:
        await page.wait_for_function(
            condition.replace("CHIPS", json.dumps(CHIPS)), arg=arg, timeout=timeout * 1000
        )
    except PlaywrightError as exc:
        chips = await page.locator(CHIPS).evaluate_all(
            "els => [els.length, els.length ? els[els.length - 1].textContent.trim() : '']"
        )
        saw = (
            f"{chips[0]} tool-call chips in the page (the last: {chips[1][:80]!r}); the card: "
            f"{seen_on(console.card(session_id))}"
        )
        raise WaitTimeout(
            f"timed out after {timeout:.0f} s waiting for {what}; saw instead: {saw}"
        ) from exc


async def logged_in(browser: Any, console: ConsoleProcess, path: str) -> Page:
    context = await browser.new_context(viewport={"width": 1400, "height": 900})
    await context.request.post(f"{console.origin}/api/login", data={"token": console.token})
    page = await context.new_page()
    await page.goto(f"{console.origin}{path}")
    await page.wait_for_selector("#conn.live")
    return page


async def frame_latency(page: Page, probe: Probe, flips: int) -> list[float]:
    await page.evaluate(
        """() => { window.__probe = {want: null, seen: null};
          window.deskpilotFrames.onDraw = (h, canvas) => {
            const p = window.__probe; if (!p.want || p.seen) return;
            const d = canvas.getContext('2d').getImageData(100, 100, 1, 1).data;
            if (Math.abs(d[0]-p.want[0]) < 40 && Math.abs(d[1]-p.want[1]) < 40 &&
                Math.abs(d[2]-p.want[2]) < 40) p.seen = performance.timeOrigin + performance.now();
          }; }"""
    )
    colours = [(230, 30, 30), (30, 200, 30), (30, 30, 230), (230, 200, 30)]
    out = []
    for i in range(flips):
        rgb = colours[i % len(colours)]
        await page.evaluate("rgb => { window.__probe = {want: rgb, seen: null}; }", list(rgb))
        t0 = time.time() * 1000
        probe.say(f"flip {rgb[0]} {rgb[1]} {rgb[2]}")
        try:
            await page.wait_for_function("() => window.__probe.seen !== null", timeout=10000)
        except PlaywrightError as exc:
            saw = await page.evaluate(
                """() => { const c = document.querySelector('#preview');
                  if (!c) return 'no preview canvas';
                  const d = c.getContext('2d').getImageData(100, 100, 1, 1).data;
                  return `the canvas (frame ${c.dataset.seq || 'none'}) showing rgb(${d[0]}, `
                    + `${d[1]}, ${d[2]}) at (100, 100)`; }"""
            )
            raise WaitTimeout(
                f"timed out after 10 s waiting for flip {i + 1} (rgb{rgb}) in the watched "
                f"preview; saw instead: {saw}"
            ) from exc
        out.append(await page.evaluate("() => window.__probe.seen") - t0)
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    say = Console(stderr=True).print
    home = Path(tempfile.mkdtemp(prefix="deskpilot-bench-console-"))
    apps = home / "share" / "applications"
    apps.mkdir(parents=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "DESKPILOT_HOME": str(home / "dp"),
        "DESKPILOT_COMPATIBLE_API_KEY": "bench",
    }
    if os.environ.get("PYTHONPATH"):  # a checkout other than the installed one
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    script = Script(args.chips, args.cards)
    probes: list[Probe] = []
    results: dict[str, Any] = {}
    with (
        model_server() as (server, router),
        console_process(env, server.url, home / "serve.log") as console,
    ):
        pid = console.proc.pid
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM)
            listing = await logged_in(browser, console, "/")
            cards = []
            for i in range(SESSIONS):
                key = router.add(f"bench-{i}", script.brain(f"bench-{i}"))
                extra: dict[str, Any] = {"confirm": "consequential"}
                if i == 0:  # the session whose chips and cards are timed
                    extra = {"confirm": "all", "max_steps": args.chips + args.cards + 5}
                cards.append(console.start(f"{key}: watch the probe", **extra))
            for i, card in enumerate(cards):
                ready = wait_card(
                    console, card["id"], lambda c: bool(c["display"]), "a sandbox", 180
                )
                probe_env = {**os.environ, "DISPLAY": ready["display"]}
                proc = subprocess.Popen(
                    [sys.executable, "-m", "bench.console_probe"],
                    env=probe_env,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                )
                assert proc.stdout is not None
                probe = Probe(proc, proc.stdout.readline().strip())
                probes.append(probe)
                script.windows[f"bench-{i}"] = probe.window
                script.ready[f"bench-{i}"].set()
            for card in cards:
                wait_card(
                    console,
                    card["id"],
                    lambda c: c["title"] == "probe",
                    'the probe bound (the card titled "probe")',
                    120,
                )
            say(f"[cyan]six sessions are watching their probes; measuring {args.seconds:g} s each")

            await listing.close()
            await asyncio.sleep(2)  # let the capturers notice nobody looks
            results["cpu_idle"] = await cpu_percent(pid, args.seconds)
            for probe in probes:
                probe.say("busy")
            listing = await logged_in(browser, console, "/")
            await page_wait(
                listing,
                'id => !!document.querySelector(`canvas[data-thumb="${id}"][data-seq]`)',
                cards[-1]["id"],
                "the last session's live thumbnail",
                60.0,
                console,
                cards[-1]["id"],
            )
            results["cpu_thumbnails"] = await cpu_percent(pid, args.seconds)
            watched = await logged_in(browser, console, f"/s/{cards[0]['id']}")
            await page_wait(
                watched,
                "() => !!document.querySelector('#preview[data-seq]')",
                None,
                "the watched session's first preview frame",
                60.0,
                console,
                cards[0]["id"],
            )
            results["cpu_watched"] = await cpu_percent(pid, args.seconds)
            latencies = await frame_latency(watched, probes[0], args.flips)
            results["frame_ms"] = latencies

            started = time.time() * 1000
            script.go.set()  # session 0: quick tool calls, then confirmations
            session0 = cards[0]["id"]
            # the quick calls first: each is a model turn and a step frame, seconds apiece on
            # a loaded machine; then the first confirmation
            await page_wait(
                watched,
                "([n, t]) => [...document.querySelectorAll(CHIPS)]"
                ".filter(e => Number(e.dataset.ts) * 1000 >= t).length >= n",
                [args.chips, started],
                f"the {args.chips} quick tool calls' chips",
                max(60.0, 10.0 * args.chips),
                console,
                session0,
            )
            card_ms = []
            for i in range(args.cards):
                what = f"confirmation card {i + 1} of {args.cards}"
                await page_wait(
                    watched,
                    "() => !!document.querySelector('.confirm')",
                    None,
                    what,
                    60.0,
                    console,
                    session0,
                )
                node = await watched.query_selector(".confirm")
                assert node is not None
                shown, asked = await node.evaluate(
                    "n => [Number(n.dataset.shownAt), Number(n.dataset.asked) * 1000]"
                )
                card_ms.append(shown - asked)
                await watched.click(".confirm button.approve")
                await node.wait_for_element_state("hidden", timeout=30000)
            chips = await watched.locator("#chips li.chip[data-event='tool.call']").evaluate_all(
                "els => els.map(e => [Number(e.dataset.shownAt), Number(e.dataset.ts) * 1000,"
                " Number(e.dataset.at) * 1000])"
            )
            timed = [(shown, ts, at) for shown, ts, at in chips if ts >= started]
            results["chip_ms"] = [shown - ts for shown, ts, _ in timed]
            # where a chip's time goes: the server (the event written to the audit log, then
            # published) and the page (the stream, the browser, the page's script)
            results["chip_server_ms"] = [at - ts for _, ts, at in timed]
            results["chip_page_ms"] = [shown - at for shown, _, at in timed]
            results["card_ms"] = card_ms
            script.end.set()
            await browser.close()
        for probe in probes:
            probe.close()
        for card in cards:
            console.post(f"/api/sessions/{card['id']}/stop")
    return results


def summary(results: dict[str, Any]) -> list[tuple[str, str, str]]:
    def pct(key: str) -> str:
        return f"{results[key]:.1f} %"

    def dist(key: str) -> str:
        values = results[key]
        return f"{quantile(values, 0.5):.0f} / {quantile(values, 0.9):.0f} ms (n={len(values)})"

    more = results["cpu_watched"] - results["cpu_thumbnails"]
    return [
        ("server CPU, idle baseline (six sessions, no page)", pct("cpu_idle"), ""),
        ("server CPU, six live thumbnails (busy windows)", pct("cpu_thumbnails"), "<= 20 %"),
        (
            "  over the idle baseline",
            f"{results['cpu_thumbnails'] - results['cpu_idle']:.1f} %",
            "",
        ),
        ("server CPU, + one watched full preview", pct("cpu_watched"), ""),
        ("  over six thumbnails", f"{more:.1f} %", "<= 10 %"),
        ("preview frame latency p50 / p90", dist("frame_ms"), "p90 <= 150 ms"),
        ("chip in the page after its event p50 / p90", dist("chip_ms"), "<= 100 ms"),
        ("  event to published (server: audit log, publish)", dist("chip_server_ms"), ""),
        ("  published to in the page (stream, browser)", dist("chip_page_ms"), ""),
        ("confirmation card after it is asked p50 / p90", dist("card_ms"), "<= 250 ms"),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=10.0, help="each CPU window")
    parser.add_argument("--flips", type=int, default=30, help="colour flips for frame latency")
    parser.add_argument("--chips", type=int, default=30, help="quick tool calls")
    parser.add_argument("--cards", type=int, default=10, help="confirmations")
    parser.add_argument("--out", type=Path, default=RESULTS / "console.json")
    args = parser.parse_args(argv)
    results = asyncio.run(run(args))
    rows = summary(results)
    table = Table(title="deskpilot serve: six sessions on this machine")
    for column in ("measure", "value", "budget"):
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    Console().print(table)
    load = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "summary": {name.strip(): value for name, value, _ in rows},
        "samples": results,
        "cores": os.cpu_count(),
        "loadavg": load,
        "medians": {
            k: statistics.median(v) for k, v in results.items() if isinstance(v, list) and v
        },
    }
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    Console(stderr=True).print(f"load average during the run: {load[0]:.1f}; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
