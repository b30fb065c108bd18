"""The command line's fast paths import only what they use (latency is in bench/cli_latency).

One ``deskpilot tool`` call, run as a script would run it on the session's sandbox desktop,
must not import the model providers, MCP, rich, Pillow or the agent loop; ``--version``
must not even import the tools. Checked on ``sys.modules`` of the real process, after the
command ran.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from deskpilot.config import Settings
from deskpilot.sandbox import Sandbox

PROBE = """
import json, runpy, sys
sys.argv = ["deskpilot", *json.loads(sys.argv[1])]
code = 0
try:
    runpy.run_module("deskpilot", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""
HEAVY = ("mcp", "rich", "httpx", "anthropic", "openai", "google", "playwright", "uvicorn",
         "starlette", "PIL")  # fmt: skip


def loaded(argv: list[str], env: dict[str, str]) -> tuple[int, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(argv)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["code"], report["modules"]


@pytest.fixture
def env(sandbox: Sandbox, desktop_settings: Settings) -> dict[str, str]:
    assert sandbox.info is not None
    return {
        **sandbox.app_env(),
        "DESKPILOT_SANDBOX": sandbox.info.runtime_dir,
        "DESKPILOT_HOME": str(desktop_settings.state_dir.parent),
    }


OURS = ("deskpilot.agent.providers", "deskpilot.agent.loop", "deskpilot.mcp", "deskpilot.native")


def heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in HEAVY or m.startswith(OURS)]


def test_a_tool_call_imports_no_provider_mcp_or_rich(env: dict[str, str]) -> None:
    code, modules = loaded(["tool", "list_windows"], env)
    assert code == 0
    assert "deskpilot.desktop.facade" in modules  # it did reach the desktop
    assert heavy(modules) == []


def test_version_imports_nothing_of_the_library(env: dict[str, str]) -> None:
    code, modules = loaded(["--version"], env)
    assert code == 0
    assert not [
        m
        for m in modules
        if m.startswith(
            ("deskpilot.tools", "deskpilot.desktop", "pydantic", "dbus_fast", "importlib.metadata")
        )
    ]
    assert heavy(modules) == []
