"""What ``deskpilot run`` and ``deskpilot chat`` share: model options, event sinks, Ctrl-C.

Both take the same model options (:func:`model_options`), show every event (after the audit
log, which :func:`deskpilot.runtime.open_session` attaches) as chips or JSON lines
(:func:`event_printer`), and stop the innermost run on Ctrl-C or SIGTERM
(:func:`stop_on_signals`).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import click
from rich.console import Console

from deskpilot.agent.chips import ChipPrinter, JsonlPrinter
from deskpilot.agent.loop import StopController
from deskpilot.agent.providers import Provider, get_provider
from deskpilot.cli.common import fail
from deskpilot.config import CONFIRM_MODES, Settings
from deskpilot.errors import DeskpilotError
from deskpilot.events import EventSink


def model_options(func: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(
        [
            click.option(
                "--model",
                metavar="PROVIDER:MODEL",
                default=None,
                help="openai:, anthropic:, gemini:, compatible: or scripted:FILE "
                "(default: DESKPILOT_MODEL or `model` in the config file).",
            ),
            click.option(
                "--base-url",
                metavar="URL",
                default=None,
                help="API endpoint: required for compatible: (e.g. "
                "http://127.0.0.1:8000/v1); overrides it for the others.",
            ),
            click.option(
                "--confirm",
                type=click.Choice(CONFIRM_MODES),
                default=None,
                help="What asks for a yes: all acting tools, consequential ones (default), "
                "or none (trusted sandboxes). With no terminal, asking means no.",
            ),
            click.option(
                "--tool-protocol",
                type=click.Choice(["native", "text"]),
                default=None,
                help="native function calling (default) or the @@TOOL@@ text protocol.",
            ),
            click.option(
                "--events",
                "events",
                type=click.Choice(["chips", "jsonl"]),
                default="chips",
                show_default=True,
                help="Show events as compact chips, or print them as JSON lines.",
            ),
        ]
    ):
        func = option(func)
    return func


def provider_for(settings: Settings, model: str | None, base_url: str | None) -> Provider:
    try:
        return get_provider(model or settings.model, settings, base_url=base_url)
    except DeskpilotError as exc:
        fail(exc)
        raise  # unreachable


def event_printer(events: str, console: Console) -> EventSink:
    """How events are shown once recorded: compact chips, or JSON lines on stdout."""
    return JsonlPrinter(sys.stdout) if events == "jsonl" else ChipPrinter(console)


@contextlib.contextmanager
def stop_on_signals(controller: StopController, on_idle: Callable[[], None]) -> Iterator[None]:
    """Ctrl-C / SIGTERM stop the innermost run; with nothing running, ``on_idle``. A second
    Ctrl-C during the same stop interrupts for good. Outside the main thread (a run embedded
    in another program) signals are left alone."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    loop = asyncio.get_running_loop()
    pressed = {"count": 0}

    def handle() -> None:
        if not controller.active:
            on_idle()
            return
        pressed["count"] += 1
        if pressed["count"] > 1:
            loop.remove_signal_handler(signal.SIGINT)  # the next Ctrl-C raises
        print("\ndeskpilot: stopping…", file=sys.stderr)
        controller.stop()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, handle)
    try:
        yield
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
