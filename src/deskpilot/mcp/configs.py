"""Ready-to-paste MCP client configs for this machine (``deskpilot mcp --print-config CLIENT``).

Each names the absolute path of this ``deskpilot`` and, for stdio, the desktop's environment as
found now (DISPLAY, XAUTHORITY, the session bus), so the client's minimal environment does not
matter; with ``--sandbox`` no environment is needed. For HTTP the config carries the kept
token (VS Code asks for it once instead). Claude Desktop reaches HTTP servers through the
``mcp-remote`` bridge (its config file takes only commands): the token goes in an environment
variable, as mcp-remote's README advises, so no argument contains a space.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: The clients --print-config knows.
CLIENTS = ("claude-desktop", "claude-code", "vscode", "cursor")

#: Where each client reads its config (shown with the config).
WHERE = {
    "claude-desktop": '~/.config/Claude/claude_desktop_config.json (merge into "mcpServers")',
    "claude-code": "a shell (add --scope user after `add` to have it in every project)",
    "vscode": ".vscode/mcp.json in the workspace, or `MCP: Open User Configuration`",
    "cursor": "~/.cursor/mcp.json (or .cursor/mcp.json in a project)",
}


@dataclass(frozen=True)
class Served:
    """How the server is to be reached: stdio (command, args, env) or HTTP (url, token)."""

    command: str
    args: tuple[str, ...]
    env: Mapping[str, str]
    url: str | None = None
    token: str | None = None


def render(client: str, served: Served, name: str = "deskpilot") -> str:
    """The config (or command) for ``client``."""
    if client not in CLIENTS:
        raise ValueError(client)
    if served.url is None:
        return _stdio(client, served, name)
    return _http(client, served, name)


def _dump(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _stdio(client: str, served: Served, name: str) -> str:
    entry: dict[str, object] = {"command": served.command, "args": list(served.args)}
    if served.env:
        entry["env"] = dict(served.env)
    if client == "claude-code":
        env = [f"--env {shlex.quote(f'{k}={v}')}" for k, v in served.env.items()]
        words = ["claude mcp add", name, *env, "--", shlex.quote(served.command)]
        return " ".join(words + [shlex.quote(a) for a in served.args])
    if client == "vscode":
        return _dump({"servers": {name: {"type": "stdio", **entry}}})
    return _dump({"mcpServers": {name: entry}})


def _http(client: str, served: Served, name: str) -> str:
    assert served.url is not None and served.token is not None
    bearer = f"Bearer {served.token}"
    if client == "claude-desktop":
        bridge: dict[str, object] = {
            "command": "npx",
            "args": ["-y", "mcp-remote", served.url, "--header", "Authorization:${DESKPILOT_AUTH}"],
            "env": {"DESKPILOT_AUTH": bearer},
        }
        return _dump({"mcpServers": {name: bridge}})
    if client == "claude-code":
        header = shlex.quote(f"Authorization: {bearer}")
        return f"claude mcp add --transport http {name} {shlex.quote(served.url)} --header {header}"
    if client == "vscode":
        token_input = {
            "type": "promptString",
            "id": f"{name}-token",
            "password": True,
            "description": "deskpilot token (`deskpilot mcp token` prints it)",
        }
        server = {
            "type": "http",
            "url": served.url,
            "headers": {"Authorization": "Bearer ${input:" + f"{name}-token" + "}"},
        }
        return _dump({"inputs": [token_input], "servers": {name: server}})
    return _dump({"mcpServers": {name: {"url": served.url, "headers": {"Authorization": bearer}}}})


def stdio_env(environ: Mapping[str, str], keys: Sequence[str]) -> dict[str, str]:
    return {k: environ[k] for k in keys if environ.get(k)}
