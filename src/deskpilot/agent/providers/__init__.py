"""Model providers behind one interface, chosen by a ``provider:model`` string.

::

    provider = get_provider("anthropic:claude-sonnet-4-5", settings)
    turn = await provider.complete(conversation, tools, tool_protocol="native")

=============  ==========================================  ==========================
provider       API                                         key (env / config [keys])
=============  ==========================================  ==========================
``openai``     Responses API                               ``OPENAI_API_KEY``
``anthropic``  Messages API                                ``ANTHROPIC_API_KEY``
``gemini``     generateContent                             ``GEMINI_API_KEY``
``compatible`` Chat Completions at ``--base-url``          optional
               (vLLM, llama.cpp server, Ollama, LM Studio)
``scripted``   replays recorded replies from a file        none
=============  ==========================================  ==========================

``base_url`` (config, ``DESKPILOT_BASE_URL``) is the ``compatible`` server. An explicit
``--base-url`` (the ``base_url`` argument of :func:`get_provider`) applies to whichever provider
``--model`` names, so hosted providers can go through a proxy, gateway or test server. All talk
HTTP with httpx (one client per provider, for function calling and computer use alike); no
vendor SDK is needed. Each vendor is one adapter module; :mod:`.registry` lists them.
"""

from __future__ import annotations

from deskpilot.agent.providers.anthropic import AnthropicProvider
from deskpilot.agent.providers.base import Provider
from deskpilot.agent.providers.compatible import CompatibleProvider
from deskpilot.agent.providers.gemini import GeminiProvider
from deskpilot.agent.providers.http import HttpClient, RetryPolicy
from deskpilot.agent.providers.openai import OpenAIProvider
from deskpilot.agent.providers.registry import ADAPTERS
from deskpilot.agent.providers.scripted import ScriptedProvider
from deskpilot.config import KEY_ENV, Settings
from deskpilot.errors import ProviderNotConfigured

PROVIDERS: dict[str, type[Provider]] = {**ADAPTERS, "scripted": ScriptedProvider}

EXAMPLE_MODELS = {
    "anthropic": "anthropic:claude-sonnet-4-5",
    "openai": "openai:gpt-5",
    "gemini": "gemini:gemini-2.5-flash",
}

__all__ = [
    "PROVIDERS",
    "AnthropicProvider",
    "CompatibleProvider",
    "GeminiProvider",
    "HttpClient",
    "OpenAIProvider",
    "Provider",
    "RetryPolicy",
    "ScriptedProvider",
    "get_provider",
    "how_to_configure",
    "parse_model",
]


def how_to_configure(settings: Settings | None = None) -> str:
    """What to tell someone who has no model configured."""
    config = settings.user_config_file if settings else "~/.config/deskpilot/config.toml"
    return "\n".join(
        [
            "No model is configured. Pick one with --model PROVIDER:MODEL, for example:",
            "  --model anthropic:claude-sonnet-4-5   with  export ANTHROPIC_API_KEY=...",
            "  --model openai:gpt-5                  with  export OPENAI_API_KEY=...",
            "  --model gemini:gemini-2.5-flash       with  export GEMINI_API_KEY=...",
            "  --model compatible:MODEL --base-url http://127.0.0.1:8000/v1",
            "        (a local OpenAI-compatible server: vLLM, llama.cpp server, or Ollama at",
            "         http://127.0.0.1:11434/v1; add --tool-protocol text if the model has no",
            "         tool calling)",
            "  --model scripted:FILE                 replay recorded replies (no model needed)",
            "To make it the default, set DESKPILOT_MODEL=anthropic:claude-sonnet-4-5, or put",
            f'  model = "anthropic:claude-sonnet-4-5"  in {config}',
        ]
    )


def parse_model(spec: str) -> tuple[str, str]:
    provider, sep, model = spec.partition(":")
    provider = provider.strip().lower()
    if not sep or not model.strip() or provider not in PROVIDERS:
        known = ", ".join(PROVIDERS)
        raise ProviderNotConfigured(
            f"Model {spec!r} is not PROVIDER:MODEL with a known provider ({known}); "
            "for example anthropic:claude-sonnet-4-5 or compatible:qwen2.5-vl --base-url URL."
        )
    return provider, model.strip()


def _missing_key(provider: str, settings: Settings) -> ProviderNotConfigured:
    env = KEY_ENV[provider]
    example = EXAMPLE_MODELS.get(provider, f"{provider}:MODEL")
    return ProviderNotConfigured(
        f"No API key for {provider} (needed by --model {example}). Set it in the environment:\n"
        f"    export {env}=...\n"
        f"or in {settings.user_config_file}:\n"
        f'    [keys]\n    {provider} = "..."'
    )


def get_provider(
    spec: str | None,
    settings: Settings,
    *,
    http: HttpClient | None = None,
    base_url: str | None = None,
) -> Provider:
    """The provider for ``spec`` (default: ``settings.model``), with its key and endpoint.

    Raises ProviderNotConfigured, whose message says how to fix it, when there is no model, no
    key, or (for ``compatible``) no base URL."""
    spec = spec or settings.model
    if not spec:
        raise ProviderNotConfigured(how_to_configure(settings))
    name, model = parse_model(spec)
    if name == "compatible":
        base_url = base_url or settings.base_url
    key = settings.api_keys.get(name)
    if name == "compatible" and not base_url:
        raise ProviderNotConfigured(
            f"--model {spec} needs --base-url: the server's OpenAI-compatible endpoint, e.g. "
            "http://127.0.0.1:8000/v1 (vLLM), http://127.0.0.1:8080/v1 (llama.cpp server) or "
            "http://127.0.0.1:11434/v1 (Ollama); or set DESKPILOT_BASE_URL / base_url in "
            f"{settings.user_config_file}."
        )
    if base_url and not base_url.startswith(("http://", "https://")):
        raise ProviderNotConfigured(
            f"the base URL {base_url!r} needs its scheme: http://{base_url} (or https://)"
        )
    if PROVIDERS[name].needs_key and not key:
        raise _missing_key(name, settings)
    return PROVIDERS[name](model, api_key=key, base_url=base_url, http=http)
