"""Vendor translators: each vendor's computer-use wire JSON ↔ the action model (pure).

``openai`` (Responses ``computer`` / ``computer_use_preview``), ``anthropic``
(``computer_20250124`` / ``computer_20251124`` / ``computer_toolset_20260801``) and ``gemini``
(computer use on the 0–999 grid). Each offers a ``*Conversation`` implementing
:class:`~deskpilot.native.vendors.base.Conversation`.
"""

from __future__ import annotations

from collections.abc import Sequence

from deskpilot.native.scaling import Vendor, Viewport
from deskpilot.native.vendors.anthropic import AnthropicConversation
from deskpilot.native.vendors.base import Conversation, Turn
from deskpilot.native.vendors.gemini import GeminiConversation
from deskpilot.native.vendors.openai import OpenAIConversation
from deskpilot.tools.base import ToolSpec

VENDORS: tuple[Vendor, ...] = ("openai", "anthropic", "gemini")


def make_conversation(
    vendor: Vendor,
    model: str,
    viewport: Viewport,
    *,
    window: str | None = None,
    functions: Sequence[ToolSpec] = (),
    instructions: str | None = None,
) -> Conversation:
    """The conversation for ``vendor`` (``instructions`` = system prompt)."""
    if vendor == "openai":
        return OpenAIConversation(model, viewport, window=window, functions=functions,
                                  instructions=instructions)  # fmt: skip
    if vendor == "anthropic":
        return AnthropicConversation(model, viewport, window=window, functions=functions,
                                     system=instructions)  # fmt: skip
    return GeminiConversation(model, viewport, window=window, functions=functions,
                              system=instructions)  # fmt: skip


__all__ = [
    "VENDORS",
    "AnthropicConversation",
    "Conversation",
    "GeminiConversation",
    "OpenAIConversation",
    "Turn",
    "make_conversation",
]
