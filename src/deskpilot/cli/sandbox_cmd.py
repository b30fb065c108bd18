"""``deskpilot sandbox run|up|status|down``: a private headless desktop with accessibility on."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import time
from types import FrameType

import click

from deskpilot.cli.common import Context, fail, pass_context
from deskpilot.errors import SandboxError
from deskpilot.sandbox import Sandbox, SandboxInfo
from deskpilot.sandbox.compositors import KINDS
from deskpilot.sandbox.info import sandbox_command_env
from deskpilot.sandbox.kept import forget, is_alive, list_kept, load_info, save_info
from deskpilot.sandbox.processes import processes_of, teardown


def _size_option(_ctx: click.Context, _param: click.Parameter, value: str) -> tuple[int, int]:
    return _parse_size(value)


def _parse_size(value: str) -> tuple[int, int]:
    try:
        w, h = (int(p) for p in value.lower().split("x"))
    except ValueError:
        raise click.BadParameter(f"{value!r} is not WIDTHxHEIGHT (e.g. 1280x800)") from None
    if not (64 <= w <= 8192 and 64 <= h <= 8192):
        raise click.BadParameter(f"{value!r}: width and height must be between 64 and 8192")
    return w, h


size_option = click.option(
    "--size",
    default="1280x800",
    show_default=True,
    metavar="WxH",
    callback=_size_option,
    help="Screen size of the virtual display.",
)
display_option = click.option(
    "--display-number",
    "display_number",
    type=click.IntRange(0, 65535),
    default=None,
    metavar="N",
    help="Use display :N (default: the first free one).",
)
kind_option = click.option(
    "--kind",
    type=click.Choice(KINDS),
    default="x11",
    show_default=True,
    help="The desktop: x11 (Xvfb + openbox), sway (headless wlroots) or gnome (headless "
    "mutter with PipeWire). Wayland kinds run as an unprivileged user when deskpilot is root, "
    "and run X11 apps on Xwayland.",
)
name_option = click.option(
    "--name", default="default", show_default=True, help="Name of the kept sandbox."
)


@click.group("sandbox")
def sandbox_group() -> None:
    """A private headless desktop: X11 (Xvfb + openbox), sway or GNOME (mutter), with D-Bus
    and the AT-SPI bus.

    \b
    deskpilot sandbox run -- CMD ARGS   run CMD on a fresh desktop, then tear it all down
    eval "$(deskpilot sandbox up)"      start one that stays up; sets DISPLAY etc. in your shell
    eval "$(deskpilot sandbox up --kind gnome --name g)"   a headless GNOME (Wayland) one
    deskpilot sandbox status            show kept sandboxes
    deskpilot sandbox down              stop it (no process is left behind)

    Apps on the sandbox get their own HOME and have accessibility switched on for GTK, Qt,
    Chromium, Electron and LibreOffice.
    """


@sandbox_group.command("run", context_settings={"ignore_unknown_options": True})
@size_option
@display_option
@kind_option
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@pass_context
def run(
    ctx: Context,
    size: tuple[int, int],
    display_number: int | None,
    kind: str,
    command: tuple[str, ...],
) -> None:
    """Run COMMAND on a fresh sandbox desktop; exit with its exit code.

    Everything is torn down afterwards — also when COMMAND fails or you press Ctrl-C.
    Example: deskpilot sandbox run -- gnome-calculator
    """
    width, height = size
    settings = ctx.settings
    interrupted: list[int] = []
    child: subprocess.Popen[bytes] | None = None

    def forward(signum: int, _frame: FrameType | None) -> None:
        interrupted.append(signum)
        if child is not None and child.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                child.send_signal(signum)

    old = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    code = 1
    try:
        with Sandbox(
            width=width,
            height=height,
            display=display_number,
            base_env=settings.environ,
            kind=kind,
        ) as desk:
            assert desk.info is not None
            click.secho(
                f"sandbox: {_where(desk.info)} ({width}x{height}) is up; "
                f"running {shlex.join(command)}",
                fg="cyan",
                err=True,
            )
            env = sandbox_command_env(settings.environ, desk.info)
            try:
                child = subprocess.Popen(list(command), env=env)
            except FileNotFoundError:
                fail(f"command not found: {command[0]}", 127)
            except PermissionError:
                fail(f"command not executable: {command[0]}", 126)
            assert child is not None
            code = _wait_child(child, interrupted)
            if code < 0:
                code = 128 - code
            if interrupted:
                code = 128 + interrupted[0]
    except SandboxError as exc:
        fail(exc)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    if interrupted:
        click.secho("sandbox: interrupted; desktop torn down", fg="yellow", err=True)
    sys.exit(code)


#: Seconds an interrupted command gets to exit before it is killed with the desktop.
GRACE = 5.0


def _wait_child(child: subprocess.Popen[bytes], interrupted: list[int]) -> int:
    """Wait for the command; once interrupted, give it GRACE seconds to exit, then kill it."""
    deadline: float | None = None
    while True:
        if interrupted and deadline is None:
            deadline = time.monotonic() + GRACE
        try:
            return child.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            if deadline is not None and time.monotonic() > deadline:
                child.kill()
                return child.wait()
        except KeyboardInterrupt:
            interrupted.append(signal.SIGINT)


@sandbox_group.command("up")
@size_option
@display_option
@kind_option
@name_option
@pass_context
def up(
    ctx: Context, size: tuple[int, int], display_number: int | None, kind: str, name: str
) -> None:
    """Start a sandbox that stays up, and print shell lines to `eval`.

    \b
    eval "$(deskpilot sandbox up)"
    deskpilot tool list_windows
    deskpilot sandbox down
    """
    width, height = size
    settings = ctx.settings
    info = load_info(settings.state_dir, name)
    if info is not None and is_alive(info):
        click.secho(f"sandbox {name!r} is already up: {_where(info)}", fg="cyan", err=True)
        if info.kind != kind:
            fail(
                f"sandbox {name!r} is a {info.kind} desktop, not {kind}: stop it first "
                f"(deskpilot sandbox down --name {name}) or pick another --name"
            )
    else:
        if info is not None:
            teardown(info.runtime_dir, info.pgid)
            forget(settings.state_dir, name)
        try:
            desk = Sandbox(
                width=width,
                height=height,
                display=display_number,
                base_env=settings.environ,
                keep=True,
                kind=kind,
            )
            info = desk.start()
        except SandboxError as exc:
            fail(exc)
            raise
        save_info(settings.state_dir, name, info)
        click.secho(
            f"sandbox {name!r} is up: {_where(info)} ({width}x{height}); "
            f"stop it with: deskpilot sandbox down"
            + (f" --name {name}" if name != "default" else ""),
            fg="cyan",
            err=True,
        )
    assert info is not None
    for key, value in info.client_env().items():
        click.echo(f"export {key}={shlex.quote(value)}")


@sandbox_group.command("status")
@pass_context
def status(ctx: Context) -> None:
    """Show kept sandboxes (exit code 1 when none is running)."""
    running = 0
    for name, info in list_kept(ctx.settings.state_dir):
        alive = is_alive(info)
        running += alive
        procs = len(processes_of(info.runtime_dir, info.pgid)) if alive else 0
        state = click.style("up", fg="green") if alive else click.style("dead", fg="red")
        click.echo(
            f"{name}: {state}  {_where(info)}  {info.width}x{info.height}  "
            f"{procs} processes  {info.runtime_dir}"
        )
    if not running:
        click.echo('no sandbox is running (start one: eval "$(deskpilot sandbox up)")')
        sys.exit(1)


@sandbox_group.command("down")
@name_option
@pass_context
def down(ctx: Context, name: str) -> None:
    """Stop a kept sandbox and everything running on it."""
    info = load_info(ctx.settings.state_dir, name)
    if info is None:
        click.echo(f"no sandbox named {name!r} is running")
        return
    left = teardown(info.runtime_dir, info.pgid)
    forget(ctx.settings.state_dir, name)
    if left:
        fail(f"sandbox {name!r}: processes survived teardown: {left}")
    click.secho(f"sandbox {name!r} ({_where(info)}) is down", fg="cyan", err=True)
    if ctx.settings.sandbox_dir == info.runtime_dir:
        click.secho(
            "this shell still points at it: unset " + " ".join(sorted(info.client_env())),
            fg="yellow",
            err=True,
        )


def _where(info: SandboxInfo) -> str:
    """Where a sandbox's desktop is, for messages: its display, or its compositor."""
    if not info.wayland:
        return f"display {info.display}"
    xwayland = f", Xwayland {info.display}" if info.display else ""
    return f"{info.kind} on {os.path.basename(info.wayland_display)}{xwayland}"


COMMANDS: list[click.Command] = [sandbox_group]
