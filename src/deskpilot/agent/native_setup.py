"""Preparing a native computer-use run: which models qualify, what they are told, who approves.

* :func:`native_target` — the vendor and model of a provider's native computer tool, or
  :class:`~deskpilot.errors.ProviderNotConfigured` saying which ``provider:model`` strings
  qualify (``compatible:`` servers have none; a ``scripted:`` replay must be recorded in a
  vendor's format). Each vendor's adapter says which of its models have one and picks the tool
  version from the model name.
* :func:`native_system_prompt` — the instructions for a pure native run (screenshots and the
  computer tool) or a hybrid one (the element tools and the computer tool together).
* :class:`RunEvents` — watches the run's events (after the audit log) for the progress summary.
* :class:`NativeTerminalApprover` — the terminal prompt, which for a computer call also offers
  "stop the run" (:class:`~deskpilot.policy.CancelRequest`) and "pause"
  (:class:`~deskpilot.policy.PauseRequest`). Which computer calls are asked is the door's
  decision (:mod:`deskpilot.native.executor`): those with pending safety checks always, and
  only by a person; the others with ``--confirm all``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from deskpilot.agent.approvers import TerminalApprover, describe, no_terminal
from deskpilot.agent.loop import render_progress
from deskpilot.agent.prompts import (
    COMPUTER_USE_PROMPT,
    LiveContext,
    render_constraints,
    render_context,
)
from deskpilot.agent.providers.base import Provider
from deskpilot.agent.providers.scripted import ScriptedProvider
from deskpilot.errors import ProviderNotConfigured
from deskpilot.events import Event
from deskpilot.native.safety import TOOL_NAME, CancelRequest, PauseRequest
from deskpilot.policy import Answer, ApprovalRequest

NATIVE_MODELS_HELP = (
    "--native works with openai:computer-use-preview or openai:gpt-5.4 and later; "
    "anthropic: Claude Sonnet/Opus 4 and later, Haiku 4.5 and later, claude-3-7-sonnet; "
    "gemini:gemini-2.5-computer-use-preview-10-2025, gemini-3-flash-preview, "
    "gemini-3.1-pro-preview, gemini-3.5-flash and later; or a scripted: replay recorded in one "
    "of these vendors' formats."
)


def native_target(provider: Provider) -> tuple[str, str]:
    """(vendor, model) whose native computer tool ``provider`` speaks; else a clear error."""
    if isinstance(provider, ScriptedProvider):
        if provider.wire is None or provider.wire.no_computer_tool:  # any recorded model
            raise ProviderNotConfigured(
                f"scripted:{provider.path} holds {provider.format!r} replies; a --native replay "
                'must be recorded in a vendor\'s native format ("format": "openai", '
                '"anthropic" or "gemini", with "model" naming the recorded model).'
            )
        return provider.wire.name, provider.computer_model()
    if provider.no_computer_tool:
        raise ProviderNotConfigured(
            f"{provider.spec} has no native computer tool: {provider.no_computer_tool}. Run "
            "without --native (the element tools work with any model that calls tools). "
            f"{NATIVE_MODELS_HELP}"
        )
    if not provider.has_computer_tool():
        raise ProviderNotConfigured(
            f"{provider.spec} has no native computer tool. {NATIVE_MODELS_HELP} Without "
            "--native, any model drives the element tools."
        )
    return provider.name, provider.computer_model()


# -- instructions ---------------------------------------------------------------------------

_SHARED = COMPUTER_USE_PROMPT[COMPUTER_USE_PROMPT.index("# Safety") :]

NATIVE_PROMPT = f"""\
You are deskpilot's computer-use agent. You carry out one task in the graphical apps of a Linux \
desktop. You see the screen in screenshots and act with the computer tool: pointer, keyboard \
and scroll actions at screenshot coordinates. You have no file or shell access: do only the UI \
part of the work.

# How to work
1. Look at the newest screenshot before you act; coordinates refer to it. After anything that \
changes the screen, look again before the next action.
2. Click the centre of a control. To enter text, click the field, then type; use key \
combinations (ctrl+a, Return, Escape, Tab) where they are quicker.
3. If something did not react, take a new screenshot and try another way instead of repeating \
the same action.
4. Work in the apps that are open. If the app you need is not open and you cannot open it, say \
so in your answer.

{_SHARED}"""

HYBRID_PROMPT = f"""\
You are deskpilot's computer-use agent. You carry out one task in the graphical apps of a Linux \
desktop, with two kinds of tools:
- the element tools (list_windows, open_app, read_screen_ax, perform, perform_sequence, scroll, \
wait, computer_use_screenshot, open_urls) read an app's accessibility (AX) tree and act on its \
elements by ID;
- the computer tool acts at pixel coordinates of the screenshots you are sent: clicks, drags, \
typing, key combinations, scrolling.
You have no file or shell access: do only the UI part of the work.

# How to work
1. Prefer the element tools. open_app launches or focuses an app and returns its window ID; \
read_screen_ax lists its elements, each ending with @elementID; perform and perform_sequence \
click, fill, type and press shortcuts by element ID. Element IDs expire when the UI changes: \
read again and use the new IDs; never guess one.
2. Use the computer tool for what the tree does not show or cannot do (canvases, custom \
widgets, drag and drop), or when an element action does not work. Its coordinates refer to \
the newest screenshot.
3. After anything that changes the screen, read again (or look at the new screenshot) before \
the next step.

{_SHARED}"""


def native_system_prompt(live: LiveContext, constraints: Sequence[str], *, hybrid: bool) -> str:
    base = HYBRID_PROMPT if hybrid else NATIVE_PROMPT
    parts = [base, render_context(live), render_constraints(constraints)]
    return "\n\n".join(p for p in parts if p)


# -- approval -------------------------------------------------------------------------------


class NativeTerminalApprover(TerminalApprover):
    """The terminal prompt; for a computer call, ``s`` stops the run and ``p`` pauses it."""

    async def approve(self, request: ApprovalRequest) -> Answer:
        if request.tool != TOOL_NAME:
            return await super().approve(request)
        async with self._lock:
            print(describe(request), file=self.stderr)
            if not self.interactive:
                print("  → declined: no terminal to ask", file=self.stderr)
                raise no_terminal(request)
            prompt = "  Run these actions? [y = yes, N = no, s = stop the run, p = pause] "
            print(prompt, end="", file=self.stderr, flush=True)
            answer = ((await self._ask(prompt)) or "").strip().lower()
            if answer in ("s", "stop"):
                print("  → stopping the run", file=self.stderr)
                raise CancelRequest()
            if answer in ("p", "pause"):
                print("  → pausing the run", file=self.stderr)
                raise PauseRequest()
            approved = answer in ("y", "yes")
            print("  → approved" if approved else "  → declined", file=self.stderr)
            return approved


# -- events --------------------------------------------------------------------------------


class RunEvents:
    """Watches a native run's events, once recorded, for the progress summary."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.last_text = ""
        self._calls: dict[str, tuple[str, Any]] = {}

    def __call__(self, event: Event) -> None:
        d = event.data
        call_id = str(d.get("call_id", ""))
        if event.kind == "model.text":
            self.last_text = str(d.get("text") or "") or self.last_text
        elif event.kind == "tool.call":
            self._calls[call_id] = (str(d.get("tool")), d.get("args"))
        elif event.kind == "tool.result":
            self._note(call_id, d)

    def _note(self, call_id: str, d: Mapping[str, Any]) -> None:
        name, args = self._calls.pop(call_id, (str(d.get("tool")), None))
        if name == TOOL_NAME:  # its actions are noted one by one; a refusal is noted here
            if d.get("refused"):
                self.lines.append(f"{TOOL_NAME} {call_id} → {d.get('refused')}")
            return
        action = args.get("action") if isinstance(args, dict) else None
        kind = action.get("type") if isinstance(action, dict) else None
        if name == "computer_view" and kind == "screenshot":
            return  # the screenshot after each call is not progress
        shown = json.dumps(args, ensure_ascii=False, default=str)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        text = str(d.get("text") or d.get("summary") or "")
        first = next((ln for ln in text.splitlines() if ln.strip()), "")[:100]
        self.lines.append(f"{name} {shown} → {'ok' if d.get('ok') else 'failed'}: {first}")

    def summary(self, limit: int = 20) -> str:
        """What the run did, one line per action or call (like the loop's progress summary)."""
        return render_progress(
            self.lines, self.last_text, empty="no action was taken.", limit=limit
        )
