"""Choosing a provider by provider:model, and what a missing model, key or URL says."""

from __future__ import annotations

import pytest

from deskpilot.agent.providers import (
    AnthropicProvider,
    CompatibleProvider,
    GeminiProvider,
    OpenAIProvider,
    ScriptedProvider,
    get_provider,
    how_to_configure,
)
from deskpilot.agent.providers.gemini import gemini_schema
from deskpilot.agent.providers.http import retry_after
from deskpilot.config import Settings, load_settings
from deskpilot.errors import ProviderNotConfigured
from deskpilot.tools.builtin import computer_use_tools


def settings_with(env: dict[str, str], tmp: str) -> Settings:
    return load_settings(env={"HOME": tmp, "DESKPILOT_HOME": tmp, **env})


def test_provider_by_spec_with_keys_from_settings(tmp_path: object) -> None:
    s = settings_with(
        {"ANTHROPIC_API_KEY": "ak", "OPENAI_API_KEY": "ok", "GOOGLE_API_KEY": "gk"}, str(tmp_path)
    )
    a = get_provider("anthropic:claude-x", s)
    assert isinstance(a, AnthropicProvider) and a.api_key == "ak" and a.model == "claude-x"
    assert a.base_url == "https://api.anthropic.com"
    o = get_provider("openai:gpt-x", s)
    assert isinstance(o, OpenAIProvider) and o.base_url == "https://api.openai.com/v1"
    g = get_provider("gemini:gemini-x", s)
    assert isinstance(g, GeminiProvider) and g.api_key == "gk"
    assert get_provider("openai:gpt-x", s, base_url="http://proxy/v1").base_url == "http://proxy/v1"


def test_compatible_needs_a_base_url_but_no_key(tmp_path: object) -> None:
    s = settings_with({}, str(tmp_path))
    with pytest.raises(ProviderNotConfigured, match="needs --base-url") as err:
        get_provider("compatible:qwen", s)
    assert "11434/v1 (Ollama)" in str(err.value)
    s = settings_with({"DESKPILOT_BASE_URL": "http://127.0.0.1:8000/v1/"}, str(tmp_path))
    p = get_provider("compatible:qwen", s)
    assert isinstance(p, CompatibleProvider) and p.base_url == "http://127.0.0.1:8000/v1"
    assert p.api_key is None
    # the compatible URL is not sent to hosted providers
    s2 = settings_with({"DESKPILOT_BASE_URL": "http://x/v1", "OPENAI_API_KEY": "k"}, str(tmp_path))
    assert get_provider("openai:m", s2).base_url == "https://api.openai.com/v1"


@pytest.mark.parametrize(
    ("spec", "env"),
    [
        ("anthropic:m", "ANTHROPIC_API_KEY"),
        ("openai:m", "OPENAI_API_KEY"),
        ("gemini:m", "GEMINI_API_KEY"),
    ],
)
def test_a_missing_key_says_how_to_set_it(spec: str, env: str, tmp_path: object) -> None:
    s = settings_with({}, str(tmp_path))
    with pytest.raises(ProviderNotConfigured) as err:
        get_provider(spec, s)
    message = str(err.value)
    provider = spec.split(":")[0]
    assert f"export {env}=..." in message
    assert f'[keys]\n    {provider} = "..."' in message
    assert str(s.user_config_file) in message
    assert err.value.exit_code == 2


def test_no_model_explains_every_way_to_configure_one(tmp_path: object) -> None:
    s = settings_with({}, str(tmp_path))
    with pytest.raises(ProviderNotConfigured) as err:
        get_provider(None, s)
    message = str(err.value)
    assert message == how_to_configure(s)
    for needle in (
        "--model anthropic:",
        "ANTHROPIC_API_KEY",
        "--model scripted:FILE",
        "DESKPILOT_MODEL=",
        "compatible:MODEL --base-url",
        str(s.user_config_file),
    ):
        assert needle in message


@pytest.mark.parametrize("spec", ["claude", "nope:model", "openai:", ":x"])
def test_bad_specs(spec: str, tmp_path: object) -> None:
    with pytest.raises(ProviderNotConfigured, match="PROVIDER:MODEL"):
        get_provider(spec, settings_with({}, str(tmp_path)))


def test_scripted_file_problems_are_reported(tmp_path: object) -> None:
    from pathlib import Path

    s = settings_with({}, str(tmp_path))
    with pytest.raises(ProviderNotConfigured, match="cannot read the replies file"):
        get_provider(f"scripted:{tmp_path}/missing.json", s)
    bad = Path(str(tmp_path)) / "bad.json"
    bad.write_text('{"format": "cohere", "replies": []}')
    with pytest.raises(ProviderNotConfigured, match="unknown format 'cohere'"):
        get_provider(f"scripted:{bad}", s)
    ok = Path(str(tmp_path)) / "ok.json"
    ok.write_text('["hi"]')
    p = get_provider(f"scripted:{ok}", s)
    assert isinstance(p, ScriptedProvider) and "not a live model" in p.label


def test_gemini_schema_keeps_only_what_gemini_accepts() -> None:
    tools = {t.name: t for t in computer_use_tools().list()}
    schema = gemini_schema(tools["perform_sequence"].input_schema)
    steps = schema["properties"]["steps"]
    assert steps["type"] == "array" and steps["items"]["type"] == "object"
    assert "elementID" in steps["items"]["properties"]
    text = str(schema)
    assert "$ref" not in text and "additionalProperties" not in text and "$defs" not in text
    nullable = gemini_schema({"anyOf": [{"type": "string"}, {"type": "null"}]})
    assert nullable == {"type": "string", "nullable": True}


def test_retry_after_forms() -> None:
    assert retry_after({"retry-after": "12"}) == 12.0
    assert retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None
