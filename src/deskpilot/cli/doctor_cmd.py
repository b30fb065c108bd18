"""``deskpilot doctor``: what desktop session deskpilot finds here, and what works on it."""

from __future__ import annotations

import asyncio
import os
import sys

import click

from deskpilot.cli.common import Context, pass_context
from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.ports.bundle import Ports


def _mark(ok: bool) -> str:
    return click.style("ok ", fg="green") if ok else click.style("-- ", fg="red")


@click.command("doctor")
@pass_context
def doctor(ctx: Context) -> None:
    """Say which desktop session deskpilot finds (Wayland or X11, the compositor, its sockets
    and buses) and what works on it: the backend auto picks, the accessibility bus, input and
    capture. Exit code 0 when a backend can open the desktop, 1 when none can.
    """
    from deskpilot.desktop import registry
    from deskpilot.desktop.wayland.session import find_session

    settings = ctx.settings
    env = settings.environ
    found = find_session(env, os.getuid())
    click.echo(click.style("Session", bold=True))
    if found.wayland_display:
        click.echo(f"  Wayland: {found.wayland_display} (found in the {found.found_by})")
        who = found.compositor or "unknown"
        proc = f", process {found.compositor_process}" if found.compositor_process else ""
        click.echo(f"  compositor: {who}{proc}")
        if found.swaysock:
            click.echo(f"  sway IPC: {found.swaysock}")
    else:
        click.echo(f"  Wayland: none found (runtime dir {found.runtime_dir})")
    click.echo(f"  X11 DISPLAY: {settings.display or env.get('DISPLAY') or 'not set'}")
    if found.xauthority or env.get("XAUTHORITY"):
        click.echo(f"  XAUTHORITY: {env.get('XAUTHORITY') or found.xauthority}")
    click.echo(f"  session bus: {settings.session_bus or found.session_bus or 'not found'}")
    if settings.sandbox_dir:
        click.echo(f"  deskpilot sandbox: {settings.sandbox_dir}")

    click.echo(click.style("Backends", bold=True))
    for backend in registry.backends():
        reason = backend.detect(settings)
        click.echo(f"  {_mark(reason is not None)}{backend.name}: {reason or 'does not fit'}")
    try:
        chosen = registry.choose(settings)
    except Exception as exc:
        click.echo(f"  auto picks nothing: {exc}")
        sys.exit(1)
    click.echo(f"  auto picks: {chosen.name}")

    click.echo(click.style(f"Opening {chosen.name}", bold=True))
    ok = asyncio.run(_try_open(settings, chosen.name))
    sys.exit(0 if ok else 1)


async def _try_open(settings: object, name: str) -> bool:
    from deskpilot.config import Settings
    from deskpilot.desktop import registry

    assert isinstance(settings, Settings)
    try:
        resolved = registry.resolve(settings.with_overrides(backend=name))
        backend = registry.choose(resolved)
        ports = await backend.open(resolved)
    except Exception as exc:
        click.echo(f"  {_mark(False)}cannot open it: {exc}")
        return False
    try:
        windows = await ports.windows.list_windows()
        click.echo(f"  {_mark(True)}windows: {len(windows)} listed")
        size = await ports.windows.screen_size()
        click.echo(f"  {_mark(True)}screen: {size[0]}x{size[1]}")
        click.echo(f"  {_mark(True)}input: {type(ports.input).__name__}")
        shot = await ports.capture.capture_image(None)
        click.echo(f"  {_mark(True)}capture: {shot.size[0]}x{shot.size[1]} screenshot")
        click.echo(f"  {_mark(ports.a11y.lost() is None)}accessibility bus")
        if ports.a11y.lost() is None:
            await _apps_off_the_bus(ports, windows)
    except Exception as exc:
        click.echo(f"  {_mark(False)}{exc}")
        return False
    finally:
        await ports.close()
    return True


async def _apps_off_the_bus(ports: Ports, windows: list[WindowInfo]) -> None:
    """Which running apps with windows cannot be read, and why (the toolkit each loaded, its
    bridge, a switch that turned accessibility off: deskpilot.desktop.toolkits)."""
    from deskpilot.desktop.toolkits import diagnose

    by_pid: dict[int, list[WindowInfo]] = {}
    for w in windows:
        if w.pid and not w.hidden:
            by_pid.setdefault(w.pid, []).append(w)
    off: list[tuple[str, str]] = []
    for pid, mine in sorted(by_pid.items()):
        why = await ports.a11y.unreadable([pid])
        if why is None:
            read = await ports.a11y.read_window(mine[0], timeout=3.0)
            if read.root is not None:
                continue  # on the bus, read
            why = diagnose([pid]).text()
        off.append((f"{mine[0].app.name} (pid {pid}, {mine[0].title!r})", why))
    readable = len(by_pid) - len(off)
    click.echo(f"  {_mark(not off)}apps on the bus: {readable} of {len(by_pid)} with windows")
    for who, why in off:
        click.echo(f"      {who}: {why}")


COMMANDS: list[click.Command] = [doctor]
