"""What a native run changes in the vendors' request and response bodies (pure functions).

The native translators (:mod:`deskpilot.native.vendors`) build complete request bodies; a native
run (:mod:`deskpilot.agent.native_run`) applies the agent loop's rules to them on the way out:

* :func:`prune_images` — only the newest ``keep`` images of a resent history go to the model
  (Anthropic and Gemini resend the whole conversation each turn; OpenAI chains turns with
  ``previous_response_id``, so its requests carry only the newest outputs and are left alone);
  older ones become a short note, as in :func:`deskpilot.agent.providers.base.prune_images`.
* :func:`final_request` — the step budget's (or the timeout's) last call: the note is added as a
  user message and tool use is switched off (``tool_choice`` none / function calling mode NONE).
* :func:`without_calls` — a reply to that last call is read for its text only: any tool calls
  it still holds are dropped, so nothing runs after the budget is used up.
* :func:`note_in_history` — a person's message for the next turn (:mod:`deskpilot.agent.inbox`).

Bodies are never changed in place (they share lists with the conversation's history), except by
:func:`note_in_history`, whose point is to reach that history.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from deskpilot.agent.providers.base import OMITTED_IMAGE
from deskpilot.native.scaling import Vendor

_GEMINI_IMAGE_KEYS = ("inlineData", "inline_data", "fileData", "file_data")


def _is_anthropic_image(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "image"


def _is_gemini_image(part: Any) -> bool:
    return isinstance(part, dict) and any(k in part for k in _GEMINI_IMAGE_KEYS)


def _anthropic_slots(body: dict[str, Any]) -> list[tuple[list[Any], int]]:
    """(list, index) of every image block, oldest first (inside tool results too)."""
    slots: list[tuple[list[Any], int]] = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for i, block in enumerate(content):
            if _is_anthropic_image(block):
                slots.append((content, i))
            elif isinstance(block, dict) and isinstance(block.get("content"), list):
                inner = block["content"]
                slots += [(inner, j) for j, b in enumerate(inner) if _is_anthropic_image(b)]
    return slots


def _gemini_slots(body: dict[str, Any]) -> list[tuple[list[Any], int, dict[str, Any] | None]]:
    """(parts, index, functionResponse or None) of every image part, oldest first."""
    slots: list[tuple[list[Any], int, dict[str, Any] | None]] = []
    for content in body.get("contents") or []:
        parts = content.get("parts") if isinstance(content, dict) else None
        if not isinstance(parts, list):
            continue
        for i, part in enumerate(parts):
            if _is_gemini_image(part):
                slots.append((parts, i, None))
                continue
            fr = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(fr, dict) and isinstance(fr.get("parts"), list):
                slots += [(fr["parts"], j, fr) for j, p in enumerate(fr["parts"])
                          if _is_gemini_image(p)]  # fmt: skip
    return slots


def prune_images(vendor: Vendor, body: Mapping[str, Any], keep: int) -> dict[str, Any]:
    """``body`` with all but the newest ``keep`` images replaced by a note (a copy if changed)."""
    if vendor == "openai":
        return dict(body)
    out = copy.deepcopy(dict(body))  # strings (the base64 data) are shared, not copied
    if vendor == "anthropic":
        slots = _anthropic_slots(out)
        drop = slots[: max(0, len(slots) - keep)]
        for container, index in drop:
            container[index] = {"type": "text", "text": OMITTED_IMAGE}
        return out
    gemini = _gemini_slots(out)
    emptied: list[dict[str, Any]] = []
    for parts, index, fr in reversed(gemini[: max(0, len(gemini) - keep)]):  # keeps indexes valid
        if fr is None:
            parts[index] = {"text": OMITTED_IMAGE}
            continue
        del parts[index]
        response = fr.get("response")
        fr["response"] = {**(response if isinstance(response, dict) else {}),
                          "note": OMITTED_IMAGE}  # fmt: skip
        if not parts:
            emptied.append(fr)
    for fr in emptied:
        fr.pop("parts", None)
    return out


def final_request(vendor: Vendor, body: Mapping[str, Any], note: str) -> dict[str, Any]:
    """The last, tools-free request: ``body`` plus ``note`` from the user, tool use off."""
    out = dict(body)
    if vendor == "openai":
        message = {"type": "message", "role": "user",
                   "content": [{"type": "input_text", "text": note}]}  # fmt: skip
        out["input"] = [*(out.get("input") or []), message]
        out["tool_choice"] = "none"
        return out
    if vendor == "anthropic":
        messages = list(out.get("messages") or [])
        text = {"type": "text", "text": note}
        if messages and messages[-1].get("role") == "user":
            last = messages[-1]
            content = last.get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            messages[-1] = {**last, "content": [*blocks, text]}
        else:
            messages.append({"role": "user", "content": [text]})
        out["messages"] = messages
        out["tool_choice"] = {"type": "none"}
        return out
    contents = list(out.get("contents") or [])
    if contents and contents[-1].get("role") == "user":
        last = contents[-1]
        contents[-1] = {**last, "parts": [*(last.get("parts") or []), {"text": note}]}
    else:
        contents.append({"role": "user", "parts": [{"text": note}]})
    out["contents"] = contents
    out["toolConfig"] = {"functionCallingConfig": {"mode": "NONE"}}
    return out


def note_in_history(vendor: Vendor, body: dict[str, Any], text: str) -> None:
    """Add ``text`` from the user to ``body``'s last user message, in place, so that it stays
    in the conversation: Anthropic's and Gemini's bodies hold the history's own message objects
    (resent every turn); OpenAI's hold only the new input items (the server keeps them in the
    ``previous_response_id`` chain)."""
    if vendor == "openai":
        message = {"type": "message", "role": "user",
                   "content": [{"type": "input_text", "text": text}]}  # fmt: skip
        body["input"] = [*(body.get("input") or []), message]
        return
    key, part = ("messages", {"type": "text", "text": text})
    if vendor != "anthropic":
        key, part = "contents", {"text": text}
    history = body.get(key)
    last = history[-1] if isinstance(history, list) and history else None
    inner = "content" if vendor == "anthropic" else "parts"
    if isinstance(last, dict) and last.get("role") == "user" and isinstance(last.get(inner), list):
        last[inner].append(part)
    else:  # no user message to join (never so in a running conversation): send it once
        body[key] = [*(history or []), {"role": "user", inner: [part]}]


def _is_call(part: Mapping[str, Any]) -> bool:
    return bool(part.get("functionCall") or part.get("function_call"))


def without_calls(vendor: Vendor, response: Mapping[str, Any]) -> dict[str, Any]:
    """``response`` with every tool call removed (its text stays)."""
    out = dict(response)
    if vendor == "openai":
        out["output"] = [i for i in out.get("output") or []
                         if i.get("type") not in ("computer_call", "function_call")]  # fmt: skip
    elif vendor == "anthropic":
        out["content"] = [b for b in out.get("content") or [] if b.get("type") != "tool_use"]
    else:
        candidates = list(out.get("candidates") or [])
        if candidates:
            first = dict(candidates[0])
            content = dict(first.get("content") or {})
            parts = content.get("parts") or []
            content["parts"] = [p for p in parts if not _is_call(p)]
            first["content"] = content
            candidates[0] = first
            out["candidates"] = candidates
    return out
