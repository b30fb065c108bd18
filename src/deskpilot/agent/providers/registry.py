"""The vendors deskpilot speaks: one adapter module each, one line here.

A new provider is a module with a :class:`~deskpilot.agent.providers.base.Provider` subclass
(its endpoint, headers, function-calling wire and, if it has one, its computer-use wire) and a
line below. ``scripted:`` replays any of these formats (:mod:`.scripted`).
"""

from __future__ import annotations

from deskpilot.agent.providers.anthropic import AnthropicProvider
from deskpilot.agent.providers.base import Provider
from deskpilot.agent.providers.compatible import CompatibleProvider
from deskpilot.agent.providers.gemini import GeminiProvider
from deskpilot.agent.providers.openai import OpenAIProvider

ADAPTERS: dict[str, type[Provider]] = {
    "openai": OpenAIProvider,
    "anthropic": AnthropicProvider,
    "gemini": GeminiProvider,
    "compatible": CompatibleProvider,
}
