"""Exporting a run as Markdown: a readable trace, with its screenshots written beside it.

One section per event (model text, tool calls with their arguments, confirmations, results
with their text folded and their images linked, the frame taken after a step); images are
written once each, named by their hash, to the directory given (or only described, without
one).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

from deskpilot.audit.chain import canonical_json, sha256_hex
from deskpilot.errors import AuditError
from deskpilot.events import Event, Image

_EXT = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif"}


def _fence(text: str, lang: str = "") -> str:
    ticks = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", text)), default=0))
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _inline(value: object) -> str:
    return " ".join(str(value).split()) or "—"


def markdown(run_id: str, events: list[Event], image_dir: Path | None, link_prefix: str) -> str:
    t0 = events[0].ts
    started = next((e.data for e in events if e.kind == "run.started"), {})
    finished = next((e.data for e in events if e.kind == "run.finished"), None)
    when = datetime.fromtimestamp(t0, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    out = [
        f"# deskpilot run `{run_id}`",
        "",
        f"- **Goal:** {_inline(started.get('goal', ''))}",
        f"- **Model:** {_inline(started.get('model', ''))}",
    ]
    if started.get("window"):
        out.append(f"- **Window:** {_inline(started['window'])}")
    out.append(f"- **Started:** {when}")
    if finished is not None:
        out.append(
            f"- **Outcome:** {_inline(finished.get('outcome'))} "
            + (f"— {_inline(finished['reason'])} " if finished.get("reason") else "")
            + f"({finished.get('steps', 0)} steps, {events[-1].ts - t0:.1f} s)"
        )
    else:
        out.append("- **Outcome:** unfinished (no run.finished event)")
    out.append("")
    for event in events:
        d, at = event.data, f"+{event.ts - t0:.1f}s"
        if event.kind == "run.started":
            continue
        if event.kind == "model.text":
            out += [f"### Model · {at}", "", str(d.get("text", "")).strip(), ""]
        elif event.kind == "tool.call":
            out += [
                f"### Tool call: `{d.get('tool')}` · {at}",
                "",
                _fence(
                    json.dumps(d.get("args"), indent=2, ensure_ascii=False, default=str), "json"
                ),
                "",
            ]
        elif event.kind == "confirm.asked":
            out += [
                f"> **Confirmation asked** for `{d.get('tool')}`: {_inline(d.get('reason'))}",
                "",
            ]
        elif event.kind == "confirm.answered":
            verdict = "Approved" if d.get("approved") else "Declined"
            out += [f"> **{verdict}** by {_inline(d.get('by'))}", ""]
        elif event.kind == "tool.result":
            mark = "✓" if d.get("ok") else "✗"
            out += [f"**{mark} `{d.get('tool')}`** — {_inline(d.get('summary'))}", ""]
            if str(d.get("text") or "").strip():
                out += [
                    "<details><summary>Result text</summary>",
                    "",
                    _fence(str(d["text"]).rstrip(), "text"),
                    "",
                    "</details>",
                    "",
                ]
            out += [_image_md(run_id, image, image_dir, link_prefix) for image in event.images]
            if event.images:
                out.append("")
        elif event.kind == "tool.frame":
            shown = [_image_md(run_id, image, image_dir, link_prefix) for image in event.images]
            if d.get("missing"):
                shown.append(f"_(no frame after `{d.get('tool')}`: {_inline(d['missing'])})_")
            out += [*shown, ""]
        elif event.kind == "run.finished":
            out += [
                f"## Finished: {_inline(d.get('outcome'))} · {at}",
                "",
                str(d.get("answer") or "").strip() or "_(no answer)_",
                "",
            ]
        else:
            out += [f"### {event.kind} · {at}", "", _fence(canonical_json(d), "json"), ""]
    return "\n".join(out).rstrip() + "\n"


def _image_md(run_id: str, image: Image, image_dir: Path | None, link_prefix: str) -> str:
    digest = sha256_hex(image.data)
    alt = f"screenshot {image.width}×{image.height}" if image.width else "image"
    if image_dir is None:
        return f"_({alt}, {len(image.data)} bytes, sha256 {digest[:16]}; not exported)_  "
    name = f"{run_id[:12]}-{digest[:12]}.{_EXT.get(image.mime, 'bin')}"
    try:
        image_dir.mkdir(parents=True, exist_ok=True)
        if not (image_dir / name).exists():
            (image_dir / name).write_bytes(image.data)
    except OSError as exc:
        raise AuditError(f"cannot write {image_dir / name}: {exc.strerror}") from exc
    return f"![{alt}]({link_prefix}{name})"
