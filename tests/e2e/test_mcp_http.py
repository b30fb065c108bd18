"""``deskpilot mcp --http``: a real server process, the official streamable-HTTP client.

The server runs on its own sandbox (``--sandbox``). Also home of :func:`http_server` and
:func:`http_session`, which tests/desktop/test_mcp_concurrency.py uses against the test
sandbox.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.session import ElicitationFnT
from mcp.client.streamable_http import streamable_http_client

from deskpilot.audit import AuditLog

pytestmark = pytest.mark.asyncio(loop_scope="session")

DESKPILOT = str(Path(sys.executable).parent / "deskpilot")


@dataclass
class HttpServer:
    url: str
    token: str
    token_file: Path
    proc: anyio.abc.Process
    log: list[str] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].split("/")[0])

    def stderr(self) -> str:
        return "\n".join(self.log)


@asynccontextmanager
async def http_server(
    *args: str, env: Mapping[str, str], timeout: float = 90
) -> AsyncIterator[HttpServer]:
    """``deskpilot mcp --http 0 ARGS`` until it prints where it listens; SIGTERM at the end,
    which must end it cleanly (exit code 0)."""
    proc = await anyio.open_process(
        [DESKPILOT, "mcp", "--http", "0", *args],
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    log: list[str] = []
    ready = anyio.Event()

    async def read_stderr() -> None:
        assert proc.stderr is not None
        pending = b""
        async for chunk in proc.stderr:
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                log.append(line.decode(errors="replace"))
                if "listening on" in log[-1]:
                    ready.set()
        ready.set()  # exited before it was ready

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_stderr)
        try:
            with anyio.fail_after(timeout):
                await ready.wait()
            text = "\n".join(log)
            url = re.search(r"listening on (\S+)", text)
            where = re.search(r"bearer token in (.+) \(mode 0600", text)
            assert url and where, f"the server did not start:\n{text}"
            path = Path(where.group(1))
            token = path.read_text().strip()
            yield HttpServer(url.group(1), token, path, proc, log)
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
            with anyio.fail_after(30):
                code = await proc.wait()
    assert code == 0, "\n".join(log)


@asynccontextmanager
async def http_session(
    server: HttpServer, *, elicit: ElicitationFnT | None = None
) -> AsyncIterator[ClientSession]:
    """An initialized official ClientSession on ``server``, sending its bearer token."""
    headers = {"Authorization": f"Bearer {server.token}"}
    timeout = httpx2.Timeout(30, read=300)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
        streamable_http_client(server.url, http_client=http) as (read, write),
        ClientSession(read, write, elicitation_callback=elicit) as session,
    ):
        await session.initialize()
        yield session


def server_env(home: Path) -> dict[str, str]:
    """This environment minus any desktop, with a private DESKPILOT_HOME."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DESKPILOT_", "DISPLAY"))}
    env["DESKPILOT_HOME"] = str(home)
    return env


def listening(port: int) -> list[str]:
    """Local addresses (hex, as in /proc/net/tcp{,6}) of sockets listening on ``port``."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as fh:
            for row in fh.read().splitlines()[1:]:
                cols = row.split()
                address, port_hex = cols[1].split(":")
                if cols[3] == "0A" and int(port_hex, 16) == port:  # 0A = LISTEN
                    found.append(address)
    return found


HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def rpc(method: str, params: dict[str, Any], id: int | None = 1) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if id is not None:
        message["id"] = id
    return json.dumps(message).encode()


INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "raw-test", "version": "1"},
}


@pytest.mark.sandbox
@pytest.mark.process
async def test_token_is_required_binds_loopback_and_a_refused_call_runs_nothing(
    home: Path,
) -> None:
    async with http_server("--sandbox", env=server_env(home)) as server:
        # loopback only: the one listening socket is 127.0.0.1 (0100007F), nothing on 0.0.0.0
        assert server.url.startswith("http://127.0.0.1:")
        assert listening(server.port) == ["0100007F"]
        assert server.token_file.stat().st_mode & 0o777 == 0o600
        assert server.token_file.read_text().strip() == server.token
        assert len(server.token) >= 40

        async with httpx2.AsyncClient(timeout=30) as http:
            for auth in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": server.token}):
                refused = await http.post(
                    server.url, content=rpc("initialize", INIT), headers={**HEADERS, **auth}
                )
                assert refused.status_code == 401, refused.text
                assert refused.headers["www-authenticate"].startswith("Bearer")
                assert "mcp-session-id" not in refused.headers

            # a real session (right token) ...
            good = {**HEADERS, "Authorization": f"Bearer {server.token}"}
            opened = await http.post(server.url, content=rpc("initialize", INIT), headers=good)
            assert opened.status_code == 200, opened.text
            sid = opened.headers["mcp-session-id"]
            session = {**good, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
            done = await http.post(
                server.url, content=rpc("notifications/initialized", {}, id=None), headers=session
            )
            assert done.status_code == 202
            # ... whose calls are refused with a wrong or missing token, before anything runs
            call = rpc("tools/call", {"name": "open_app", "arguments": {"bundleId": "Calculator"}})
            for bad in ({"Authorization": "Bearer " + server.token[:-1]}, {"Authorization": ""}):
                refused = await http.post(server.url, content=call, headers={**session, **bad})
                assert refused.status_code == 401
            # the same session with the token works
            ok = await http.post(
                server.url,
                content=rpc("tools/call", {"name": "list_windows", "arguments": {}}, id=2),
                headers=session,
            )
            assert ok.status_code == 200
            assert "Open Windows (0 total)" in ok.text, ok.text

        async with http_session(server) as client:
            windows = await client.call_tool("list_windows", {})
            assert not windows.is_error
            assert "Open Windows (0 total)" in windows.content[0].text  # type: ignore[union-attr]
    assert server.token_file.read_text().strip() == server.token  # kept for the next start

    with AuditLog(home / "data" / "audit.sqlite3") as audit:
        tools = [
            e.data["tool"]
            for run in audit.list_runs()
            for e in audit.run_events(run.id, images=False)
            if e.kind == "tool.call"
        ]
    assert tools == ["list_windows", "list_windows"]  # open_app never reached the ToolSet


@pytest.mark.process
async def test_non_loopback_needs_allow_remote(home: Path) -> None:
    for argv, message in [
        (["--http", "0.0.0.0:0"], "refusing to listen on 0.0.0.0"),
        (["--http", "[::]:0"], "refusing to listen on ::"),
        (["--token-file", str(home / "t")], "only apply with --http"),
        (["--http", "127.0.0.1:http"], "the port must be a number"),
    ]:
        with anyio.fail_after(60):
            done = await anyio.run_process(
                [DESKPILOT, "mcp", *argv], env=server_env(home), check=False
            )
        assert done.returncode == 2, done.stderr
        assert message in done.stderr.decode()


async def status_of(server: HttpServer, token: str) -> int:
    async with httpx2.AsyncClient(timeout=30) as http:
        answer = await http.post(
            server.url,
            content=rpc("initialize", INIT),
            headers={**HEADERS, "Authorization": f"Bearer {token}"},
        )
    return answer.status_code


@pytest.mark.process
async def test_the_token_survives_restarts_until_rotated(home: Path, tmp_path: Path) -> None:
    env = server_env(home)
    async with http_server(env=env) as server:
        first = server.token
        assert await status_of(server, first) == 200
    async with http_server(env=env) as server:
        assert server.token == first  # a configured client keeps working after a restart
        assert await status_of(server, first) == 200
        printed = await anyio.run_process([DESKPILOT, "mcp", "token"], env=env)
        assert printed.stdout.decode().strip() == first
        rotated = await anyio.run_process([DESKPILOT, "mcp", "token", "--rotate"], env=env)
        second = rotated.stdout.decode().strip()
        assert second != first and server.token_file.read_text().strip() == second
        # the running server refuses the old token at once, takes the new one
        assert await status_of(server, first) == 401
        assert await status_of(server, second) == 200
        async with httpx2.AsyncClient(timeout=30) as http:  # no OAuth to discover
            meta = await http.get(
                server.url.replace("/mcp", "/.well-known/oauth-protected-resource")
            )
        assert meta.status_code == 404 and "no OAuth" in meta.text

    own = tmp_path / "my-token"
    own.write_text("k" * 48 + "\n")
    own.chmod(0o600)
    async with http_server("--token-file", str(own), env=env) as server:
        assert server.token == "k" * 48 and server.token_file == own
        assert await status_of(server, "k" * 48) == 200
    own.chmod(0o644)
    with anyio.fail_after(60):
        refused = await anyio.run_process(
            [DESKPILOT, "mcp", "--http", "0", "--token-file", str(own)], env=env, check=False
        )
    assert refused.returncode == 2
    assert f"chmod 600 {own}" in refused.stderr.decode()
