"""Chips: one compact card per event; JSON lines with images as hashes, not bytes."""

from __future__ import annotations

import base64
import hashlib
import io
import json

from rich.console import Console

from deskpilot.agent.chips import ChipPrinter, JsonlPrinter, clean, short_args
from deskpilot.events import Event, Fanout, Image

SHOT = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
RUN = "3f2a9c01d4e5b6a7"


def run_events() -> list[Event]:
    return [
        Event(
            "run.started",
            {"goal": "Work out 12*7", "model": "scripted:calc", "window": "81/1"},
            run_id=RUN,
            ts=100.0,
        ),
        Event("model.text", {"text": "Opening the calculator."}, run_id=RUN, ts=101.0),
        Event(
            "tool.call",
            {"tool": "click", "args": {"elementID": "e12", "windowID": "81/1"}, "call_id": "c1"},
            run_id=RUN,
            ts=102.0,
        ),
        Event(
            "confirm.asked",
            {
                "tool": "click",
                "args": {"elementID": "e12"},
                "call_id": "c1",
                "reason": "activates 'Send'",
            },
            run_id=RUN,
            ts=102.1,
        ),
        Event(
            "confirm.answered",
            {"tool": "click", "call_id": "c1", "approved": True, "by": "TerminalApprover"},
            run_id=RUN,
            ts=103.0,
        ),
        Event(
            "tool.result",
            {"tool": "click", "call_id": "c1", "ok": True, "summary": "clicked '='", "text": "..."},
            run_id=RUN,
            ts=103.5,
            images=(Image(SHOT, width=64, height=48),),
        ),
        Event(
            "tool.result",
            {
                "tool": "type_text",
                "call_id": "c2",
                "ok": False,
                "summary": "Element @e3 is no longer available",
                "text": "",
            },
            run_id=RUN,
            ts=104.0,
        ),
        Event(
            "run.finished",
            {"outcome": "done", "answer": "12*7 = 84", "steps": 3},
            run_id=RUN,
            ts=112.5,
        ),
    ]


def render(events: list[Event], width: int = 100) -> list[str]:
    console = Console(file=io.StringIO(), width=width, color_system=None, highlight=False)
    printer = ChipPrinter(console)
    for event in events:
        printer(event)
    out = console.file.getvalue()
    assert isinstance(out, str)
    return out.splitlines()


def test_each_kind_has_its_chip() -> None:
    lines = render(run_events())
    assert lines == [
        "▶ run 3f2a9c01d4e5  Work out 12*7",
        "  model scripted:calc · window 81/1",
        "💬 Opening the calculator.",
        "→ click  elementID=e12 windowID=81/1",
        "? confirm click  activates 'Send'",
        "  elementID=e12",
        "✓ approved click  by TerminalApprover",
        "✓ click  clicked '='  · 1 image",
        "✗ type_text  Element @e3 is no longer available",
        "■ done  3 steps · 12.5s",
        "  12*7 = 84",
    ]


def test_declined_and_unknown_events() -> None:
    lines = render(
        [
            Event("confirm.answered", {"tool": "click", "approved": False, "by": "DenyAll"}),
            Event("session.saved", {"path": "/tmp/s.json"}),
            Event("tool.frame", {"tool": "click", "call_id": "c1"}, images=(Image(SHOT),)),
            Event(
                "run.finished",
                {"outcome": "needs_attention", "answer": "", "steps": 8, "reason": "budget"},
            ),
        ]
    )
    assert lines == [
        "✗ declined click  by DenyAll",
        '· session.saved  {"path":"/tmp/s.json"}',
        "■ needs_attention  8 steps · budget",
    ]


def test_chips_stay_within_two_lines_and_the_width() -> None:
    long_text = "\n".join(f"paragraph {i} " + "word " * 60 for i in range(20))
    events = [
        Event("model.text", {"text": long_text}),
        Event("tool.call", {"tool": "type_text", "args": {"text": long_text}}),
        Event("tool.result", {"tool": "read_screen_ax", "ok": True, "summary": long_text}),
        Event("run.finished", {"outcome": "stopped", "answer": long_text, "steps": 30}),
    ]
    for event in events:
        lines = render([event], width=60)
        assert 1 <= len(lines) <= 2, lines
        assert all(len(line) <= 60 for line in lines), lines
    assert render([events[0]], width=60)[-1].endswith("…")


def test_screen_text_cannot_restyle_the_terminal() -> None:
    nasty = "[bold red]fake[/] \x1b[31mred\x1b[0m \u202eevil\x07"
    console = Console(file=io.StringIO(), width=100, force_terminal=True, color_system="standard")
    ChipPrinter(console)(Event("model.text", {"text": nasty}))
    out = console.file.getvalue()
    assert "[bold red]fake[/]" in out  # printed literally, not as markup
    assert "\x1b[31mred" not in out and "\u202e" not in out and "\x07" not in out
    assert clean("a\x1b[2Jb\n\tc") == "a [2Jb c"


def test_short_args_clips_values_and_skips_nones() -> None:
    args = {"windowID": "81/1", "text": "x" * 100, "elementID": None, "steps": [{"k": 1}]}
    shown = short_args(args, limit=10)
    assert shown == 'windowID=81/1 text=xxxxxxxxx… steps=[{"k":1}]'
    assert short_args(None) == "" and short_args("raw") == '"raw"'


def test_jsonl_printer_writes_one_json_object_per_event() -> None:
    stream = io.StringIO()
    printer = JsonlPrinter(stream)
    for event in run_events():
        printer(event)
    lines = stream.getvalue().splitlines()
    assert len(lines) == len(run_events())
    records = [json.loads(line) for line in lines]
    assert [r["kind"] for r in records] == [e.kind for e in run_events()]
    assert records[2] == {
        "kind": "tool.call",
        "run_id": RUN,
        "ts": 102.0,
        "data": {
            "tool": "click",
            "args": {"elementID": "e12", "windowID": "81/1"},
            "call_id": "c1",
        },
        "images": [],
    }
    image = records[5]["images"][0]
    assert image["sha256"] == hashlib.sha256(SHOT).hexdigest()
    assert (image["mime"], image["bytes"], image["width"]) == ("image/png", len(SHOT), 64)
    assert base64.b64encode(SHOT).decode()[:40] not in stream.getvalue()


def test_printers_are_event_sinks() -> None:
    stream = io.StringIO()
    console = Console(file=io.StringIO(), width=80, color_system=None)
    Fanout(ChipPrinter(console), JsonlPrinter(stream))(run_events()[1])
    assert json.loads(stream.getvalue())["data"]["text"] == "Opening the calculator."
    assert "Opening the calculator." in console.file.getvalue()
