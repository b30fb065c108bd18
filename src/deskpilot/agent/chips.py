"""Chips: each Event as a compact one- or two-line card (``ChipPrinter``) or a JSON line.

Both printers are EventSinks. Screen and model text is shown literally (never as rich markup)
with control characters removed, so nothing read off the screen can restyle the terminal.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from deskpilot.audit.chain import canonical_json, image_ref
from deskpilot.events import Event
from deskpilot.policy.records import sentence

_BIDI = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}
_OUTCOME_STYLE = {"done": "bold green", "needs_attention": "bold yellow", "stopped": "bold red"}
_POLICY_STYLE = {
    "allowed": "dim",
    "asked": "yellow",
    "declined": "red",
    "blocked": "red",
    "policy.grants": "cyan",
    "grant.added": "cyan",
    "grant.revoked": "cyan",
}


def clean(text: object) -> str:
    """One line of plain text: whitespace collapsed, control and bidi characters removed."""
    chars = (
        " " if unicodedata.category(ch) == "Cc" or ch in _BIDI else ch for ch in str(text or "")
    )
    return " ".join("".join(chars).split())


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def short_args(args: Any, limit: int = 40) -> str:
    """``key=value`` pairs with each value clipped; not-a-dict args as clipped JSON."""
    if not isinstance(args, dict):
        return clip(clean(_json(args)), limit * 2) if args not in (None, "", {}) else ""
    parts = []
    for key, value in args.items():
        if value is None:
            continue
        shown = value if isinstance(value, str) else _json(value)
        parts.append(f"{clean(key)}={clip(clean(shown), limit)}")
    return " ".join(parts)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


class ChipPrinter:
    """An EventSink that prints each event as a chip on a rich Console."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console()
        self._started: dict[str, float] = {}

    def __call__(self, event: Event) -> None:
        if event.kind == "run.started":
            self._started.setdefault(event.run_id, event.ts)
        for line in self.render(event):
            self.console.print(line, no_wrap=True, overflow="ellipsis", highlight=False)

    def render(self, event: Event) -> list[Text]:
        """The chip's lines: a headline and at most one detail line."""
        d, width = event.data, max(20, self.console.width - 4)
        if event.kind == "run.started":
            head = _line(
                ("▶ run ", "bold cyan"),
                (event.run_id[:12], "cyan"),
                ("  " + clean(d.get("goal")), "bold"),
            )
            detail = " · ".join(
                f"{k} {clean(d[k])}" for k in ("model", "window") if d.get(k) not in (None, "")
            )
            return [head, *_detail(detail)]
        if event.kind == "model.text":
            text = clean(d.get("text"))
            first, rest = text[:width], text[width:]
            return [_line(("💬 ", ""), (first, "")), *_detail(clip(rest, width))]
        if event.kind == "tool.call":
            return [
                _line(
                    ("→ ", "bold blue"),
                    (clean(d.get("tool")), "bold blue"),
                    ("  " + short_args(d.get("args")), ""),
                )
            ]
        if event.kind == "confirm.asked":
            head = _line(
                ("? confirm ", "bold yellow"),
                (clean(d.get("tool")), "bold yellow"),
                ("  " + clean(d.get("reason")), "yellow"),
            )
            return [head, *_detail(short_args(d.get("args")))]
        if event.kind == "confirm.answered":
            ok = bool(d.get("approved"))
            return [
                _line(
                    ("✓ approved " if ok else "✗ declined ", "bold green" if ok else "bold red"),
                    (clean(d.get("tool")), "bold"),
                    (f"  by {clean(d.get('by'))}", "dim"),
                )
            ]
        if event.kind == "tool.result":
            ok = bool(d.get("ok"))
            summary = clean(d.get("summary")) or clip(clean(d.get("text")), width)
            images = len(event.images)
            extra = f"  · {images} image{'s' if images != 1 else ''}" if images else ""
            return [
                _line(
                    ("✓ " if ok else "✗ ", "bold green" if ok else "bold red"),
                    (clean(d.get("tool")), "bold"),
                    ("  " + summary, "" if ok else "red"),
                    (extra, "dim"),
                )
            ]
        if event.kind == "tool.frame":  # a picture for the replay: its step has its chip
            return []
        said = sentence(event.kind, d)  # the policy's events, in words
        if said is not None:  # what, then who allowed or refused it (a line of its own)
            style = _POLICY_STYLE.get(str(d.get("outcome", event.kind)), "dim")
            what, _, who = clean(said).partition(" — ")
            return [_line(("⚖ ", style), (what, style)), *_detail(who)]
        if event.kind == "run.finished":
            outcome = clean(d.get("outcome")) or "finished"
            took = f" · {clean(d['reason'])}" if d.get("reason") and outcome != "done" else ""
            if event.run_id in self._started:
                took += f" · {event.ts - self._started.pop(event.run_id):.1f}s"
            head = _line(
                ("■ ", "bold"),
                (outcome, _OUTCOME_STYLE.get(outcome, "bold")),
                (f"  {d.get('steps', 0)} steps{took}", "dim"),
            )
            return [head, *_detail(clip(clean(d.get("answer")), width * 2))]
        return [
            _line(
                ("· ", "dim"),
                (clean(event.kind), "dim"),
                ("  " + clip(clean(_json(d)), width), "dim"),
            )
        ]


def _line(*parts: tuple[str, str]) -> Text:
    return Text.assemble(*parts)


def _detail(text: str) -> list[Text]:
    return [Text("  " + text, style="dim")] if text else []


class JsonlPrinter:
    """An EventSink that writes each event as one JSON line; images as hash, type and size."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, event: Event) -> None:
        record = {
            "kind": event.kind,
            "run_id": event.run_id,
            "ts": event.ts,
            "data": event.data,
            "images": [image_ref(i) for i in event.images],
        }
        self.stream.write(canonical_json(record) + "\n")
        self.stream.flush()
